/**
 * The StatefulSet mechanics a guard of StatefulSets rests on, as this control plane's own controllers
 * (statefulset, persistent volume binder, PVC and PV protection) and scheduler play them, with kwok
 * pods. Nothing of the operator runs here: these are the facts its verdicts and its forced rollback
 * assume, held so that a new Kubernetes version that changes one of them fails here first.
 *
 * - OrderedReady replaces the highest ordinal first and stops at a pod that is not Ready. After
 *   `kubectl rollout undo` the template is restored but the broken pod is never replaced (the
 *   controller waits for it to become Ready first, kubernetes/kubernetes#67250); deleting it by hand,
 *   the documented "forced rollback", finishes the rollback.
 * - Parallel does not wait: after the same revert the controller replaces the broken pod itself.
 * - A partition updates only the ordinals at or above it, and the rollout then waits there:
 *   `currentRevision` stays the old one and `updatedReplicas` counts the updated ordinals.
 * - A claim of a WaitForFirstConsumer class binds to a static PersistentVolume once the scheduler picks
 *   the node the volume is pinned to.
 */
// Manifests are edited as the plain JSON they are.
/* eslint-disable @typescript-eslint/no-explicit-any */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createNamespace,
  createNodePool,
  ensureCluster,
  holdsFor,
  kubectl,
  kubectlJson,
  uniqueName,
  waitFor,
  type NodePool,
} from '../support/cluster.js';
import { apply } from '../support/operator.js';
import { pinnedVolumes, setStoreImage, settledSts, stsPods, stsStatus, storeStatefulSet, type PodRow } from '../support/statefulSets.js';

const BROKEN = 'registry.local/store:2-broken';
const cleanups: Array<() => Promise<void>> = [];

/** A namespace and a node pool of its own, removed after the suite. */
async function scene(prefix: string, nodes = 3): Promise<{ ns: string; pool: NodePool }> {
  const n = await createNamespace(prefix);
  const pool = await createNodePool(uniqueName(prefix), nodes);
  cleanups.push(n.cleanup, pool.cleanup);
  return { ns: n.name, pool };
}

/** Waits until `store-2` runs the update revision and waits pulling its image. */
async function brokenAtTwo(ns: string): Promise<Map<string, PodRow>> {
  return waitFor(
    async () => {
      const s = await stsStatus(ns);
      const p = await stsPods(ns);
      const two = p.get('store-2');
      // The controller replaces the pod before it writes its status: wait for both.
      const updated = s.updatedReplicas === 1 && s.updateRevision !== undefined && s.updateRevision !== s.currentRevision;
      return updated && two?.revision === s.updateRevision && two?.waiting === 'ImagePullBackOff' ? p : false;
    },
    { timeoutMs: 90_000, describe: 'store-2 on the broken revision, ImagePullBackOff, and the status counting it' },
  );
}

describe('StatefulSet rollouts on the local control plane: the mechanics a guard relies on', { concurrency: true }, () => {
  before(() => ensureCluster());
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it('OrderedReady: the highest ordinal first, stopped at a pod that is not Ready; rollout undo leaves it stuck; deleting it finishes the rollback', async () => {
    const { ns, pool } = await scene('sts-ordered');
    await apply(storeStatefulSet({ ns, pool: pool.name }));
    const before = await settledSts(ns);
    const old = await stsPods(ns);
    await setStoreImage(ns, BROKEN);
    const p = await brokenAtTwo(ns);
    // The controller waits for store-2: store-0 and store-1 keep their pods and the old revision.
    await holdsFor(
      async () => {
        const now = await stsPods(ns);
        return ['store-0', 'store-1'].every((n) => now.get(n)?.uid === old.get(n)?.uid && now.get(n)?.revision === old.get(n)?.revision);
      },
      { durationMs: 5_000, describe: 'store-0 and store-1 untouched' },
    );

    // The template restored as `kubectl rollout undo` restores it: the broken pod stays.
    await kubectl(['rollout', 'undo', 'sts/store'], { ns });
    await waitFor(async () => (await stsStatus(ns)).updateRevision === before.currentRevision, {
      timeoutMs: 30_000,
      describe: 'the previous revision is the update revision again',
    });
    const stuck = p.get('store-2')!;
    await holdsFor(
      async () => {
        const two = (await stsPods(ns)).get('store-2');
        return two?.uid === stuck.uid && two.revision === stuck.revision && !two.ready;
      },
      { durationMs: 10_000, describe: 'store-2 never replaced after the revert (kubernetes#67250)' },
    );

    // The forced rollback: the stuck pod deleted by hand; the controller recreates it on the restored revision.
    await kubectl(['delete', 'pod', 'store-2', '--wait=false'], { ns });
    const done = await settledSts(ns);
    assert.equal(done.currentRevision, before.currentRevision);
    const after = await stsPods(ns);
    assert.notEqual(after.get('store-2')?.uid, stuck.uid);
    for (const name of ['store-0', 'store-1']) {
      assert.ok(old.get(name)?.uid, `${name} existed before the rollout`);
      assert.equal(after.get(name)?.uid, old.get(name)?.uid, `${name}, another ordinal, was never touched`);
    }
  });

  it('Parallel: after the same revert the controller replaces the broken pod itself', async () => {
    const { ns, pool } = await scene('sts-parallel');
    await apply(storeStatefulSet({ ns, pool: pool.name, policy: 'Parallel' }));
    const before = await settledSts(ns);
    await setStoreImage(ns, BROKEN);
    const p = await brokenAtTwo(ns);
    await kubectl(['rollout', 'undo', 'sts/store'], { ns });
    const done = await settledSts(ns);
    assert.equal(done.currentRevision, before.currentRevision);
    assert.notEqual((await stsPods(ns)).get('store-2')?.uid, p.get('store-2')?.uid, 'store-2 replaced by the controller');
  });

  it('partition 2 of 3: only store-2 is updated, and the rollout waits there with currentRevision the old one', async () => {
    const { ns, pool } = await scene('sts-partition');
    await apply(storeStatefulSet({ ns, pool: pool.name, partition: 2 }));
    const before = await settledSts(ns);
    await setStoreImage(ns, 'registry.local/store:2');
    const s = await waitFor(
      async () => {
        const x = await stsStatus(ns);
        const two = (await stsPods(ns)).get('store-2');
        return x.updatedReplicas === 1 && x.readyReplicas === 3 && two?.revision === x.updateRevision && two?.ready === true ? x : false;
      },
      { timeoutMs: 60_000, describe: 'store-2 updated and Ready' },
    );
    assert.equal(s.currentRevision, before.currentRevision, 'currentRevision stays until every ordinal is updated');
    assert.notEqual(s.updateRevision, s.currentRevision);
    await holdsFor(
      async () => {
        const x = await stsStatus(ns);
        const p = await stsPods(ns);
        return x.updatedReplicas === 1 && p.get('store-0')?.revision === before.currentRevision;
      },
      { durationMs: 4_000, describe: 'the rollout waits at its partition' },
    );
  });

  it('a WaitForFirstConsumer claim binds to the static PersistentVolume pinned to the node the scheduler picks', async () => {
    const { ns, pool } = await scene('sts-volumes');
    const volumes = await pinnedVolumes('sts-local', pool.nodes);
    cleanups.push(volumes.cleanup);
    await apply(storeStatefulSet({ ns, pool: pool.name, claims: volumes.storageClass }));
    await settledSts(ns);
    const claims = await kubectlJson<{ items: any[] }>(['get', 'pvc'], { ns });
    assert.equal(claims.items.length, 3);
    const p = await stsPods(ns);
    for (const c of claims.items) {
      assert.equal(c.status?.phase, 'Bound', c.metadata.name);
      const ordinal = String(c.metadata.name).replace(/^data-/, '');
      assert.equal(p.get(ordinal)?.node, volumes.nodeOf.get(c.spec.volumeName), `${ordinal} runs where its volume is`);
    }
  });
});
