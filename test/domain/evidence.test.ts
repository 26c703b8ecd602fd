/**
 * collectFailures / failureCause: the evidence against a new revision is a restart of its container on
 * a Ready node; it is kept and only grows.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { collectFailures, failureCause } from '../../src/domain/evidence.js';
import type { NodeView, PodView } from '../../src/domain/observation.js';
import type { RolloutFailures } from '../../src/api/types.js';
import { HASH, T0, deadKubelet, health, iso, node, pod, sec, withHealth } from '../support/fixtures.js';

const NOW = iso(T0 + sec(100));
const crashed = (restarts: number, reason = 'Error', at = iso(T0 + sec(10))): PodView =>
  pod({
    hash: HASH.B,
    restartCount: restarts,
    lastTermination: { container: 'decoder', reason, exitCode: reason === 'OOMKilled' ? 137 : 1, at },
  });
const ready = (n: NodeView): NodeView => withHealth(n, health());

describe('collectFailures', () => {
  const cases: Array<{ name: string; nodes: NodeView[]; prev?: RolloutFailures; want: RolloutFailures | undefined }> = [
    { name: 'no restart anywhere: no evidence', nodes: [ready(node('node-1', [pod({ hash: HASH.B })]))], want: undefined },
    {
      name: 'a restarted pod of the new revision on a Ready node is one failed node, with when and why',
      nodes: [ready(node('node-1', [crashed(1)]))],
      want: { count: 1, nodes: [{ node: 'node-1', pod: `decoder-${HASH.B}-node-1`, restarts: 1, reason: 'Error', at: iso(T0 + sec(10)) }] },
    },
    {
      name: 'restarts of the old revision are not evidence against the new one',
      nodes: [ready(node('node-1', [pod({ hash: HASH.A, restartCount: 4 })]))],
      want: undefined,
    },
    {
      name: "a crash on a node that is down is the node's, not the revision's",
      nodes: [withHealth(node('node-1', [crashed(2)]), deadKubelet())],
      want: undefined,
    },
    {
      name: "a crash on a node under memory pressure is the node's",
      nodes: [withHealth(node('node-1', [crashed(2, 'OOMKilled')]), health({ pressure: ['MemoryPressure'] }))],
      want: undefined,
    },
    {
      name: 'without a termination time the crash is dated when first seen',
      nodes: [ready(node('node-1', [pod({ hash: HASH.B, restartCount: 1 })]))],
      want: { count: 1, nodes: [{ node: 'node-1', pod: `decoder-${HASH.B}-node-1`, restarts: 1, reason: 'Error', at: NOW }] },
    },
    {
      name: 'evidence only grows: a node seen before stays when its pod is replaced, and restarts keep their maximum',
      nodes: [ready(node('node-1', [pod({ hash: HASH.B })])), ready(node('node-2', [crashed(1, 'Error', iso(T0 + sec(50)))]))],
      prev: { count: 1, nodes: [{ node: 'node-1', restarts: 3, reason: 'Error', at: iso(T0 + sec(5)) }] },
      want: {
        count: 2,
        nodes: [
          { node: 'node-1', restarts: 3, reason: 'Error', at: iso(T0 + sec(5)) },
          { node: 'node-2', pod: `decoder-${HASH.B}-node-2`, restarts: 1, reason: 'Error', at: iso(T0 + sec(50)) },
        ],
      },
    },
    {
      name: 'the same node seen again is not counted twice; its restarts rise',
      nodes: [ready(node('node-1', [crashed(4)]))],
      prev: { count: 1, nodes: [{ node: 'node-1', pod: `decoder-${HASH.B}-node-1`, restarts: 1, reason: 'Error', at: iso(T0 + sec(10)) }] },
      want: { count: 1, nodes: [{ node: 'node-1', pod: `decoder-${HASH.B}-node-1`, restarts: 4, reason: 'Error', at: iso(T0 + sec(10)) }] },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => assert.deepEqual(collectFailures(tc.nodes, HASH.B, tc.prev, NOW), tc.want));
  }

  it('past the status list cap the names stop at 20 and the count stays exact', () => {
    const nodes = Array.from({ length: 25 }, (_, i) =>
      ready(node(`node-${String(i + 1).padStart(2, '0')}`, [crashed(1, 'Error', iso(T0 + sec(i)))])),
    );
    const f = collectFailures(nodes, HASH.B, undefined, NOW)!;
    assert.equal(f.count, 25);
    assert.equal(f.nodes.length, 20);
    assert.equal(f.nodes[0]!.node, 'node-01', 'the earliest crashes are kept');
  });

  it('a node past the cap is counted once, however many passes see it crash again', () => {
    const nodes = Array.from({ length: 21 }, (_, i) =>
      ready(node(`node-${String(i + 1).padStart(2, '0')}`, [crashed(1 + i, 'Error', iso(T0 + sec(i)))])),
    );
    let f = collectFailures(nodes, HASH.B, undefined, NOW);
    for (let pass = 0; pass < 10; pass++) f = collectFailures(nodes, HASH.B, f, NOW);
    assert.equal(f?.count, 21, '21 nodes crashed, not 21 plus one per pass');
    assert.equal(f?.nodes.length, 20);
  });

  it('a node whose crashed pod was replaced stays counted; a new one adds to it', () => {
    const first = collectFailures([ready(node('node-1', [crashed(2)]))], HASH.B, undefined, NOW);
    const replaced = collectFailures([ready(node('node-1', [pod({ hash: HASH.B })]))], HASH.B, first, NOW);
    assert.equal(replaced?.count, 1);
    const another = collectFailures([ready(node('node-2', [crashed(1)]))], HASH.B, replaced, NOW);
    assert.equal(another?.count, 2);
  });
});

describe('failureCause', () => {
  const f = (...reasons: string[]): RolloutFailures => ({
    count: reasons.length,
    nodes: reasons.map((r, i) => ({ node: `n${i}`, restarts: 1, reason: r, at: NOW })),
  });
  const cases: Array<[string, RolloutFailures, 'OOMKilled' | 'CrashLoop']> = [
    ['all OOMKilled → OOMKilled (the remedy is the memory limit)', f('OOMKilled', 'OOMKilled'), 'OOMKilled'],
    ['mostly OOMKilled → OOMKilled', f('OOMKilled', 'OOMKilled', 'Error'), 'OOMKilled'],
    ['half and half → CrashLoop', f('OOMKilled', 'Error'), 'CrashLoop'],
    ['exit errors → CrashLoop', f('Error', 'Error'), 'CrashLoop'],
  ];
  for (const [name, input, want] of cases) it(name, () => assert.equal(failureCause(input), want));
});
