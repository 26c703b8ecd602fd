/**
 * `npm run bench`: rollout-guard at scale, measured against the real local control plane (etcd,
 * kube-apiserver, kube-controller-manager, kube-scheduler, kwok; see cluster/).
 *
 * For each size it creates a tainted kwok node pool and a namespace, starts one operator process
 * watching that namespace, rolls out healthy DaemonSets (v1) with a guard each, measures a steady
 * window, then rolls out v2 — some healthy, some with a `broken` image (ImagePullBackOff forever), some
 * requesting more CPU than a node has (Unschedulable) — and measures:
 *
 * - detection latency: deadline (status.rollout.lastProgressAt + progressDeadlineSeconds) → the Stalled
 *   condition's lastTransitionTime, → the bench's watch seeing it, → the RolloutStalled Event's
 *   eventTime; p50/p99/max, plus the operator's own histogram;
 * - time to first explanation: first blocked pod seen (and its first ImagePullBackOff/Unschedulable)
 *   → first guard status naming that node with the right reason and cause;
 * - where each first explanation's seconds went (bench/tail.ts): the bench's watch seeing the failure →
 *   the operator's pod watch seeing it → its pass → its status PATCH → the bench's watch seeing the
 *   status, joined to the operator's log line of that write by the status's resourceVersion, so the
 *   parts add up to the sample; beside them how far behind the API server's writes each watch ran
 *   (rollout_guard_watch_delivery_seconds per informer, and the bench's own), and why each pod watch of
 *   the operator was opened and ended;
 * - pods cached against what rolls (the operator's rollout_guard_informer_objects{resource="pods"}): with
 *   one guard idle, with every guard idle (no pod may be cached; RSS flat), while one DaemonSet of all
 *   rolls on its own (its pods only; released after the linger), and while every DaemonSet rolls at once;
 * - false verdicts: a healthy rollout Suspect or Stalled, or any undo, is a missed target, not a note;
 * - API load: the operator's exact request counter by verb and resource over a steady window (no
 *   rollout: watches only are expected) and over the rollout; status writes per guard per rollout, and
 *   per change of the target (pod and DaemonSet events) to show how much the work queue coalesces;
 * - operator cost: RSS with nodes only, with the DaemonSet pods cached, and the kernel's peak (VmHWM);
 *   heap; CPU seconds per phase; reconcile p50/p99 from its histogram; max queue depth (sampled 2/s);
 * - when the kubernetes-mixin `KubeDaemonSetRolloutStuck` alert would first fire on the same DaemonSet
 *   status timeline (bench/alert.ts), beside rollout-guard's Stalled;
 * - containment (bench/containment.ts): one more guarded DaemonSet (Undo, deadline 600 s) on a pool of its
 *   own, rolled to a revision that passes readiness and then crashes (`crashafter`): how many nodes the
 *   broken revision ran on before the undo, of how many, and first crash → Failed verdict → undo →
 *   RolledBack in seconds; it must end RolledBack with every node on the original revision;
 * - what watching Warning Events costs: the operator's `events-daemonsets` and `events-pods` informer
 *   objects (its /metrics) and their live heap;
 * - and, without a cluster, one reconcile pass (gather + decide + status diff) over a synthetic
 *   DaemonSet of 100–5,000 nodes (bench/micro.ts).
 *
 * Output: a table on stdout, `<out>/<date>-<host>.json` (every figure, per guard too, with the machine
 * and versions) and `<out>/<date>-<host>.svg` (the curves).
 *
 * Parameters (flag, else environment variable, else default):
 *
 *   --nodes N            NODES               50    kwok nodes per size unit
 *   --daemonsets N       DAEMONSETS          5     guarded DaemonSets per size unit
 *   --statefulsets LIST  STATEFULSETS        none  StatefulSet sizes after the DaemonSet ones, `SxR`: S StatefulSets of R
 *                                                  replicas on a pool of their own (bench/statefulSets.ts; smoke: 4x2)
 *   --deployments LIST   DEPLOYMENTS         none  Deployment sizes after those, `DxR`: D Deployments of R replicas on a
 *                                                  pool of one node per 20 pods, a share of them rolling at once
 *                                                  (bench/deployments.ts; 2000x10 is 1,000 nodes; smoke: 5x2)
 *   --deployment-rolling F DEPLOYMENT_ROLLING 0.05 the share of the Deployments that roll (smoke: 1); of those,
 *                                                  --broken and --exhausted fail
 *   --sizes LIST         SIZES     100x20,500x20 `NxD` gives nodes and DaemonSets (e.g. 1000x20); a plain
 *                                                  `k` multiplies --nodes and --daemonsets. The default
 *                                                  takes ~16 min on 2 cores; 1000x20 adds ~17 min
 *   --broken F           BROKEN_FRACTION     0.4   fraction of DaemonSets rolled to a `broken` image
 *   --exhausted F        EXHAUSTED_FRACTION  0.2   fraction rolled to a CPU request above allocatable
 *   --suspect S          SUSPECT_SECONDS     30    guards' suspectAfterSeconds
 *   --deadline S         DEADLINE_SECONDS    60    guards' progressDeadlineSeconds (at 1,000 nodes × 20
 *                                                  rolling at once on 2 cores the simulated kubelets take
 *                                                  tens of seconds to remove old pods: a shorter deadline
 *                                                  measures that wait, attributed to the node, not the
 *                                                  operator)
 *   --steady S           STEADY_SECONDS      20    length of the no-rollout window
 *   --max-unavailable V  MAX_UNAVAILABLE     10%   DaemonSets' rollingUpdate.maxUnavailable
 *   --node-cpu N         NODE_CPU            8     allocatable CPU of a bench node
 *   --containment-nodes N CONTAINMENT_NODES  12    nodes of the containment scenario's own pool, per size
 *                                                  (also in --smoke; 0 skips the scenario)
 *   --pod-cache-linger-ms N POD_CACHE_LINGER_MS 5000 the operator's linger of a finished rollout's pod watch
 *                                                  (its default is 30 s; shorter here so the release is
 *                                                  measured without a long wait)
 *   --min-explanations N MIN_EXPLANATIONS    50    first explanations to measure per size at least (smoke: 4):
 *                                                  after the fleet-wide rollout the failing DaemonSets are
 *                                                  restored and broken again, wave after wave, until there
 *                                                  are that many (bench/waves.ts)
 *   --micro-iterations N MICRO_ITERATIONS    1000  timed passes per micro-benchmark case
 *   --out DIR            BENCH_OUT           bench/results
 *   --smoke                                        tiny run for CI (< 2 min): 4 nodes, 3 DaemonSets (one
 *                                                  of each kind), deadline 8 s, steady 10 s, short micro
 *   --micro-only                                   only the in-memory micro-benchmark (no cluster)
 *   --no-micro                                     skip the micro-benchmark
 *   --alert-race                                   only the alert race (bench/alertRace.ts): a real Prometheus
 *                                                  evaluating kubernetes-mixin's KubeDaemonSetRolloutStuck
 *                                                  over kube-state-metrics and rollout-guard's
 *                                                  RolloutGuardStalled on one stalled rollout (~20 min)
 *
 * Diagnosis: BENCH_OPERATOR_LOG_DIR=dir keeps each size's full operator log there,
 * BENCH_OPERATOR_LOG_LEVEL=debug raises its level (which costs CPU: not for measured runs), and
 * BENCH_OPERATOR_NODE_ARGS="--flag …" starts the operator's node with those flags, and
 * BENCH_TWIN_WATCHES=1 gives the bench, beside its namespace-wide pod watch, a watch like the
 * operator's of each failing DaemonSet's pods (bench/observer.ts), and
 * BENCH_OPERATOR_PRIORITY=-10 runs it at that nice value, as a CPU request would let it have its share of
 * a saturated machine (both recorded in the results' params).
 *
 * The cluster is the one `npm run cluster:up` starts (reused when running), or `RG_TEST_KUBECONFIG`.
 * A cluster the bench starts itself gets the controller manager and scheduler at 200 requests/s
 * (RG_CONTROLLER_QPS), kwok with 32 pod workers (RG_KWOK_PARALLELISM) and node Leases of 200 s with a
 * 250 s grace period (RG_NODE_LEASE_SECONDS; `npm run cluster:down` first to get all three), recorded
 * in the results' params.
 * The bench asks it for no default nodes; it works in its own namespace and node pool per size and
 * deletes both afterwards. Other suites may share the cluster: each size records the load average and
 * the other namespaces it saw, so a result from a shared machine says so.
 *
 * @module
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { cpus, hostname, platform, release, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { ApiClient } from '../src/k8s/apiClient.js';
import { loadKubeConfig } from '../src/k8s/kubeConfig.js';
import { ensureCluster } from '../cluster/controlPlane.js';
import { kubectlRunner, waitForCrdsEstablished } from '../cluster/kubectl.js';
import { nodeLeaseTimings } from '../cluster/controllers.js';
import { CONTROLLER_QPS_ENV, KWOK_PARALLELISM_ENV, NODE_LEASE_SECONDS_ENV, type Raises } from '../cluster/state.js';
import { alertRace } from './alertRace.js';
import { CONTAINMENT_NODES } from './containment.js';
import { defaultMicroCases, runMicroCase, type MicroResult } from './micro.js';
import { ROOT, operatorNodeArgs, operatorPriority } from './operator.js';
import { renderSvg, renderTables, type BenchResults, type TargetVerdict } from './report.js';
import { runSize, type Ctx, type MemoryPoint, type SizeParams, type SizeResult } from './scenario.js';
import { round } from './stats.js';
import { parseStatefulSetSize, runStatefulSetSize, type StatefulSetSizeResult } from './statefulSets.js';
import { deploymentTargets, parseDeploymentSize, runDeploymentSize, type DeploymentSizeResult } from './deployments.js';

interface Params {
  base: SizeParams;
  sizes: Array<{ nodes: number; daemonsets: number }>;
  /** StatefulSet sizes (bench/statefulSets.ts), run after the DaemonSet sizes. */
  statefulSetSizes: Array<{ statefulSets: number; replicas: number }>;
  /** Deployment sizes (bench/deployments.ts), run after the StatefulSet sizes, and the share of each that rolls. */
  deploymentSizes: Array<{ deployments: number; replicas: number }>;
  deploymentRolling: number;
  microIterations: number;
  out: string;
  smoke: boolean;
  /** Only the alert race (bench/alertRace.ts): both alerts on one stalled rollout, about 20 minutes. */
  alertRace: boolean;
  micro: boolean;
  cluster: boolean;
}

/** The control plane's API QPS when the bench starts the cluster itself (see CONTROLLER_QPS_ENV). */
const BENCH_CONTROLLER_QPS = 200;
/** kwok's pod workers when the bench starts the cluster itself (see KWOK_PARALLELISM_ENV for why). */
const BENCH_KWOK_PARALLELISM = 32;
/**
 * kwok's node Lease duration when the bench starts the cluster itself (see NODE_LEASE_SECONDS_ENV): a
 * renewal every 50 s instead of 10 s, and a 250 s grace period. At 5,000 nodes a kubelet's 40 s Lease
 * is 500 renewals a second from one kwok process on the machine's two cores; during a fleet-wide
 * rollout it fell behind and turned up to 1,481 healthy nodes NotReady. No part of the bench times a
 * node's death, so the longer grace period changes nothing it measures.
 */
const BENCH_NODE_LEASE_SECONDS = 200;

const log = (line: string): void => {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
};

function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv): Params {
  const flags = new Map<string, string>();
  const bools = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const eq = a.indexOf('=');
    const name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
    if (['smoke', 'micro-only', 'no-micro', 'alert-race'].includes(name)) {
      bools.add(name);
      continue;
    }
    const value = eq >= 0 ? a.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new Error(`--${name} needs a value`);
    flags.set(name, value);
  }
  const smoke = bools.has('smoke');
  const known = [
    'nodes',
    'daemonsets',
    'sizes',
    'statefulsets',
    'deployments',
    'deployment-rolling',
    'broken',
    'exhausted',
    'suspect',
    'deadline',
    'steady',
    'max-unavailable',
    'node-cpu',
    'containment-nodes',
    'pod-cache-linger-ms',
    'min-explanations',
    'micro-iterations',
    'out',
  ];
  for (const k of flags.keys())
    if (!known.includes(k))
      throw new Error(`unknown flag --${k}; known: ${known.map((x) => `--${x}`).join(' ')} --smoke --micro-only --no-micro --alert-race`);
  const str = (flag: string, envName: string, def: string, smokeDef?: string): string =>
    flags.get(flag) ?? env[envName] ?? (smoke && smokeDef !== undefined ? smokeDef : def);
  const num = (flag: string, envName: string, def: number, smokeDef?: number): number => {
    const raw = str(flag, envName, String(def), smokeDef === undefined ? undefined : String(smokeDef));
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${flag} / ${envName}: ${raw} is not a non-negative number`);
    return n;
  };
  const base: SizeParams = {
    nodes: num('nodes', 'NODES', 50, 4),
    daemonsets: num('daemonsets', 'DAEMONSETS', 5, 3),
    brokenFraction: num('broken', 'BROKEN_FRACTION', 0.4),
    exhaustedFraction: num('exhausted', 'EXHAUSTED_FRACTION', 0.2),
    suspectSeconds: num('suspect', 'SUSPECT_SECONDS', 30, 3),
    deadlineSeconds: num('deadline', 'DEADLINE_SECONDS', 60, 8),
    steadySeconds: num('steady', 'STEADY_SECONDS', 20, 10),
    maxUnavailable: str('max-unavailable', 'MAX_UNAVAILABLE', '10%'),
    nodeCpu: num('node-cpu', 'NODE_CPU', 8),
    containmentNodes: num('containment-nodes', 'CONTAINMENT_NODES', CONTAINMENT_NODES),
    podCacheLingerMs: num('pod-cache-linger-ms', 'POD_CACHE_LINGER_MS', 5000, 2000),
    minExplanations: num('min-explanations', 'MIN_EXPLANATIONS', 50, 4),
  };
  if (base.brokenFraction + base.exhaustedFraction > 1) throw new Error('broken + exhausted fractions exceed 1');
  if (base.suspectSeconds >= base.deadlineSeconds)
    throw new Error('suspect must be shorter than the deadline (the CRD rejects it otherwise)');
  const sizes = str('sizes', 'SIZES', '100x20,500x20', '1')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const m = /^(\d+)x(\d+)$/i.exec(s);
      if (m) return { nodes: Number(m[1]), daemonsets: Number(m[2]) };
      const k = Number(s);
      if (!Number.isFinite(k) || k <= 0) throw new Error(`size ${s} is neither a multiplier nor NxD`);
      return { nodes: Math.round(base.nodes * k), daemonsets: Math.max(1, Math.round(base.daemonsets * k)) };
    });
  const statefulSetSizes = str('statefulsets', 'STATEFULSETS', '', '4x2')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)
    .map(parseStatefulSetSize);
  const deploymentSizes = str('deployments', 'DEPLOYMENTS', '', '5x2')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)
    .map(parseDeploymentSize);
  const deploymentRolling = num('deployment-rolling', 'DEPLOYMENT_ROLLING', 0.05, 1);
  if (deploymentRolling <= 0 || deploymentRolling > 1) throw new Error('--deployment-rolling must be above 0 and at most 1');
  return {
    base,
    sizes,
    statefulSetSizes,
    deploymentSizes,
    deploymentRolling,
    microIterations: num('micro-iterations', 'MICRO_ITERATIONS', 1000, 100),
    out: resolve(process.cwd(), str('out', 'BENCH_OUT', resolve(ROOT, 'bench/results'))),
    smoke,
    micro: !bools.has('no-micro'),
    cluster: !bools.has('micro-only'),
    alertRace: bools.has('alert-race'),
  };
}

async function versions(): Promise<Record<string, string>> {
  const text = await readFile(resolve(ROOT, 'cluster/versions.env'), 'utf8');
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

/** Judges the issue's targets from the figures; every verdict carries the numbers it rests on. */
function judge(micro: MicroResult[], sizes: SizeResult[]): { targets: TargetVerdict[]; notes: string[] } {
  const targets: TargetVerdict[] = [];
  const notes: string[] = [];
  const largest = [...sizes].sort((a, b) => b.pods - a.pods)[0];
  if (largest) {
    const p99 = largest.detection.writtenS.p99;
    targets.push({
      target: 'p99 detection latency within 2 s of the deadline at the largest size',
      met: p99 !== undefined ? p99 <= 2 : false,
      measured: `${largest.nodes} nodes × ${largest.daemonsets} DaemonSets: p99 ${p99 ?? '–'} s to the Stalled status (max ${largest.detection.writtenS.max ?? '–'} s; the bench's watch saw it at p99 ${largest.detection.observedS.p99 ?? '–'} s; Event p99 ${largest.detection.eventS.p99 ?? '–'} s); ${largest.verdict.stalled}/${largest.verdict.expectedStalls} stalls detected`,
    });
    // Where the time may go, from the operator's histograms over the fleet-wide rollout (quantiles of
    // their own, not parts of the explanation's): a guard key's wait for a worker, the pass, and the
    // API server's answer to the status PATCH the explanation travels in.
    const costOf = (s: SizeResult) =>
      `; over the rollout: queue wait p50/p99 ${s.cost.queueWait?.p50Ms ?? '–'}/${s.cost.queueWait?.p99Ms ?? '–'} ms, reconcile p50/p99 ${s.cost.reconcile.p50Ms ?? '–'}/${s.cost.reconcile.p99Ms ?? '–'} ms, ` +
      `status PATCH p50/p99 ${s.cost.statusPatch?.p50Ms ?? '–'}/${s.cost.statusPatch?.p99Ms ?? '–'} ms ` +
      `(in the API server ${s.cost.statusPatchServer?.p50Ms ?? '–'}/${s.cost.statusPatchServer?.p99Ms ?? '–'} ms), operator event-loop delay max ${s.cost.eventLoopLag?.maxMs ?? '–'} ms`;
    const expl = sizes
      .map(
        (s) =>
          `${s.nodes}×${s.daemonsets}: p99 ${s.explanation.fromFailureS.p99 ?? '–'} s (p50 ${s.explanation.fromFailureS.p50 ?? '–'}, node named p99 ${s.explanation.nodeNamedFromFailureS.p99 ?? '–'} s, n=${s.explanation.fromFailureS.count}${costOf(s)})`,
      )
      .join('; ');
    targets.push({
      target: "first explanation (node and cause named in status) p99 ≤ 0.5 s from the pod's failure, at every size",
      met: sizes.every((s) => s.explanation.fromFailureS.count > 0 && (s.explanation.fromFailureS.p99 ?? Infinity) <= 0.5),
      measured: expl,
    });
    const falseVerdicts = sizes
      .map((s) => {
        const v = s.verdict;
        return `${s.nodes}×${s.daemonsets}: unexpected Stalled ${v.unexpectedStalls.length}, Suspect (healthy) ${v.suspectHealthy.length}, single rollout Suspect/Stalled ${v.singleFalse.length}, undos ${v.undos}`;
      })
      .join('; ');
    targets.push({
      target: 'no false verdicts: no healthy rollout Suspect or Stalled, no undo, at any size',
      met: sizes.every(
        (s) =>
          s.verdict.unexpectedStalls.length === 0 &&
          s.verdict.suspectHealthy.length === 0 &&
          s.verdict.singleFalse.length === 0 &&
          s.verdict.undos === 0,
      ),
      measured: falseVerdicts,
    });
    const idle = sizes
      .map(
        (s) =>
          `${s.nodes}×${s.daemonsets}: 1 idle guard ${s.podCache.idleOne.podsCached} pods, RSS ${s.podCache.idleOne.rssMiB} MiB, heap ${s.podCache.idleOne.heapMiB} MiB → ${s.daemonsets} idle guards ${s.podCache.idleAll.podsCached} pods, RSS ${s.podCache.idleAll.rssMiB} MiB, heap ${s.podCache.idleAll.heapMiB} MiB${breakdownDelta(s.podCache.idleOne, s.podCache.idleAll)}`,
      )
      .join('; ');
    targets.push({
      target: 'steady-state memory flat in the number of idle guarded DaemonSets (no pod cached; RSS within 5 MiB of one idle guard)',
      met: sizes.every(
        (s) =>
          s.podCache.idleAll.podsCached === 0 &&
          s.podCache.idleOne.podsCached === 0 &&
          s.podCache.idleAll.rssMiB - s.podCache.idleOne.rssMiB <= 5,
      ),
      measured: idle,
    });
    const rolling = sizes
      .map(
        (s) =>
          `${s.nodes}×${s.daemonsets}: 1 of ${s.daemonsets} rolling → peak ${s.podCache.single.peak.podsCached} pods cached (its ${s.nodes}), released ${s.podCache.single.releasedAfterS ?? 'never'} s after it completed (linger ${s.podCache.lingerMs / 1000} s), ${s.podCache.single.requestsTotal} API requests and ${s.podCache.single.statusWrites} status writes for that rollout; all rolling → peak ${s.podCache.fleet.peak.podsCached} of ${s.pods}`,
      )
      .join('; ');
    targets.push({
      target: "memory during a rollout follows the rolling DaemonSets' pods, and is released after",
      // One DaemonSet rolling caches its own pods (plus the few old ones still terminating), never the fleet's.
      met: sizes.every(
        (s) =>
          s.podCache.single.peak.podsCached > 0 &&
          s.podCache.single.peak.podsCached <= s.nodes * 1.2 &&
          s.podCache.single.releasedAfterS !== undefined &&
          s.podCache.fleet.peak.podsCached <= s.pods * 1.2,
      ),
      measured: rolling,
    });
    const steadyReqs = sizes.map((s) => `${s.nodes}×${s.daemonsets}: ${s.api.steadyNonWatch} in ${s.api.steadySeconds} s`).join('; ');
    targets.push({
      target: 'no polling: in steady state no requests beyond the watches',
      met: sizes.every((s) => s.api.steadyNonWatch === 0),
      measured: `non-watch requests in the steady window — ${steadyReqs}; watches opened over each whole run: ${sizes.map((s) => s.api.watchesOpened).join(', ')}`,
    });
    const ratio = sizes.map((s) => `${s.nodes}×${s.daemonsets}: ${s.api.writesPerTargetChange}`).join('; ');
    targets.push({
      target: 'status writes coalesced during a rollout (an unchanged observation is not written)',
      met: sizes.every((s) => s.api.writesPerTargetChange < 1 && (s.api.steady['PATCH rolloutguards/status'] ?? 0) === 0),
      measured: `status writes per target change (pod/DaemonSet event) — ${ratio}; writes per stalled guard p50/max at the largest size: ${largest.api.statusWritesPerGuard.byCategory.broken.p50 ?? '–'}/${largest.api.statusWritesPerGuard.byCategory.broken.max ?? '–'}; per healthy guard ${largest.api.statusWritesPerGuard.byCategory.healthy.p50 ?? '–'}/${largest.api.statusWritesPerGuard.byCategory.healthy.max ?? '–'}; 0 status writes in every steady window: ${sizes.every((s) => (s.api.steady['PATCH rolloutguards/status'] ?? 0) === 0)}`,
    });
    const growth = memoryGrowth(sizes);
    targets.push({
      target: 'memory grows with what is rolled out, not with cluster size alone',
      met: growth.met,
      measured: growth.text,
    });
    const contained = containmentVerdict(sizes);
    if (contained) targets.push(contained);
    const shared = sizes.filter((s) => s.machine.otherNamespaces.length > 0 || s.machine.loadavg1Max > 2.5);
    if (shared.length > 0) {
      notes.push(
        `machine shared during ${shared.map((s) => `${s.nodes}×${s.daemonsets}`).join(', ')}: other namespaces ${[...new Set(shared.flatMap((s) => s.machine.otherNamespaces))].join(', ') || 'none'}; load avg (1 min) up to ${Math.max(...shared.map((s) => s.machine.loadavg1Max))} on ${cpus().length} CPUs`,
      );
    }
  }
  const m = micro.find((x) => x.dsNodes === 1000 && x.clusterNodes === 1000 && x.scenario === 'rollout');
  if (m) {
    const inCluster = largest
      ? `; in-cluster reconcile p99 ${largest.cost.reconcile.p99Ms ?? '–'} ms at ${largest.nodes} nodes (histogram bucket ≤ ${largest.cost.reconcile.bucketBoundMs ?? '–'} ms, includes the status PATCH round trip)`
      : '';
    targets.push({
      target: 'reconcile p99 under 50 ms for a 1,000-node DaemonSet',
      met: (m.passMs.p99 ?? Infinity) < 50,
      measured: `gather+decide+diff over a 1,000-node DaemonSet mid-rollout: p50 ${m.passMs.p50} ms, p99 ${m.passMs.p99} ms over ${m.iterations} passes${inCluster}`,
    });
  }
  return { targets, notes };
}

/** The change in each part of an idle point's RSS (see MemoryPoint.breakdownMiB), for the idle-memory target. */
function breakdownDelta(a: MemoryPoint, b: MemoryPoint): string {
  const x = a.breakdownMiB;
  const y = b.breakdownMiB;
  if (!x || !y) return '';
  const parts = (Object.keys(x) as (keyof typeof x)[]).map((k) => `${k} ${y[k] - x[k] >= 0 ? '+' : ''}${(y[k] - x[k]).toFixed(1)}`);
  const collections =
    a.idleCollections !== undefined && b.idleCollections !== undefined
      ? `; idle collections in the windows ${a.idleCollections} → ${b.idleCollections}`
      : '';
  return ` (change: ${parts.join(', ')}${collections})`;
}

/**
 * Containment: at every size the crashing revision must end RolledBack with every node on the original
 * revision (else the target is missed); that the undo came before the revision ran on every node is the
 * other half (partly met without it).
 */
function containmentVerdict(sizes: SizeResult[]): TargetVerdict | undefined {
  const runs = sizes.filter((s) => s.containment);
  if (runs.length === 0) return undefined;
  const s1 = (v: number | undefined) => (v === undefined ? '–' : `${v} s`);
  const measured = runs.map((s) => {
    const c = s.containment!;
    const how = c.rolledBack
      ? `RolledBack, ${c.final.nodesOnOriginal}/${c.nodes} nodes on the original revision`
      : `NOT rolled back (state ${c.final.state ?? '?'}, ${c.final.nodesOnOriginal}/${c.nodes} nodes on the original revision${c.error ? `: ${c.error.split('\n')[0]}` : ''})`;
    return `${s.nodes}×${s.daemonsets}: ran on ${c.reachedNodes} of ${c.nodes} nodes; first crash → Failed ${s1(c.firstCrashToFailedS)} → undo ${s1(c.failedToUndoS)} → RolledBack ${s1(c.undoToRolledBackS)} (first crash → undo ${s1(c.firstCrashToUndoS)}); ${how}`;
  });
  const allBack = runs.every((s) => s.containment!.rolledBack);
  const allContained = runs.every((s) => s.containment!.contained);
  return {
    target: 'a revision that crashes after readiness is undone before it reaches every node, and every node ends on the original revision',
    met: !allBack ? false : allContained ? true : 'partial',
    measured: `maxUnavailable 1, failedNodesThreshold ${runs[0]!.containment!.failedNodesThreshold} — ${measured.join('; ')}`,
  };
}

/**
 * Memory: the live cache heap per cached node and per cached daemon pod (bench/footprint.ts), and an
 * extrapolation to a large fleet, against the operator's RSS curve.
 */
function memoryGrowth(sizes: SizeResult[]): { met: TargetVerdict['met']; text: string } {
  const perPod = Math.round(sizes.reduce((a, s) => a + s.cost.cache.bytesPerPod, 0) / sizes.length);
  const perNode = Math.round(sizes.reduce((a, s) => a + s.cost.cache.bytesPerNode, 0) / sizes.length);
  const rss = sizes
    .map((s) => `${s.nodes}×${s.daemonsets}: ${s.cost.rssMiB.nodesOnly} → ${s.podCache.idleAll.rssMiB} MiB, peak ${s.cost.rssMiB.peak}`)
    .join('; ');
  const fleet = (nodes: number, ds: number) => round((nodes * perNode + nodes * ds * perPod) / 1024 / 1024, 0);
  const full = sizes.find((s) => s.cost.cache.fullPodBytes !== undefined)?.cost.cache.fullPodBytes;
  const events = sizes
    .map((s) => {
      const e = s.cost.events;
      if (!e) return `${s.nodes}×${s.daemonsets}: –`;
      return `${s.nodes}×${s.daemonsets}: ${e.objects['events-daemonsets'].peak} + ${e.objects['events-pods'].peak} (${e.bytesPerEvent} B each, ${e.cacheKiB} KiB at the end, of ${e.namespaceEvents} Events in the namespace)`;
    })
    .join('; ');
  const text =
    `live cache ≈ ${perNode} B per node (cluster-wide) and ≈ ${perPod} B per cached daemon pod (slim objects; the full Pod objects would take ${full ?? '–'} B each here, more on real nodes); ` +
    `operator RSS nodes-only → every guard idle: ${rss}. Pods are cached only for DaemonSets that roll, bake or have unsettled counters: ` +
    `1,000 nodes × 20 guarded DaemonSets with one rolling ≈ ${fleet(1000, 1)} MiB of cache, with all 20 rolling at once ≈ ${fleet(1000, 20)} MiB; ` +
    `5,000 × 100 idle ≈ ${fleet(5000, 0)} MiB (nodes only), with 5 rolling ≈ ${fleet(5000, 5)} MiB, on top of the ~100 MiB runtime. ` +
    `Watching Warning Events (events-daemonsets + events-pods informers, peak objects): ${events}.`;
  // Nodes cost little (slim, cluster-wide); pods cost only while their DaemonSet rolls.
  const cached = sizes.every((s) => s.podCache.idleAll.podsCached === 0 && s.podCache.single.peak.podsCached <= s.nodes * 1.2);
  return { met: cached, text };
}

async function main(): Promise<number> {
  const p = parseArgs(process.argv.slice(2), process.env);
  if (p.alertRace) {
    await alertRace({ out: p.out, log });
    return 0;
  }
  const started = new Date();
  const operatorNice = operatorPriority(); // a bad value is refused before the run, not after it
  log(
    `params: ${JSON.stringify({ ...p.base, sizes: p.sizes, smoke: p.smoke, ...(operatorNice !== undefined ? { operatorPriority: operatorNice } : {}) })}`,
  );
  const micro = p.micro ? runMicro(p) : [];
  const run: ClusterRun = p.cluster
    ? await runCluster(p)
    : { sizes: [], statefulSets: [], deployments: [], failures: [], serverVersion: '', raises: {} };
  await writeResults(p, { started, micro, run, ...(operatorNice !== undefined ? { operatorNice } : {}) });
  return run.failures.length > 0 ? 1 : 0;
}

function runMicro(p: Params): MicroResult[] {
  const micro: MicroResult[] = [];
  for (const c of defaultMicroCases(p.smoke)) {
    const r = runMicroCase(c, p.microIterations);
    log(`micro ${c.dsNodes}/${c.clusterNodes} ${c.scenario}: p50 ${r.passMs.p50} ms p99 ${r.passMs.p99} ms (${r.state})`);
    micro.push(r);
  }
  return micro;
}

/** What the sizes measured on the cluster, and the cluster they ran on. */
interface ClusterRun {
  sizes: SizeResult[];
  statefulSets: StatefulSetSizeResult[];
  deployments: DeploymentSizeResult[];
  /** One line per size that failed. */
  failures: string[];
  serverVersion: string;
  /** The cluster's fleet-scale settings (RG_CONTROLLER_QPS, RG_KWOK_PARALLELISM, RG_NODE_LEASE_SECONDS), recorded with the results. */
  raises: Raises;
}

async function runCluster(p: Params): Promise<ClusterRun> {
  // nodes: 0 — the bench brings its own pools and leaves the shared default nodes alone (NODES is ours here).
  // A cluster the bench starts itself gets the raised QPS (RG_CONTROLLER_QPS, default 200 here): at
  // fleet scale the controller manager's 20 requests/s, not the operator, would set the pace.
  const env = {
    ...process.env,
    [CONTROLLER_QPS_ENV]: process.env[CONTROLLER_QPS_ENV] ?? String(BENCH_CONTROLLER_QPS),
    [KWOK_PARALLELISM_ENV]: process.env[KWOK_PARALLELISM_ENV] ?? String(BENCH_KWOK_PARALLELISM),
    [NODE_LEASE_SECONDS_ENV]: process.env[NODE_LEASE_SECONDS_ENV] ?? String(BENCH_NODE_LEASE_SECONDS),
  };
  const { kubeconfig, binDir, controllerQps, kwokParallelism, nodeLeaseSeconds } = await ensureCluster({ log, nodes: 0, env });
  const raises: Raises = {
    ...(controllerQps !== undefined ? { controllerQps } : {}),
    ...(kwokParallelism !== undefined ? { kwokParallelism } : {}),
    ...(nodeLeaseSeconds !== undefined ? { nodeLeaseSeconds } : {}),
  };
  const run: ClusterRun = { sizes: [], statefulSets: [], deployments: [], failures: [], serverVersion: '', raises };
  const kubectl = kubectlRunner(binDir, kubeconfig);
  const client = ApiClient.fromKubeConfig(loadKubeConfig(kubeconfig), { userAgent: 'rollout-guard-bench' });
  try {
    run.serverVersion = (await client.request<{ gitVersion?: string }>('GET', '/version')).gitVersion ?? '';
    await kubectl(['apply', '--server-side', '--force-conflicts', '-k', resolve(ROOT, 'config/crd')]);
    await waitForCrdsEstablished(kubectl, ['rolloutguards.rolloutguard.dev']);
    const logDir = process.env.BENCH_OPERATOR_LOG_DIR;
    if (logDir) await mkdir(logDir, { recursive: true });
    const ctx: Ctx = { kubeconfig, kubectl, client, log, ...(logDir ? { operatorLogDir: logDir } : {}) };
    for (let i = 0; i < p.sizes.length; i++) await runOneSize(ctx, p, i, run);
    for (let i = 0; i < p.statefulSetSizes.length; i++) await runOneStatefulSetSize(ctx, p, i, run);
    for (let i = 0; i < p.deploymentSizes.length; i++) await runOneDeploymentSize(ctx, p, i, run);
  } finally {
    client.close();
  }
  return run;
}

/** Runs size `i` of `p.sizes`, adding its result (or its failure) to `run`. */
async function runOneSize(ctx: Ctx, p: Params, i: number, run: ClusterRun): Promise<void> {
  const s = p.sizes[i]!;
  log(`size ${i + 1}/${p.sizes.length}: ${s.nodes} nodes × ${s.daemonsets} DaemonSets (${s.nodes * s.daemonsets} daemon pods)`);
  try {
    const r = await runSize(ctx, { ...p.base, ...s }, p.smoke ? 'smoke' : `s${i + 1}`);
    run.sizes.push(r);
    log(
      `  stalled ${r.verdict.stalled}/${r.verdict.expectedStalls}; detection p99 ${r.detection.writtenS.p99 ?? '–'} s; peak RSS ${r.cost.rssMiB.peak} MiB`,
    );
    const c = r.containment;
    if (c)
      log(
        `  containment: ran on ${c.reachedNodes}/${c.nodes} nodes; first crash → undo ${c.firstCrashToUndoS ?? '–'} s; ${c.rolledBack ? 'RolledBack' : `NOT rolled back: ${c.error ?? c.final.state}`}`,
      );
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    run.failures.push(`${s.nodes}x${s.daemonsets}: ${msg}`);
    log(`  FAILED: ${msg}`);
  }
}

/** Runs StatefulSet size `i` of `p.statefulSetSizes`, adding its result (or its failure) to `run`. */
async function runOneStatefulSetSize(ctx: Ctx, p: Params, i: number, run: ClusterRun): Promise<void> {
  const s = p.statefulSetSizes[i]!;
  log(`StatefulSet size ${i + 1}/${p.statefulSetSizes.length}: ${s.statefulSets} StatefulSets × ${s.replicas} replicas`);
  try {
    const { brokenFraction, exhaustedFraction, suspectSeconds, deadlineSeconds, steadySeconds, nodeCpu } = p.base;
    const r = await runStatefulSetSize(
      ctx,
      { ...s, brokenFraction, exhaustedFraction, suspectSeconds, deadlineSeconds, steadySeconds, nodeCpu },
      p.smoke ? 'smoke' : `t${i + 1}`,
    );
    run.statefulSets.push(r);
    log(`  stalled ${r.verdict.stalled}/${r.verdict.expectedStalls}; first explanation p99 ${r.explanation.fromFailureS.p99 ?? '–'} s`);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    run.failures.push(`StatefulSets ${s.statefulSets}x${s.replicas}: ${msg}`);
    log(`  FAILED: ${msg}`);
  }
}

/** Runs Deployment size `i` of `p.deploymentSizes`, adding its result (or its failure) to `run`. */
async function runOneDeploymentSize(ctx: Ctx, p: Params, i: number, run: ClusterRun): Promise<void> {
  const s = p.deploymentSizes[i]!;
  log(`Deployment size ${i + 1}/${p.deploymentSizes.length}: ${s.deployments} Deployments × ${s.replicas} replicas`);
  try {
    const { brokenFraction, exhaustedFraction, suspectSeconds, deadlineSeconds, steadySeconds, nodeCpu } = p.base;
    const r = await runDeploymentSize(
      ctx,
      {
        ...s,
        rollingFraction: p.deploymentRolling,
        brokenFraction,
        exhaustedFraction,
        suspectSeconds,
        deadlineSeconds,
        steadySeconds,
        nodeCpu,
      },
      p.smoke ? 'smoke' : `u${i + 1}`,
    );
    run.deployments.push(r);
    log(
      `  stalled ${r.verdict.stalled}/${r.verdict.expectedStalls}; first explanation p99 ${r.explanation.fromFailureS.p99 ?? '–'} s; peak RSS ${r.cost.rssMiB.peak} MiB`,
    );
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    run.failures.push(`Deployments ${s.deployments}x${s.replicas}: ${msg}`);
    log(`  FAILED: ${msg}`);
  }
}

/** Judges the run against its targets and writes the results (JSON, SVG) and the tables (stdout). */
async function writeResults(p: Params, r: { started: Date; micro: MicroResult[]; run: ClusterRun; operatorNice?: number }): Promise<void> {
  const { started, micro, run } = r;
  const { sizes, serverVersion, raises } = run;
  const finished = new Date();
  const { targets, notes } = judge(micro, sizes);
  targets.push(...deploymentTargets(run.deployments));
  for (const f of run.failures) notes.push(`size failed: ${f}`);
  const host = hostname();
  const nodeArgs = operatorNodeArgs();
  const results: BenchResults = {
    schema: 'rollout-guard-bench/v1',
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    wallSeconds: round((finished.getTime() - started.getTime()) / 1000, 1)!,
    machine: {
      host,
      nproc: cpus().length,
      memoryGiB: round(totalmem() / 1024 ** 3, 1)!,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
      os: `${platform()} ${release()}`,
      node: process.version,
    },
    versions: { ...(await versions()), ...(serverVersion ? { serverVersion } : {}) },
    params: {
      ...p.base,
      sizes: p.sizes,
      ...(p.statefulSetSizes.length > 0 ? { statefulSetSizes: p.statefulSetSizes } : {}),
      ...(p.deploymentSizes.length > 0 ? { deploymentSizes: p.deploymentSizes, deploymentRolling: p.deploymentRolling } : {}),
      microIterations: p.microIterations,
      smoke: p.smoke,
      ...raises,
      ...(raises.nodeLeaseSeconds !== undefined ? { nodeMonitorGracePeriodSeconds: nodeLeaseTimings(raises).graceSeconds } : {}),
      ...(nodeArgs.length > 0 ? { operatorNodeArgs: nodeArgs } : {}),
      ...(r.operatorNice !== undefined ? { operatorPriority: r.operatorNice } : {}),
      ...(process.env.BENCH_TWIN_WATCHES ? { twinWatches: true } : {}),
    },
    micro,
    sizes,
    ...(run.statefulSets.length > 0 ? { statefulSets: run.statefulSets } : {}),
    ...(run.deployments.length > 0 ? { deployments: run.deployments } : {}),
    targets,
    notes,
  };
  await mkdir(p.out, { recursive: true });
  const stem = resolve(p.out, `${started.toISOString().slice(0, 10)}-${host}${p.smoke ? '-smoke' : ''}`);
  await writeFile(`${stem}.json`, JSON.stringify(results, null, 2) + '\n');
  await writeFile(`${stem}.svg`, renderSvg(results));
  process.stdout.write(renderTables(results) + '\n');
  log(`wrote ${stem}.json and ${stem}.svg in ${results.wallSeconds} s`);
}

// Ctrl-C or SIGTERM: exit through process 'exit', which stops the operator child (bench/operator.ts).
// The size being measured leaves its namespace and node pool behind (named bench-*): delete them by hand.
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    log(`${sig}: stopping; namespace and nodes named bench-* of the current size are left behind`);
    process.exit(130);
  });
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
