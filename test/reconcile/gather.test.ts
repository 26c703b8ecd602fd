/**
 * gather: the observation built from caches, and the memory that names nodes which left the targets
 * on the pass where the DaemonSet status catches up (node and DaemonSet events come in either order).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SlimDaemonSet, SlimNode, SlimPod, SlimRevision } from '../../src/api/objects.js';
import type { GuardStatus } from '../../src/api/types.js';
import { gather, observationOf } from '../../src/reconcile/gather.js';
import { TargetMemory } from '../../src/reconcile/targetMemory.js';
import type { CacheView } from '../../src/reconcile/ports.js';
import { slimPod } from '../support/fixtures.js';
import { holding } from '../support/cacheViews.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
/** The target every case gathers. */
const D = { kind: 'DaemonSet', name: 'd' } as const;

function world(desired: number, nodes: SlimNode[], pods: SlimPod[] = []): CacheView {
  const ds: SlimDaemonSet = {
    metadata: { name: 'd', namespace: 'ns', uid: 'u', generation: 1 },
    spec: { updateStrategy: { type: 'RollingUpdate' }, minReadySeconds: 10, placement: { nodeSelector: { pool: 'a' } }, images: ['i'] },
    status: {
      observedGeneration: 1,
      desiredNumberScheduled: desired,
      currentNumberScheduled: desired,
      updatedNumberScheduled: desired,
      numberReady: desired,
      numberAvailable: desired,
      numberMisscheduled: 0,
    },
  };
  const revs: SlimRevision[] = [
    { metadata: { name: 'd-h1' }, hash: 'h1', revision: 1 },
    { metadata: { name: 'd-h2' }, hash: 'h2', revision: 2 },
  ];
  return { workload: holding({ DaemonSet: ds }), podsOwnedBy: () => pods, revisionsOwnedBy: () => revs, nodes: () => nodes };
}
const node = (name: string, taints: SlimNode['taints'] = [], pool = 'a'): SlimNode => ({ metadata: { name, labels: { pool } }, taints });
const pod = (n: string, readySince?: string): SlimPod => slimPod(n, readySince ? { ready: true, readySince } : {});

describe('gather', () => {
  it('takes the highest revision as current, applies minReadySeconds, and drops irrelevant nodes', () => {
    const obs = gather(
      world(2, [node('n1'), node('n2'), node('other', [], 'b')], [pod('n1', '2025-12-31T23:59:00Z'), pod('n2', '2025-12-31T23:59:55Z')]),
      new TargetMemory(),
      'ns',
      D,
      NOW,
    );
    assert.equal(obs.kind, 'Target');
    if (obs.kind !== 'Target') return;
    assert.equal(obs.currentRevision?.hash, 'h2');
    assert.deepEqual(
      obs.nodes.map((n) => n.node),
      ['n1', 'n2'],
      'a node of another pool with no pod is not part of the picture',
    );
    assert.deepEqual(
      obs.nodes.map((n) => n.pods[0]?.available),
      [true, false],
      'ready 5 s < minReadySeconds 10 is not available',
    );
  });

  it('of revisions tied at the newest number, takes the one storing the live template (a stale controller numbered the new one like the old)', () => {
    // A controller-manager syncing from a stale revision cache numbered the new template 1, like the old one.
    const cache = (digest: string | undefined, revs: SlimRevision[]): CacheView => {
      const base = world(1, [node('n1')]);
      const ds = base.workload('DaemonSet', 'ns', 'd')!;
      const withDigest: SlimDaemonSet = digest === undefined ? ds : { ...ds, spec: { ...ds.spec, templateDigest: digest } };
      return { ...base, workload: holding({ DaemonSet: withDigest }), revisionsOwnedBy: () => revs };
    };
    const tied: SlimRevision[] = [
      { metadata: { name: 'd-old' }, hash: 'old', revision: 1, templateDigest: 'dold' },
      { metadata: { name: 'd-new' }, hash: 'new', revision: 1, templateDigest: 'dnew' },
    ];
    const current = (c: CacheView): string | undefined => {
      const obs = gather(c, new TargetMemory(), 'ns', D, NOW);
      return obs.kind === 'Target' ? obs.currentRevision?.hash : undefined;
    };
    assert.equal(current(cache('dnew', tied)), 'new');
    assert.equal(current(cache('dold', tied)), 'old');
    assert.equal(current(cache('dnew', [...tied].reverse())), 'new', 'whatever order the cache lists them in');
    // No cached revision stores the live template yet, or no digest is known: the newest number stands in.
    const numbered: SlimRevision[] = [
      { metadata: { name: 'd-h1' }, hash: 'h1', revision: 1, templateDigest: 'd1' },
      { metadata: { name: 'd-h2' }, hash: 'h2', revision: 2, templateDigest: 'd2' },
    ];
    assert.equal(current(cache('dnone', numbered)), 'h2');
    assert.equal(current(cache(undefined, numbered)), 'h2');
    // An old template back (an undo, a re-apply) before the controller renumbers it: not current yet.
    assert.equal(current(cache('d1', numbered)), 'h2');
  });

  it('a missing DaemonSet is TargetMissing', () => {
    const cache: CacheView = { workload: holding({}), podsOwnedBy: () => [], revisionsOwnedBy: () => [], nodes: () => [] };
    assert.deepEqual(gather(cache, new TargetMemory(), 'ns', D, NOW), { kind: 'TargetMissing', targetName: 'd' });
  });

  it('a DaemonSet being deleted, or in a namespace being terminated, is TargetDeleting; one made anew in a namespace of that name is not', () => {
    const base = world(1, [node('n1')], [pod('n1', '2025-12-31T23:59:00Z')]);
    const ds = base.workload('DaemonSet', 'ns', 'd')!;
    const cases: Array<{ name: string; ds: Partial<SlimDaemonSet['metadata']>; terminating?: string; want: unknown }> = [
      { name: 'live DaemonSet, live namespace', ds: {}, want: 'Target' },
      {
        name: 'the DaemonSet has a deletionTimestamp',
        ds: { deletionTimestamp: '2025-12-31T23:59:30Z' },
        want: { kind: 'TargetDeleting', targetName: 'd', by: 'Target', since: '2025-12-31T23:59:30Z' },
      },
      {
        name: 'its namespace began terminating after it was created',
        ds: { creationTimestamp: '2025-12-31T20:00:00Z' },
        terminating: '2025-12-31T23:59:40Z',
        want: { kind: 'TargetDeleting', targetName: 'd', by: 'Namespace', since: '2025-12-31T23:59:40Z' },
      },
      {
        name: 'both: the namespace is named, it is what was deleted',
        ds: { creationTimestamp: '2025-12-31T20:00:00Z', deletionTimestamp: '2025-12-31T23:59:41Z' },
        terminating: '2025-12-31T23:59:40Z',
        want: { kind: 'TargetDeleting', targetName: 'd', by: 'Namespace', since: '2025-12-31T23:59:40Z' },
      },
      {
        name: 'created after the namespace of that name was seen terminating: a new namespace, judged as usual',
        ds: { creationTimestamp: '2025-12-31T23:59:50Z' },
        terminating: '2025-12-31T23:59:40Z',
        want: 'Target',
      },
    ];
    for (const c of cases) {
      const withMeta: SlimDaemonSet = { ...ds, metadata: { ...ds.metadata, ...c.ds } };
      const cache: CacheView = {
        ...base,
        workload: holding({ DaemonSet: withMeta }),
        namespaceTerminatingSince: (n) => (n === 'ns' ? c.terminating : undefined),
      };
      const obs = gather(cache, new TargetMemory(), 'ns', D, NOW);
      if (c.want === 'Target') assert.equal(obs.kind, 'Target', c.name);
      else assert.deepEqual(obs, c.want, c.name);
    }
  });

  it('names a node that left until the DaemonSet status agrees, and tells deleted nodes apart', () => {
    const m = new TargetMemory();
    const taint = [{ key: 'gpu', value: 'x', effect: 'NoExecute' }];
    const left = (o: ReturnType<typeof gather>) => (o.kind === 'Target' ? o.leftNodes.map((l) => `${l.node}: ${l.reason}`) : []);
    const removed = (o: ReturnType<typeof gather>) => (o.kind === 'Target' ? o.removedNodes : []);
    assert.deepEqual(left(gather(world(3, [node('n1'), node('n2'), node('n3')]), m, 'ns', D, NOW)), []);
    // The taint arrives before the DaemonSet status drops: named, and still named on the next pass.
    const a = gather(world(3, [node('n1'), node('n2'), node('n3', taint)]), m, 'ns', D, NOW);
    assert.deepEqual(left(a), ['n3: untolerated taint gpu=x:NoExecute']);
    m.commit(); // not settled yet: committing must not move the baseline
    const b = gather(world(2, [node('n1'), node('n2'), node('n3', taint)]), m, 'ns', D, NOW);
    assert.deepEqual(left(b), ['n3: untolerated taint gpu=x:NoExecute']);
    m.commit();
    // Settled and recorded: nothing left any more.
    assert.deepEqual(left(gather(world(2, [node('n1'), node('n2'), node('n3', taint)]), m, 'ns', D, NOW)), []);
    m.commit();
    // A deleted node is "removed", not "left".
    const c = gather(world(1, [node('n1')]), m, 'ns', D, NOW);
    assert.deepEqual([left(c), removed(c)], [[], ['n2']]);
  });

  it('keeps naming a departure until a pass commits it, even once the DaemonSet status has settled', () => {
    // A pass that waits for the revision cache, holds its write or fails to persist does not commit:
    // the next pass must still see which node left and why.
    const m = new TargetMemory();
    const taint = [{ key: 'dedicated', value: 'gpu', effect: 'NoExecute' }];
    const left = (o: ReturnType<typeof gather>) => (o.kind === 'Target' ? o.leftNodes.map((l) => l.node) : []);
    gather(world(3, [node('n1'), node('n2'), node('n3')]), m, 'ns', D, NOW);
    const settledWorld = world(2, [node('n1'), node('n2'), node('n3', taint)]);
    assert.deepEqual(left(gather(settledWorld, m, 'ns', D, NOW)), ['n3']); // deferred: no commit
    assert.deepEqual(left(gather(settledWorld, m, 'ns', D, NOW)), ['n3']);
    m.commit();
    assert.deepEqual(left(gather(settledWorld, m, 'ns', D, NOW)), []);
  });
});

describe('gather: a kind cached on demand, started by its first guard', () => {
  it('before its cache has listed: the pass waits and asks for it, rather than call the target missing', () => {
    const asked: string[] = [];
    const cache: CacheView = {
      ...world(1, [node('n1')]),
      workload: holding({}),
      workloadsListed: (kind) => (asked.push(kind), false),
    };
    assert.deepEqual(gather(cache, new TargetMemory(), 'ns', D, NOW), { kind: 'PodsPending', target: 'd' });
    assert.deepEqual(asked, ['DaemonSet']);
  });

  it('once listed: observed as usual', () => {
    const cache: CacheView = { ...world(1, [node('n1')]), workloadsListed: () => true };
    const obs = observationOf(gather(cache, new TargetMemory(), 'ns', D, NOW));
    assert.equal(obs.kind === 'Target' ? obs.target.kind : obs.kind, 'DaemonSet');
  });
});

describe('gather: pods only where they are needed', () => {
  const nodes = [node('n1'), node('n2')];
  const pods = [pod('n1', '2025-12-31T23:00:00Z'), pod('n2', '2025-12-31T23:00:00Z')];
  const withCache = (desired: number, state: 'synced' | 'syncing' | 'off', asked: string[], updated = desired): CacheView => {
    const base = world(desired, nodes, pods);
    const ds = base.workload('DaemonSet', 'ns', 'd')!;
    return {
      ...base,
      workload: holding({ DaemonSet: { ...ds, status: { ...ds.status, updatedNumberScheduled: updated } } }),
      podCache: () => state,
      wantPods: (_kind, n, name) => asked.push(`${n}/${name}`),
    };
  };

  it('a settled DaemonSet whose pods are not cached is judged from its counters', () => {
    const asked: string[] = [];
    const obs = gather(withCache(2, 'off', asked), new TargetMemory(), 'ns', D, NOW, {});
    assert.equal(obs.kind, 'Target');
    if (obs.kind !== 'Target') return;
    assert.equal(obs.podsFromCounters, true);
    assert.deepEqual(
      obs.nodes.map((n) => [n.node, n.pods.length]),
      [
        ['n1', 0],
        ['n2', 0],
      ],
    );
    assert.deepEqual(asked, [], 'nothing asked: the counters say enough');
  });

  it('a DaemonSet whose counters are not settled waits for its pods, and asks for them', () => {
    const asked: string[] = [];
    assert.deepEqual(gather(withCache(2, 'off', asked, 1), new TargetMemory(), 'ns', D, NOW, {}), {
      kind: 'PodsPending',
      target: 'd',
    });
    assert.deepEqual(asked, ['ns/d']);
    assert.deepEqual(gather(withCache(2, 'syncing', [], 1), new TargetMemory(), 'ns', D, NOW, {}), {
      kind: 'PodsPending',
      target: 'd',
    });
  });

  it('a guard that follows a rollout waits for the pods even when the counters are settled (the bake)', () => {
    const following: GuardStatus = {
      state: 'Progressing',
      rollout: {
        toRevision: { hash: 'h2' },
        startedAt: '',
        lastProgressAt: '',
        desiredAtStart: 2,
        progress: { observedGeneration: 1, updated: 2, available: 2, ready: 2, onTarget: 2 },
        updatedAt: '',
      },
    };
    const asked: string[] = [];
    assert.equal(gather(withCache(2, 'off', asked), new TargetMemory(), 'ns', D, NOW, following).kind, 'PodsPending');
    assert.deepEqual(asked, ['ns/d']);
  });

  it('cached pods are always used when they are there', () => {
    const obs = gather(withCache(2, 'synced', []), new TargetMemory(), 'ns', D, NOW, {});
    assert.equal(obs.kind, 'Target');
    if (obs.kind !== 'Target') return;
    assert.equal(obs.podsFromCounters, undefined);
    assert.deepEqual(
      obs.nodes.map((n) => n.pods.length),
      [1, 1],
    );
  });
});
