/**
 * The DaemonSet gather adapter through a fake CacheView: the target as decide reads it (kind, strategy,
 * counters) and what it never says of a DaemonSet: that its controller waits on unready pods. Only a
 * StatefulSet under OrderedReady does; were the DaemonSet adapter to say so, a DaemonSet's pods left on
 * an undone revision would be evicted (the forced rollback, src/domain/decide/forcedRollback.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SlimDaemonSet, SlimNode, SlimPod, SlimRevision } from '../../../src/api/objects.js';
import type { Observation } from '../../../src/domain/observation.js';
import type { CacheView } from '../../../src/reconcile/ports.js';
import { TargetMemory } from '../../../src/reconcile/targetMemory.js';
import { observeDaemonSet, settledCountersOf } from '../../../src/reconcile/targets/daemonSet.js';
import type { PodsPending } from '../../../src/reconcile/targets/shared.js';
import { holding } from '../../support/cacheViews.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const LONG_READY = '2025-12-31T23:00:00Z';

/**
 * DaemonSet `decoder` in `ns` after an undo: its template is revision 3 (hash `good`) again, observed by
 * its controller; two nodes run it and one still has the pod of the undone revision 2 (hash `bad`).
 */
function decoder(strategy: 'RollingUpdate' | 'OnDelete'): SlimDaemonSet {
  return {
    metadata: { name: 'decoder', namespace: 'ns', uid: 'ds-uid', generation: 3 },
    spec: { updateStrategy: { type: strategy }, minReadySeconds: 0, placement: {}, images: ['decoder:1'] },
    status: {
      observedGeneration: 3,
      desiredNumberScheduled: 3,
      currentNumberScheduled: 3,
      updatedNumberScheduled: 2,
      numberReady: 2,
      numberAvailable: 2,
      numberMisscheduled: 0,
    },
  };
}

function dsPod(node: string, hash: string, ready: boolean): SlimPod {
  return {
    metadata: { name: `decoder-${node}`, namespace: 'ns', uid: `uid-${node}`, creationTimestamp: '2025-12-31T22:00:00Z' },
    node,
    scheduled: true,
    hash,
    images: [`decoder:${hash}`],
    phase: ready ? 'Running' : 'Pending',
    ready,
    ...(ready ? { readySince: LONG_READY } : { waitingReason: 'ImagePullBackOff', waitingMessage: 'Back-off pulling image' }),
    restartCount: 0,
  };
}

const node = (name: string): SlimNode => ({ metadata: { name }, taints: [], health: { ready: 'True' } });
const REVISIONS: SlimRevision[] = [
  { metadata: { name: 'decoder-bad' }, hash: 'bad', revision: 2 },
  { metadata: { name: 'decoder-good' }, hash: 'good', revision: 3 },
];
const PODS = [dsPod('n1', 'good', true), dsPod('n2', 'good', true), dsPod('n3', 'bad', false)];

function world(ds: SlimDaemonSet): CacheView {
  return {
    workload: holding({ DaemonSet: ds }, { namespace: 'ns', name: 'decoder' }),
    podsOwnedBy: (uid) => (uid === 'ds-uid' ? PODS : []),
    revisionsOwnedBy: (uid) => (uid === 'ds-uid' ? REVISIONS : []),
    nodes: () => [node('n1'), node('n2'), node('n3')],
  };
}

/** The observation of an existing target, or a failed assertion. */
function target(o: Observation | PodsPending): Extract<Observation, { kind: 'Target' }> {
  assert.equal(o.kind, 'Target', JSON.stringify(o));
  return o;
}

describe('observeDaemonSet: the target', () => {
  it("reads the DaemonSet as decide does: kind, strategy, its controller's counters and the live revision", () => {
    const obs = target(observeDaemonSet(world(decoder('RollingUpdate')), new TargetMemory(), 'ns', 'decoder', NOW));
    assert.equal(obs.target.kind, 'DaemonSet');
    assert.equal(obs.target.strategy, 'RollingUpdate');
    assert.deepEqual([obs.target.desired, obs.target.current, obs.target.updated, obs.target.ready, obs.target.available], [3, 3, 2, 2, 2]);
    assert.deepEqual(settledCountersOf(decoder('RollingUpdate')), {
      generation: 3,
      observedGeneration: 3,
      desired: 3,
      current: 3,
      updated: 2,
      ready: 2,
      available: 2,
      misscheduled: 0,
    });
    assert.equal(obs.currentRevision?.hash, 'good');
    assert.deepEqual(
      obs.nodes.map((n) => [n.node, n.pods.map((p) => p.hash)]),
      [
        ['n1', ['good']],
        ['n2', ['good']],
        ['n3', ['bad']],
      ],
    );
  });

  for (const strategy of ['RollingUpdate', 'OnDelete'] as const) {
    it(`never says its controller waits on unready pods (${strategy}), even with a pod left not Ready on the undone revision`, () => {
      const obs = target(observeDaemonSet(world(decoder(strategy)), new TargetMemory(), 'ns', 'decoder', NOW));
      assert.equal(obs.target.strategy, strategy);
      assert.equal(obs.nodes.find((n) => n.node === 'n3')?.pods[0]?.ready, false, 'the premise: a pod not Ready on revision 2');
      assert.notEqual(obs.target.waitsOnUnreadyPods, true, 'the DaemonSet controller replaces an unready pod itself');
    });
  }
});
