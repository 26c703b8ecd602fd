/**
 * GuardPass: the observe-and-decide half of a pass that the reconciler and `check` share. Over the
 * guard's memory it keeps the cache wait (an input to decide), the progress hold and the target memory,
 * and commits the target memory only when its caller says the status holds the pass.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GuardStatus } from '../../src/api/types.js';
import { CACHE_WAIT_LIMIT_MS } from '../../src/domain/decide/settle.js';
import type { SlimDaemonSet, SlimNode, SlimPod, SlimRevision } from '../../src/api/objects.js';
import { CACHE_RELIST_AFTER_MS } from '../../src/reconcile/cacheWait.js';
import type { CacheView } from '../../src/reconcile/ports.js';
import { GuardPass, PROGRESS_WRITE_INTERVAL_MS, type DecidedPass, type PassResult } from '../../src/reconcile/guardPass.js';
import { policy, slimPod } from '../support/fixtures.js';
import { holding } from '../support/cacheViews.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const TEMPLATE_GENERATION = 'deprecated.daemonset.template.generation';

interface WorldOptions {
  desired: number;
  nodes: SlimNode[];
  templateGeneration?: string;
  podCache?: 'synced' | 'syncing' | 'off';
  wanted?: string[];
  pods?: SlimPod[];
  /** Ready and available pods by the DaemonSet's counters (default: desired). */
  available?: number;
}

/** A settled DaemonSet `d` on revisions h1 → h2 (current), judged from its counters. */
function world(o: WorldOptions): CacheView {
  const ds: SlimDaemonSet = {
    metadata: { name: 'd', namespace: 'ns', uid: 'u', generation: 1, annotations: { [TEMPLATE_GENERATION]: o.templateGeneration ?? '2' } },
    spec: { updateStrategy: { type: 'RollingUpdate' }, minReadySeconds: 0, placement: { nodeSelector: { pool: 'a' } }, images: ['i'] },
    status: {
      observedGeneration: 1,
      desiredNumberScheduled: o.desired,
      currentNumberScheduled: o.desired,
      updatedNumberScheduled: o.desired,
      numberReady: o.available ?? o.desired,
      numberAvailable: o.available ?? o.desired,
      numberMisscheduled: 0,
    },
  };
  const revs: SlimRevision[] = [
    { metadata: { name: 'd-h1' }, hash: 'h1', revision: 1 },
    { metadata: { name: 'd-h2' }, hash: 'h2', revision: 2 },
  ];
  const cache: CacheView = {
    workload: holding({ DaemonSet: ds }),
    podsOwnedBy: () => o.pods ?? [],
    revisionsOwnedBy: () => revs,
    nodes: () => o.nodes,
    podCache: () => o.podCache ?? 'off',
  };
  if (o.wanted) cache.wantPods = (_kind, ns, name) => o.wanted!.push(`${ns}/${name}`);
  return cache;
}
const node = (name: string, taints: SlimNode['taints'] = []): SlimNode => ({ metadata: { name, labels: { pool: 'a' } }, taints });
const three = (): SlimNode[] => [node('n1'), node('n2'), node('n3')];
const POLICY = policy({ suspectAfterSeconds: 30, progressDeadlineSeconds: 60 });

function decided(r: PassResult): DecidedPass {
  if (r.kind !== 'Decided') assert.fail(`expected a decision, got ${r.kind}`);
  return r;
}

describe('GuardPass', () => {
  it('ends without deciding while the pods a rollout needs are not listed, and asks for them', () => {
    const wanted: string[] = [];
    const pass = new GuardPass('ns/g');
    // A status that follows a rollout needs the pods, whatever the counters say.
    const startedAt = new Date(NOW - 5000).toISOString();
    const prev: GuardStatus = {
      state: 'Progressing',
      rollout: {
        toRevision: { hash: 'h2', revision: 2 },
        startedAt,
        lastProgressAt: startedAt,
        desiredAtStart: 3,
        progress: { observedGeneration: 1, updated: 1, available: 1, ready: 1, onTarget: 1 },
      },
    };
    const r = pass.observe(world({ desired: 3, nodes: three(), podCache: 'syncing', wanted }), {
      targetName: 'd',
      prev,
      policy: POLICY,
      now: NOW,
    });
    assert.deepEqual(r, { kind: 'PodsPending', target: 'd' });
    assert.deepEqual(wanted, ['ns/d']);
  });

  it('gives decide the cache wait as an input: set aside, a relist every interval, taken as it is past the limit', () => {
    const pass = new GuardPass('ns/g');
    // The revision cache shows h2 as current while the DaemonSet cache still shows the template
    // generation h1 belonged to: the DaemonSet cache is behind.
    const prev: GuardStatus = {
      state: 'Healthy',
      currentRevision: { hash: 'h1', revision: 1 },
      templateGeneration: '1',
      observedGeneration: 1,
    };
    const behind = world({ desired: 3, nodes: three(), templateGeneration: '1' });
    const at = (ms: number) => pass.observe(behind, { targetName: 'd', prev, policy: POLICY, now: NOW + ms });
    const first = decided(at(0));
    assert.equal(first.decision.deferred, true, 'set aside while the caches disagree');
    assert.equal(first.relistAfterWaitMs, undefined);
    assert.equal(decided(at(CACHE_RELIST_AFTER_MS - 1)).relistAfterWaitMs, undefined);
    assert.equal(decided(at(CACHE_RELIST_AFTER_MS)).relistAfterWaitMs, CACHE_RELIST_AFTER_MS, 'time to list both caches again');
    assert.ok(CACHE_WAIT_LIMIT_MS > CACHE_RELIST_AFTER_MS);
    const late = decided(at(CACHE_WAIT_LIMIT_MS));
    assert.equal(late.decision.deferred, undefined, 'past the limit the observation is taken as it is');
    // A pass that is not set aside ends the wait: the next disagreement starts from zero.
    assert.equal(
      decided(pass.observe(behind, { targetName: 'd', prev, policy: POLICY, now: NOW + CACHE_WAIT_LIMIT_MS + 1 })).decision.deferred,
      true,
    );
  });

  it('holds a progress-only change inside the write interval after a write, never a first write', () => {
    const pass = new GuardPass('ns/g');
    const cache = world({ desired: 3, nodes: three() });
    const base = decided(pass.observe(cache, { targetName: 'd', prev: {}, policy: POLICY, now: NOW }));
    assert.equal(base.holdMs, 0, 'nothing written yet: nothing to hold');
    base.commit();
    // Status differs only in its message: progress, not a transition.
    const prev: GuardStatus = { ...base.decision.status, message: 'an older message' };
    const unwritten = decided(pass.observe(cache, { targetName: 'd', prev, policy: POLICY, now: NOW + 100 }));
    assert.equal(unwritten.holdMs, 0, 'no write yet');
    pass.memory.written(NOW + 100);
    const held = decided(pass.observe(cache, { targetName: 'd', prev, policy: POLICY, now: NOW + 300 }));
    assert.equal(held.holdMs, PROGRESS_WRITE_INTERVAL_MS - 200);
    const after = decided(pass.observe(cache, { targetName: 'd', prev, policy: POLICY, now: NOW + 100 + PROGRESS_WRITE_INTERVAL_MS }));
    assert.equal(after.holdMs, 0, 'the interval is over');
    // A new state is never held.
    const transition = decided(
      pass.observe(cache, { targetName: 'd', prev: { ...prev, state: 'Progressing' }, policy: POLICY, now: NOW + 300 }),
    );
    assert.notEqual(transition.decision.status.state, 'Progressing');
    assert.equal(transition.holdMs, 0);
  });

  it('remembers every unit a committed pass found blocked, for the status that pass named, past its cap', () => {
    const pass = new GuardPass('ns/g');
    const names = Array.from({ length: 25 }, (_, i) => `n${String(i + 1).padStart(2, '0')}`);
    const crashing = (n: string): SlimPod => slimPod(n, { waitingReason: 'CrashLoopBackOff', waitingMessage: 'back-off', restartCount: 3 });
    const cache = world({ desired: 25, nodes: names.map((n) => node(n)), podCache: 'synced', pods: names.map(crashing), available: 0 });
    const first = decided(pass.observe(cache, { targetName: 'd', prev: {}, policy: POLICY, now: NOW }));
    const named = first.decision.status.blockedNodes;
    assert.equal(named?.length, 20, 'the status names 20');
    assert.deepEqual(
      first.decision.blocked?.map((b) => b.node),
      names,
      'the decision carries all 25',
    );
    assert.equal(pass.memory.blockedBehind(named), undefined, 'nothing remembered before the pass is recorded');
    first.commit();
    assert.equal(pass.memory.blockedBehind(named), first.decision.blocked);
    // Through the API server an entry's keys come back in another order: still the same status.
    const reordered = named?.map((b) => Object.fromEntries(Object.entries(b).reverse()) as typeof b);
    assert.equal(pass.memory.blockedBehind(reordered), first.decision.blocked);
    // A status that pass did not write (a restart, another leader, a later change): nothing is given.
    assert.equal(pass.memory.blockedBehind(named?.slice(1)), undefined);
    assert.equal(pass.memory.blockedBehind(undefined), undefined);
  });

  it('keeps naming a node that left until the caller commits the pass that recorded it', () => {
    const pass = new GuardPass('ns/g');
    const taint = [{ key: 'gpu', value: 'x', effect: 'NoExecute' }];
    const left = (r: PassResult) => (r.kind === 'Decided' && r.obs.kind === 'Target' ? r.obs.leftNodes.map((l) => l.node) : []);
    const observe = (desired: number, nodes: SlimNode[], prev: GuardStatus = {}) =>
      pass.observe(world({ desired, nodes }), { targetName: 'd', prev, policy: POLICY, now: NOW });
    decided(observe(3, three())).commit();
    const tainted = [node('n1'), node('n2'), node('n3', taint)];
    // The DaemonSet's DESIRED has caught up: the departure is named; the write failed, nothing committed.
    assert.deepEqual(left(observe(2, tainted)), ['n3']);
    const again = observe(2, tainted);
    assert.deepEqual(left(again), ['n3'], 'offered again: the earlier pass was never recorded');
    decided(again).commit();
    assert.deepEqual(left(observe(2, tainted)), [], 'recorded: not named again');
  });
});
