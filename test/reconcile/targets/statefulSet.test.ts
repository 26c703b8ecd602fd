/**
 * The StatefulSet gather adapter through a fake CacheView: units are ordinals named by their pod, each
 * judged on the node its pod runs on; a scale-down leaves ineligible units; a partition that holds
 * ordinals on another revision counts them as updated and is never settled; pods not cached yet end the
 * pass (PodsPending); the controller's FailedCreate and the undo opt-out are read as for a DaemonSet.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SlimClaim, SlimEvent, SlimNode, SlimPod, SlimRevision, SlimStatefulSet } from '../../../src/api/objects.js';
import type { GuardStatus } from '../../../src/api/types.js';
import type { Observation } from '../../../src/domain/observation.js';
import type { CacheView } from '../../../src/reconcile/ports.js';
import { TargetMemory } from '../../../src/reconcile/targetMemory.js';
import { heldOrdinals, observeStatefulSet, ordinalOf, statefulSetCounters } from '../../../src/reconcile/targets/statefulSet.js';
import type { PodsPending } from '../../../src/reconcile/targets/shared.js';
import { holding } from '../../support/cacheViews.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const LONG_READY = '2025-12-31T23:00:00Z';

interface StsOptions {
  replicas?: number;
  partition?: number;
  type?: 'RollingUpdate' | 'OnDelete';
  updated?: number;
  ready?: number;
  available?: number;
  currentRevision?: string;
  updateRevision?: string;
  annotations?: Record<string, string>;
  minReadySeconds?: number;
  claimTemplates?: string[];
}

/** StatefulSet `store` in `ns`: 3 replicas of revision store-bbb, every pod updated and available, unless told. */
function sts(o: StsOptions = {}): SlimStatefulSet {
  const replicas = o.replicas ?? 3;
  const rolling = o.partition !== undefined ? { rollingUpdate: { partition: o.partition } } : {};
  return {
    metadata: { name: 'store', namespace: 'ns', uid: 'sts-uid', generation: 2, ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      replicas,
      podManagementPolicy: 'OrderedReady',
      updateStrategy: { type: o.type ?? 'RollingUpdate', ...rolling },
      minReadySeconds: o.minReadySeconds ?? 0,
      images: ['store:2'],
      claimTemplates: o.claimTemplates ?? [],
    },
    status: {
      observedGeneration: 2,
      replicas,
      readyReplicas: o.ready ?? replicas,
      currentReplicas: replicas,
      updatedReplicas: o.updated ?? replicas,
      availableReplicas: o.available ?? replicas,
      currentRevision: o.currentRevision ?? 'store-bbb',
      updateRevision: o.updateRevision ?? 'store-bbb',
    },
  };
}

/** Pod `store-<ordinal>` of `hash`, on `node` (unscheduled without one), Ready since `readySince` if given. */
function stsPod(ordinal: number, hash: string, node?: string, readySince?: string): SlimPod {
  return {
    metadata: { name: `store-${ordinal}`, namespace: 'ns', creationTimestamp: '2025-12-31T22:00:00Z' },
    ...(node ? { node } : {}),
    scheduled: node !== undefined,
    hash,
    images: [`store:${hash}`],
    phase: node ? 'Running' : 'Pending',
    ready: readySince !== undefined,
    ...(readySince ? { readySince } : {}),
    restartCount: 0,
  };
}

const node = (name: string, health: SlimNode['health'] = { ready: 'True' }): SlimNode => ({ metadata: { name }, taints: [], health });
const REVISIONS: SlimRevision[] = [
  { metadata: { name: 'store-aaa' }, hash: 'aaa', revision: 1 },
  { metadata: { name: 'store-bbb' }, hash: 'bbb', revision: 2 },
];

/** A cache holding `s`, its pods and revisions, and the nodes; `extra` adds or replaces any method. */
function world(s: SlimStatefulSet | undefined, pods: SlimPod[], nodes: SlimNode[], extra: Partial<CacheView> = {}): CacheView {
  return {
    workload: holding(s ? { StatefulSet: s } : {}, { namespace: 'ns', name: 'store' }),
    podsOwnedBy: (uid) => (uid === 'sts-uid' ? pods : []),
    revisionsOwnedBy: (uid) => (uid === 'sts-uid' ? REVISIONS : []),
    nodes: () => nodes,
    ...extra,
  };
}

const observe = (c: CacheView, m = new TargetMemory(), status?: GuardStatus): Observation | PodsPending =>
  observeStatefulSet(c, m, 'ns', 'store', NOW, status);

/** The observation of an existing target, or a failed assertion. */
function target(o: Observation | PodsPending): Extract<Observation, { kind: 'Target' }> {
  assert.equal(o.kind, 'Target', JSON.stringify(o));
  return o;
}

const healthy = [stsPod(0, 'bbb', 'n1', LONG_READY), stsPod(1, 'bbb', 'n2', LONG_READY), stsPod(2, 'bbb', 'n3', LONG_READY)];
const threeNodes = [node('n1'), node('n2'), node('n3')];

describe('observeStatefulSet: the target', () => {
  it('is TargetMissing when the cache has no StatefulSet, does not know the kind, or holds one without a UID', () => {
    const missing = { kind: 'TargetMissing', targetName: 'store' };
    assert.deepEqual(observe(world(undefined, [], [])), missing);
    const noKind: CacheView = { workload: holding({}), podsOwnedBy: () => [], revisionsOwnedBy: () => [], nodes: () => [] };
    assert.deepEqual(observe(noKind), missing, 'a cache without StatefulSets');
    const s = sts();
    assert.deepEqual(observe(world({ ...s, metadata: { ...s.metadata, uid: '' } }, healthy, threeNodes)), missing);
  });

  it('forgets its units when the target goes missing: a StatefulSet made anew is seen for the first time', () => {
    const m = new TargetMemory();
    target(observe(world(sts(), healthy, threeNodes), m));
    m.commit();
    observe(world(undefined, [], []), m);
    // Back with one replica: without forget(), ordinals 1 and 2 would be named removed.
    const back = target(observe(world(sts({ replicas: 1 }), [healthy[0]!], threeNodes), m));
    assert.deepEqual(back.removedNodes, []);
  });

  it('reads the StatefulSet as decide does: kind, strategy, pod management and the revision of the live template', () => {
    const obs = target(observe(world(sts({ type: 'OnDelete' }), healthy, threeNodes)));
    assert.equal(obs.target.kind, 'StatefulSet');
    assert.equal(obs.target.strategy, 'OnDelete');
    assert.equal(obs.target.waitsOnUnreadyPods, true, 'OrderedReady: the controller waits on a pod that is not Ready');
    const base = sts();
    const parallel = target(observe(world({ ...base, spec: { ...base.spec, podManagementPolicy: 'Parallel' } }, healthy, threeNodes)));
    assert.equal(parallel.target.waitsOnUnreadyPods, false, 'Parallel: the controller replaces it itself');
    assert.deepEqual([obs.target.desired, obs.target.current, obs.target.updated], [3, 3, 3]);
    assert.equal(obs.currentRevision?.hash, 'bbb');
    assert.deepEqual(
      obs.revisions.map((r) => r.hash),
      ['bbb', 'aaa'],
      'newest first',
    );
  });

  it('reads the undo opt-out annotation: only "disabled" opts out', () => {
    const cases: Array<[Record<string, string> | undefined, boolean]> = [
      [undefined, false],
      [{ 'rolloutguard.dev/undo': 'disabled' }, true],
      [{ 'rolloutguard.dev/undo': 'enabled' }, false],
      [{ 'example.com/other': 'disabled' }, false],
    ];
    for (const [annotations, want] of cases) {
      const obs = target(observe(world(sts(annotations ? { annotations } : {}), healthy, threeNodes)));
      assert.equal(obs.target.undoOptOut, want, JSON.stringify(annotations));
    }
  });

  it("reads the StatefulSet controller's latest Warning (FailedCreate) through warningsFor('StatefulSet', …)", () => {
    const asked: string[] = [];
    const ev = (reason: string, at: string, message: string): SlimEvent => ({
      metadata: { name: `store.${at}` },
      involved: { kind: 'StatefulSet', name: 'store', namespace: 'ns' },
      reason,
      message,
      at,
    });
    const warningsFor: CacheView['warningsFor'] = (kind, ns, name) => {
      asked.push(`${kind} ${ns}/${name}`);
      if (kind !== 'StatefulSet' || name !== 'store') return [];
      return [
        ev('FailedCreate', '2025-12-31T23:58:00Z', 'create Pod store-2 in StatefulSet store failed error: older'),
        ev('FailedCreate', '2025-12-31T23:59:30Z', 'create Pod store-2 in StatefulSet store failed error: exceeded quota'),
      ];
    };
    const obs = target(observe(world(sts(), healthy, threeNodes, { warningsFor })));
    assert.deepEqual(obs.target.warning, {
      reason: 'FailedCreate',
      message: 'create Pod store-2 in StatefulSet store failed error: exceeded quota',
      at: '2025-12-31T23:59:30Z',
    });
    assert.ok(asked.includes('StatefulSet ns/store'), asked.join(', '));
    assert.ok(!asked.some((a) => a.startsWith('DaemonSet')), 'never asked as a DaemonSet');
  });
});

describe('observeStatefulSet: units are ordinals', () => {
  it('one unit per ordinal, named by its pod, with the node its pod runs on and that node’s health', () => {
    const notReady = { ready: 'False' as const, reason: 'KubeletNotReady', message: 'PLEG is not healthy' };
    const pods = [
      stsPod(0, 'bbb', 'n1', LONG_READY),
      stsPod(1, 'bbb', 'n2'), // on a node that is not Ready
      stsPod(2, 'bbb'), // Pending, unscheduled
      { ...stsPod(7, 'bbb', 'n1'), metadata: { name: 'other-0' } }, // not `store-<n>`: not a unit's pod
      { ...stsPod(1, '', 'n1'), metadata: { name: 'store-01' } }, // not an ordinal, and no hash
    ];
    const obs = target(observe(world(sts({ ready: 1, available: 1 }), pods, [node('n1'), node('n2', notReady)])));
    assert.deepEqual(
      obs.nodes.map((u) => ({ node: u.node, ordinal: u.ordinal, host: u.host, health: u.health?.ready, eligible: u.eligible })),
      [
        { node: 'store-0', ordinal: 0, host: 'n1', health: 'True', eligible: true },
        { node: 'store-1', ordinal: 1, host: 'n2', health: 'False', eligible: true },
        { node: 'store-2', ordinal: 2, host: undefined, health: undefined, eligible: true },
      ],
    );
    assert.deepEqual(obs.nodes[1]!.health, notReady);
    assert.deepEqual(
      obs.nodes.map((u) => u.pods.map((p) => `${p.name} ${p.hash} ready=${p.ready}`)),
      [['store-0 bbb ready=true'], ['store-1 bbb ready=false'], ['store-2 bbb ready=false']],
    );
    assert.deepEqual(obs.leftNodes, []);
  });

  it('an ordinal below replicas without a pod is still a unit, with no host', () => {
    const obs = target(observe(world(sts({ ready: 2, available: 2 }), [healthy[0]!, healthy[2]!], threeNodes)));
    const unit = obs.nodes.find((u) => u.node === 'store-1');
    assert.deepEqual(unit, { node: 'store-1', ordinal: 1, eligible: true, pods: [] });
  });

  it("each ordinal's claims that cannot serve its pod: Pending, Lost, being deleted or absent; Bound ones are left out", () => {
    const claims: Record<string, SlimClaim> = {
      'data-store-0': { metadata: { name: 'data-store-0' }, phase: 'Bound' },
      'logs-store-0': { metadata: { name: 'logs-store-0' }, phase: 'Bound' },
      'data-store-1': { metadata: { name: 'data-store-1', deletionTimestamp: '2026-01-01T00:00:00Z' }, phase: 'Bound' },
      'logs-store-1': { metadata: { name: 'logs-store-1' }, phase: 'Lost' },
      'data-store-2': { metadata: { name: 'data-store-2' }, phase: 'Pending', storageClassName: 'local' },
    };
    const s = sts({ claimTemplates: ['data', 'logs'] });
    const obs = target(observe(world(s, healthy, threeNodes, { claim: (ns, name) => (ns === 'ns' ? claims[name] : undefined) })));
    assert.deepEqual(
      obs.nodes.map((u) => u.claims),
      [
        undefined,
        [
          { name: 'data-store-1', phase: 'Bound', deletingSince: '2026-01-01T00:00:00Z' },
          { name: 'logs-store-1', phase: 'Lost' },
        ],
        [
          { name: 'data-store-2', phase: 'Pending', storageClass: 'local' },
          { name: 'logs-store-2', phase: 'Missing' },
        ],
      ],
    );
  });

  it('without a claim cache, no claim is read', () => {
    const obs = target(observe(world(sts({ claimTemplates: ['data'] }), healthy, threeNodes)));
    assert.ok(obs.nodes.every((u) => u.claims === undefined));
  });

  it('a pod on a node the cache does not know has a host and no health', () => {
    const obs = target(observe(world(sts(), healthy, [node('n1'), node('n2')])));
    assert.deepEqual([obs.nodes[2]!.host, obs.nodes[2]!.health], ['n3', undefined]);
  });

  it('applies minReadySeconds to each pod', () => {
    const pods = [stsPod(0, 'bbb', 'n1', '2025-12-31T23:59:55Z'), stsPod(1, 'bbb', 'n2', '2025-12-31T23:59:00Z')];
    const obs = target(observe(world(sts({ replicas: 2, minReadySeconds: 10 }), pods, threeNodes)));
    assert.deepEqual(
      obs.nodes.map((u) => u.pods[0]?.available),
      [false, true],
      'Ready 5 s < minReadySeconds 10 is not available',
    );
  });

  it('a scale-down: an ordinal at or above replicas that still has a pod is an ineligible unit, and its departure is a removal', () => {
    const m = new TargetMemory();
    target(observe(world(sts(), healthy, threeNodes), m));
    m.commit();
    // Scaled to 2: store-2 still runs while the controller deletes it; ordinal 3 has no pod and is no unit.
    const obs = target(observe(world(sts({ replicas: 2 }), healthy, threeNodes), m));
    assert.deepEqual(
      obs.nodes.map((u) => [u.node, u.eligible, u.ineligibleReason ?? '']),
      [
        ['store-0', true, ''],
        ['store-1', true, ''],
        ['store-2', false, 'ordinal 2 is at or above replicas 2 (scaling down)'],
      ],
    );
    assert.equal(obs.nodes[2]!.host, 'n3', 'its pod is still placed');
    assert.deepEqual([obs.leftNodes, obs.removedNodes], [[], ['store-2']], 'removed (scaled down), not lost');
  });
});

describe('observeStatefulSet: the partition', () => {
  it('heldOrdinals: the partition, clamped to replicas, none under OnDelete or without one', () => {
    const cases: Array<[string, StsOptions, number]> = [
      ['no rollingUpdate', {}, 0],
      ['partition 2 of 3', { partition: 2 }, 2],
      ['partition above replicas holds every ordinal', { partition: 5 }, 3],
      ['a negative partition holds nothing', { partition: -1 }, 0],
      ['OnDelete ignores the partition', { partition: 2, type: 'OnDelete' }, 0],
    ];
    for (const [name, o, want] of cases) assert.equal(heldOrdinals(sts(o)), want, name);
  });

  it('statefulSetCounters: held ordinals count as updated; `partition` only while they are on another revision', () => {
    const rolling = { partition: 2, updated: 1, currentRevision: 'store-aaa', updateRevision: 'store-bbb' };
    const cases: Array<[string, StsOptions, { updated: number; partition: number | undefined }]> = [
      ['held at partition 2, ordinal 2 updated', rolling, { updated: 3, partition: 2 }],
      ['held, nothing updated yet', { ...rolling, updated: 0 }, { updated: 2, partition: 2 }],
      ['partition 2 but one revision everywhere', { partition: 2, updated: 3 }, { updated: 3, partition: undefined }],
      ['no partition, mid-rollout', { updated: 1, currentRevision: 'store-aaa' }, { updated: 1, partition: undefined }],
      ['updated never exceeds replicas', { ...rolling, partition: 3, updated: 3 }, { updated: 3, partition: 3 }],
    ];
    for (const [name, o, want] of cases) {
      const c = statefulSetCounters(sts(o));
      assert.deepEqual({ updated: c.updated, partition: c.partition }, want, name);
      assert.equal('partition' in c, want.partition !== undefined, `${name}: no partition key unless held`);
      assert.deepEqual([c.desired, c.misscheduled, c.generation, c.observedGeneration], [3, 0, 2, 2], name);
    }
  });

  it('observes a rollout held at its partition: the partition on the target, held ordinals on the old revision', () => {
    const pods = [stsPod(0, 'aaa', 'n1', LONG_READY), stsPod(1, 'aaa', 'n2', LONG_READY), stsPod(2, 'bbb', 'n3', LONG_READY)];
    const held = sts({ partition: 2, updated: 1, currentRevision: 'store-aaa', updateRevision: 'store-bbb' });
    const obs = target(observe(world(held, pods, threeNodes)));
    assert.deepEqual([obs.target.partition, obs.target.updated, obs.target.available], [2, 3, 3]);
    assert.deepEqual(
      obs.nodes.map((u) => u.pods[0]?.hash),
      ['aaa', 'aaa', 'bbb'],
    );
    const done = target(observe(world(sts({ partition: 2 }), healthy, threeNodes)));
    assert.equal(done.target.partition, undefined, 'every ordinal on one revision: nothing held');
    assert.equal('partition' in done.target, false);
  });
});

describe('observeStatefulSet: pods only where they are needed', () => {
  /** A cache whose pod cache is in `state`, recording what it is asked. */
  const withPodCache = (s: SlimStatefulSet, state: 'synced' | 'syncing' | 'off', asked: string[]): CacheView =>
    world(s, healthy, threeNodes, {
      podCache: (kind, ns, name, uid) => {
        asked.push(`podCache ${kind} ${ns}/${name} ${uid}`);
        return state;
      },
      wantPods: (kind, ns, name) => asked.push(`wantPods ${kind} ${ns}/${name}`),
    });
  const following: GuardStatus = {
    state: 'Progressing',
    rollout: {
      toRevision: { hash: 'bbb' },
      startedAt: '',
      lastProgressAt: '',
      desiredAtStart: 3,
      progress: { observedGeneration: 2, updated: 3, available: 3, ready: 3, onTarget: 3 },
    },
  };
  const rolling = sts({ updated: 1, currentRevision: 'store-aaa' });
  const held = sts({ partition: 2, updated: 1, currentRevision: 'store-aaa', updateRevision: 'store-bbb' });

  const cases: Array<{ name: string; s: SlimStatefulSet; state: 'syncing' | 'off'; status?: GuardStatus; pending: boolean }> = [
    { name: 'counters not settled (a rollout), pods syncing', s: rolling, state: 'syncing', pending: true },
    { name: 'counters not settled, pods not watched', s: rolling, state: 'off', pending: true },
    { name: 'a partition holding ordinals: never settled', s: held, state: 'off', pending: true },
    { name: 'settled, but the guard follows a rollout (the bake)', s: sts(), state: 'syncing', status: following, pending: true },
    { name: 'settled and nothing followed: judged from the counters', s: sts(), state: 'off', status: {}, pending: false },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const asked: string[] = [];
      const o = observe(withPodCache(c.s, c.state, asked), new TargetMemory(), c.status ?? {});
      assert.ok(asked.includes('podCache StatefulSet ns/store sts-uid'), asked.join(', '));
      if (c.pending) {
        assert.deepEqual(o, { kind: 'PodsPending', target: 'store' });
        assert.ok(asked.includes('wantPods StatefulSet ns/store'), asked.join(', '));
        return;
      }
      const obs = target(o);
      assert.equal(obs.podsFromCounters, true);
      assert.deepEqual(
        obs.nodes.map((u) => [u.node, u.pods.length]),
        [
          ['store-0', 0],
          ['store-1', 0],
          ['store-2', 0],
        ],
      );
      assert.ok(!asked.some((a) => a.startsWith('wantPods')), 'nothing asked: the counters say enough');
    });
  }

  it('cached pods are always used when they are there', () => {
    const obs = target(observe(withPodCache(rolling, 'synced', []), new TargetMemory(), {}));
    assert.equal(obs.podsFromCounters, undefined);
    assert.deepEqual(
      obs.nodes.map((u) => u.pods.length),
      [1, 1, 1],
    );
  });
});

describe('ordinalOf', () => {
  const cases: Array<[string, string, number | undefined]> = [
    ['store', 'store-0', 0],
    ['store', 'store-12', 12],
    ['my-store', 'my-store-3', 3],
    ['store', 'store-03', undefined],
    ['store', 'store-', undefined],
    ['store', 'store-x', undefined],
    ['store', 'store-1-a', undefined],
    ['store', 'other-1', undefined],
    ['my', 'my-store-3', undefined],
  ];
  for (const [name, pod, want] of cases) it(`${pod} of ${name} → ${String(want)}`, () => assert.equal(ordinalOf(name, pod), want));
});
