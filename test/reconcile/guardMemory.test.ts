/**
 * GuardMemories: one GuardMemory per guard key, made on first use; `drop` forgets all one guard
 * remembered (target memory, cache wait, progress hold, announcements, own write, blocked units), so
 * that the next pass of the same key is a new guard's.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GuardStatus, PlannedEvent } from '../../src/api/types.js';
import type { SlimDaemonSet, SlimGuard, SlimNode, SlimRevision } from '../../src/api/objects.js';
import { GuardMemories, GuardMemory } from '../../src/reconcile/guardMemory.js';
import { observe, type PassInput, type PassResult } from '../../src/reconcile/guardPass.js';
import type { CacheView } from '../../src/reconcile/ports.js';
import { policy } from '../support/fixtures.js';
import { holding } from '../support/cacheViews.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const TEMPLATE_GENERATION = 'deprecated.daemonset.template.generation';
const POLICY = policy({ suspectAfterSeconds: 30, progressDeadlineSeconds: 60 });

/** A settled DaemonSet `d` on revisions h1 → h2 (current), judged from its counters. */
function world(desired: number, nodes: SlimNode[], templateGeneration = '2'): CacheView {
  const ds: SlimDaemonSet = {
    metadata: { name: 'd', namespace: 'ns', uid: 'u', generation: 1, annotations: { [TEMPLATE_GENERATION]: templateGeneration } },
    spec: { updateStrategy: { type: 'RollingUpdate' }, minReadySeconds: 0, placement: { nodeSelector: { pool: 'a' } }, images: ['i'] },
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
  return {
    workload: holding({ DaemonSet: ds }),
    podsOwnedBy: () => [],
    revisionsOwnedBy: () => revs,
    nodes: () => nodes,
    podCache: () => 'off',
  };
}
const node = (name: string, taints: SlimNode['taints'] = []): SlimNode => ({ metadata: { name, labels: { pool: 'a' } }, taints });
const three = (): SlimNode[] => [node('n1'), node('n2'), node('n3')];
const tainted = (): SlimNode[] => [node('n1'), node('n2'), node('n3', [{ key: 'gpu', value: 'x', effect: 'NoExecute' }])];
const guard = (resourceVersion: string): SlimGuard => ({
  metadata: { name: 'g', namespace: 'ns', uid: 'g-uid', resourceVersion },
  spec: { targetRef: { kind: 'DaemonSet', name: 'd' } },
});
/** The revision cache shows h2 current while the DaemonSet cache still shows h1's template generation. */
const BEHIND: GuardStatus = {
  state: 'Healthy',
  currentRevision: { hash: 'h1', revision: 1 },
  templateGeneration: '1',
  observedGeneration: 1,
};

const EVENT: PlannedEvent = { type: 'Normal', reason: 'R', action: 'A', note: 'n', onTarget: false };

/** A pass's result without its commit function, to compare two passes. */
function shape(r: PassResult): unknown {
  return r.kind === 'Decided' ? { ...r, commit: undefined } : r;
}

/** Gives `m` something of every kind a guard remembers. */
function remember(m: GuardMemory, base: GuardStatus): string {
  const first = observe(world(3, three()), m, { targetName: 'd', prev: {}, policy: POLICY, now: NOW });
  assert.equal(first.kind, 'Decided');
  if (first.kind === 'Decided') first.commit(); // the target memory: n1, n2, n3; the blocked units: none
  observe(world(3, three(), '1'), m, { targetName: 'd', prev: BEHIND, policy: POLICY, now: NOW }); // a cache wait starts
  m.written(NOW); // the progress hold
  m.remember(guard('1'), guard('2')); // our own write
  const status = m.announcements.attach(base, base, [EVENT], NOW);
  const id = status.announcements?.[0]?.id ?? assert.fail('an announcement id');
  m.announcements.markAnnounced([id]);
  return id;
}

describe('GuardMemories', () => {
  it('keeps one memory per key, made on first use', () => {
    const memories = new GuardMemories();
    const a = memories.of('ns/a');
    assert.equal(memories.of('ns/a'), a);
    assert.equal(a.key, 'ns/a');
    assert.equal(a.namespace, 'ns');
    assert.notEqual(memories.of('ns/b'), a);
  });

  it('drop forgets everything one guard remembered: its next pass behaves as a new guard’s', () => {
    const memories = new GuardMemories();
    const kept = new GuardMemory('ns/g');
    const base: GuardStatus = { state: 'Healthy' };
    const id = remember(kept, base);
    const dropped = memories.of('ns/g');
    remember(dropped, base);
    const other = memories.of('ns/other');
    remember(other, base);

    memories.drop('ns/g');
    const fresh = memories.of('ns/g');
    assert.notEqual(fresh, dropped);
    assert.equal(memories.of('ns/other'), other, 'only the dropped key is forgotten');
    const brandNew = new GuardMemory('ns/g');
    const at = NOW + 100;
    const departure: PassInput = { targetName: 'd', prev: {}, policy: POLICY, now: at };
    const waiting: PassInput = { targetName: 'd', prev: BEHIND, policy: POLICY, now: at };

    // The cache wait starts again from zero; the progress hold has no last write to count from.
    assert.equal(kept.cacheWait.waitedMs(at), 100);
    assert.equal(fresh.cacheWait.waitedMs(at), 0);
    assert.equal(kept.lastWriteAt, NOW);
    assert.equal(fresh.lastWriteAt, undefined);
    // The blocked units of the recorded pass (none): a new guard has no such pass.
    assert.deepEqual(kept.blockedBehind([]), []);
    assert.equal(fresh.blockedBehind([]), undefined);
    // The own write: the cached guard is taken as it is.
    const cached = guard('1');
    assert.equal(kept.freshest(cached).metadata.resourceVersion, '2');
    assert.equal(fresh.freshest(cached), cached);
    // The announcements: an Event announced before the drop is offered again; ids start afresh.
    const inStatus: GuardStatus = { announcements: [{ ...EVENT, id, at: new Date(NOW).toISOString() }] };
    assert.deepEqual(kept.announcements.pending(inStatus), []);
    assert.deepEqual(
      fresh.announcements.pending(inStatus).map((a) => a.id),
      [id],
    );
    const later = (m: GuardMemory) => m.announcements.attach(base, base, [EVENT], NOW);
    assert.notDeepEqual(later(kept), later(brandNew));
    assert.deepEqual(later(fresh), later(new GuardMemory('ns/g')));

    // The next passes: the same as a brand-new guard's, not those of the memory before the drop.
    const pass = (m: GuardMemory, cache: CacheView, input: PassInput) => shape(observe(cache, m, input));
    const left = (r: unknown) => (r as { obs?: { leftNodes?: { node: string }[] } }).obs?.leftNodes?.map((l) => l.node);
    const keptDeparture = pass(kept, world(2, tainted()), departure);
    const freshDeparture = pass(fresh, world(2, tainted()), departure);
    assert.deepEqual(left(keptDeparture), ['n3'], 'a node that left is named by a memory that saw it as a target');
    assert.deepEqual(left(pass(other, world(2, tainted()), departure)), ['n3'], 'another guard keeps its memory');
    assert.deepEqual(left(freshDeparture), []);
    assert.deepEqual(freshDeparture, pass(brandNew, world(2, tainted()), departure));
    assert.deepEqual(pass(fresh, world(3, three(), '1'), waiting), pass(brandNew, world(3, three(), '1'), waiting));
  });
});
