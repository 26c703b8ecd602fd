/**
 * StatefulSet guards end to end on the local control plane (the statefulset controller and the
 * scheduler real, kwok playing the pods): the field cases of a StatefulSet rollout, each with its
 * verdict, owner, message and what is named per ordinal (Report mode, whose dry run of the undo runs
 * against the StatefulSet), then the undo with its forced rollback: the stuck pod evicted through the
 * Eviction API, the real disruption controller deciding what a PodDisruptionBudget allows.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { holdsFor, kubectl, waitFor } from '../support/cluster.js';
import { GuardSuite, type GuardObj } from '../support/guards.js';
import { apply, guard } from '../support/operator.js';
import { runCli, shown } from '../support/cli.js';
import {
  pinnedVolumes,
  setStoreImage,
  settledSts,
  storeImage,
  stsPods,
  storeStatefulSet,
  type PodRow,
  type StoreOptions,
} from '../support/statefulSets.js';

const SPEC = { suspectAfterSeconds: 6, progressDeadlineSeconds: 15, bakeSeconds: 0, onStall: { action: 'Report' } };
const SCENARIOS = [
  'image',
  'crash',
  'canary',
  'canarybroken',
  'parallel',
  'scaleup',
  'minready',
  'admission',
  'kind',
  'volume',
  'claim',
  'undo',
  'pdb',
  'revert',
  'revertundo',
  'canaryundo',
  'parallelundo',
  'oldfails',
  'nothelped',
  'forward',
  'forwardundo',
  'twobroken',
  'forwardparallel',
  'forwardcanary',
  'bakedminready',
] as const;
type Scenario = (typeof SCENARIOS)[number];
const suite = new GuardSuite<Scenario>('sts', SCENARIOS, (s) => (s === 'scaleup' ? 5 : 3));
const read = suite.read;
/** Cluster-scoped objects a case made (StorageClasses, PersistentVolumes), removed after the suite. */
const cleanups: Array<() => Promise<unknown>> = [];

const waitStore = (ns: string, pred: (g: GuardObj) => boolean, what: string, timeoutMs = 90_000): Promise<GuardObj> =>
  read.waitGuard(ns, pred, what, timeoutMs, 'store');

/** Scenario `s`'s StatefulSet `store` settled on its pool, then its guard, once Healthy. */
async function guarded(s: Scenario, o: Partial<StoreOptions> = {}, spec: Record<string, unknown> = {}): Promise<string> {
  const ns = suite.ns[s];
  await apply(storeStatefulSet({ ns, pool: suite.pools[s].name, ...o }));
  await settledSts(ns, o.replicas ?? 3);
  await apply(guard('store', ns, 'store', { ...SPEC, ...spec, targetRef: { kind: 'StatefulSet', name: 'store' } }));
  await waitStore(ns, (g) => g.status?.state === 'Healthy', 'Healthy');
  return ns;
}

/** Writes what a person would see into RG_CAPTURE_DIR/`file`, when set (docs/statefulsets.md quotes it). */
async function capture(file: string, parts: readonly string[]): Promise<void> {
  const dir = process.env.RG_CAPTURE_DIR;
  if (dir) await writeFile(path.join(dir, file), parts.join('\n'));
}

/**
 * The guard's own verdict Events on `store` in `ns`, from its creation on: a Suspect or Stalled between two
 * reads of its status is still an Event (they stay an hour), where polling the state would miss it.
 */
const verdictEvents = async (ns: string): Promise<string[]> =>
  (await read.reasons(ns, 'RolloutGuard', 'store')).filter(
    (r) => r === 'RolloutSuspect' || r === 'RolloutStalled' || r === 'RevisionFailed',
  );

/** Rolls `image` to `ns`'s store and waits until store-2 fails to pull it. */
async function brokenOnStore2(ns: string, image = 'registry.local/store:2-broken'): Promise<PodRow> {
  await setStoreImage(ns, image);
  return waitFor(
    async () => {
      const p = (await stsPods(ns)).get('store-2');
      return p?.waiting === 'ImagePullBackOff' || p?.waiting === 'ErrImagePull' ? p : undefined;
    },
    { timeoutMs: 60_000, describe: `store-2 failing to pull ${image}` },
  );
}

/** Waits until `ns`'s guard is Healthy with revision `revision` current. */
const healthyOn = (ns: string, revision: number): Promise<GuardObj> =>
  waitStore(
    ns,
    (x) => x.status?.state === 'Healthy' && x.status.currentRevision?.revision === revision,
    `Healthy on revision ${revision}`,
    120_000,
  );

const blockedNames = (g: GuardObj): string[] => [...(g.status?.blockedNodes ?? []), ...(g.status?.emptyNodes ?? [])].map((b) => b.node);

describe('StatefulSet guards on the local control plane', { concurrency: true }, () => {
  before(() => suite.setUp());
  after(async () => {
    await suite.tearDown();
    for (const c of cleanups) await c().catch(() => undefined);
  });

  it('OrderedReady, an image that does not pull: Stalled, ImagePullFailure, the revision blamed, the highest ordinal named', async () => {
    const ns = await guarded('image');
    await setStoreImage(ns, 'registry.local/store:2-broken');
    const g = await waitStore(ns, (x) => x.status?.state === 'Stalled', 'Stalled');
    assert.equal(g.status?.cause, 'ImagePullFailure', JSON.stringify(g.status));
    assert.equal(g.status?.owner, 'Revision');
    assert.deepEqual(blockedNames(g), ['store-2']);
    assert.match(g.status?.message ?? '', /store-2/);
    // The guard names the next step for a person: the undo it would make, dry-run against the StatefulSet.
    const planned = await waitStore(ns, (x) => x.status?.undoPlan?.dryRun === 'Accepted', 'the undo dry-run accepted');
    assert.equal(planned.status?.undoPlan?.toRevision, 1);
    // Report mode names the commands that would finish it by hand: the revert, then the forced rollback
    // of the pod the OrderedReady controller never replaces.
    assert.match(
      planned.status?.message ?? '',
      new RegExp(`kubectl rollout undo statefulset/store -n ${ns} --to-revision=1, then kubectl delete pod store-2 -n ${ns} `),
    );
    // The verdict is announced on the StatefulSet as well as on the guard (kubectl describe sts).
    await waitFor(async () => (await read.reasons(ns, 'StatefulSet', 'store')).includes('RolloutStalled'), {
      timeoutMs: 30_000,
      describe: 'RolloutStalled on the StatefulSet',
    });

    // Where a person looks: the guard's table, its ordinals one per row, and check for a pipeline.
    const table = (await kubectl(['get', 'rg', 'store'], { ns })).stdout;
    assert.match(table, /store +store +StatefulSet +Stalled +3 +1 +2 +ImagePullFailure +Revision/, table);
    const got = await runCli(['get', 'rg/store', '-n', ns]);
    assert.equal(got.code, 0, shown(got));
    assert.match(got.stdout, /^StatefulSet: +[\w-]+\/store {2}desired 3/m, shown(got));
    assert.match(got.stdout, /^POD +REVISION +NODE +READY +RESTARTS +STATUS$/m, shown(got));
    assert.match(got.stdout, /^store-2 +2 \(\w+\) +\S+ +no +0 +ImagePullBackOff \(Revision\)$/m, shown(got));
    assert.match(got.stdout, /^store-0 +1 \(\w+\) +\S+ +yes +0 +Running$/m, shown(got));
    const checked = await runCli(['check', 'sts/store', '-n', ns, '--deadline', '10s', '--suspect', '4s']);
    assert.equal(checked.code, 3, shown(checked));
    assert.match(checked.stdout, /to undo: kubectl rollout undo statefulset\/store -n [\w-]+ --to-revision=1/, shown(checked));
    await capture('statefulset-stalled.txt', [
      `$ kubectl get rg store\n${table}`,
      `$ kubectl describe rg store\n${(await kubectl(['describe', 'rg', 'store'], { ns })).stdout}`,
      `$ kubectl rollout-guard get rg/store\n${got.stdout}`,
    ]);
  });

  it('OrderedReady, a revision that crash-loops: Stalled or Failed, CrashLoop, the revision blamed', async () => {
    const ns = await guarded('crash');
    await setStoreImage(ns, 'registry.local/store:2-crashloop');
    const g = await waitStore(ns, (x) => x.status?.state === 'Stalled' || x.status?.state === 'Failed', 'Stalled or Failed');
    assert.equal(g.status?.cause, 'CrashLoop', JSON.stringify(g.status));
    assert.equal(g.status?.owner, 'Revision');
    assert.deepEqual(blockedNames(g), ['store-2']);
  });

  it('partition 2 of 3, a healthy revision: Healthy, waiting at partition 2, never Suspect', async () => {
    const ns = await guarded('canary', { partition: 2 });
    await setStoreImage(ns, 'registry.local/store:2');
    const g = await waitStore(ns, (x) => x.status?.state === 'Healthy' && x.status?.generations?.length === 2, 'Healthy on two revisions');
    assert.match(
      g.status?.message ?? '',
      /1 pod on revision 2 .*, 2 pods on revision 1 .*it waits at partition 2: ordinals 0–1/,
      g.status?.message,
    );
    // Past suspectAfterSeconds and the deadline: a rollout waiting at its partition is not a stall.
    await holdsFor(async () => (await read.guard(ns, 'store')).status?.state === 'Healthy', {
      durationMs: (SPEC.progressDeadlineSeconds + 3) * 1000,
      describe: 'Healthy while it waits at the partition',
    });
    // From the image change on, not only once Healthy: the guard's own Events say every verdict it gave.
    assert.deepEqual(await verdictEvents(ns), [], 'never Suspect or Stalled, from the image change on');
  });

  it('partition 2 of 3, a broken revision: Stalled, the revision blamed, only the canary ordinal named', async () => {
    const ns = await guarded('canarybroken', { partition: 2 });
    const before = await stsPods(ns);
    await setStoreImage(ns, 'registry.local/store:2-broken');
    const g = await waitStore(ns, (x) => x.status?.state === 'Stalled', 'Stalled');
    assert.equal(g.status?.owner, 'Revision', JSON.stringify(g.status));
    assert.deepEqual(blockedNames(g), ['store-2']);
    const now = await stsPods(ns);
    for (const n of ['store-0', 'store-1']) assert.equal(now.get(n)?.uid, before.get(n)?.uid, `${n} untouched`);
  });

  it('Parallel, a broken revision: Stalled, every broken ordinal named', async () => {
    const ns = await guarded('parallel', { policy: 'Parallel' });
    await setStoreImage(ns, 'registry.local/store:2-broken');
    const g = await waitStore(ns, (x) => x.status?.state === 'Stalled' && x.status.undoPlan?.dryRun === 'Accepted', 'Stalled');
    assert.equal(g.status?.owner, 'Revision', JSON.stringify(g.status));
    // Parallel: after the revert the controller replaces the broken pods itself; nothing to delete by hand.
    assert.match(g.status?.message ?? '', /kubectl rollout undo statefulset\/store -n [\w-]+ --to-revision=1 \(onStall/);
    const pods = await stsPods(ns);
    const broken = [...pods.values()].filter((p) => p.waiting === 'ImagePullBackOff').map((p) => p.name);
    assert.ok(broken.length >= 1);
    for (const b of broken) assert.ok(blockedNames(g).includes(b), `${b} named: ${JSON.stringify(g.status?.blockedNodes)}`);
  });

  it('a scale-up during a healthy rollout: no false verdict, Healthy at the end on every ordinal', async () => {
    const ns = await guarded('scaleup', { minReadySeconds: 2 });
    await setStoreImage(ns, 'registry.local/store:2');
    await waitStore(ns, (x) => x.status?.state === 'Progressing', 'Progressing');
    await kubectl(['scale', 'sts/store', '--replicas=5'], { ns });
    const seen = new Set<string>();
    const g = await waitStore(
      ns,
      (x) => {
        if (x.status?.state) seen.add(x.status.state);
        return x.status?.state === 'Healthy' && x.status?.generations?.length === 1 && x.status.generations[0]?.nodes === 5;
      },
      'Healthy on 5 ordinals',
      120_000,
    );
    assert.ok(!seen.has('Stalled') && !seen.has('Suspect'), [...seen].join(','));
    assert.deepEqual(await verdictEvents(ns), [], 'no Suspect or Stalled Event, however short');
    assert.match(g.status?.message ?? '', /5/);
  });

  it('minReadySeconds longer than the deadline per ordinal, healthy: never Stalled while each ordinal progresses', async () => {
    const ns = await guarded('minready', { minReadySeconds: 18 }, { suspectAfterSeconds: 5, progressDeadlineSeconds: 10 });
    await setStoreImage(ns, 'registry.local/store:2');
    const seen = new Set<string>();
    await waitStore(
      ns,
      (x) => {
        if (x.status?.state) seen.add(x.status.state);
        return x.status?.state === 'Healthy' && x.status?.generations?.length === 1;
      },
      'Healthy on one revision',
      180_000,
    );
    assert.ok(!seen.has('Stalled') && !seen.has('Suspect'), [...seen].join(','));
    assert.deepEqual(await verdictEvents(ns), [], 'no Suspect or Stalled Event, however short');
  });

  it('admission refuses the new pod (only the StatefulSet says so): Stalled, the refusal quoted, the revision blamed by comparison', async () => {
    const ns = await guarded('admission');
    // The ServiceAccount admission plugin refuses a pod whose ServiceAccount does not exist: the only
    // trace is the StatefulSet controller's FailedCreate Event.
    await kubectl(
      ['patch', 'sts/store', '--type=merge', '-p', JSON.stringify({ spec: { template: { spec: { serviceAccountName: 'missing' } } } })],
      {
        ns,
      },
    );
    // The refusal is known from the StatefulSet controller's FailedCreate Event alone; under load it can
    // reach the guard after the deadline, whose first verdict then says nothing explains store-2 yet
    // (cause Unknown, no owner, no undo). The blame then waits for the dry run of the previous revision
    // (a later pass): the verdict this case checks is the one once both are known.
    const g = await waitStore(
      ns,
      (x) => x.status?.state === 'Stalled' && x.status.cause === 'AdmissionRefused' && x.status.rollout?.admission !== undefined,
      'Stalled, AdmissionRefused, the previous revision dry-run',
    );
    assert.match(g.status?.message ?? '', /missing/);
    assert.equal(g.status?.rollout?.admission?.result, 'Accepted', JSON.stringify(g.status?.rollout));
    assert.equal(g.status?.owner, 'Revision');
  });

  it('the KIND column and targetRef.kind: shown and immutable; Undo accepted, with the forced rollback on by default', async () => {
    const ns = await guarded('kind');
    const table = (await kubectl(['get', 'rg', 'store'], { ns })).stdout;
    assert.match(table.split('\n')[0] ?? '', /\bKIND\b/);
    assert.match(table.split('\n')[1] ?? '', /\bStatefulSet\b/);
    const retarget = await kubectl(['patch', 'rg/store', '--type=merge', '-p', '{"spec":{"targetRef":{"kind":"DaemonSet"}}}'], {
      ns,
      allowFail: true,
    });
    assert.notEqual(retarget.code, 0);
    assert.match(retarget.stderr, /targetRef.kind is immutable/);
    await kubectl(['patch', 'rg/store', '--type=merge', '-p', '{"spec":{"onStall":{"action":"Undo"}}}'], { ns });
    const g = (await read.guard(ns, 'store')) as unknown as { spec: { onStall: { action: string; forcedRollback: boolean } } };
    assert.deepEqual([g.spec.onStall.action, g.spec.onStall.forcedRollback], ['Undo', true]);
  });

  it("a new pod's volume pinned to a node that is now tainted: Stalled, owner Node by comparison, never the revision", async () => {
    const pool = suite.pools.volume;
    const volumes = await pinnedVolumes('sts-pinned', pool.nodes);
    cleanups.push(volumes.cleanup);
    const ns = await guarded('volume', { claims: volumes.storageClass });
    // store-2's volume is bound to its node; the node is tainted (drained for maintenance, say) before
    // a good revision rolls: the new store-2 can go nowhere else.
    const host = (await stsPods(ns)).get('store-2')?.node;
    assert.ok(host);
    await kubectl(['taint', 'node', host, 'rollout-guard.test/maintenance=true:NoSchedule']);
    await setStoreImage(ns, 'registry.local/store:2');
    const g = await waitStore(ns, (x) => x.status?.state === 'Stalled', 'Stalled');
    assert.equal(g.status?.cause, 'Unschedulable', JSON.stringify(g.status));
    assert.equal(g.status?.owner, 'Node', JSON.stringify(g.status));
    assert.deepEqual(blockedNames(g), ['store-2']);
    assert.match(g.status?.blockedNodes?.[0]?.comparison ?? '', /pinned to a node/);
    assert.equal(g.status?.undoSkipped?.reason, 'NotTheRevision');
  });

  it('a claim deleted under a running ordinal, then a good revision rolls: Stalled, VolumeClaimUnavailable, the claim named, never the revision', async () => {
    const volumes = await pinnedVolumes('sts-claim', suite.pools.claim.nodes);
    cleanups.push(volumes.cleanup);
    const ns = await guarded('claim', { claims: volumes.storageClass });
    // Someone deletes store-2's claim while store-2 runs: its pvc-protection finalizer keeps it, being
    // deleted, until no pod uses it (kubernetes#89910). The next rollout replaces store-2, whose new pod
    // then waits for a claim that is going away, or is gone and whose volume is no longer free.
    await kubectl(['delete', 'pvc', 'data-store-2', '--wait=false'], { ns });
    await setStoreImage(ns, 'registry.local/store:2');
    const g = await waitStore(ns, (x) => x.status?.state === 'Stalled', 'Stalled');
    assert.equal(g.status?.cause, 'VolumeClaimUnavailable', JSON.stringify(g.status));
    assert.equal(g.status?.owner, 'Configuration', JSON.stringify(g.status));
    assert.deepEqual(blockedNames(g), ['store-2']);
    const entry = [...(g.status?.blockedNodes ?? []), ...(g.status?.emptyNodes ?? [])][0];
    assert.match(entry?.message ?? '', /claim data-store-2 /);
    assert.match(entry?.comparison ?? '', /a pod of the previous revision would wait for the same claim/);
    assert.equal(g.status?.undoSkipped?.reason, 'NotTheRevision');
    const { stdout } = await kubectl(['describe', 'rolloutguard', 'store'], { ns });
    assert.match(stdout, /VolumeClaimUnavailable/);
    await capture('claim-describe.txt', [stdout]);
  });

  /** The Events of `reason` about StatefulSet `store` in `ns`. */
  const stsEvents = async (ns: string, reason: string): Promise<string[]> => {
    const list = await kubectl(
      [
        'get',
        'events',
        '--field-selector',
        `involvedObject.kind=StatefulSet,involvedObject.name=store,reason=${reason}`,
        '-o',
        'jsonpath={.items[*].message}',
      ],
      { ns },
    );
    return list.stdout.trim() === '' ? [] : [list.stdout.trim()];
  };

  it('OrderedReady, Undo: the template restored and the stuck pod evicted, 3/3 Ready on one revision, one undo and one eviction', async () => {
    const ns = await guarded('undo', {}, { onStall: { action: 'Undo' } });
    const before = await stsPods(ns);
    await setStoreImage(ns, 'registry.local/store:2-broken');
    const g = await waitStore(ns, (x) => x.status?.state === 'RolledBack', 'RolledBack', 120_000);
    const s = await settledSts(ns);
    assert.equal(s.currentRevision, s.updateRevision);
    const after = await stsPods(ns);
    assert.ok(
      [...after.values()].every((p) => p.revision === before.get('store-0')?.revision && p.ready),
      JSON.stringify([...after.values()]),
    );
    for (const name of ['store-0', 'store-1']) assert.equal(after.get(name)?.uid, before.get(name)?.uid, `${name} was never touched`);
    assert.equal(g.status?.lastUndo?.result, 'Complete');
    assert.equal(g.status?.undoneRevisions?.length, 1, 'exactly one undo');
    assert.deepEqual(
      g.status?.forcedRollback?.evictions.map((e) => [e.pod, e.result, e.attempts]),
      [['store-2', 'Evicted', 1]],
      'exactly one eviction',
    );
    const evicted = await stsEvents(ns, 'PodEvicted');
    assert.match(evicted.join(), /Evicted store-2: it was not Ready on the undone revision/);
  });

  it('a PodDisruptionBudget with no room refuses the eviction: reported, retried with backoff, nothing else touched; once it allows, the rollback finishes', async () => {
    const ns = await guarded('pdb', {}, { onStall: { action: 'Undo' } });
    // minAvailable 3 of 3: with store-2 broken, 2 are healthy and the budget has no room, and under the
    // default unhealthyPodEvictionPolicy (IfHealthyBudget) even a pod that is not Ready is refused. The
    // revision crash-loops, so its pod is Running: a Pending pod (an image that does not pull) is evicted
    // whatever the budget, as the Eviction API lets a pod that never ran go.
    await apply({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'store', namespace: ns },
      spec: { minAvailable: 3, selector: { matchLabels: { app: 'store' } } },
    });
    const before = await stsPods(ns);
    await setStoreImage(ns, 'registry.local/store:2-crashloop');
    const g = await waitStore(
      ns,
      (x) => (x.status?.forcedRollback?.evictions ?? []).some((e) => e.result === 'Refused'),
      'eviction refused',
      120_000,
    );
    const refused = g.status?.forcedRollback?.evictions.find((e) => e.result === 'Refused');
    assert.equal(refused?.pod, 'store-2');
    assert.match(refused?.message ?? '', /disruption budget/i);
    assert.match((await stsEvents(ns, 'EvictionRefused')).join(), /Eviction of store-2 refused: .*trying again in/);
    const now = await stsPods(ns);
    for (const name of ['store-0', 'store-1']) assert.equal(now.get(name)?.uid, before.get(name)?.uid, `${name} untouched`);
    assert.ok(now.get('store-2') && !now.get('store-2')?.ready, 'the stuck pod is still there');
    // The budget lets it go: the next retry evicts it and the rollback completes.
    await kubectl(['patch', 'pdb', 'store', '--type=merge', '-p', '{"spec":{"unhealthyPodEvictionPolicy":"AlwaysAllow"}}'], { ns });
    const done = await waitStore(ns, (x) => x.status?.state === 'RolledBack', 'RolledBack', 120_000);
    await settledSts(ns);
    const last = done.status?.forcedRollback?.evictions.find((e) => e.pod === 'store-2');
    assert.equal(last?.result, 'Evicted');
    assert.ok((last?.attempts ?? 0) >= 2, JSON.stringify(last));
  });

  /** Rolls a broken image to `ns`'s store, then reverts it by hand once store-2 fails, as a person would. */
  async function revertByHand(ns: string): Promise<PodRow> {
    await setStoreImage(ns, 'registry.local/store:2-broken');
    const broken = await waitFor(
      async () => {
        const p = (await stsPods(ns)).get('store-2');
        return p?.waiting === 'ImagePullBackOff' || p?.waiting === 'ErrImagePull' ? p : undefined;
      },
      { timeoutMs: 60_000, describe: 'store-2 failing to pull' },
    );
    await kubectl(['rollout', 'undo', 'statefulset/store'], { ns });
    return broken;
  }

  it("a person's revert left stuck: a Report guard says the controller will not replace the pod, and names the command", async () => {
    const ns = await guarded('revert');
    const broken = await revertByHand(ns);
    const g = await waitStore(ns, (x) => /still on .* and not Ready/.test(x.status?.message ?? ''), 'the stuck pod named');
    assert.match(
      g.status?.message ?? '',
      /Reverted by a person or tool to .*, but store-2 is still on .* and not Ready: under OrderedReady the StatefulSet controller will not replace it; kubectl delete pod store-2 -n \S+ finishes the rollback/,
    );
    assert.notEqual(g.status?.state, 'Healthy');
    // Without progress, what holds the revert is named: the stuck pod, not the control plane.
    const held = await waitStore(ns, (x) => x.status?.state === 'Stalled', 'Stalled');
    assert.equal(held.status?.cause, 'ImagePullFailure', held.status?.message);
    assert.match(
      held.status?.message ?? '',
      /the StatefulSet controller waits for store-2 \S+ .*, left on the undone revision, to become Ready/,
    );
    assert.equal((await stsPods(ns)).get('store-2')?.uid, broken.uid, 'a Report guard evicts nothing');
  });

  it("a person's revert left stuck: an Undo guard finishes it by evicting the stuck pod, with no undo of its own", async () => {
    const ns = await guarded('revertundo', {}, { onStall: { action: 'Undo' }, suspectAfterSeconds: 60, progressDeadlineSeconds: 120 });
    await revertByHand(ns);
    await settledSts(ns);
    const g = await waitStore(ns, (x) => x.status?.state === 'Healthy', 'Healthy on the reverted revision');
    assert.equal(g.status?.lastUndo, undefined, 'the person reverted; the guard did not undo');
    assert.deepEqual(
      g.status?.forcedRollback?.evictions.map((e) => [e.pod, e.result]),
      [['store-2', 'Evicted']],
    );
  });

  it('partition 2 of 3, a broken canary, Undo: only the canary ordinal is evicted; the others keep their pods', async () => {
    const ns = await guarded('canaryundo', { partition: 2 }, { onStall: { action: 'Undo' } });
    const before = await stsPods(ns);
    await setStoreImage(ns, 'registry.local/store:2-broken');
    const g = await waitStore(ns, (x) => x.status?.state === 'RolledBack', 'RolledBack', 120_000);
    await settledSts(ns);
    const after = await stsPods(ns);
    for (const name of ['store-0', 'store-1']) assert.equal(after.get(name)?.uid, before.get(name)?.uid, `${name} untouched`);
    assert.deepEqual(
      g.status?.forcedRollback?.evictions.map((e) => [e.pod, e.result]),
      [['store-2', 'Evicted']],
    );
  });

  it('Parallel, a broken revision, Undo: the controller replaces the broken pod itself, and the guard evicts nothing', async () => {
    const ns = await guarded('parallelundo', { policy: 'Parallel' }, { onStall: { action: 'Undo' } });
    await setStoreImage(ns, 'registry.local/store:2-broken');
    const g = await waitStore(ns, (x) => x.status?.state === 'RolledBack', 'RolledBack', 120_000);
    await settledSts(ns);
    assert.equal(g.status?.lastUndo?.result, 'Complete');
    assert.equal(g.status?.forcedRollback, undefined, 'no eviction under Parallel');
  });

  it('an ordinal whose old revision fails too (store-2 crash-looping before the rollout): Stalled, not the revision, no undo and no eviction', async () => {
    const ns = await guarded('oldfails', {}, { onStall: { action: 'Undo' } });
    // store-2's pod breaks on the revision it runs, before any rollout: whatever is wrong is not the next revision.
    await kubectl(['annotate', 'pod', 'store-2', 'rollout-guard.test/break=crash'], { ns });
    const sick = await waitFor(
      async () => {
        const p = (await stsPods(ns)).get('store-2');
        return p?.waiting === 'CrashLoopBackOff' ? p : undefined;
      },
      { timeoutMs: 60_000, describe: 'store-2 crash-looping on revision 1' },
    );
    await setStoreImage(ns, 'registry.local/store:2');
    // Under OrderedReady the controller waits for store-2 to become Ready before it updates anything.
    const g = await waitStore(ns, (x) => x.status?.state === 'Stalled', 'Stalled', 120_000);
    // What holds it is named: store-2 on the revision it ran before, not the control plane, not the revision.
    assert.equal(g.status?.cause, 'CrashLoop', JSON.stringify(g.status));
    assert.equal(g.status?.owner, 'Node', JSON.stringify(g.status));
    assert.match(
      g.status?.message ?? '',
      /the StatefulSet controller waits for store-2 CrashLoopBackOff .*, not Ready on the revision before/,
    );
    assert.match(g.status?.message ?? '', /the new revision is not what holds the rollout, and an undo would not help/);
    assert.equal(g.status?.undoSkipped?.reason, 'NotTheRevision', JSON.stringify(g.status));
    // Held for two progress deadlines: an Undo guard that will not undo evicts nothing either.
    await holdsFor(
      async () => {
        const now = await read.guard(ns, 'store');
        const pod = (await stsPods(ns)).get('store-2');
        return now.status?.lastUndo === undefined && now.status?.forcedRollback === undefined && pod?.uid === sick.uid;
      },
      { durationMs: 30_000, describe: 'no undo, no eviction, store-2 the same pod' },
    );
    assert.equal(await storeImage(ns), 'registry.local/store:2', 'the template is left as the person set it');
  });

  it('an undo that did not help (the restored pod has nowhere to go): RollbackStalled, reported once, no second undo or eviction', async () => {
    const ns = await guarded('nothelped', {}, { onStall: { action: 'Undo' } });
    await setStoreImage(ns, 'registry.local/store:2-broken');
    await waitFor(async () => ['ImagePullBackOff', 'ErrImagePull'].includes((await stsPods(ns)).get('store-2')?.waiting ?? ''), {
      timeoutMs: 60_000,
      describe: 'store-2 failing to pull',
    });
    // The pool is cordoned while store-2 fails in place: the pod the controller recreates after the forced
    // rollback cannot be placed, so the rollback itself makes no progress.
    const nodes = suite.pools.nothelped.nodes;
    await kubectl(['cordon', ...nodes]);
    const g = await waitStore(ns, (x) => x.status?.lastUndo?.result === 'RollbackStalled', 'RollbackStalled', 150_000);
    assert.equal(g.status?.undoneRevisions?.length, 1, 'one undo');
    assert.deepEqual(
      g.status?.forcedRollback?.evictions.map((e) => [e.pod, e.result]),
      [['store-2', 'Evicted']],
    );
    assert.match(g.status?.lastUndo?.message ?? '', /store-2/);
    assert.match((await stsEvents(ns, 'RollbackStalled')).join(), /store-2/);
    /** The RollbackStalled Events about `kind`, each counted with its repeats (a series or a count). */
    const rollbackStalled = async (kind: string): Promise<number> =>
      (await read.events(ns, kind, 'store'))
        .filter((e) => e.reason === 'RollbackStalled')
        .reduce((n, e) => n + Math.max(1, e.count ?? 1, e.series?.count ?? 1), 0);
    // Never repeated: a further progress deadline brings no second undo and no second eviction.
    await holdsFor(
      async () => {
        const now = await read.guard(ns, 'store');
        return now.status?.undoneRevisions?.length === 1 && now.status.forcedRollback?.evictions.length === 1;
      },
      { durationMs: 20_000, describe: 'one undo and one eviction' },
    );
    // Reported once, on the guard and on the StatefulSet, past a further deadline.
    assert.equal(await rollbackStalled('RolloutGuard'), 1, 'one RollbackStalled on the guard');
    assert.equal(await rollbackStalled('StatefulSet'), 1, 'one RollbackStalled on the StatefulSet');
    // Uncordoned, the controller places the restored pod and the rollback completes on its own.
    await kubectl(['uncordon', ...nodes]);
    const s = await settledSts(ns);
    assert.equal(s.currentRevision, s.updateRevision);
    const done = await waitStore(ns, (x) => x.status?.state === 'RolledBack' || x.status?.state === 'Healthy', 'settled');
    assert.equal(done.status?.undoneRevisions?.length, 1);
  });
  it('OrderedReady, a fix pushed forward over a broken revision, Report: the leftover pod named with its delete, never its node; deleted by hand, the fix rolls out', async () => {
    const ns = await guarded('forward');
    const broken = await brokenOnStore2(ns);
    await setStoreImage(ns, 'registry.local/store:3');
    // The controller waits for store-2 (on revision 2) to become Ready and never replaces it: kubernetes#67250
    // holds for a new revision as for the old one.
    const g = await waitStore(
      ns,
      (x) => x.status?.state === 'Stalled' && x.status.rollout?.toRevision?.revision === 3,
      'Stalled on revision 3',
    );
    assert.notEqual(g.status?.owner, 'Node', JSON.stringify(g.status));
    assert.equal(g.status?.owner, 'Revision', JSON.stringify(g.status));
    assert.deepEqual(
      g.status?.rollout?.superseded?.map((r) => r.revision),
      [2],
    );
    const message = g.status?.message ?? '';
    assert.match(message, /store-2 is left not Ready on a revision this rollout superseded/);
    assert.match(message, new RegExp(`kubectl delete pod store-2 -n ${ns}`));
    assert.doesNotMatch(message, /ran before the rollout reached/);
    assert.equal(g.status?.undoSkipped?.reason, 'NotTheRevision');
    assert.match(g.status?.undoSkipped?.message ?? '', /revision 3 \(\w+\) has not been tried/);
    assert.equal((await stsPods(ns)).get('store-2')?.uid, broken.uid, 'a Report guard evicts nothing');
    // The command it names finishes the rollout, on revision 3.
    await kubectl(['delete', 'pod', 'store-2', '--wait=false'], { ns });
    await settledSts(ns);
    const done = await healthyOn(ns, 3);
    assert.equal(done.status?.lastUndo, undefined);
  });

  it('OrderedReady, a fix pushed forward, Undo: at the stall the leftover is evicted, not the template undone; the fix rolls out, one eviction', async () => {
    const ns = await guarded('forwardundo', {}, { onStall: { action: 'Undo' } });
    const before = await stsPods(ns);
    await brokenOnStore2(ns);
    await setStoreImage(ns, 'registry.local/store:3');
    const g = await healthyOn(ns, 3);
    const s = await settledSts(ns);
    const after = await stsPods(ns);
    assert.ok(
      [...after.values()].every((p) => p.revision === s.updateRevision && p.ready),
      JSON.stringify([...after.values()]),
    );
    assert.equal(g.status?.lastUndo, undefined, 'no undo of the template');
    assert.deepEqual(
      g.status?.forcedRollback?.evictions.map((e) => [e.pod, e.result, e.attempts]),
      [['store-2', 'Evicted', 1]],
    );
    assert.equal(await storeImage(ns), 'registry.local/store:3', 'the fix stays');
    // store-0 and store-1 were replaced by the controller's own rollout of revision 3, not by the guard.
    for (const name of ['store-0', 'store-1']) assert.notEqual(after.get(name)?.uid, before.get(name)?.uid, `${name} rolled to revision 3`);
    assert.match((await stsEvents(ns, 'PodEvicted')).join(), /Evicted store-2: it was not Ready on superseded revision 2/);
    assert.ok(!(await read.reasons(ns, 'StatefulSet', 'store')).includes('UndoStarted'));
  });

  it('OrderedReady, two broken pushes, Undo: one undo, straight to revision 1, and 3/3 on one revision', async () => {
    const ns = await guarded('twobroken', {}, { onStall: { action: 'Undo' } });
    const before = await stsPods(ns);
    await brokenOnStore2(ns);
    await setStoreImage(ns, 'registry.local/store:3-broken');
    const g = await waitStore(ns, (x) => x.status?.state === 'RolledBack', 'RolledBack', 180_000);
    const s = await settledSts(ns);
    assert.equal(s.currentRevision, s.updateRevision);
    const after = await stsPods(ns);
    assert.ok(
      [...after.values()].every((p) => p.revision === before.get('store-0')?.revision && p.ready),
      `every pod back on revision 1's template: ${JSON.stringify([...after.values()])}`,
    );
    for (const name of ['store-0', 'store-1']) assert.equal(after.get(name)?.uid, before.get(name)?.uid, `${name} was never touched`);
    assert.equal(g.status?.undoneRevisions?.length, 1, 'exactly one undo');
    assert.equal(g.status?.lastUndo?.toRevision, 1, JSON.stringify(g.status?.lastUndo));
    assert.equal(g.status?.lastUndo?.fromRevision, 3, JSON.stringify(g.status?.lastUndo));
    assert.equal(await storeImage(ns), 'registry.local/store:1');
    const reasons = await read.reasons(ns, 'StatefulSet', 'store');
    assert.equal(reasons.filter((r) => r === 'UndoStarted').length, 1, reasons.join(', '));
  });

  it('Parallel, a fix pushed forward over a broken revision: the controller replaces the pod itself, nothing held, nothing evicted', async () => {
    const ns = await guarded('forwardparallel', { policy: 'Parallel' }, { onStall: { action: 'Undo' } });
    await brokenOnStore2(ns);
    await setStoreImage(ns, 'registry.local/store:3');
    const g = await healthyOn(ns, 3);
    await settledSts(ns);
    assert.equal(g.status?.lastUndo, undefined);
    assert.equal(g.status?.forcedRollback, undefined, 'no eviction under Parallel');
    assert.ok(!(await read.reasons(ns, 'StatefulSet', 'store')).includes('PodEvicted'));
  });

  it('partition 2 of 3, a broken canary and a fix pushed forward, Undo: only the canary leftover is evicted; ordinals below the partition untouched', async () => {
    const ns = await guarded('forwardcanary', { partition: 2 }, { onStall: { action: 'Undo' } });
    const before = await stsPods(ns);
    await brokenOnStore2(ns);
    await setStoreImage(ns, 'registry.local/store:3');
    const g = await waitStore(
      ns,
      (x) => x.status?.state === 'Healthy' && x.status.generations?.some((r) => r.revision === 3 && r.ready === 1) === true,
      'Healthy, the canary on revision 3',
      120_000,
    );
    assert.match(g.status?.message ?? '', /it waits at partition 2/);
    const after = await stsPods(ns);
    for (const name of ['store-0', 'store-1']) assert.equal(after.get(name)?.uid, before.get(name)?.uid, `${name} untouched`);
    assert.equal(g.status?.lastUndo, undefined);
    assert.deepEqual(
      g.status?.forcedRollback?.evictions.map((e) => [e.pod, e.result]),
      [['store-2', 'Evicted']],
    );
  });

  it('minReadySeconds, a good revision right after a bake that outlasted the deadline: never Suspect or Stalled', async () => {
    const ns = await guarded(
      'bakedminready',
      { minReadySeconds: 6 },
      { onStall: { action: 'Undo' }, suspectAfterSeconds: 4, progressDeadlineSeconds: 10, bakeSeconds: 30 },
    );
    await setStoreImage(ns, 'registry.local/store:2');
    // Baking, its last progress older than the deadline: the window in which a new generation the
    // controller has not observed yet was once timed from that old progress.
    await waitStore(
      ns,
      (x) =>
        x.status?.rollout?.updatedAt !== undefined &&
        x.status.rollout.completedAt === undefined &&
        Date.now() - Date.parse(x.status.rollout.lastProgressAt ?? '') > 11_000,
      'baking, the last progress older than the deadline',
      90_000,
    );
    await setStoreImage(ns, 'registry.local/store:3');
    await waitStore(
      ns,
      (x) => x.status?.state === 'Healthy' && x.status.currentRevision?.revision === 3 && x.status.rollout?.toRevision?.revision === 3,
      'Healthy on revision 3',
      150_000,
    );
    assert.deepEqual(await verdictEvents(ns), [], "no Suspect or Stalled Event, from the guard's creation on");
  });
});
