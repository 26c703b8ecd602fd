/**
 * End to end on a private control plane with the node lifecycle controller running: faults that are
 * nobody's revision's fault, each with onStall.action Undo, each asserting the DaemonSet's template
 * afterwards and the Events.
 *
 * - Dead kubelets mid-rollout of a good image: the nodes' own kwok is frozen, they turn Unknown and get
 *   the unreachable taint as in a real cluster, the old pod stays Terminating. No undo; the nodes are
 *   named as the fault. Thawed, the rollout completes.
 * - The controller-manager paused across a template change: Stalled with ControllerNotObserving after
 *   the deadline, no undo. Resumed, the rollout proceeds and the guard follows.
 * - A guard created while the controller-manager has not yet observed an undo of a stuck rollout (as
 *   when a guard is deleted and recreated mid-rollback): the broken revision is still the newest one,
 *   the counters are the stuck generation's. The guard waits on the controller, never Healthy.
 * - A good revision pushed while the last rollout bakes past its deadline, the controller-manager slow
 *   (paused) to observe it: a DaemonSet's and a StatefulSet's guard wait for it, never Suspect or Stalled.
 * - A StatefulSet whose kubelets die as a good revision starts: the old pod of the highest ordinal stays
 *   Terminating on its unreachable node and the StatefulSet controller never replaces it. The node is
 *   named as the fault, with the remedy; thawed, the rollout completes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { writeFile } from 'node:fs/promises';
import { POOL_LABEL, decoderDaemonSet, holdsFor, waitFor } from '../support/cluster.js';
import { OperatorProcess, guard } from '../support/operator.js';
import { storeStatefulSet, type StsStatus } from '../support/statefulSets.js';
import { GuardReader, type EventItem, type GuardObj } from '../support/guards.js';
import { PrivateCluster, type KillableNodePool } from '../../cluster/privateCluster.js';

const GOOD = 'registry.local/decoder:2';
let pc: PrivateCluster;
/** `kubectl describe rg` of the node-blamed stall, kept for docs/states-and-causes.md ("Whose fault") when RG_CAPTURE names a file. */
let describeStalled = '';
const procs: OperatorProcess[] = [];

let read: GuardReader;
const getGuard = (ns: string): Promise<GuardObj> => read.guard(ns);
const image = (ns: string): Promise<string> => read.image(ns);
const events = (ns: string, kind: string): Promise<EventItem[]> => read.events(ns, kind);
let logsOf: OperatorProcess | undefined;
const waitGuard = (
  ns: string,
  pred: (g: GuardObj) => boolean,
  what: string,
  op: OperatorProcess,
  timeoutMs = 90_000,
): Promise<GuardObj> => {
  logsOf = op;
  return read.waitGuard(ns, pred, what, timeoutMs);
};

/** A namespace with the DaemonSet `ds` rolled out on `count` nodes, and an operator guarding it. */
async function scene(
  prefix: string,
  ds: Record<string, unknown>,
  count: number,
  spec: Record<string, unknown>,
): Promise<{ ns: string; op: OperatorProcess }> {
  const ns = await pc.createNamespace(prefix);
  await pc.apply({ ...ds, metadata: { ...(ds.metadata as object), namespace: ns } });
  await read.availableOn(ns, count);
  const op = await OperatorProcess.start({ namespaces: [ns], kubeconfig: pc.kubeconfig });
  procs.push(op);
  await pc.apply(guard('decoder', ns, 'decoder', spec));
  await waitGuard(ns, (g) => g.status?.state === 'Healthy', 'Healthy', op);
  return { ns, op };
}

describe('field faults on a private control plane: no undo when the revision is not at fault', () => {
  before(async () => {
    pc = await PrivateCluster.start({ nodeLifecycle: true });
    read = new GuardReader(
      (args, opts) => pc.kubectlJson(args, opts),
      () => logsOf?.logs ?? [],
    );
    await pc.installCrds();
  });

  after(async () => {
    if (process.env.RG_CAPTURE && describeStalled) await writeFile(process.env.RG_CAPTURE, describeStalled);
    for (const p of procs) await p.stop().catch(() => undefined);
    if (pc && process.env.RG_KEEP_FAULT_CLUSTER !== '1') await pc.down();
  });

  it('dead kubelets mid-rollout of a good image: Stalled, the nodes blamed by name, no undo; thawed, the rollout completes', async () => {
    // A fleet of four: two nodes keep their kubelets, two share a kwok that is frozen.
    const steady = await pc.createNodePool('ff-live', 2);
    const dying: KillableNodePool = await pc.createKillableNodePool('ff-dead', 2);
    const ds = decoderDaemonSet({ name: 'decoder', ns: '', pool: steady.name, image: 'registry.local/decoder:1', minReadySeconds: 2 });
    const podSpec = (ds.spec as { template: { spec: Record<string, unknown> } }).template.spec;
    delete podSpec.nodeSelector;
    podSpec.affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: POOL_LABEL, operator: 'In', values: [steady.name, dying.name] }] }],
        },
      },
    };
    const { ns, op } = await scene('ff-dead', ds, 4, { suspectAfterSeconds: 4, progressDeadlineSeconds: 25, onStall: { action: 'Undo' } });
    // The kubelets die as the good revision starts to roll out: an old pod deleted on a dead node never
    // finishes terminating, and the node lifecycle controller marks the nodes Unknown and unreachable.
    dying.pause();
    await pc.kubectl(['set', 'image', 'ds/decoder', `decoder=${GOOD}`], { ns });
    const g = await waitGuard(ns, (x) => x.status?.state === 'Stalled', 'Stalled', op, 120_000);
    assert.equal(g.status?.cause, 'NodeNotReady', JSON.stringify(g.status));
    assert.equal(g.status?.owner, 'Node');
    assert.equal(g.status?.undoSkipped?.reason, 'NotTheRevision');
    const blamed = [...(g.status?.emptyNodes ?? []), ...(g.status?.blockedNodes ?? [])]
      .filter((x) => x.owner === 'Node')
      .map((x) => x.node);
    assert.ok(blamed.length >= 1 && blamed.every((b) => dying.nodes.includes(b)), JSON.stringify(g.status));
    assert.match(g.status?.message ?? '', new RegExp(`${blamed[0]!}.*Unknown`));
    assert.match(g.status?.message ?? '', /an undo would not help/);
    await holdsFor(async () => (await image(ns)) === GOOD && (await getGuard(ns)).status?.lastUndo === undefined, {
      durationMs: 8_000,
      describe: 'no undo',
    });
    const onDs = await events(ns, 'DaemonSet');
    assert.ok(
      onDs.some((e) => e.reason === 'UndoSkipped' && /an undo would not help/.test(e.message ?? e.note ?? '')),
      JSON.stringify(onDs.map((e) => e.reason)),
    );
    assert.ok(!onDs.some((e) => e.reason === 'UndoStarted'));
    describeStalled = (await pc.kubectl(['describe', 'rolloutguard', 'decoder'], { ns })).stdout;

    dying.resume();
    const done = await waitGuard(
      ns,
      (x) => x.status?.state === 'Healthy' && x.status.currentRevision?.revision === 2,
      'Healthy on the good revision',
      op,
      180_000,
    );
    assert.equal(done.status?.lastUndo, undefined);
    assert.equal(await image(ns), GOOD);
  });

  it('the controller-manager paused across a template change: Stalled ControllerNotObserving, no undo; resumed, the guard follows', async () => {
    const pool = await pc.createNodePool('ff-kcm', 3);
    const ds = decoderDaemonSet({ name: 'decoder', ns: '', pool: pool.name, image: 'registry.local/decoder:1' });
    const { ns, op } = await scene('ff-kcm', ds, 3, { suspectAfterSeconds: 2, progressDeadlineSeconds: 6, onStall: { action: 'Undo' } });
    pc.signalComponent('kube-controller-manager', 'SIGSTOP');
    let resumed = false;
    try {
      await pc.kubectl(['set', 'image', 'ds/decoder', `decoder=${GOOD}`], { ns });
      const g = await waitGuard(ns, (x) => x.status?.state === 'Stalled', 'Stalled', op, 60_000);
      assert.equal(g.status?.cause, 'ControllerNotObserving');
      assert.equal(g.status?.owner, 'ControlPlane');
      assert.match(g.status?.message ?? '', /has not observed generation 2/);
      await waitFor(async () => (await events(ns, 'RolloutGuard')).some((e) => e.reason === 'RolloutStalled'), {
        timeoutMs: 15_000,
        describe: 'RolloutStalled',
      });
      assert.equal(await image(ns), GOOD);
      pc.signalComponent('kube-controller-manager', 'SIGCONT');
      resumed = true;
    } finally {
      if (!resumed) pc.signalComponent('kube-controller-manager', 'SIGCONT');
    }
    const done = await waitGuard(
      ns,
      (x) => x.status?.state === 'Healthy' && x.status.currentRevision?.revision === 2,
      'Healthy on revision 2',
      op,
      120_000,
    );
    assert.equal(done.status?.lastUndo, undefined);
    const reasons = (await events(ns, 'RolloutGuard')).map((e) => e.reason);
    for (const r of ['RolloutStarted', 'RolloutComplete']) assert.ok(reasons.includes(r), `${r}: ${reasons.join(', ')}`);
    assert.ok(!reasons.includes('UndoStarted'));
  });

  it('a guard created before the controller-manager observes an undo of a stuck rollout: Progressing, never Healthy on the broken revision; resumed, it settles on the restored one', async () => {
    const pool = await pc.createNodePool('ff-fresh', 3);
    const ds = decoderDaemonSet({ name: 'decoder', ns: '', pool: pool.name, image: 'registry.local/decoder:1' });
    const ns = await pc.createNamespace('ff-fresh');
    await pc.apply({ ...ds, metadata: { ...(ds.metadata as object), namespace: ns } });
    await read.availableOn(ns, 3);
    const op = await OperatorProcess.start({ namespaces: [ns], kubeconfig: pc.kubeconfig });
    procs.push(op);
    await pc.kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns });
    // Stuck: one node's old pod is gone and its new pod cannot pull its image (UP-TO-DATE 1, AVAILABLE 2).
    await waitFor(
      async () => {
        const st = (
          await pc.kubectlJson<{ status: { observedGeneration?: number; updatedNumberScheduled?: number; numberAvailable?: number } }>(
            ['get', 'ds', 'decoder'],
            { ns },
          )
        ).status;
        return st.observedGeneration === 2 && st.updatedNumberScheduled === 1 && st.numberAvailable === 2;
      },
      { timeoutMs: 60_000, describe: 'the rollout of the broken image stuck on one node' },
    );
    pc.signalComponent('kube-controller-manager', 'SIGSTOP');
    let resumed = false;
    try {
      await pc.kubectl(['rollout', 'undo', 'ds/decoder'], { ns });
      await pc.apply(
        guard('decoder', ns, 'decoder', { suspectAfterSeconds: 60, progressDeadlineSeconds: 120, onStall: { action: 'Undo' } }),
      );
      const g = await waitGuard(ns, (x) => x.status?.state !== undefined, 'a first verdict', op, 30_000);
      assert.equal(g.status?.state, 'Progressing');
      assert.match(
        g.status?.message ?? '',
        /^Waiting for the DaemonSet controller to observe generation 3 \(observed 2\); at generation 2, 1\/3 nodes were updated to revision 2 \(\w+\) and 2\/3 available$/,
      );
      assert.equal(g.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
      await holdsFor(async () => (await getGuard(ns)).status?.state === 'Progressing', {
        durationMs: 3_000,
        describe: 'the guard keeps waiting on the paused controller',
      });
      pc.signalComponent('kube-controller-manager', 'SIGCONT');
      resumed = true;
    } finally {
      if (!resumed) pc.signalComponent('kube-controller-manager', 'SIGCONT');
    }
    const done = await waitGuard(
      ns,
      (x) => (x.status?.state === 'Healthy' || x.status?.state === 'RolledBack') && x.status.currentRevision?.revision === 3,
      'settled on the restored revision 3',
      op,
      120_000,
    );
    assert.equal(done.status?.lastUndo, undefined, 'the person undid it, not the guard');
    assert.equal(await image(ns), 'registry.local/decoder:1');
    assert.ok(!(await events(ns, 'DaemonSet')).some((e) => e.reason === 'UndoStarted'));
  });

  it('a StatefulSet whose kubelets die as a good revision rolls: the old pod stuck Terminating, the node blamed with the remedy, no undo; thawed, the rollout completes', async () => {
    const dying: KillableNodePool = await pc.createKillableNodePool('ff-sts', 3);
    const ns = await pc.createNamespace('ff-sts');
    await pc.apply(storeStatefulSet({ ns, pool: dying.name }));
    const status = async (): Promise<StsStatus> => (await pc.kubectlJson<{ status: StsStatus }>(['get', 'sts', 'store'], { ns })).status;
    await waitFor(async () => (await status()).readyReplicas === 3, { timeoutMs: 120_000, describe: 'store 3/3 Ready' });
    const op = await OperatorProcess.start({ namespaces: [ns], kubeconfig: pc.kubeconfig });
    procs.push(op);
    await pc.apply(
      guard('store', ns, 'store', {
        targetRef: { kind: 'StatefulSet', name: 'store' },
        suspectAfterSeconds: 4,
        progressDeadlineSeconds: 25,
        onStall: { action: 'Report' },
      }),
    );
    const storeGuard = (pred: (g: GuardObj) => boolean, what: string, timeoutMs = 90_000): Promise<GuardObj> => {
      logsOf = op;
      return read.waitGuard(ns, pred, what, timeoutMs, 'store');
    };
    await storeGuard((g) => g.status?.state === 'Healthy', 'Healthy');
    // The kubelets die as the rollout starts: the controller deletes store-2 while its node still looks
    // Ready, and the frozen kubelet never finishes the deletion.
    dying.pause();
    await pc.kubectl(['set', 'image', 'sts/store', 'store=registry.local/store:2'], { ns });
    const g = await storeGuard((x) => x.status?.state === 'Stalled', 'Stalled', 120_000);
    assert.equal(g.status?.owner, 'Node', JSON.stringify(g.status));
    assert.equal(g.status?.cause, 'NodeNotReady');
    const stuck = [...(g.status?.emptyNodes ?? []), ...(g.status?.blockedNodes ?? [])].find((x) => x.node === 'store-2');
    assert.ok(stuck, JSON.stringify(g.status));
    assert.equal(stuck.owner, 'Node');
    assert.match(g.status?.message ?? '', /never creates store-2 anew while the old pod exists/);
    assert.match(g.status?.message ?? '', /kubectl delete pod store-2 --force --grace-period=0/);
    assert.equal(g.status?.undoSkipped?.reason, 'NotTheRevision');

    dying.resume();
    await storeGuard(
      (x) => x.status?.state === 'Healthy' && x.status.currentRevision?.revision === 2 && x.status.generations?.length === 1,
      'Healthy on revision 2',
      180_000,
    );
  });
  it('a good revision the controller-manager is slow to observe, pushed while the last rollout bakes past its deadline: never Suspect or Stalled, for a DaemonSet and a StatefulSet', async () => {
    const pool = await pc.createNodePool('ff-slow', 3);
    const ns = await pc.createNamespace('ff-slow');
    const ds = decoderDaemonSet({ name: 'decoder', ns, pool: pool.name, image: 'registry.local/decoder:1' });
    await pc.apply(ds);
    await pc.apply(storeStatefulSet({ ns, pool: pool.name, minReadySeconds: 2 }));
    await read.availableOn(ns, 3);
    await waitFor(
      async () => (await pc.kubectlJson<{ status: StsStatus }>(['get', 'sts', 'store'], { ns })).status.availableReplicas === 3,
      {
        timeoutMs: 120_000,
        describe: 'store 3/3 available',
      },
    );
    const op = await OperatorProcess.start({ namespaces: [ns], kubeconfig: pc.kubeconfig });
    procs.push(op);
    logsOf = op;
    // The bake outlasts the deadline: while it runs, the last progress is older than the deadline.
    const spec = { suspectAfterSeconds: 3, progressDeadlineSeconds: 6, bakeSeconds: 60, onStall: { action: 'Undo' } };
    await pc.apply(guard('decoder', ns, 'decoder', spec));
    await pc.apply(guard('store', ns, 'store', { ...spec, targetRef: { kind: 'StatefulSet', name: 'store' } }));
    const targets = [
      { guard: 'decoder', set: ['ds/decoder', 'decoder'], image: 'registry.local/decoder' },
      { guard: 'store', set: ['sts/store', 'store'], image: 'registry.local/store' },
    ] as const;
    for (const t of targets) await read.waitGuard(ns, (g) => g.status?.state === 'Healthy', `${t.guard} Healthy`, 90_000, t.guard);
    for (const t of targets) await pc.kubectl(['set', 'image', t.set[0], `${t.set[1]}=${t.image}:2`], { ns });
    for (const t of targets)
      await read.waitGuard(
        ns,
        (g) =>
          g.status?.rollout?.toRevision?.revision === 2 &&
          g.status.rollout.updatedAt !== undefined &&
          g.status.rollout.completedAt === undefined &&
          Date.now() - Date.parse(g.status.rollout.lastProgressAt ?? '') > 7_000,
        `${t.guard} baking revision 2, its last progress older than the deadline`,
        90_000,
        t.guard,
      );
    // The controller-manager is slow (paused) as revision 3 is pushed; resumed once each guard has seen
    // the generation it has not observed.
    pc.signalComponent('kube-controller-manager', 'SIGSTOP');
    let resumed = false;
    try {
      for (const t of targets) await pc.kubectl(['set', 'image', t.set[0], `${t.set[1]}=${t.image}:3`], { ns });
      for (const t of targets) {
        const g = await read.waitGuard(
          ns,
          (x) => x.status?.message?.startsWith('Waiting for the') === true,
          `${t.guard} waiting on the controller`,
          30_000,
          t.guard,
        );
        assert.equal(g.status?.state, 'Progressing', JSON.stringify(g.status));
      }
      pc.signalComponent('kube-controller-manager', 'SIGCONT');
      resumed = true;
    } finally {
      if (!resumed) pc.signalComponent('kube-controller-manager', 'SIGCONT');
    }
    for (const t of targets) {
      await read.waitGuard(
        ns,
        (g) => g.status?.rollout?.toRevision?.revision === 3 && g.status.rollout.updatedAt !== undefined,
        `${t.guard}: revision 3 on every unit`,
        120_000,
        t.guard,
      );
      const said = (await read.reasons(ns, 'RolloutGuard', t.guard)).filter((r) =>
        ['RolloutSuspect', 'RolloutStalled', 'UndoStarted'].includes(r),
      );
      assert.deepEqual(said, [], `${t.guard}: no Suspect, Stalled or undo for a good revision`);
    }
  });
});
