/**
 * `npm run demo -- --story dead-nodes`: kubelets die in the middle of a rollout of a GOOD image. The
 * rollout stops, and undoing it would not bring the nodes back: the guard calls it Stalled, says the
 * nodes are at fault and does not undo. Once the kubelets are back, the rollout completes.
 *
 *   1. start a private control plane with the node lifecycle controller, so that dead kubelets are
 *      noticed as in a real cluster (Ready=Unknown, the unreachable taint), and four nodes: steady-1,2
 *      played by the main kwok, dying-1,2 by a kwok of their own whose freezing is their kubelets dying;
 *   2. run the operator; create the `decoder` DaemonSet on all four and a RolloutGuard with onStall Undo;
 *   3. freeze the dying nodes' kubelets and change the image to another good one;
 *   4. watch the nodes turn Unknown and the guard call it Stalled, blame the nodes and skip the undo;
 *   5. print the real kubectl output while it is stalled;
 *   6. thaw the kubelets and watch the rollout complete, the guard Healthy on revision 2;
 *   7. exit 0 only if all of that happened and no undo was ever made.
 *
 * The fleet and the timings are those of the test that checks this behaviour, test/e2e/fieldFaults.test.ts.
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FaultOwner, RevisionRef, UndoSkip } from '../src/api/types.js';
import { UNREACHABLE_TAINT } from '../src/api/names.js';
import { ApiClient } from '../src/k8s/apiClient.js';
import { loadKubeConfig } from '../src/k8s/kubeConfig.js';
import type { Kubectl } from '../cluster/kubectl.js';
import { createNamespace } from '../cluster/namespaces.js';
import { POOL_LABEL, isUnreachable, nodeUsable, readyCondition, type NodeObject } from '../cluster/nodes.js';
import { waitFor } from '../cluster/wait.js';
import { PrivateCluster, type KillableNodePool, type PrivateNodePool } from '../cluster/privateCluster.js';
import {
  DEFAULT_NAMESPACE,
  LiveView,
  NAME,
  Operator,
  ROOT,
  StoryFailed,
  daemonSet,
  onInterrupt,
  out,
  outputMode,
  rolloutGuard,
  say,
  section,
  show,
  stopPrevious,
} from './shared.js';
import { oneGeneration, readSnapshot, style, type DsColumns, type NodeRow, type Snapshot } from './view.js';

/** The cluster CLI, which stops a control plane left by --keep. */
const CLI = path.join(ROOT, 'dist/cluster/cli.js');

/** Where the story's control plane lives, under the repository root (git ignores `.cluster-*`). */
export const DEAD_NODES_CLUSTER_DIR = '.cluster-demo-nodes';

/** The flags this story takes (parsed in demo.ts). */
export interface DeadNodesOptions {
  keep: boolean;
  namespace: string;
  timeoutMs: number;
}

const FROM_IMAGE = 'registry.local/decoder:1';
/** Also good: kwok runs any image without "broken" or "crash…" in its name Running and Ready. */
const TO_IMAGE = 'registry.local/decoder:2';
const STEADY_POOL = 'steady';
const DYING_POOL = 'dying';
/**
 * The stall deadline (25 s) is longer than it takes the node lifecycle controller to notice a dead kubelet
 * and taint its node (10 s grace period, then about a second): by the time the guard calls the rollout
 * Stalled, the nodes' state is there to blame.
 */
const TIMINGS = { suspectAfterSeconds: 4, progressDeadlineSeconds: 25 };
/** No bake window: the story ends when every node runs the new revision, not the default 180 s later. */
const BAKE_SECONDS = 0;
const MIN_READY_SECONDS = 2;

/** A private cluster per namespace, so a test run (its own --namespace) never removes a developer's --keep cluster. */
function clusterDir(ns: string): string {
  return ns === DEFAULT_NAMESPACE ? DEAD_NODES_CLUSTER_DIR : `${DEAD_NODES_CLUSTER_DIR}-${ns}`;
}

/** What happened and when (ms since the image change), for the checks and the summary. */
interface Facts {
  original?: RevisionRef;
  target?: RevisionRef;
  /** When every dying node was Ready=Unknown with the unreachable taint. */
  unknownAt?: number;
  suspectAt?: number;
  stalledAt?: number;
  cause?: string;
  owner?: FaultOwner | '';
  /** The nodes the guard named as the fault (owner Node) while stalled. */
  blamed: string[];
  skip?: UndoSkip;
  undoSkippedAt?: number;
  stalledColumns?: DsColumns;
  /** The dying nodes' rows of the view at the stall: what their pods were doing. */
  stalledDying: NodeRow[];
  thawedAt?: number;
  /** When every dying node was Ready again, without the taint. */
  backAt?: number;
  completeAt?: number;
  healthyAt?: number;
}

/** Everything the phases share once the cluster is up. */
interface Scene {
  pc: PrivateCluster;
  kubectl: Kubectl;
  client: ApiClient;
  ns: string;
  steady: PrivateNodePool;
  dying: KillableNodePool;
  op: Operator;
  record: Facts;
  ci: boolean;
  st: ReturnType<typeof style>;
  /** Set at the image change. */
  t0: number;
  deadline: number;
  view?: LiveView;
}

const list = (nodes: readonly string[]): string => nodes.join(', ');
const secs = (ms: number | undefined): string => (ms === undefined ? '?' : `${(ms / 1000).toFixed(1)} s`);

export async function deadNodesStory(opts: DeadNodesOptions): Promise<number> {
  const { ci, color } = outputMode();
  const st = style(color);
  const ns = opts.namespace;
  const dir = clusterDir(ns);
  // Beside the broken-image story's (…/rollout-guard-demo/<ns>), never the same pid file: each story
  // stops only the operator its own earlier --keep run left.
  const stateDir = path.join(tmpdir(), 'rollout-guard-demo', 'dead-nodes', ns);
  let pc: PrivateCluster | undefined;
  let dying: KillableNodePool | undefined;
  let frozen = false;
  let op: Operator | undefined;
  let client: ApiClient | undefined;
  let cleaning: Promise<void> | undefined;

  const cleanup = (): Promise<void> =>
    (cleaning ??= (async () => {
      if (opts.keep) {
        op?.detach();
        if (signal.interrupted && pc) {
          say(`\n--keep: left running: the operator${op ? ` (kill ${op.pid} stops it)` : ''} and the control plane in ${pc.dir}`);
          say(`(RG_CLUSTER_DIR=${pc.dir} node ${CLI} down stops it)${frozen ? '; the kubelets of the dying nodes are still frozen' : ''}`);
        }
        return;
      }
      say('\n==> Cleaning up');
      if (op) {
        await op.stop();
        say('    operator stopped');
      }
      // A frozen kwok would only die at the SIGKILL that follows an ignored SIGTERM: thaw it first.
      if (frozen && dying) thaw(dying);
      if (pc) {
        await pc.down();
        say(`    private control plane stopped and ${pc.dir} removed`);
      } else {
        say(`    if a control plane was left half-started in ${dir}, the next run removes it`);
      }
    })());
  const signal = onInterrupt(cleanup);
  const thaw = (pool: KillableNodePool): void => {
    pool.resume();
    frozen = false;
  };

  let ok = false;
  let reason = '';
  let scene: Scene | undefined;
  try {
    section(
      `Private control plane in ${dir}/ (etcd, kube-apiserver, controller-manager with the node lifecycle controller, scheduler, kwok)`,
    );
    await stopPrevious(path.join(stateDir, 'operator.pid'));
    // Removes whatever an earlier run left in the directory, then starts afresh on free ports.
    pc = await PrivateCluster.start({ dir, nodeLifecycle: true, log: (l) => out(`    ${l.replace(/^\[private cluster\] /, '')}`) });
    await pc.installCrds();
    out(`    CRDs installed; kubeconfig ${pc.kubeconfig}`);
    const fleet = await createFleet(pc);
    dying = fleet.dying;
    client = ApiClient.fromKubeConfig(loadKubeConfig(pc.kubeconfig));

    section(`Namespace ${ns} and the operator`);
    await createNamespace(pc.kubectl, ns);
    op = await Operator.start(pc.kubeconfig, ns, stateDir);
    out(`    operator running: pid ${op.pid}, watching namespace ${ns}, log ${op.logFile}`);

    scene = { pc, kubectl: pc.kubectl, client, ns, ...fleet, op, record: { blamed: [], stalledDying: [] }, ci, st, t0: 0, deadline: 0 };
    await deploy(scene);

    frozen = true; // set before the SIGSTOP: a Ctrl-C right after it must still thaw them
    await freezeAndRollOut(scene, opts.timeoutMs);
    await watchStall(scene);
    await showState(scene, 'What kubectl shows while it is stalled');

    section(`Thawing the kubelets of ${list(scene.dying.nodes)}`);
    out(`$ kill -CONT ${kwokPid(scene)}   # ${scene.dying.process}`);
    thaw(scene.dying);
    scene.record.thawedAt = Date.now() - scene.t0;
    scene.view!.header = header(scene, 'thawed');
    await watchRecovery(scene);
    await showEnd(scene);
    ok = true;
  } catch (e) {
    ok = false;
    reason = e instanceof Error ? e.message : String(e);
    // What went differently, while the cluster still exists to say it (it is removed at the end).
    if (scene && scene.t0 > 0) await showState(scene, 'What kubectl shows now (the story failed)').catch(() => undefined);
    if (op) out(`\n--- last lines of the operator log (${op.logFile}) ---\n${await op.tail()}`);
    if (pc) out(`\n--- errors in the controller-manager log ---\n${controllerManagerErrors(pc)}`);
  } finally {
    client?.close();
  }

  if (scene?.record.stalledAt !== undefined) {
    section('Summary');
    out(summary(scene));
    out('');
    out(`detection time (Stalled − image change): ${secs(scene.record.stalledAt)}`);
    if (scene.record.thawedAt !== undefined) {
      out(
        `time to Healthy on revision 2 after the thaw: ${scene.record.healthyAt !== undefined ? secs(scene.record.healthyAt - scene.record.thawedAt) : 'never'}`,
      );
    }
  }
  out('');
  out(ok ? 'demo: OK (dead-nodes): the story completed as expected' : `demo: FAILED (dead-nodes): ${reason}`);
  if (opts.keep) {
    op?.detach();
    if (pc) keepHints(pc, ns, op, dying, frozen);
  } else if (!signal.interrupted) {
    await cleanup();
  }
  return ok ? 0 : 1;
}

/** Two nodes that stay up, played by the main kwok, and two played by a kwok of their own, to freeze. */
async function createFleet(pc: PrivateCluster): Promise<{ steady: PrivateNodePool; dying: KillableNodePool }> {
  const steady = await pc.createNodePool(STEADY_POOL, 2, { exactName: true });
  const dying = await pc.createKillableNodePool(DYING_POOL, 2, { exactName: true });
  out(`    nodes ${list(steady.nodes)} (kwok) and ${list(dying.nodes)} (their own kwok, ${dying.process}): all Ready`);
  return { steady, dying };
}

/** The DaemonSet on all four nodes, ready everywhere, then its guard, Healthy. */
async function deploy(sc: Scene): Promise<void> {
  const all = [...sc.steady.nodes, ...sc.dying.nodes];
  section(
    `DaemonSet ${NAME} (maxUnavailable 1, minReadySeconds ${MIN_READY_SECONDS}, image ${FROM_IMAGE}) on ${list(all)}, and its RolloutGuard`,
  );
  const ds = daemonSet(sc.ns, FROM_IMAGE, {
    pin: { key: POOL_LABEL, values: [sc.steady.name, sc.dying.name] },
    minReadySeconds: MIN_READY_SECONDS,
  });
  await sc.kubectl(['apply', '-f', '-'], { input: JSON.stringify(ds) });
  const now = (): number => Date.now();
  const ready = await waitFor(
    async () => {
      const s = await readSnapshot(sc.client, sc.ns, NAME, all, now);
      return oneGeneration(s) && s.ds?.desired === all.length ? s : undefined;
    },
    { timeoutMs: 120_000, describe: `ds/${NAME} ${all.length}/${all.length} ready` },
  );
  out(`    ds/${NAME}: ${ready.ds?.ready}/${ready.ds?.desired} ready`);
  await sc.kubectl(['apply', '-f', '-'], { input: JSON.stringify(rolloutGuard(sc.ns, 'Undo', TIMINGS, { bakeSeconds: BAKE_SECONDS })) });
  out(
    `    rolloutguard/${NAME}: suspectAfterSeconds ${TIMINGS.suspectAfterSeconds}, progressDeadlineSeconds ${TIMINGS.progressDeadlineSeconds}, bakeSeconds ${BAKE_SECONDS}, onStall.action Undo`,
  );
  const baseline = await waitFor(
    async () => {
      const s = await readSnapshot(sc.client, sc.ns, NAME, all, now);
      return s.guard?.state === 'Healthy' && s.guard.currentRevision ? s : undefined;
    },
    { timeoutMs: 30_000, describe: `rolloutguard/${NAME} Healthy` },
  );
  sc.record.original = baseline.guard!.currentRevision!;
  out(`    guard Healthy: ${baseline.guard?.message ?? ''}`);
}

/** The pid of the dying pool's kwok, to show the `kill` that the harness's pause and resume amount to. */
function kwokPid(sc: Scene): string {
  try {
    return readFileSync(path.join(sc.pc.dir, 'pids', `${sc.dying.process}.pid`), 'utf8').trim();
  } catch {
    return '?';
  }
}

/** The kubelets die as the good revision starts to roll out: the clock (t0) starts at the image change. */
async function freezeAndRollOut(sc: Scene, timeoutMs: number): Promise<void> {
  section(`Freezing the kubelets of ${list(sc.dying.nodes)}, then changing the image to ${TO_IMAGE}, a good one`);
  out(`$ kill -STOP ${kwokPid(sc)}   # ${sc.dying.process}, the kwok that plays the kubelets of ${list(sc.dying.nodes)}`);
  sc.dying.pause();
  out(`$ kubectl set image ds/${NAME} ${NAME}=${TO_IMAGE} -n ${sc.ns}`);
  sc.t0 = Date.now();
  sc.deadline = sc.t0 + timeoutMs;
  await sc.kubectl(['set', 'image', `ds/${NAME}`, `${NAME}=${TO_IMAGE}`], { ns: sc.ns });
  section(
    `Watching: the nodes should turn Unknown within ~10 s, the guard call it Suspect after ${TIMINGS.suspectAfterSeconds}s and Stalled after ${TIMINGS.progressDeadlineSeconds}s without progress, blame the nodes and not undo`,
  );
  sc.view = new LiveView({ ci: sc.ci, st: sc.st, t0: sc.t0, header: header(sc, 'frozen') });
}

/** The live frame's first line. */
function header(sc: Scene, kubelets: 'frozen' | 'thawed'): string {
  return `namespace ${sc.ns} · onStall Undo · suspect ${TIMINGS.suspectAfterSeconds}s, stalled ${TIMINGS.progressDeadlineSeconds}s · ${list(sc.dying.nodes)} ${kubelets}`;
}

/** How a node's own trouble shows in the view: its Ready condition unless True, and the unreachable taint. */
function nodeHealth(n: NodeObject): string | undefined {
  const ready = readyCondition(n);
  const parts: string[] = [];
  if (ready?.status !== 'True') parts.push(`Ready=${ready?.status ?? '?'}`);
  if ((n.spec.taints ?? []).some((t) => t.key === UNREACHABLE_TAINT)) parts.push('tainted unreachable');
  return parts.length ? parts.join(', ') : undefined;
}

/**
 * Polls the cluster twice a second until `done` says the phase is over, drawing the live view and
 * narrating the dying nodes' changes. On every tick, whatever the phase: the operator is alive, no undo
 * was made and the template is still the good image; else the story fails. `done` throws StoryFailed
 * for a phase-specific failure.
 */
async function follow(sc: Scene, what: string, done: (s: Snapshot, nodes: NodeObject[]) => boolean): Promise<Snapshot> {
  const view = sc.view!;
  const all = [...sc.steady.nodes, ...sc.dying.nodes];
  let wasDown = sc.record.unknownAt !== undefined && sc.record.backAt === undefined;
  for (;;) {
    const [s, nodeList] = await Promise.all([
      readSnapshot(sc.client, sc.ns, NAME, all, () => Date.now()),
      sc.client.request<{ items: NodeObject[] }>('GET', '/api/v1/nodes', { query: { labelSelector: `${POOL_LABEL}=${sc.dying.name}` } }),
    ]);
    const dyingNodes = nodeList.items;
    const health = new Map(dyingNodes.map((n) => [n.metadata.name, nodeHealth(n)]));
    for (const row of s.nodes) {
      const h = health.get(row.node);
      if (h) row.health = h;
    }
    view.draw(s);

    // The dying nodes as the node lifecycle controller sees them: narrated when all of them have turned.
    const down = dyingNodes.length === sc.dying.nodes.length && dyingNodes.every(isUnreachable);
    const up = dyingNodes.length === sc.dying.nodes.length && dyingNodes.every(nodeUsable);
    if (down && !wasDown) {
      wasDown = true;
      sc.record.unknownAt ??= s.at - sc.t0;
      view.note(
        `the nodes ${list(sc.dying.nodes)} turn Unknown: no heartbeat from their kubelets, so the node lifecycle controller set Ready=Unknown and tainted them ${UNREACHABLE_TAINT}`,
        s.at,
      );
    }
    if (up && wasDown && sc.record.thawedAt !== undefined) {
      wasDown = false;
      sc.record.backAt ??= s.at - sc.t0;
      view.note(`the nodes ${list(sc.dying.nodes)} are Ready again, the unreachable taint removed`, s.at);
    }

    const g = s.guard;
    if (sc.op.exited !== undefined) throw new StoryFailed(`the operator exited with ${sc.op.exited}\n${await sc.op.tail()}`);
    const undoEvent = s.events.find((e) => e.reason === 'UndoStarted');
    if (g?.lastUndo || g?.state === 'RollingBack' || g?.state === 'RolledBack' || undoEvent) {
      throw new StoryFailed(
        `the guard undid a rollout of a good image (state ${g?.state ?? '?'}; ${g?.lastUndo?.message ?? undoEvent?.note ?? ''})`,
      );
    }
    if (s.ds && s.ds.image !== TO_IMAGE)
      throw new StoryFailed(`the DaemonSet's template is on ${s.ds.image}, not the good image ${TO_IMAGE}: something changed it`);

    if (done(s, dyingNodes)) return s;
    if (Date.now() > sc.deadline) {
      throw new StoryFailed(
        `timed out waiting for ${what}, ${(sc.deadline - sc.t0) / 1000}s after the image change; guard state ${g?.state ?? 'none'}: ${g?.message ?? ''}`,
      );
    }
    // A polling interval, not a stand-in for a condition: every condition is re-read each tick.
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** ms since t0 of the guard's first Event `reason` in this story, if any yet. */
function eventAt(sc: Scene, s: Snapshot, reason: string): number | undefined {
  const e = s.events.find((x) => x.reason === reason && x.at >= sc.t0);
  return e ? e.at - sc.t0 : undefined;
}

/** Until the guard has called it Stalled, blamed the dying nodes and recorded why it does not undo. */
async function watchStall(sc: Scene): Promise<void> {
  const r = sc.record;
  await follow(sc, 'Stalled with the undo skipped', (s) => {
    const g = s.guard;
    if (g?.rollout?.toRevision && g.rollout.toRevision.hash !== r.original?.hash) r.target ??= { ...g.rollout.toRevision };
    r.suspectAt ??= eventAt(sc, s, 'RolloutSuspect');
    r.stalledAt ??= eventAt(sc, s, 'RolloutStalled');
    if (g?.state !== 'Stalled') return false;
    r.cause = g.cause;
    r.owner = g.owner;
    if (s.ds) r.stalledColumns = s.ds;
    r.stalledDying = s.nodes.filter((n) => sc.dying.nodes.includes(n.node));
    if (g.owner !== 'Node')
      throw new StoryFailed(
        `Stalled, but the guard blames ${g.owner || 'no one'} (cause ${g.cause || '?'}), not the nodes: ${g.message ?? ''}`,
      );
    if (g.cause !== 'NodeNotReady')
      throw new StoryFailed(`Stalled with owner Node but cause ${g.cause || '?'}, expected NodeNotReady: ${g.message ?? ''}`);
    const blamed = [...(g.emptyNodes ?? []), ...(g.blockedNodes ?? [])].filter((x) => x.owner === 'Node').map((x) => x.node);
    const wrong = blamed.filter((n) => !sc.dying.nodes.includes(n));
    if (blamed.length === 0 || wrong.length > 0) {
      throw new StoryFailed(
        `the guard should name dying nodes as the fault, named ${blamed.length ? list(blamed) : 'none'} (${JSON.stringify({ emptyNodes: g.emptyNodes, blockedNodes: g.blockedNodes })})`,
      );
    }
    r.blamed = blamed;
    // Written with the stall, or the guard is still deciding: an undo in between fails the story in follow().
    if (!g.undoSkipped) return false;
    if (g.undoSkipped.reason !== 'NotTheRevision')
      throw new StoryFailed(`the undo was skipped as ${g.undoSkipped.reason}, expected NotTheRevision: ${g.undoSkipped.message}`);
    r.skip = g.undoSkipped;
    // The Event is recorded asynchronously, after the status.
    r.undoSkippedAt = eventAt(sc, s, 'UndoSkipped');
    if (r.undoSkippedAt === undefined || r.stalledAt === undefined) return false;
    sc.view!.note(`Stalled: ${g.cause}, the nodes are at fault (owner Node: ${list(blamed)}); not undoing`, s.at);
    sc.view!.note(`  undoSkipped ${r.skip.reason}: ${r.skip.message}`, s.at);
    return true;
  });
}

/** The real kubectl output: the nodes, the DaemonSet and its pods, the guard, its status and Events. */
async function showState(sc: Scene, title: string): Promise<void> {
  sc.view?.leave();
  section(title);
  await show(sc.kubectl, ['get', 'nodes', '-L', POOL_LABEL], undefined);
  await show(sc.kubectl, ['get', 'ds', NAME, '-o', 'wide'], sc.ns);
  await show(sc.kubectl, ['get', 'pods', '-o', 'wide'], sc.ns);
  await show(sc.kubectl, ['get', 'rg'], sc.ns);
  await show(sc.kubectl, ['describe', 'rg', NAME], sc.ns, { from: { re: /^Status:/, sed: '/^Status:/,$p' } });
}

/** From the thaw until the rollout has completed and the guard is Healthy on revision 2. */
async function watchRecovery(sc: Scene): Promise<void> {
  const r = sc.record;
  section(
    `Watching: the nodes should come back, the rollout complete on all ${sc.steady.nodes.length + sc.dying.nodes.length} nodes, the guard end Healthy on revision 2`,
  );
  await follow(sc, 'Healthy on revision 2', (s) => {
    const g = s.guard;
    r.completeAt ??= eventAt(sc, s, 'RolloutComplete');
    const rev2 = g?.currentRevision?.revision === 2 && g.currentRevision.hash !== r.original?.hash;
    if (!(
      g?.state === 'Healthy' &&
      rev2 &&
      oneGeneration(s) === g.currentRevision?.hash &&
      s.ds?.desired === sc.steady.nodes.length + sc.dying.nodes.length
    ))
      return false;
    r.healthyAt = s.at - sc.t0;
    sc.view!.note(`Healthy on revision 2 (${g.currentRevision?.hash ?? '?'}): every node runs ${TO_IMAGE}; no undo was made`, s.at);
    return true;
  });
}

/** The end state as kubectl shows it, and the last checks: an UndoSkipped Event, never an UndoStarted. */
async function showEnd(sc: Scene): Promise<void> {
  sc.view!.leave();
  section('What kubectl shows now');
  await show(sc.kubectl, ['get', 'rg'], sc.ns);
  await show(sc.kubectl, ['get', 'ds', NAME, '-o', 'wide'], sc.ns);
  section('Events');
  await show(
    sc.kubectl,
    ['get', 'events', '--field-selector', `involvedObject.name=${NAME}`, '--sort-by=.metadata.creationTimestamp'],
    sc.ns,
  );
  // On the guard and, mirrored, on the DaemonSet: both kinds count.
  const r = await sc.kubectl(['get', 'events', '--field-selector', `involvedObject.name=${NAME}`, '-o', 'jsonpath={.items[*].reason}'], {
    ns: sc.ns,
  });
  const reasons = new Set(r.stdout.split(/\s+/));
  if (!reasons.has('UndoSkipped')) throw new StoryFailed('no UndoSkipped Event');
  if (reasons.has('UndoStarted')) throw new StoryFailed('an UndoStarted Event: the guard undid a rollout of a good image');
}

/** The one-paragraph account of what happened, from recorded facts only. */
function summary(sc: Scene): string {
  const r = sc.record;
  const rev = (x: RevisionRef | undefined): string =>
    !x ? 'a new revision' : x.revision !== undefined ? `revision ${x.revision} (${x.hash})` : x.hash;
  const c = r.stalledColumns;
  const parts = [
    `At +0.0 s, with the kubelets of ${list(sc.dying.nodes)} frozen, the image of ds/${NAME} was changed to ${TO_IMAGE}, a good image, creating ${rev(r.target)}.`,
    r.unknownAt !== undefined
      ? `At +${secs(r.unknownAt)} the node lifecycle controller had marked ${list(sc.dying.nodes)} Ready=Unknown and tainted them unreachable.`
      : 'The nodes were never seen Unknown and tainted.',
  ];
  if (c) {
    const all = sc.steady.nodes.length + sc.dying.nodes.length;
    // With the unreachable:NoSchedule taint the DaemonSet controller stops counting the nodes: its columns
    // can look finished while the dead nodes still hold the old pods.
    const held = r.stalledDying.map(
      (n) => `${n.node} ${n.pods.length ? n.pods.map((p) => `revision ${p.revision ?? '?'} ${p.state}`).join(' + ') : 'empty'}`,
    );
    parts.push(
      `While stalled, kubectl get ds showed DESIRED ${c.desired}, READY ${c.ready}, UP-TO-DATE ${c.upToDate}, AVAILABLE ${c.available}${
        c.desired < all ? `: the dead nodes had dropped out of DESIRED (of ${all})` : ''
      }; the dying nodes held ${held.join(', ')}.`,
    );
  }
  parts.push(
    `The guard called it Suspect at +${secs(r.suspectAt)} and Stalled at +${secs(r.stalledAt)} with cause ${r.cause || '?'}, owner ${r.owner || '?'}, naming ${r.blamed.length ? list(r.blamed) : 'no node'}.`,
  );
  if (r.skip)
    parts.push(
      `With onStall.action Undo it still did not undo: undoSkipped ${r.skip.reason}, and an UndoSkipped Event at +${secs(r.undoSkippedAt)}.`,
    );
  if (r.thawedAt !== undefined) {
    parts.push(
      `The kubelets were thawed at +${secs(r.thawedAt)}; ${r.backAt !== undefined ? `the nodes were Ready again at +${secs(r.backAt)}, ` : ''}${
        r.healthyAt !== undefined
          ? `and the guard was Healthy on ${rev(r.target)} at +${secs(r.healthyAt)}, every node on ${TO_IMAGE}, no undo ever made.`
          : 'but the rollout did not complete.'
      }`,
    );
  }
  return parts.join(' ');
}

/** The last error lines (klog `E…`) of the private cluster's controller-manager. */
function controllerManagerErrors(pc: PrivateCluster, lines = 15): string {
  try {
    const text = readFileSync(path.join(pc.dir, 'logs', 'kube-controller-manager.log'), 'utf8');
    const errors = text.split('\n').filter((l) => l.startsWith('E'));
    return errors.length ? errors.slice(-lines).join('\n') : '(none)';
  } catch {
    return '(no log)';
  }
}

/** With --keep: how to explore what is left running, and how to stop it. */
function keepHints(pc: PrivateCluster, ns: string, op: Operator | undefined, dying: KillableNodePool | undefined, frozen: boolean): void {
  let kwok = '?';
  try {
    if (dying) kwok = readFileSync(path.join(pc.dir, 'pids', `${dying.process}.pid`), 'utf8').trim();
  } catch {
    // stopped: the hint below names "?"
  }
  section('Still running (--keep): explore with');
  out(`    export KUBECONFIG=${pc.kubeconfig}`);
  out(`    export PATH=${pc.binDir}:$PATH   # the kubectl the demo used`);
  out(`    kubectl get nodes -L ${POOL_LABEL}`);
  out(`    kubectl get ds,pods -n ${ns} -o wide`);
  out(`    kubectl get rg -n ${ns} -o wide`);
  out(`    kubectl describe rg ${NAME} -n ${ns}`);
  if (dying) {
    out(
      frozen
        ? `    kill -CONT ${kwok}   # thaw the kubelets of ${list(dying.nodes)} (still frozen)`
        : `    kill -STOP ${kwok}   # freeze the kubelets of ${list(dying.nodes)} again (kill -CONT ${kwok} thaws them)`,
    );
  }
  out(`    kubectl set image ds/${NAME} -n ${ns} ${NAME}=registry.local/decoder:3   # another good rollout`);
  if (op) out(`    tail -f ${op.logFile}  # the operator's log`);
  out('  stop with');
  if (op) out(`    kill ${op.pid}  # the operator`);
  out(`    RG_CLUSTER_DIR=${pc.dir} node ${CLI} down   # the private control plane`);
}
