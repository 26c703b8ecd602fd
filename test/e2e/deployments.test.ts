/**
 * Deployment guards end to end on the local control plane (the deployment and replicaset controllers and
 * the scheduler real, kwok playing the pods): the field cases of a Deployment rollout, each with its
 * verdict, owner, message and the pods it names (with their node and ReplicaSet), as a person reads them
 * with kubectl. Verdicts that must never happen are checked on the guard's own Events, which stay an hour:
 * a Suspect or Stalled between two reads of the status is still an Event.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { holdsFor, kubectl, kubectlJson, waitFor } from '../support/cluster.js';
import {
  WEB_GOOD,
  replicaSetOf,
  setWebImage,
  settledWeb,
  webCondition,
  webImage,
  webPods,
  webReplicaSets,
  WebGuards,
  type WebPod,
} from '../support/deployments.js';
import { GuardSuite, type GuardObj, type NodeEntry } from '../support/guards.js';
import { apply } from '../support/operator.js';

const SPEC = { suspectAfterSeconds: 6, progressDeadlineSeconds: 15, bakeSeconds: 0, onStall: { action: 'Report' } };
const SCENARIOS = ['image', 'crash', 'healthy', 'paused', 'owndeadline', 'recreate', 'quota', 'oldfails', 'undo'] as const;
type Scenario = (typeof SCENARIOS)[number];
const suite = new GuardSuite<Scenario>('dep', SCENARIOS);
const read = suite.read;

const BROKEN = 'registry.local/web:2-broken';

const web = new WebGuards(suite, SPEC);
const { wait: waitWeb, guarded, reasons: reasonsOn, countOf, verdictEvents } = web;

/** Every unit the guard names as held (blocked pods, and those that should exist and do not). */
const named = (g: GuardObj): NodeEntry[] => [...(g.status?.blockedNodes ?? []), ...(g.status?.emptyNodes ?? [])];

/** The pods of `web` that are neither Ready nor leaving, on the ReplicaSet named `rs`. */
const failingOn = (pods: Map<string, WebPod>, rs: string): WebPod[] =>
  [...pods.values()].filter((p) => p.replicaSet === rs && !p.ready && !p.deleting);

/** DaemonSet words a Deployment's message must not carry: a node as the unit of rollout, the DaemonSet's columns. */
const DAEMONSET_WORDS = [
  /kubectl get ds\b/,
  /kubectl describe ds\b/,
  /\bDESIRED\b/,
  /\bDaemonSet\b/,
  /\d+\/\d+ nodes\b/,
  /\b\d+ nodes? (on|updated|of)\b/,
];
function assertDeploymentWords(message: string): void {
  for (const w of DAEMONSET_WORDS) assert.doesNotMatch(message, w, message);
}

/**
 * Asserts that `g` names each of `pods` as held, by its name, on its node and with its ReplicaSet's hash
 * (the pod's name begins with its ReplicaSet's), and names no other pod.
 */
function assertNamesPods(g: GuardObj, pods: readonly WebPod[]): void {
  const entries = named(g);
  assert.deepEqual(entries.map((e) => e.node).sort(), pods.map((p) => p.name).sort(), JSON.stringify(g.status));
  for (const p of pods) {
    const e = entries.find((x) => x.node === p.name);
    assert.equal(e?.host, p.node, `${p.name} named on its node: ${JSON.stringify(e)}`);
    assert.equal(e?.hash, p.hash, `${p.name} named with its ReplicaSet's hash: ${JSON.stringify(e)}`);
    assert.ok(p.name.startsWith(`${p.replicaSet}-`), `${p.name} begins with its ReplicaSet ${p.replicaSet}`);
  }
}

describe('Deployment guards on the local control plane', { concurrency: true }, () => {
  before(() => suite.setUp());
  after(() => suite.tearDown());

  it('an image that does not pull: Stalled, ImagePullFailure, the revision blamed, the new pod named with its node and ReplicaSet, the old pods serving', async () => {
    const ns = await guarded('image');
    const old = await webPods(ns);
    await setWebImage(ns, BROKEN);
    const g = await waitWeb(ns, (x) => x.status?.state === 'Stalled', 'Stalled');
    assert.equal(g.status?.cause, 'ImagePullFailure', JSON.stringify(g.status));
    assert.equal(g.status?.owner, 'Revision', JSON.stringify(g.status));
    const rs = await replicaSetOf(ns, BROKEN);
    assert.equal(rs.revision, 2);
    const pods = await webPods(ns);
    const failing = failingOn(pods, rs.name);
    assert.ok(failing.length >= 1 && failing.every((p) => p.waiting === 'ImagePullBackOff' || p.waiting === 'ErrImagePull'));
    assertNamesPods(g, failing);
    const message = g.status?.message ?? '';
    for (const p of failing) assert.match(message, new RegExp(p.name), message);
    assert.match(message, /kubectl get deploy\b/, message);
    assertDeploymentWords(message);
    // The next step for a person, in Report mode: the undo it would make, dry-run against the Deployment.
    const planned = await waitWeb(ns, (x) => x.status?.undoPlan?.dryRun === 'Accepted', 'the undo dry-run accepted');
    assert.equal(planned.status?.undoPlan?.toRevision, 1);
    assert.match(
      planned.status?.message ?? '',
      new RegExp(`Would restore revision 1 \\(\\w+\\) on 1 pod: kubectl rollout undo deployment/web -n ${ns} --to-revision=1 \\(onStall`),
      planned.status?.message,
    );
    // The old pods serve on, untouched: maxUnavailable rounds down to 0 of 3.
    for (const [name, p] of old) assert.ok(pods.get(name)?.ready && pods.get(name)?.uid === p.uid, `${name} still serving`);
    // One verdict, announced on the guard and on the Deployment (kubectl describe deploy).
    await waitFor(async () => (await reasonsOn(ns, 'Deployment')).includes('RolloutStalled'), {
      timeoutMs: 30_000,
      describe: 'RolloutStalled on the Deployment',
    });
    assert.equal(await countOf(ns, 'RolloutStalled'), 1);
  });

  it('a revision that crash-loops: Stalled, CrashLoop, the revision blamed, the crashing pod named', async () => {
    const ns = await guarded('crash');
    const image = 'registry.local/web:2-crashloop';
    await setWebImage(ns, image);
    const g = await waitWeb(ns, (x) => x.status?.state === 'Stalled', 'Stalled');
    assert.equal(g.status?.cause, 'CrashLoop', JSON.stringify(g.status));
    assert.equal(g.status?.owner, 'Revision', JSON.stringify(g.status));
    const rs = await replicaSetOf(ns, image);
    const failing = failingOn(await webPods(ns), rs.name);
    assertNamesPods(g, failing);
    assertDeploymentWords(g.status?.message ?? '');
  });

  it('a healthy revision with minReadySeconds longer than suspectAfterSeconds: Healthy on revision 2, never Suspect or Stalled', async () => {
    const ns = await guarded('healthy', { minReadySeconds: 8 });
    await setWebImage(ns, 'registry.local/web:2');
    const g = await waitWeb(
      ns,
      (x) => x.status?.state === 'Healthy' && x.status.currentRevision?.revision === 2 && x.status.rollout?.completedAt !== undefined,
      'Healthy, the rollout to revision 2 complete',
      150_000,
    );
    const rs = await replicaSetOf(ns, 'registry.local/web:2');
    assert.equal(g.status?.currentRevision?.hash, rs.hash);
    await settledWeb(ns);
    const pods = [...(await webPods(ns)).values()].filter((p) => !p.deleting);
    assert.ok(pods.length === 3 && pods.every((p) => p.hash === rs.hash && p.ready), JSON.stringify(pods));
    assertDeploymentWords(g.status?.message ?? '');
    assert.deepEqual(await verdictEvents(ns), [], 'never Suspect or Stalled, from the image change on');
  });

  it('spec.paused, then a template change: Healthy, saying it is paused, never Stalled past the deadline; resumed, it rolls out', async () => {
    const ns = await guarded('paused');
    await kubectl(['rollout', 'pause', 'deploy/web'], { ns });
    await setWebImage(ns, 'registry.local/web:2');
    const g = await waitWeb(
      ns,
      (x) => x.status?.state === 'Healthy' && /its changed template waits for the resume/.test(x.status.message ?? ''),
      'Healthy, saying it is paused and its changed template waits',
    );
    assert.match(
      g.status?.message ?? '',
      /; spec\.paused is true \(kubectl rollout pause\): the Deployment controller rolls nothing out until kubectl rollout resume deployment\/web -n \S+; its changed template waits for the resume/,
      g.status?.message,
    );
    // The pods run revision 1, and no revision stores the changed template yet: it is not "on the way to revision 1".
    assert.match(
      g.status?.message ?? '',
      /^Paused before its changed template rolls out \(no revision for it yet; the pods run revision 1 /,
      g.status?.message,
    );
    assertDeploymentWords(g.status?.message ?? '');
    // Past suspectAfterSeconds and the guard's deadline: a pause is a configured wait, not a stall.
    await holdsFor(
      async () => {
        const now = await read.guard(ns, 'web');
        return now.status?.state === 'Healthy' && /its changed template waits for the resume/.test(now.status.message ?? '');
      },
      { durationMs: (SPEC.progressDeadlineSeconds + 5) * 1000, describe: 'Healthy and paused' },
    );
    assert.equal((await webReplicaSets(ns)).length, 1, 'paused: no new ReplicaSet');
    assert.deepEqual(await verdictEvents(ns), [], 'never Suspect or Stalled while paused');
    await kubectl(['rollout', 'resume', 'deploy/web'], { ns });
    const done = await waitWeb(
      ns,
      (x) => x.status?.state === 'Healthy' && x.status.currentRevision?.revision === 2 && x.status.rollout?.completedAt !== undefined,
      'Healthy on revision 2 after the resume',
      120_000,
    );
    assert.doesNotMatch(done.status?.message ?? '', /paused/);
    assert.deepEqual(await verdictEvents(ns), [], 'never Suspect or Stalled, paused or resumed');
  });

  it("the Deployment's own progressDeadlineSeconds exceeded before the guard's: Stalled, saying which deadline fired", async () => {
    const ns = await guarded('owndeadline', { progressDeadlineSeconds: 5 }, { suspectAfterSeconds: 120, progressDeadlineSeconds: 300 });
    await setWebImage(ns, BROKEN);
    await waitFor(
      async () => {
        const c = await webCondition(ns, 'Progressing');
        return c?.status === 'False' && c.reason === 'ProgressDeadlineExceeded';
      },
      { timeoutMs: 60_000, describe: 'the Deployment reporting Progressing=False, ProgressDeadlineExceeded' },
    );
    // Well before the guard's own 300 s: the Deployment controller's word is not contradicted.
    const g = await waitWeb(ns, (x) => x.status?.state === 'Stalled', 'Stalled', 60_000);
    const message = g.status?.message ?? '';
    assert.match(
      message,
      /The Deployment's own progressDeadlineSeconds \(5s\) fired: its controller reports Progressing=False, ProgressDeadlineExceeded/,
      message,
    );
    assert.match(message, /before the guard's progressDeadlineSeconds/, message);
    assert.match(message, /ReplicaSet \\?"web-[a-z0-9]+\\?" has timed out progressing/, message);
    assert.equal(g.status?.cause, 'ImagePullFailure', JSON.stringify(g.status));
    assert.equal(g.status?.owner, 'Revision', JSON.stringify(g.status));
    assertDeploymentWords(message);
    await waitFor(async () => (await countOf(ns, 'RolloutStalled')) > 0, { timeoutMs: 30_000, describe: 'RolloutStalled on the guard' });
    assert.equal(await countOf(ns, 'RolloutStalled'), 1, 'one stall, said once');
  });

  it('Recreate, an image that does not pull: Stalled, and the message says it is an outage, 0 available', async () => {
    const ns = await guarded('recreate', { strategy: 'Recreate' });
    await setWebImage(ns, BROKEN);
    const g = await waitWeb(ns, (x) => x.status?.state === 'Stalled', 'Stalled');
    const message = g.status?.message ?? '';
    assert.match(
      message,
      /Recreate strategy: every old pod was removed before any new one started, so this is an outage, not a partial rollout \(0\/3 available\)/,
      message,
    );
    assert.equal(g.status?.owner, 'Revision', JSON.stringify(g.status));
    assert.equal(g.status?.cause, 'ImagePullFailure', JSON.stringify(g.status));
    const rs = await replicaSetOf(ns, BROKEN);
    const pods = await webPods(ns);
    assert.ok(
      [...pods.values()].every((p) => p.replicaSet === rs.name),
      'every old pod gone',
    );
    assertNamesPods(g, failingOn(pods, rs.name));
    assertDeploymentWords(message);
  });

  it("a ResourceQuota that fits the old pods but not the surge pod: the ReplicaSet's FailedCreate named as the cause, never a node", async () => {
    const ns = await guarded('quota');
    await apply({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'pod-count', namespace: ns }, spec: { hard: { pods: '3' } } });
    await waitFor(
      async () => {
        const q = await kubectlJson<{ status?: { used?: { pods?: string } } }>(['get', 'resourcequota', 'pod-count'], { ns });
        return q.status?.used?.pods === '3';
      },
      { timeoutMs: 60_000, describe: 'the quota controller counted the pods (status.used.pods 3)' },
    );
    await setWebImage(ns, 'registry.local/web:2');
    const g = await waitWeb(ns, (x) => x.status?.state === 'Stalled' && x.status.cause === 'QuotaExceeded', 'Stalled, QuotaExceeded');
    assert.notEqual(g.status?.owner, 'Node', JSON.stringify(g.status));
    assert.notEqual(g.status?.owner, 'Revision', JSON.stringify(g.status));
    const message = g.status?.message ?? '';
    assert.match(message, /exceeded quota: pod-count, requested: pods=1, used: pods=3, limited: pods=3/, message);
    // Where a person finds the refusal: on the ReplicaSet, whose controller creates the pods.
    assert.match(message, /kubectl describe rs: Warning FailedCreate/, message);
    assert.doesNotMatch(message, /kubectl rollout undo/, message);
    assertDeploymentWords(message);
    // The refusal is the ReplicaSet's: its FailedCreate Warning, with no pod to look at.
    const rs = await replicaSetOf(ns, 'registry.local/web:2');
    assert.ok((await read.reasons(ns, 'ReplicaSet', rs.name)).includes('FailedCreate'));
    assert.equal(failingOn(await webPods(ns), rs.name).length, 0, 'no pod of the new ReplicaSet');
    const pods = [...(await webPods(ns)).values()];
    assert.ok(pods.length === 3 && pods.every((p) => p.ready), 'the old pods serve on');
  });

  it('the old pods fail too (a dependency broke before the rollout): Stalled, not the revision, no undo proposed', async () => {
    const ns = await guarded('oldfails');
    const old = [...(await webPods(ns)).values()];
    // Every pod breaks on the revision it runs, before any rollout: whatever is wrong is not the next revision.
    for (const p of old) await kubectl(['annotate', 'pod', p.name, 'rollout-guard.test/break=crash'], { ns });
    await waitFor(async () => [...(await webPods(ns)).values()].every((p) => p.waiting === 'CrashLoopBackOff'), {
      timeoutMs: 60_000,
      describe: 'every old pod crash-looping on revision 1',
    });
    await setWebImage(ns, 'registry.local/web:2-crashloop');
    const g = await waitWeb(ns, (x) => x.status?.state === 'Stalled', 'Stalled', 120_000);
    assert.notEqual(g.status?.owner, 'Revision', JSON.stringify(g.status));
    // Judged by comparison: the new pod's node ran an old pod that failed the same way before the rollout.
    assert.match(
      named(g)[0]?.comparison ?? '',
      /the previous revision was already failing on this node before the rollout started \(CrashLoop\)/,
    );
    // No undo proposed: the guard says an undo would not help, and names no command to make one.
    assert.equal(g.status?.undoSkipped?.reason, 'NotTheRevision', JSON.stringify(g.status));
    const message = g.status?.message ?? '';
    assert.match(message, /an undo would not help/, message);
    assert.doesNotMatch(message, /kubectl rollout undo/, message);
    assertDeploymentWords(message);
    // Past a further deadline: still not the revision, still no undo proposed.
    await holdsFor(
      async () => {
        const now = await read.guard(ns, 'web');
        return (
          now.status?.owner !== 'Revision' &&
          now.status?.undoSkipped?.reason === 'NotTheRevision' &&
          !/kubectl rollout undo/.test(now.status.message ?? '')
        );
      },
      { durationMs: (SPEC.progressDeadlineSeconds + 3) * 1000, describe: 'not the revision, no undo proposed' },
    );
    assert.equal(await webImage(ns), 'registry.local/web:2-crashloop');
  });

  it('Undo, an image that does not pull: RollingBack then RolledBack, the old template and ReplicaSet back, every pod on one hash', async () => {
    const ns = await guarded('undo', {}, { onStall: { action: 'Undo' } });
    const before = await replicaSetOf(ns, WEB_GOOD);
    await setWebImage(ns, BROKEN);
    const g = await waitWeb(ns, (x) => x.status?.state === 'RolledBack', 'RolledBack', 150_000);
    assert.equal(await webImage(ns), WEB_GOOD, "the Deployment's template is the old one again");
    await settledWeb(ns);
    const restored = await replicaSetOf(ns, WEB_GOOD);
    assert.equal(restored.name, before.name, 'the old ReplicaSet is reused');
    assert.equal(restored.replicas, 3, 'the old ReplicaSet scaled back up');
    // As kubectl rollout undo does: the reused ReplicaSet takes the next revision number.
    assert.equal(restored.revision, 3, 'the restored ReplicaSet is revision 3 now');
    assert.equal((await replicaSetOf(ns, BROKEN)).replicas, 0, 'the broken one scaled down');
    const pods = [...(await webPods(ns)).values()].filter((p) => !p.deleting);
    assert.ok(pods.length === 3 && pods.every((p) => p.hash === before.hash && p.ready), JSON.stringify(pods));
    assert.equal(g.status?.lastUndo?.result, 'Complete', JSON.stringify(g.status?.lastUndo));
    assert.deepEqual(
      [g.status?.lastUndo?.fromRevision, g.status?.lastUndo?.toRevision, g.status?.lastUndo?.toHash],
      [2, 1, before.hash],
      JSON.stringify(g.status?.lastUndo),
    );
    assert.equal(g.status?.rollout?.rollback, true, 'the rollout the guard followed last is the rollback');
    assert.equal(g.status?.undoneRevisions?.length, 1, 'exactly one undo');
    // The undo is said once as it starts (RollingBack) and once as it completes, on the guard and on the
    // Deployment (kubectl describe deploy); one stall came before it.
    for (const kind of ['RolloutGuard', 'Deployment']) {
      const reasons = await reasonsOn(ns, kind);
      for (const r of ['RolloutStalled', 'UndoStarted', 'UndoComplete'])
        assert.equal(reasons.filter((x) => x === r).length, 1, `${kind} ${r}: ${reasons.join(', ')}`);
    }
  });
});
