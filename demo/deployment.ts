/**
 * `npm run demo -- --story deployment`: a Deployment's broken rollout, undone as `kubectl rollout undo`
 * undoes it.
 *   1. start (or reuse) the local control plane and install the CRDs;
 *   2. run the operator, scoped to a fresh namespace;
 *   3. create the `web` Deployment (3 replicas on the kwok nodes, RollingUpdate with the API server's
 *      maxSurge and maxUnavailable of 25 %: one pod more at a time, none less) and an Undo guard, and wait
 *      until both are healthy;
 *   4. change the image to one that cannot be pulled: the new ReplicaSet's one pod never becomes Ready, the
 *      three old pods keep serving, and the Deployment itself only waits (its own progressDeadlineSeconds is
 *      600 s). The guard calls it Stalled (cause ImagePullFailure, owner Revision) and undoes it: the
 *      previous ReplicaSet's template, after which the Deployment controller scales that ReplicaSet back
 *      up and the broken one down to 0;
 *   5. check what happened (the template on the good image, the old ReplicaSet at 3 and the broken one at
 *      0, every pod on one pod-template-hash, exactly one undo, `kubectl rollout status` complete), print
 *      the real kubectl output and the Events, and exit 0 only if all of that happened.
 */
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEPLOYMENT_KIND } from '../src/api/names.js';
import type { FaultOwner, GuardStatus, RevisionRef } from '../src/api/types.js';
import { ApiClient } from '../src/k8s/apiClient.js';
import type { Kubectl } from '../cluster/kubectl.js';
import { loadKubeConfig } from '../src/k8s/kubeConfig.js';
import { deploymentManifest, rolloutGuardManifest } from '../cluster/manifests.js';
import { waitFor } from '../cluster/wait.js';
import { LiveView, Operator, StoryFailed, out, outputMode, section, show } from './shared.js';
import { LOCAL_NODES, cleanupOnce, connect, startOperator, type ClusterOptions } from './storyCluster.js';
import { oneGeneration, readSnapshot, style, type ReplicaSetRow, type Snapshot } from './view.js';

/** The Deployment, its pods' app label, its container and its RolloutGuard are all called this. */
const WEB = 'web';
const REPLICAS = 3;
const TIMINGS = { suspectAfterSeconds: 10, progressDeadlineSeconds: 20 };
/** kwok decides pod fates by image name: anything is Ready, an image whose name says "broken" is never pulled. */
const GOOD = 'registry.local/web:1';
const BROKEN = 'registry.local/web:2-broken';

export interface DeploymentStoryOptions extends ClusterOptions {
  timeoutMs: number;
}

/** What one story run needs at every step. */
interface Scene {
  opts: DeploymentStoryOptions;
  kubectl: Kubectl;
  client: ApiClient;
  op: Operator;
  ns: string;
  view?: LiveView;
  t0: number;
}

/** What the story saw between the image change and the end of the undo. Times are ms since the image change. */
interface Seen {
  original: RevisionRef;
  broken?: RevisionRef;
  suspectAt?: number;
  stalledAt?: number;
  undoStartedAt?: number;
  rolledBackAt?: number;
  /**
   * The cause and owner the guard gave while the broken rollout was in flight (Suspect, then Stalled): the
   * owner is read from the status, the cause also from the RolloutStalled Event's note.
   */
  cause?: string;
  owner?: FaultOwner | '';
  /** The ReplicaSets as they were while the broken rollout was in flight. */
  stalledSets?: ReplicaSetRow[];
}

export async function deploymentStory(opts: DeploymentStoryOptions): Promise<number> {
  const ns = opts.namespace;
  const cluster = await connect(opts);
  const client = ApiClient.fromKubeConfig(loadKubeConfig(cluster.kubeconfig));
  let op: Operator | undefined;
  const { cleanup, signal } = cleanupOnce(opts, cluster, () => op);
  let ok = false;
  let reason = '';
  try {
    op = await startOperator(cluster.kubectl, cluster.kubeconfig, ns, path.join(tmpdir(), 'rollout-guard-demo', ns));
    await tell({ opts, kubectl: cluster.kubectl, client, op, ns, t0: Date.now() });
    ok = true;
  } catch (e) {
    reason = e instanceof Error ? e.message : String(e);
    if (op) {
      // What kubectl shows explains a failure better than the reason alone.
      if (e instanceof StoryFailed) await showOutcome(cluster.kubectl, ns).catch(() => undefined);
      out(`\n--- last lines of the operator log (${op.logFile}) ---\n${await op.tail()}`);
    }
  } finally {
    client.close();
  }
  out('');
  out(ok ? 'demo: OK (deployment): the story completed as expected' : `demo: FAILED (deployment): ${reason}`);
  if (opts.keep) {
    op?.detach();
    out(`\n--keep: the operator (pid ${op?.pid ?? '?'}) and namespace ${ns} are left running; kubectl get deploy,rs,pods,rg -n ${ns}`);
  } else if (!signal.interrupted) {
    await cleanup();
  }
  return ok ? 0 : 1;
}

/** Steps 3 to 5; throws StoryFailed at the first thing that did not happen as the story says. */
async function tell(sc: Scene): Promise<void> {
  const original = await deployHealthy(sc);

  section(`Changing the image to ${BROKEN}`);
  out(`$ kubectl set image deployment/${WEB} ${WEB}=${BROKEN} -n ${sc.ns}`);
  // Measured from just before the command: detection times are, if anything, over-stated.
  sc.t0 = Date.now();
  await sc.kubectl(['set', 'image', `deployment/${WEB}`, `${WEB}=${BROKEN}`], { ns: sc.ns });
  section(
    `Watching: the guard should call it Suspect after ${TIMINGS.suspectAfterSeconds}s and Stalled after ${TIMINGS.progressDeadlineSeconds}s without progress, then undo it`,
  );
  const header = `namespace ${sc.ns} · Deployment ${WEB} (${REPLICAS} replicas, maxSurge 25 %) · onStall.action Undo · suspect ${TIMINGS.suspectAfterSeconds}s, stalled ${TIMINGS.progressDeadlineSeconds}s`;
  sc.view = new LiveView({ ci: outputMode().ci, st: style(outputMode().color), t0: sc.t0, header });
  const seen: Seen = { original };
  const done = await follow(sc, seen);
  sc.view.leave();
  await checkOutcome(sc, done, seen);
  await showOutcome(sc.kubectl, sc.ns);
  section('Timings, from the image change');
  out(
    `The guard called the rollout Suspect at +${secs(seen.suspectAt)} and Stalled at +${secs(seen.stalledAt)} (cause ${seen.cause ?? '?'}, owner ${seen.owner || '?'}), started the undo at +${secs(seen.undoStartedAt)} and was RolledBack at +${secs(seen.rolledBackAt)}.`,
  );
  out('');
  out(`detection time (Stalled − image change): ${secs(seen.stalledAt)}`);
  out(`time to RolledBack (from the image change): ${secs(seen.rolledBackAt)}`);
}

/** 3. The Deployment on its good image, all ready, then its Undo guard, Healthy. Returns the revision it is on. */
async function deployHealthy(sc: Scene): Promise<RevisionRef> {
  section(`Deployment ${WEB} (${REPLICAS} replicas, RollingUpdate, image ${GOOD}) and its RolloutGuard (Undo)`);
  const manifest = deploymentManifest({
    name: WEB,
    namespace: sc.ns,
    replicas: REPLICAS,
    strategy: 'RollingUpdate',
    nodeAffinity: { key: 'kubernetes.io/hostname', values: LOCAL_NODES },
    container: { name: WEB, image: GOOD, requests: { cpu: '10m', memory: '16Mi' } },
  });
  await sc.kubectl(['apply', '-f', '-'], { input: JSON.stringify(manifest) });
  const hash = await waitFor(
    async () => {
      const s = await snapshot(sc);
      return s.ds?.desired === REPLICAS ? oneGeneration(s) : undefined;
    },
    { timeoutMs: 180_000, describe: `deploy/${WEB} ${REPLICAS}/${REPLICAS} ready on one ReplicaSet` },
  );
  const strategy = await sc.kubectl(
    ['get', 'deployment', WEB, '-o', 'jsonpath={.spec.strategy.rollingUpdate.maxSurge} {.spec.strategy.rollingUpdate.maxUnavailable}'],
    { ns: sc.ns },
  );
  const [maxSurge, maxUnavailable] = strategy.stdout.trim().split(' ');
  out(
    `    deploy/${WEB}: ${REPLICAS}/${REPLICAS} ready (RollingUpdate: maxSurge ${maxSurge ?? '?'}, maxUnavailable ${maxUnavailable ?? '?'})`,
  );
  const spec = { ...TIMINGS, onStall: { action: 'Undo' } };
  await sc.kubectl(['apply', '-f', '-'], {
    input: JSON.stringify(rolloutGuardManifest({ name: WEB, namespace: sc.ns, kind: DEPLOYMENT_KIND, spec })),
  });
  out(
    `    rolloutguard/${WEB}: targetRef.kind ${DEPLOYMENT_KIND}, suspectAfterSeconds ${TIMINGS.suspectAfterSeconds}, progressDeadlineSeconds ${TIMINGS.progressDeadlineSeconds}, onStall.action Undo`,
  );
  const g = await waitFor(
    async () => {
      const s = await snapshot(sc);
      return s.guard?.state === 'Healthy' && s.guard.currentRevision ? s.guard : undefined;
    },
    { timeoutMs: 30_000, describe: `rolloutguard/${WEB} Healthy` },
  );
  out(`    guard Healthy: ${g.message ?? ''}`);
  const current = g.currentRevision!;
  if (current.hash !== hash)
    throw new StoryFailed(`the guard names ${current.hash} as the current revision, but every pod carries pod-template-hash ${hash}`);
  return current;
}

/** The states in which the broken rollout itself (not the undo) is in flight. */
const IN_FLIGHT = new Set(['Progressing', 'Suspect', 'Stalled']);

/**
 * 4. Polls twice a second, drawing the live view and recording what happened and when, until the guard
 * has rolled back and every pod is Ready on the original revision. Transition times come from the guard's
 * Events (microsecond eventTime): Stalled lasts only until the undo is applied, well under one poll.
 */
async function follow(sc: Scene, seen: Seen): Promise<Snapshot> {
  const deadline = sc.t0 + sc.opts.timeoutMs;
  const eventAt = (s: Snapshot, reason: string): number | undefined => {
    const e = s.events.find((x) => x.reason === reason && x.at >= sc.t0);
    return e ? e.at - sc.t0 : undefined;
  };
  for (;;) {
    const s = await snapshot(sc);
    sc.view?.draw(s);
    const g = s.guard;
    if (sc.op.exited !== undefined) throw new StoryFailed(`the operator exited with ${sc.op.exited}\n${await sc.op.tail()}`);
    noOtherKindWords(g, s);
    if (g?.rollout?.toRevision && g.rollout.toRevision.hash !== seen.original.hash && !seen.broken)
      seen.broken = { ...g.rollout.toRevision };
    if (g && IN_FLIGHT.has(g.state ?? '') && !g.rollout?.rollback && !g.lastUndo) {
      if (g.cause) seen.cause = g.cause;
      if (g.owner) seen.owner = g.owner;
      if (s.replicaSets) seen.stalledSets = s.replicaSets;
    }
    // With Undo, Stalled lasts only until the undo is applied: a poll seldom catches it, but when one does, it must be this stall.
    if (g?.state === 'Stalled' && !g.lastUndo) {
      if (g.cause !== 'ImagePullFailure')
        throw new StoryFailed(`Stalled with cause ${g.cause || '?'}, expected ImagePullFailure: ${g.message ?? ''}`);
      if (g.owner !== 'Revision') throw new StoryFailed(`Stalled with owner ${g.owner || '?'}, expected Revision: ${g.message ?? ''}`);
      if (g.undoSkipped) throw new StoryFailed(`Stalled, but the undo was skipped (${g.undoSkipped.reason}): ${g.undoSkipped.message}`);
    }
    seen.suspectAt ??= eventAt(s, 'RolloutSuspect');
    if (seen.stalledAt === undefined) {
      seen.stalledAt = eventAt(s, 'RolloutStalled');
      // The stall's note is the guard's stall sentence, which names the cause ("Cause ImagePullFailure: …").
      const m = /Cause (\w+):/.exec(s.events.find((e) => e.reason === 'RolloutStalled')?.note ?? '');
      if (m?.[1]) seen.cause = m[1];
    }
    seen.undoStartedAt ??= eventAt(s, 'UndoStarted');
    const u = g?.lastUndo;
    if (u && (u.result === 'Failed' || u.result === 'RollbackStalled')) throw new StoryFailed(`the undo ended ${u.result}: ${u.message}`);
    if (g?.state === 'RolledBack' && u?.result === 'Complete' && oneGeneration(s) === seen.original.hash) {
      seen.rolledBackAt = eventAt(s, 'UndoComplete') ?? s.at - sc.t0;
      return s;
    }
    if (Date.now() > deadline)
      throw new StoryFailed(
        `timed out ${sc.opts.timeoutMs / 1000}s after the image change waiting for RolledBack on the original revision; guard state ${g?.state ?? 'none'}: ${g?.message ?? ''}`,
      );
    // A polling interval, not a stand-in for a condition: every condition is re-read each tick.
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** A Deployment's guard speaks of the Deployment, its pods and ReplicaSets, never of a DaemonSet's. */
function noOtherKindWords(g: GuardStatus | undefined, s: Snapshot): void {
  const texts = [g?.message ?? '', g?.lastUndo?.message ?? '', g?.undoSkipped?.message ?? '', ...s.events.map((e) => e.note)];
  const wrong = texts.find((t) => /DaemonSet|kubectl get ds\b|\bds\//.test(t));
  if (wrong !== undefined) throw new StoryFailed(`the guard of a Deployment speaks of a DaemonSet: ${wrong}`);
}

/** 5. What must have happened, checked against the API server and kubectl; prints it as it goes. */
async function checkOutcome(sc: Scene, s: Snapshot, seen: Seen): Promise<void> {
  const g = s.guard!;
  if (seen.stalledAt === undefined) throw new StoryFailed('rolled back without a RolloutStalled Event');
  if (seen.cause !== 'ImagePullFailure')
    throw new StoryFailed(`the stall was classified ${seen.cause ?? 'without a cause'}, expected ImagePullFailure`);
  if (seen.owner !== 'Revision') throw new StoryFailed(`the guard blamed ${seen.owner || 'no one'} for the stall, expected the Revision`);
  const broken = seen.broken;
  if (!broken) throw new StoryFailed('the guard never named the broken revision it rolled out to');
  // Exactly one undo: of the broken revision, to the original one.
  const u = g.lastUndo!;
  if (u.fromHash !== broken.hash || u.toHash !== seen.original.hash)
    throw new StoryFailed(`the undo went from ${u.fromHash} to ${u.toHash}, expected ${broken.hash} to ${seen.original.hash}`);
  const undone = g.undoneRevisions ?? [];
  if (undone.length !== 1 || undone[0] !== broken.hash)
    throw new StoryFailed(`expected exactly one undone revision, ${broken.hash}; status.undoneRevisions is ${JSON.stringify(undone)}`);
  const final = await waitFor(
    async () => {
      const now = await snapshot(sc);
      const events = now.events.filter((e) => e.at >= sc.t0);
      const sets = now.replicaSets ?? [];
      const old = sets.find((r) => r.hash === seen.original.hash);
      const bad = sets.find((r) => r.hash === broken.hash);
      const settled = old?.desired === REPLICAS && old.ready === REPLICAS && bad?.desired === 0;
      return settled && events.some((e) => e.reason === 'UndoComplete') ? { now, events, old, bad } : undefined;
    },
    { timeoutMs: 20_000, describe: `the old ReplicaSet at ${REPLICAS} and the broken one at 0, and the UndoComplete Event` },
  );
  const starts = final.events.filter((e) => e.reason === 'UndoStarted').length;
  if (starts !== 1) throw new StoryFailed(`expected one UndoStarted Event, got ${starts}`);
  const image = await sc.kubectl(['get', 'deployment', WEB, '-o', 'jsonpath={.spec.template.spec.containers[0].image}'], { ns: sc.ns });
  if (image.stdout.trim() !== GOOD) throw new StoryFailed(`the Deployment's template runs ${image.stdout.trim()}, expected ${GOOD} again`);
  const hashes = new Set(final.now.nodes.flatMap((r) => r.pods.map((p) => p.hash)));
  if (hashes.size !== 1 || !hashes.has(seen.original.hash))
    throw new StoryFailed(`the pods carry pod-template-hash ${[...hashes].join(', ')}, expected ${seen.original.hash} alone`);
  const rs = (r: ReplicaSetRow | undefined): string => `${r?.name ?? '?'} (revision ${r?.revision ?? '?'}, ${r?.hash ?? '?'})`;
  section('What happened');
  if (seen.stalledSets)
    out(
      `    While the rollout was stuck: ${seen.stalledSets.map((r) => `ReplicaSet ${rs(r)} ${r.desired} desired, ${r.ready} ready`).join('; ')}.`,
    );
  out(`    The guard undid revision ${broken.revision ?? '?'} (${broken.hash}), once: ${u.message}`);
  const renumbered =
    final.old?.revision !== undefined && final.old.revision !== seen.original.revision
      ? `, renumbered from revision ${seen.original.revision ?? '?'} to ${final.old.revision} as kubectl rollout undo does`
      : '';
  out(`    The template runs ${GOOD} again: the Deployment controller took back ReplicaSet ${final.old?.name ?? '?'}${renumbered}.`);
  out(
    `    Now ReplicaSet ${rs(final.old)}: ${final.old?.desired} desired, ${final.old?.ready} ready; ReplicaSet ${rs(final.bad)}: ${final.bad?.desired} desired.`,
  );
  out(`    All ${REPLICAS} pods carry pod-template-hash ${seen.original.hash}.`);
  out(`\n$ kubectl rollout status deployment/${WEB} -n ${sc.ns}`);
  const status = await sc.kubectl(['rollout', 'status', `deployment/${WEB}`, '--timeout=30s'], { ns: sc.ns, allowFail: true });
  out(`${status.stdout}${status.stderr}`.trimEnd());
  if (status.code !== 0 || !/successfully rolled out/.test(status.stdout))
    throw new StoryFailed('kubectl rollout status did not complete after the undo');
}

/** The real kubectl output and the Events. */
async function showOutcome(kubectl: Kubectl, ns: string): Promise<void> {
  section('What kubectl shows now');
  await show(kubectl, ['get', 'deploy,rs,pods', '-o', 'wide'], ns);
  await show(kubectl, ['rollout', 'history', `deployment/${WEB}`], ns);
  await show(kubectl, ['get', 'rg'], ns);
  await show(kubectl, ['describe', 'rg', WEB], ns, { from: { re: /^Status:/, sed: '/^Status:/,$p' } });
  section('Events');
  await show(kubectl, ['get', 'events', '--field-selector', `involvedObject.name=${WEB}`, '--sort-by=.metadata.creationTimestamp'], ns);
}

const snapshot = (sc: Scene): Promise<Snapshot> => readSnapshot(sc.client, sc.ns, WEB, [], () => Date.now(), DEPLOYMENT_KIND);

const secs = (ms: number | undefined): string => (ms === undefined ? '?' : `${(ms / 1000).toFixed(1)} s`);
