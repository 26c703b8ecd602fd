/**
 * recordExplanation: the parts of a write that newly names failing nodes, observed by part, and the log
 * line that carries its moments as wall-clock times.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino, type Logger } from 'pino';
import type { BlockedNode } from '../../src/api/types.js';
import { recordExplanation } from '../../src/reconcile/explanationTiming.js';

const blocked = (node: string, pod?: string): BlockedNode => ({
  node,
  reason: 'ImagePullBackOff',
  message: 'back-off',
  ...(pod ? { pod } : {}),
});

function harness(): {
  parts: Array<[string, number]>;
  lines: Array<Record<string, unknown>>;
  metrics: { explanation: { observe(l: { part: string }, s: number): void } };
  log: Logger;
} {
  const parts: Array<[string, number]> = [];
  const lines: Array<Record<string, unknown>> = [];
  return {
    parts,
    lines,
    metrics: { explanation: { observe: (l, s) => parts.push([l.part, s]) } },
    log: pino({ level: 'info' }, { write: (l: string) => lines.push(JSON.parse(l) as Record<string, unknown>) }),
  };
}

const WALL = Date.parse('2026-12-06T12:00:00.000Z');
/** performance.now() read with WALL: a monotonic moment t is WALL - (10_000 - t). */
const MONO = 10_000;

describe('recordExplanation', () => {
  it('observes every part, fromEvent from the earliest failure seen, and logs the moments on the wall clock', () => {
    const h = harness();
    const seen = new Map([
      ['a-1', { at: WALL - 900 }],
      ['a-2', { at: WALL - 1_500, writtenAt: WALL - 4_000 }],
    ]);
    recordExplanation(
      h.metrics,
      h.log,
      { queueWaitMs: 300, started: 9_000, writeStarted: 9_020, wroteAt: 9_800 },
      {
        newlyFailing: [blocked('n1', 'a-1'), blocked('n2', 'a-2'), blocked('n3')],
        failureSeen: (p) => seen.get(p),
        resourceVersion: '42',
      },
      { wallNow: WALL, monoNow: MONO },
    );
    assert.deepEqual(h.parts, [
      ['queue', 0.3],
      ['pass', 0.02],
      ['write', 0.78],
      ['total', 1.1],
      ['fromEvent', 1.3], // wrote at WALL - 200, the earliest failure seen at WALL - 1,500
    ]);
    assert.equal(h.lines.length, 1);
    const l = h.lines[0]!;
    assert.equal(l.msg, 'status names newly failing nodes');
    assert.deepEqual(l.nodes, ['n1 (a-1)', 'n2 (a-2)', 'n3']);
    assert.equal(l.newlyFailing, 3);
    assert.equal(l.failureSeenAt, '2026-12-06T11:59:58.500Z');
    assert.equal(l.failureWrittenAt, '2026-12-06T11:59:56.000Z', 'the write stamp of the earliest sighting');
    assert.equal(l.failurePod, 'a-2', 'the pod of the earliest sighting');
    assert.equal(l.queuedAt, '2026-12-06T11:59:58.700Z');
    assert.equal(l.passStartedAt, '2026-12-06T11:59:59.000Z');
    assert.equal(l.writeStartedAt, '2026-12-06T11:59:59.020Z');
    assert.equal(l.wroteAt, '2026-12-06T11:59:59.800Z');
    assert.equal(l.resourceVersion, '42');
  });

  it('without a failure seen there is no fromEvent part nor moment, and at most five nodes are named', () => {
    const h = harness();
    const many = Array.from({ length: 8 }, (_, i) => blocked(`n${i}`, `p-${i}`));
    recordExplanation(
      h.metrics,
      h.log,
      { queueWaitMs: 0, started: 9_000, writeStarted: 9_001, wroteAt: 9_002 },
      { newlyFailing: many, failureSeen: () => undefined },
      { wallNow: WALL, monoNow: MONO },
    );
    assert.deepEqual(
      h.parts.map(([p]) => p),
      ['queue', 'pass', 'write', 'total'],
    );
    const l = h.lines[0]!;
    assert.equal((l.nodes as string[]).length, 5);
    assert.equal(l.newlyFailing, 8);
    assert.equal('failureSeenAt' in l, false);
    assert.equal('failureWrittenAt' in l, false);
    assert.equal('failurePod' in l, false);
    assert.equal('resourceVersion' in l, false);
  });

  it('a failure seen after the answer (clocks a step apart) counts as 0, never negative', () => {
    const h = harness();
    recordExplanation(
      h.metrics,
      h.log,
      { queueWaitMs: 0, started: 9_000, writeStarted: 9_001, wroteAt: 10_000 },
      { newlyFailing: [blocked('n1', 'a-1')], failureSeen: () => ({ at: WALL + 5_000 }) },
      { wallNow: WALL, monoNow: MONO },
    );
    assert.deepEqual(h.parts.at(-1), ['fromEvent', 0]);
  });
});
