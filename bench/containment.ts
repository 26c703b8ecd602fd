/**
 * The containment scenario of one size: a revision that passes readiness and then crashes (kwok image
 * marker `crashafter`: Ready 1–3 s after it starts, a crash ~5 s later, again and again). The DaemonSet
 * controller sees each new pod available and moves on to the next node; the guard must give its verdict
 * from the crashes (status.rollout.failures reaching failedNodesThreshold: state Failed at once, far
 * before its deadline) and, with onStall.action Undo, undo the rollout before the revision reaches every
 * node.
 *
 *   pool of `nodes` nodes ─> DaemonSet v1 there, rolled out ─> guard (Undo, deadline 600 s, suspect 300 s,
 *   no bake) Healthy ─> v2 `crashafter` ─> Failed ─> undo ─> RollingBack ─> RolledBack, one generation
 *
 * It runs after the size's own rollout has been measured, in the same namespace and against the same
 * operator process, which still caches every pod of the size and still has its stalled guards: the
 * verdict and the undo are timed under that size's load.
 *
 * Its DaemonSet runs on a dedicated pool of 12 nodes (CONTAINMENT_NODES) at every size, rolling
 * maxUnavailable 1, not on the size's pool:
 * - with maxUnavailable 1 the blast radius is set by timing (a pod Ready in 1–3 s moves the rollout on; the
 *   second crash comes ~6–8 s after the second node's pod starts), not by the pool: the size's 150 nodes would
 *   add 150 pods to roll out first and read "4 of 150", the same containment;
 * - the smoke pool (4 nodes) is too small to show any: the fourth node's pod starts before the second
 *   node's first crash, so every node is reached before a threshold of 2 can be crossed;
 * - a fixed pool reads the same at every size and beside the e2e (test/e2e/spread.test.ts: 4 of 12
 *   nodes, first crash → undo 2.3 s), so what changes across sizes is the operator's load alone;
 * - its nodes are created only now, so the size's node-cache and memory figures, taken before, do not
 *   include them.
 *
 * What it measures, all from the bench's watches (bench/observer.ts) and the guard's status:
 * - nodes reached: distinct nodes where a pod of the broken revision ran (a container started), of the pool;
 * - first crash (min lastState.terminated.finishedAt of a broken-revision container; metav1.Time, whole
 *   seconds, so up to 1 s early) → Failed (status.rollout.failedAt) → undo (status.lastUndo.at) →
 *   RolledBack (the rollback rollout's status.rollout.completedAt), and the bench's own sighting of every
 *   node back on one generation;
 * - whether it ended RolledBack with every node on the original revision (else a failed target).
 *
 * @module
 */
import type { ApiClient } from '../src/k8s/apiClient.js';
import { GUARD_DEFAULTS } from '../src/api/defaults.js';
import type { Kubectl } from '../cluster/kubectl.js';
import { daemonSetManifest, rolloutGuardManifest, toleration } from '../cluster/manifests.js';
import { createNodes, waitForNodesReady, type NodeSpec } from '../cluster/nodes.js';
import { waitFor } from '../cluster/wait.js';
import type { Observer, PodRecord } from './observer.js';
import { round } from './stats.js';

/** Nodes of the containment pool (see the module header for why a fixed, dedicated pool). */
export const CONTAINMENT_NODES = 12;
/** The containment DaemonSet and its guard. */
export const CONTAINMENT_NAME = 'crasher';

export interface ContainmentResult {
  /** Nodes of the DaemonSet (its own pool) and its rollingUpdate.maxUnavailable. */
  nodes: number;
  maxUnavailable: number;
  /** The guard's spec.failedNodesThreshold (the CRD default). */
  failedNodesThreshold: number;
  /** Distinct nodes where a pod of the broken revision ran (a container started) before the undo. */
  reachedNodes: number;
  /** … where one was created at all (some deleted by the undo before they ran). */
  createdOnNodes: number;
  /** … where one crashed; and status.rollout.failures.count when the verdict was written. */
  crashedNodes: number;
  failuresAtVerdict?: number;
  /** Seconds after the crash image was applied, one timeline (the operator, kwok and the bench share a clock). */
  timeline: {
    firstPodS?: number;
    /** min lastState.terminated.finishedAt of a broken-revision container (metav1.Time: whole seconds, so up to 1 s early). */
    firstCrashS?: number;
    /** The same crash as the bench's watch first saw it (ms; a few ms late). */
    firstCrashSeenS?: number;
    /** The crash that took the failures to the threshold, as the bench's watch first saw it (ms). */
    thresholdCrashSeenS?: number;
    /** status.rollout.failedAt: the verdict Failed. */
    failedS?: number;
    /** status.lastUndo.at: the undo. */
    undoS?: number;
    /** status.rollout.completedAt of the rollback: state RolledBack. */
    rolledBackS?: number;
    /** The bench's watch: the last broken pod gone and every node's original pod Ready. */
    oneGenerationS?: number;
  };
  firstCrashToFailedS?: number;
  /** Detection proper: the crash that crossed the threshold (bench's sighting) → failedAt. */
  thresholdCrashToFailedS?: number;
  failedToUndoS?: number;
  undoToRolledBackS?: number;
  /** Comparable to the e2e's "first crash → undo". */
  firstCrashToUndoS?: number;
  /** Each pod of the broken revision, by creation: its node and when (s after the apply) it was created, started, first crashed and was deleted. */
  brokenPods: Array<{ node?: string; createdS: number; startedS?: number; crashS?: number; deletedS?: number }>;
  /** The guard's states after the apply, in order, repeats folded. */
  states: string[];
  /** Kinds of the objects each Event was recorded on (RolloutGuard, DaemonSet). */
  events: { revisionFailed: string[]; undoStarted: string[] };
  final: { state?: string; image?: string; nodesOnOriginal: number; otherPods: number };
  /** Ended RolledBack, with every node running a Ready pod of the original revision and nothing else. */
  rolledBack: boolean;
  /** The undo came before the broken revision ran on every node. */
  contained: boolean;
  /** What went wrong, when a wait timed out. */
  error?: string;
  phases: Record<string, number>;
}

export interface ContainmentArgs {
  kubectl: Kubectl;
  client: ApiClient;
  log: (line: string) => void;
  ns: string;
  /** Pool label value and node names of the dedicated pool (created here; the caller deletes them). */
  pool: string;
  nodeNames: readonly string[];
  observer: Observer;
  poolLabel: string;
  taint: string;
  nodeCpu: number;
}

const V1 = 'registry.local/bench-agent:1';
const CRASH = 'registry.local/bench-agent:2-crashafter';
const secs = (ms: number) => round(ms / 1000, 3)!;
const list = (items: unknown[]) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });

function dsManifest(a: ContainmentArgs, image: string): Record<string, unknown> {
  return daemonSetManifest({
    name: CONTAINMENT_NAME,
    namespace: a.ns,
    nodeSelector: { [a.poolLabel]: a.pool },
    tolerations: [toleration(a.taint)],
    container: { name: 'agent', image, requests: { cpu: '10m', memory: '16Mi' } },
  });
}

function guardManifest(ns: string): Record<string, unknown> {
  // A deadline far away: the verdict must come from the crashes, not the clock. No bake: the crashes
  // come during the rollout itself. failedNodesThreshold left to its default.
  return rolloutGuardManifest({
    name: CONTAINMENT_NAME,
    namespace: ns,
    spec: { suspectAfterSeconds: 300, progressDeadlineSeconds: 600, bakeSeconds: 0, onStall: { action: 'Undo' } },
  });
}

/** Runs the scenario; a wait that times out is recorded in `error` (a failed target), not thrown. */
export async function runContainment(a: ContainmentArgs): Promise<ContainmentResult> {
  const { kubectl, client, log, ns, observer: obs } = a;
  const n = a.nodeNames.length;
  const phases: Record<string, number> = {};
  let mark = Date.now();
  const phase = (name: string): void => {
    const now = Date.now();
    phases[name] = secs(now - mark);
    log(`  containment ${name}: ${phases[name]} s`);
    mark = now;
  };
  const pods = () => obs.pods.list().filter((p) => p.ds === CONTAINMENT_NAME);
  let t0: number | undefined;
  let goodHash: string | undefined;
  let error: string | undefined;

  try {
    const specs: NodeSpec[] = a.nodeNames.map((name) => ({
      name,
      labels: { [a.poolLabel]: a.pool },
      taints: [{ key: a.taint, value: 'true', effect: 'NoSchedule' }],
      allocatable: { cpu: String(a.nodeCpu), memory: '64Gi', pods: '110' },
    }));
    await createNodes(kubectl, specs);
    await waitForNodesReady(kubectl, a.nodeNames, { timeoutMs: 120_000 });
    phase('nodes');

    await kubectl(['apply', '-f', '-'], { input: list([dsManifest(a, V1)]) });
    await waitFor(
      () => {
        const d = obs.daemonSet(CONTAINMENT_NAME);
        return (
          !!d &&
          d.observedGeneration >= (d.metadata.generation ?? 0) &&
          d.sample.desired === n &&
          d.sample.updated === n &&
          d.sample.available === n
        );
      },
      { timeoutMs: 120_000, intervalMs: 250, describe: `${CONTAINMENT_NAME} v1 available on ${n} nodes` },
    );
    await kubectl(['apply', '-f', '-'], { input: list([guardManifest(ns)]) });
    const healthy = await waitFor(
      () => {
        const g = obs.guard(CONTAINMENT_NAME);
        return g?.state === 'Healthy' && g.currentHash ? g : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, describe: `guard ${CONTAINMENT_NAME} Healthy` },
    );
    goodHash = healthy.currentHash;
    phase('setup');

    t0 = Date.now();
    await kubectl(['apply', '-f', '-'], { input: list([dsManifest(a, CRASH)]) });
    const start = t0;
    await waitFor(
      () => {
        const g = obs.guard(CONTAINMENT_NAME);
        return g?.lastUndo !== undefined && Date.parse(g.lastUndo.at) >= start - 1000;
      },
      { timeoutMs: 120_000, intervalMs: 100, describe: 'the undo (status.lastUndo)' },
    );
    phase('undo');
    await waitFor(
      () => {
        const g = obs.guard(CONTAINMENT_NAME);
        return g?.state === 'RolledBack' && g.rollback === true && g.completedAt !== undefined;
      },
      { timeoutMs: 120_000, intervalMs: 100, describe: 'state RolledBack' },
    );
    // RolledBack is the guard's reading of the DaemonSet's counters; the pods themselves should agree.
    await waitFor(
      () => {
        const ps = pods();
        return ps.length === n && ps.every((p) => p.hash === goodHash && p.ready) && new Set(ps.map((p) => p.node)).size === n;
      },
      { timeoutMs: 60_000, intervalMs: 100, describe: 'every node on the original revision, Ready' },
    );
    phase('rolledBack');
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
    const g = obs.guard(CONTAINMENT_NAME);
    error += `; guard: state ${g?.state ?? '?'}, failures ${g?.failures ?? '–'}, lastUndo ${JSON.stringify(g?.lastUndo)}`;
    log(`  containment FAILED: ${error}`);
  }

  // --- Figures, from what the watches saw. -----------------------------------------------------------
  const from = t0 ?? Date.now();
  const rel = (t: number | undefined) => (t === undefined || !Number.isFinite(t) ? undefined : secs(t - from));
  const dur = (x: number | undefined, y: number | undefined) => (x === undefined || y === undefined ? undefined : round(y - x, 3));
  const broken: PodRecord[] =
    t0 === undefined ? [] : [...obs.podLog.values()].filter((p) => p.ds === CONTAINMENT_NAME && p.hash !== goodHash && p.seenAt >= from);
  const nodesOf = (ps: PodRecord[]) => new Set(ps.filter((p) => p.node).map((p) => p.node!));
  const reached = nodesOf(broken.filter((p) => p.startedAt !== undefined));
  // Each node's first crash, earliest first.
  const crashByNode = new Map<string, PodRecord>();
  for (const p of broken) {
    if (p.crashAt === undefined || !p.node) continue;
    const prev = crashByNode.get(p.node);
    if (!prev || p.crashAt < prev.crashAt!) crashByNode.set(p.node, p);
  }
  const crashes = [...crashByNode.values()];
  const firstCrash = crashes.length > 0 ? Math.min(...crashes.map((p) => p.crashAt!)) : undefined;
  const firstCrashSeen = crashes.length > 0 ? Math.min(...crashes.map((p) => p.crashSeenAt!)) : undefined;
  const threshold = GUARD_DEFAULTS.failedNodesThreshold;
  const thresholdCrashSeen = crashes.map((p) => p.crashSeenAt!).sort((x, y) => x - y)[threshold - 1];

  const hist = (obs.guardLog.get(CONTAINMENT_NAME) ?? []).filter((g) => g.t >= from);
  const verdict = hist.find((g) => g.failedAt !== undefined && Date.parse(g.failedAt) >= from - 1000);
  const failedAt = verdict?.failedAt ? Date.parse(verdict.failedAt) : undefined;
  const undo = hist.find((g) => g.lastUndo && Date.parse(g.lastUndo.at) >= from - 1000)?.lastUndo;
  const undoAt = undo ? Date.parse(undo.at) : undefined;
  const back = hist.find((g) => g.state === 'RolledBack' && g.rollback && g.completedAt);
  const rolledBackAt = back?.completedAt ? Date.parse(back.completedAt) : undefined;
  const states = hist.map((g) => g.state ?? '?').filter((s, i, all) => i === 0 || s !== all[i - 1]);

  const now = pods();
  const onOriginal = now.filter((p) => p.hash === goodHash && p.ready && p.node);
  const finalState = obs.guard(CONTAINMENT_NAME)?.state;
  // One generation again: the last broken pod gone and the last replacement pod of the original revision Ready.
  const replaced = [...obs.podLog.values()].filter(
    (p) => p.ds === CONTAINMENT_NAME && p.hash === goodHash && p.seenAt >= from && p.deletedAt === undefined,
  );
  const oneGenerationAt =
    broken.length > 0 && broken.every((p) => p.deletedAt !== undefined) && replaced.every((p) => p.readyAt !== undefined)
      ? Math.max(...broken.map((p) => p.deletedAt!), ...replaced.map((p) => p.readyAt!))
      : undefined;

  let image: string | undefined;
  const events = { revisionFailed: [] as string[], undoStarted: [] as string[] };
  try {
    const ds = await client.request<{ spec?: { template?: { spec?: { containers?: Array<{ image?: string }> } } } }>(
      'GET',
      `/apis/apps/v1/namespaces/${ns}/daemonsets/${CONTAINMENT_NAME}`,
    );
    image = ds.spec?.template?.spec?.containers?.[0]?.image;
    const evs = await client.request<{ items: Array<{ reason?: string; regarding?: { kind?: string; name?: string } }> }>(
      'GET',
      `/apis/events.k8s.io/v1/namespaces/${ns}/events`,
    );
    for (const e of evs.items) {
      if (e.regarding?.name !== CONTAINMENT_NAME || !e.regarding.kind) continue;
      if (e.reason === 'RevisionFailed') events.revisionFailed.push(e.regarding.kind);
      if (e.reason === 'UndoStarted') events.undoStarted.push(e.regarding.kind);
    }
  } catch (e) {
    error ??= `reading the final DaemonSet and Events: ${e instanceof Error ? e.message : String(e)}`;
  }

  const rolledBack =
    error === undefined &&
    finalState === 'RolledBack' &&
    image === V1 &&
    onOriginal.length === n &&
    now.length === n &&
    new Set(onOriginal.map((p) => p.node)).size === n;
  const firstPod = broken.length > 0 ? Math.min(...broken.map((p) => p.seenAt)) : undefined;
  return {
    nodes: n,
    maxUnavailable: 1,
    failedNodesThreshold: threshold,
    reachedNodes: reached.size,
    createdOnNodes: nodesOf(broken).size,
    crashedNodes: crashByNode.size,
    ...(verdict?.failures !== undefined ? { failuresAtVerdict: verdict.failures } : {}),
    timeline: {
      firstPodS: rel(firstPod),
      firstCrashS: rel(firstCrash),
      firstCrashSeenS: rel(firstCrashSeen),
      thresholdCrashSeenS: rel(thresholdCrashSeen),
      failedS: rel(failedAt),
      undoS: rel(undoAt),
      rolledBackS: rel(rolledBackAt),
      oneGenerationS: rel(oneGenerationAt),
    },
    firstCrashToFailedS: dur(rel(firstCrash), rel(failedAt)),
    thresholdCrashToFailedS: dur(rel(thresholdCrashSeen), rel(failedAt)),
    failedToUndoS: dur(rel(failedAt), rel(undoAt)),
    undoToRolledBackS: dur(rel(undoAt), rel(rolledBackAt)),
    firstCrashToUndoS: dur(rel(firstCrash), rel(undoAt)),
    brokenPods: [...broken]
      .sort((x, y) => x.seenAt - y.seenAt)
      .map((p) => ({
        ...(p.node ? { node: p.node } : {}),
        createdS: rel(p.seenAt)!,
        startedS: rel(p.startedAt),
        crashS: rel(p.crashAt),
        deletedS: rel(p.deletedAt),
      })),
    states,
    events,
    final: {
      ...(finalState ? { state: finalState } : {}),
      ...(image ? { image } : {}),
      nodesOnOriginal: onOriginal.length,
      otherPods: now.length - onOriginal.length,
    },
    rolledBack,
    contained: undoAt !== undefined && reached.size < n,
    ...(error !== undefined ? { error } : {}),
    phases,
  };
}
