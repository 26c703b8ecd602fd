/**
 * EventRecorder against a small local HTTP API: Events are named from their announcement id (the copy on
 * the target also names its guard, and its kind: `.ds`, `.sts`), a name that exists already counts as announced, and any other
 * refusal is reported back, not thrown.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, beforeEach, describe, it } from 'node:test';
import { pino } from 'pino';
import type { Announcement } from '../../src/api/types.js';
import { guardRef, workloadRef } from '../../src/api/objects.js';
import { EventRecorder, eventName } from '../../src/k8s/eventRecorder.js';
import { clientFor, listenLocal } from '../support/localApi.js';

interface Posted {
  name: string;
  namespace: string;
  eventTime: string;
  regarding: string;
}

describe('EventRecorder', () => {
  const existing = new Set<string>();
  let posted: Posted[] = [];
  /** Creates answered with 500 before they succeed again. */
  let failing = 0;
  /** Namespaces whose creates are refused as the NamespaceLifecycle admission plugin refuses them. */
  const terminating = new Set<string>();
  let refused = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const ev = JSON.parse(body) as {
        metadata: { name: string; namespace: string };
        eventTime: string;
        regarding: { kind: string; name: string };
      };
      const json = (code: number, payload: unknown): void => {
        res.writeHead(code, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (failing > 0) {
        failing--;
        return json(500, {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'InternalError',
          code: 500,
          message: 'etcd timeout',
        });
      }
      if (terminating.has(ev.metadata.namespace)) {
        refused++;
        const message = `events "${ev.metadata.name}" is forbidden: unable to create new content in namespace ${ev.metadata.namespace} because it is being terminated`;
        return json(403, {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'Forbidden',
          code: 403,
          message,
          details: {
            name: ev.metadata.name,
            kind: 'events',
            causes: [{ type: 'NamespaceTerminating', message, field: 'metadata.namespace' }],
          },
        });
      }
      if (existing.has(ev.metadata.name)) {
        return json(409, {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'AlreadyExists',
          code: 409,
          message: `events "${ev.metadata.name}" already exists`,
        });
      }
      existing.add(ev.metadata.name);
      posted.push({
        name: ev.metadata.name,
        namespace: ev.metadata.namespace,
        eventTime: ev.eventTime,
        regarding: `${ev.regarding.kind}/${ev.regarding.name}`,
      });
      return json(201, ev);
    });
  });
  let recorder: EventRecorder;
  before(async () => {
    await listenLocal(server);
    recorder = new EventRecorder(clientFor(server), 'test', pino({ level: 'silent' }), () => Date.parse('2026-12-01T10:00:05Z'));
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    existing.clear();
    posted = [];
    failing = 0;
    terminating.clear();
    refused = 0;
  });

  const ann = (id: string, onTarget = true): Announcement => ({
    id,
    at: '2026-12-01T10:00:00.123Z',
    type: 'Warning',
    reason: 'RolloutStalled',
    action: 'Detect',
    note: 'n',
    onTarget,
  });
  const ds = workloadRef('DaemonSet', 'gpu', 'decoder', 'ds-uid');

  it('names each Event from the id, on the guard and (naming the guard) on the DaemonSet; eventTime is the transition time', async () => {
    const g = guardRef('gpu', 'decoder', 'g-uid');
    assert.deepEqual(await recorder.emit(g, ds, [ann('lz1')]), ['lz1']);
    assert.deepEqual(
      posted.map((p) => `${p.regarding} ${p.name}`),
      ['RolloutGuard/decoder decoder.lz1', 'DaemonSet/decoder decoder.decoder.lz1.ds'],
    );
    assert.ok(posted.every((p) => p.eventTime === '2026-12-01T10:00:00.123000Z'));
    assert.equal(eventName(ds, 'lz1', g), 'decoder.decoder.lz1.ds');
  });

  it('names the copy on a StatefulSet with `.sts`, apart from a DaemonSet of the same name', async () => {
    const g = guardRef('gpu', 'decoder', 'g-uid');
    const sts = workloadRef('StatefulSet', 'gpu', 'decoder', 'sts-uid');
    assert.deepEqual(await recorder.emit(g, sts, [ann('s1'), ann('s2', false)]), ['s1', 's2']);
    assert.deepEqual(
      posted.map((p) => `${p.regarding} ${p.name}`),
      ['RolloutGuard/decoder decoder.s1', 'StatefulSet/decoder decoder.decoder.s1.sts', 'RolloutGuard/decoder decoder.s2'],
    );
    // The same guard name and id on a DaemonSet of the same name: its own copy, not taken for the StatefulSet's.
    assert.deepEqual(await recorder.emit(g, ds, [ann('s1')]), ['s1']);
    assert.deepEqual(
      posted.slice(3).map((p) => `${p.regarding} ${p.name}`),
      ['DaemonSet/decoder decoder.decoder.s1.ds'],
    );
  });

  it("two guards of one DaemonSet announcing with the same id do not take each other's copy on the DaemonSet", async () => {
    assert.deepEqual(await recorder.emit(guardRef('gpu', 'a'), ds, [ann('same')]), ['same']);
    assert.deepEqual(await recorder.emit(guardRef('gpu', 'b'), ds, [ann('same')]), ['same']);
    assert.equal(posted.filter((p) => p.regarding === 'DaemonSet/decoder').length, 2);
  });

  it('an Event that exists already (a repeat after a crash) counts as announced, and nothing is doubled', async () => {
    const g = guardRef('gpu', 'decoder');
    await recorder.emit(g, ds, [ann('x1')]);
    assert.deepEqual(await recorder.emit(g, ds, [ann('x1')]), ['x1']);
    assert.equal(posted.length, 2);
  });

  it('any other refusal is reported back (not announced), never thrown', async () => {
    failing = 1;
    assert.deepEqual(await recorder.emit(guardRef('gpu', 'decoder'), ds, [ann('y1'), ann('y2', false)]), ['y2']);
    assert.deepEqual(
      posted.map((p) => p.name),
      ['decoder.decoder.y1.ds', 'decoder.y2'],
      'the DaemonSet copy of y1 went through; y1 is retried as a whole later',
    );
  });

  it('a namespace being terminated: the refusal is final (settled, not offered again), and the namespace is remembered until it takes content again', async () => {
    terminating.add('gpu');
    const g = guardRef('gpu', 'decoder');
    assert.equal(recorder.terminatingSince('gpu'), undefined);
    assert.deepEqual(await recorder.emit(g, ds, [ann('t1'), ann('t2', false)]), ['t1', 't2'], 'settled: nothing to retry');
    assert.equal(refused, 3, 't1 on the guard and on the DaemonSet, t2 on the guard; nothing created');
    assert.equal(posted.length, 0);
    assert.equal(recorder.terminatingSince('gpu'), '2026-12-01T10:00:05.000Z');
    assert.equal(recorder.terminatingSince('other'), undefined);
    // A namespace of the same name made anew takes content: it is not the terminating one.
    terminating.delete('gpu');
    assert.deepEqual(await recorder.emit(g, undefined, [ann('t3', false)]), ['t3']);
    assert.equal(recorder.terminatingSince('gpu'), undefined);
  });
});

describe('eventName', () => {
  it('a copy on a target names its guard and its kind; a copy on anything else is plain', () => {
    const g = guardRef('gpu', 'guard', 'g-uid');
    const cases: Array<[string, Parameters<typeof eventName>, string]> = [
      ['on a DaemonSet', [workloadRef('DaemonSet', 'gpu', 'decoder'), 'id1', g], 'decoder.guard.id1.ds'],
      ['on a StatefulSet', [workloadRef('StatefulSet', 'gpu', 'store'), 'id1', g], 'store.guard.id1.sts'],
      ['on the guard itself', [g, 'id1'], 'guard.id1'],
      ['on a StatefulSet without the guard named', [workloadRef('StatefulSet', 'gpu', 'store'), 'id1'], 'store.id1'],
      [
        'long names are cut to 100 characters each',
        [workloadRef('StatefulSet', 'gpu', 's'.repeat(150)), 'id', guardRef('gpu', 'g'.repeat(150))],
        `${'s'.repeat(100)}.${'g'.repeat(100)}.id.sts`,
      ],
    ];
    for (const [name, args, want] of cases) assert.equal(eventName(...args), want, name);
  });
});
