/**
 * PodWatches: a DaemonSet's pods are listed and watched only while it needs them, against a local HTTP
 * server standing in for the API server (it records every request), with a fake clock driving the linger.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { pino } from 'pino';
import type { SlimDaemonSet, SlimGuard } from '../../src/api/objects.js';
import { PodWatches, type WatchedTarget } from '../../src/runtime/podWatches.js';
import { settledCountersOf } from '../../src/reconcile/targets/daemonSet.js';
import { FakeClock } from '../support/fakeClock.js';
import { clientFor, listenLocal } from '../support/localApi.js';

const UID = 'ds-uid-1';

function daemonSet(counters: Partial<SlimDaemonSet['status']> = {}, uid = UID): SlimDaemonSet {
  return {
    metadata: { name: 'agent', namespace: 'gpu', uid, generation: 2 },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      updateStrategy: { type: 'RollingUpdate' },
      minReadySeconds: 0,
      placement: {},
      images: ['agent:v2'],
    },
    status: {
      observedGeneration: 2,
      desiredNumberScheduled: 3,
      currentNumberScheduled: 3,
      updatedNumberScheduled: 3,
      numberReady: 3,
      numberAvailable: 3,
      numberMisscheduled: 0,
      ...counters,
    },
  };
}

/** The DaemonSet as the pod watches read it from the caches. */
function watchedOf(ds: SlimDaemonSet | undefined): WatchedTarget | undefined {
  if (!ds?.metadata.uid) return undefined;
  return { uid: ds.metadata.uid, ...(ds.spec.selector ? { selector: ds.spec.selector } : {}), counters: settledCountersOf(ds) };
}

/** The watched targets as `namespace/name`. */
function keysOf(watches: PodWatches): string[] {
  return watches.targets().map((t) => `${t.namespace}/${t.name}`);
}

function pod(name: string, ownerUid: string): object {
  return {
    metadata: {
      name,
      namespace: 'gpu',
      uid: `${name}-uid`,
      resourceVersion: '10',
      labels: { app: 'agent', 'controller-revision-hash': 'h2' },
      ownerReferences: [{ kind: 'DaemonSet', name: 'agent', uid: ownerUid, controller: true }],
    },
    spec: { nodeName: `node-${name}`, containers: [{ name: 'c', image: 'agent:v2' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

describe('PodWatches', () => {
  let server: http.Server;
  let requests: Array<{ watch: boolean; selector: string | null }>;
  let open: http.ServerResponse[];
  let clock: FakeClock;
  let ds: SlimDaemonSet | undefined;
  let guards: SlimGuard[];
  let changes: string[];
  let watches: PodWatches;

  const pods = [pod('p1', UID), pod('p2', UID), pod('stray', 'another-owner')];
  /** A guard of the DaemonSet that has not written status yet. */
  const unjudged: SlimGuard = { metadata: { name: 'g' }, spec: { targetRef: { kind: 'DaemonSet', name: 'agent' } } };

  beforeEach(async () => {
    requests = [];
    open = [];
    changes = [];
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
      requests.push({ watch, selector: url.searchParams.get('labelSelector') });
      if (watch) {
        res.writeHead(200, { 'content-type': 'application/json' });
        open.push(res); // held open, silent: nothing changes while the test looks
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '10' }, items: pods }));
    });
    await listenLocal(server);
    clock = new FakeClock(1_000_000);
    ds = daemonSet();
    guards = [unjudged];
    watches = new PodWatches(
      { target: () => watchedOf(ds), guardsTargeting: () => guards },
      {
        client: clientFor(server),
        log: pino({ level: 'silent' }),
        clock,
        timers: clock,
        lingerMs: 30_000,
        informer: { watchTimeoutSeconds: 300, idleTimeoutMs: 600_000, backoff: { initialMs: 1000, maxMs: 1000 } },
        onChange: (_kind, ns, name, urgent) => changes.push(`${ns}/${name}${urgent ? ' urgent' : ''}`),
      },
    );
  });

  afterEach(async () => {
    await watches.stop();
    for (const r of open) r.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const synced = async (): Promise<void> => {
    for (let i = 0; i < 200 && watches.state('DaemonSet', 'gpu', 'agent', UID) !== 'synced'; i++) await new Promise((r) => setImmediate(r));
    assert.equal(watches.state('DaemonSet', 'gpu', 'agent', UID), 'synced');
  };

  it('a settled DaemonSet no guard follows a rollout of: no watch, no request', () => {
    guards = [
      {
        metadata: { name: 'g' },
        spec: { targetRef: { kind: 'DaemonSet', name: 'agent' } },
        status: { state: 'Healthy', rollout: { completedAt: '2026-01-01T00:00:00Z' } as never },
      },
    ];
    watches.sync('DaemonSet', 'gpu', 'agent');
    assert.equal(watches.state('DaemonSet', 'gpu', 'agent', UID), 'off');
    assert.deepEqual(keysOf(watches), []);
    assert.deepEqual(requests, []);
  });

  it('a DaemonSet no guard targets is never watched, rolling or not', () => {
    guards = [];
    ds = daemonSet({ updatedNumberScheduled: 1 });
    watches.sync('DaemonSet', 'gpu', 'agent');
    assert.equal(watches.state('DaemonSet', 'gpu', 'agent', UID), 'off');
    assert.deepEqual(requests, []);
  });

  it('a DaemonSet that starts rolling has its own pods listed and watched by its selector; the list enqueues its guards', async () => {
    ds = daemonSet({ updatedNumberScheduled: 1 });
    watches.sync('DaemonSet', 'gpu', 'agent');
    assert.equal(watches.state('DaemonSet', 'gpu', 'agent', UID), 'syncing');
    await synced();
    for (let i = 0; i < 200 && requests.length < 2; i++) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(
      requests.map((r) => r.selector),
      ['app=agent,controller-revision-hash', 'app=agent,controller-revision-hash'],
      'one list and one watch, with the DaemonSet selector',
    );
    assert.deepEqual(
      requests.map((r) => r.watch),
      [false, true],
    );
    assert.deepEqual(
      watches
        .podsOwnedBy(UID)
        .map((p) => p.metadata.name)
        .sort(),
      ['p1', 'p2'],
      'matched by owner UID, not by label',
    );
    assert.equal(watches.pod('gpu', 'stray')?.metadata.name, 'stray');
    assert.ok(changes.includes('gpu/agent'));
    assert.equal(watches.samples()[0]?.stats.objects, 3);
  });

  it('a pod that just failed is an urgent change; one getting Ready, or failing the same way again, is not', async () => {
    ds = daemonSet({ updatedNumberScheduled: 1 });
    watches.sync('DaemonSet', 'gpu', 'agent');
    await synced();
    for (let i = 0; i < 200 && open.length < 1; i++) await new Promise((r) => setTimeout(r, 5));
    const base = pod('p1', UID) as { metadata: Record<string, unknown>; status: Record<string, unknown> };
    const send = async (rv: string, status: Record<string, unknown>): Promise<void> => {
      const before = changes.length;
      const obj = { ...base, metadata: { ...base.metadata, resourceVersion: rv }, status };
      open[0]!.write(JSON.stringify({ type: 'MODIFIED', object: obj }) + '\n');
      for (let i = 0; i < 200 && changes.length === before; i++) await new Promise((r) => setTimeout(r, 5));
    };
    const pulling = {
      phase: 'Pending',
      containerStatuses: [
        { name: 'c', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off' } } },
      ],
    };
    changes = [];
    await send('11', {
      phase: 'Pending',
      containerStatuses: [{ name: 'c', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }],
    });
    assert.equal(watches.failureSighting('gpu', 'p1'), undefined, 'not failing yet');
    const failedAt = clock.now();
    await send('12', { ...pulling, conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-12-06T10:00:07Z' }] });
    assert.deepEqual(
      watches.failureSighting('gpu', 'p1'),
      { at: failedAt, writtenAt: Date.parse('2026-12-06T10:00:07Z') },
      'seen failing when its event arrived, with the write stamp of that event',
    );
    clock.advance(1_000);
    await send('13', { ...pulling, conditions: [{ type: 'Ready', status: 'False' }] });
    await send('14', { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] });
    assert.deepEqual(changes, ['gpu/agent', 'gpu/agent urgent', 'gpu/agent', 'gpu/agent']);
    assert.equal(watches.failureSighting('gpu', 'p1')?.at, failedAt, 'the first failure is kept while the pod lives');
    assert.equal(watches.failureSighting('gpu', 'p1')?.writtenAt, Date.parse('2026-12-06T10:00:07Z'), 'later events do not restamp it');
    assert.equal(watches.failureSighting('gpu', 'p2'), undefined, 'a pod never seen failing');
    assert.equal(watches.failureSighting('other', 'p1'), undefined, 'another namespace');
    const before = changes.length;
    open[0]!.write(JSON.stringify({ type: 'DELETED', object: { ...base, metadata: { ...base.metadata, resourceVersion: '15' } } }) + '\n');
    for (let i = 0; i < 200 && changes.length === before; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(watches.failureSighting('gpu', 'p1'), undefined, 'dropped with the pod');
  });

  it('a rollout that ends keeps its watch for the linger, then drops it and its pods', async () => {
    ds = daemonSet({ updatedNumberScheduled: 1 });
    watches.sync('DaemonSet', 'gpu', 'agent');
    await synced();
    ds = daemonSet();
    watches.sync('DaemonSet', 'gpu', 'agent');
    clock.advance(29_999);
    assert.equal(watches.state('DaemonSet', 'gpu', 'agent', UID), 'synced', 'still cached within the linger');
    clock.advance(1);
    assert.equal(watches.state('DaemonSet', 'gpu', 'agent', UID), 'off');
    assert.deepEqual(watches.podsOwnedBy(UID), []);
    assert.deepEqual(watches.samples(), []);
    assert.equal(watches.ended, 1);
  });

  it('a DaemonSet that needs its pods again within the linger keeps the same watch (no second list)', async () => {
    ds = daemonSet({ numberReady: 2, numberAvailable: 2 });
    watches.sync('DaemonSet', 'gpu', 'agent');
    await synced();
    ds = daemonSet();
    watches.sync('DaemonSet', 'gpu', 'agent');
    clock.advance(20_000);
    ds = daemonSet({ numberReady: 2, numberAvailable: 2 });
    watches.sync('DaemonSet', 'gpu', 'agent');
    clock.advance(60_000);
    assert.equal(watches.state('DaemonSet', 'gpu', 'agent', UID), 'synced');
    assert.equal(requests.filter((r) => !r.watch).length, 1);
    assert.equal(watches.started, 1);
  });

  it('a guard that still follows a rollout (baking) keeps the pods watched though the counters are settled', async () => {
    guards = [
      {
        metadata: { name: 'g' },
        spec: { targetRef: { kind: 'DaemonSet', name: 'agent' } },
        status: { state: 'Progressing', rollout: { updatedAt: '2026-01-01T00:00:00Z' } as never },
      },
    ];
    watches.sync('DaemonSet', 'gpu', 'agent');
    await synced();
    clock.advance(120_000);
    watches.sync('DaemonSet', 'gpu', 'agent');
    assert.equal(watches.state('DaemonSet', 'gpu', 'agent', UID), 'synced');
    guards = [{ ...guards[0]!, status: { state: 'Healthy', rollout: { completedAt: '2026-01-01T00:03:00Z' } as never } }];
    watches.sync('DaemonSet', 'gpu', 'agent');
    clock.advance(30_000);
    assert.equal(watches.state('DaemonSet', 'gpu', 'agent', UID), 'off');
  });

  it('gather asking for the pods starts a watch that lasts at least 5 s, even with the counters settled', async () => {
    watches.want('DaemonSet', 'gpu', 'agent');
    await synced();
    clock.advance(29_000);
    watches.sync('DaemonSet', 'gpu', 'agent');
    assert.equal(watches.state('DaemonSet', 'gpu', 'agent', UID), 'synced');
    clock.advance(1_000);
    assert.equal(watches.state('DaemonSet', 'gpu', 'agent', UID), 'off');
  });

  it('a selector it cannot write falls back to every daemon pod of the namespace, still matched by owner', async () => {
    ds = {
      ...daemonSet({ updatedNumberScheduled: 1 }),
      spec: { ...daemonSet().spec, selector: { matchExpressions: [{ key: 'tier', operator: 'Gt', values: ['1'] }] } },
    };
    watches.sync('DaemonSet', 'gpu', 'agent');
    await synced();
    assert.equal(requests[0]?.selector, 'controller-revision-hash');
    assert.deepEqual(
      watches
        .podsOwnedBy(UID)
        .map((p) => p.metadata.name)
        .sort(),
      ['p1', 'p2'],
    );
  });

  it('a recreated DaemonSet (new UID) gets a new watch; a deleted one loses its watch at once', async () => {
    ds = daemonSet({ updatedNumberScheduled: 0 });
    watches.sync('DaemonSet', 'gpu', 'agent');
    await synced();
    ds = daemonSet({ updatedNumberScheduled: 0 }, 'ds-uid-2');
    watches.sync('DaemonSet', 'gpu', 'agent');
    assert.equal(watches.state('DaemonSet', 'gpu', 'agent', UID), 'off', 'the old UID has no watch');
    assert.equal(watches.state('DaemonSet', 'gpu', 'agent', 'ds-uid-2'), 'syncing');
    assert.equal(watches.started, 2);
    ds = undefined;
    watches.sync('DaemonSet', 'gpu', 'agent');
    assert.deepEqual(keysOf(watches), []);
    assert.equal(watches.ended, 2);
  });
});
