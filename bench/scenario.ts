/**
 * One size of the benchmark against the real control plane:
 *
 *   nodes (own pool, tainted) ─> operator started (nodes cached, nothing else) ─> DaemonSets v1 rolled out
 *   ─> one guard, Healthy (one idle guarded DaemonSet) ─> a guard for every other DaemonSet, all Healthy
 *   (all idle) ─> steady window (no rollout) ─> one DaemonSet of all rolls (v2, healthy) and its pod
 *   watch is released ─> fleet-wide: every DaemonSet rolls at once (the one already on v2 to v3), some
 *   healthy, some `broken` images, some asking for more CPU than a node has ─> every guard settled
 *   ─> containment: a revision that crashes after readiness, on a pool of its own (bench/containment.ts)
 *   ─> what the operator's Warning-Event informers hold ─> cleanup
 *
 * and what it measures on the way (see bench.ts for the list). Every wait polls a condition with a
 * timeout; the only fixed-length waits are the two idle windows (one guard, every guard), which are
 * measurement intervals.
 */
import { hostname, loadavg } from 'node:os';
import type { ApiClient } from '../src/k8s/apiClient.js';
// POOL_LABEL ties the bench's DaemonSets to the bench's own node pool, as it does the e2e suites'.
import type { Kubectl } from '../cluster/kubectl.js';
import { daemonSetManifest, rolloutGuardManifest, toleration } from '../cluster/manifests.js';
import { createNamespace } from '../cluster/namespaces.js';
import { POOL_LABEL, createNodes, waitForNodesReady, type NodeSpec } from '../cluster/nodes.js';
import { waitFor } from '../cluster/wait.js';
import { evaluateRolloutStuck } from './alert.js';
import { runContainment, type ContainmentResult } from './containment.js';
import { cacheFootprint, eventFootprint, type Footprint } from './footprint.js';
import { explanationOf } from './explanation.js';
import type { SampleMoments } from './explanationParts.js';
import { tailResult, type TailResult } from './tail.js';
import { Observer, type GuardObs } from './observer.js';
import { BenchOperator } from './operator.js';
import { explanationWaves, podsWatched, wavesNeeded, type WaveSample, type WavesResult } from './waves.js';
import {
  Scrape,
  histogramDelta,
  histogramSummary,
  parseMetrics,
  histogramQuantile,
  nonWatch,
  requestDelta,
  round,
  summarize,
  type HistogramSummary,
  type Summary,
} from './stats.js';

/** Taint on the bench's nodes, so no other suite's DaemonSet lands on them and changes our counts. */
export const BENCH_TAINT = 'rollout-guard.dev/bench';

export type Category = 'healthy' | 'broken' | 'exhausted';

/** Parameters of one size. */
export interface SizeParams {
  nodes: number;
  daemonsets: number;
  brokenFraction: number;
  exhaustedFraction: number;
  suspectSeconds: number;
  deadlineSeconds: number;
  steadySeconds: number;
  maxUnavailable: string;
  /** Allocatable CPU of a bench node; the exhausted revision requests twice this. */
  nodeCpu: number;
  /** Nodes of the containment scenario's own pool (bench/containment.ts); 0 skips the scenario. */
  containmentNodes: number;
  /** The operator's --pod-cache-linger-ms: how long a finished rollout's pods stay cached. */
  podCacheLingerMs: number;
  /** First explanations to measure at least, the fleet-wide rollout's included (bench/waves.ts). */
  minExplanations: number;
}

export interface Ctx {
  kubeconfig: string;
  kubectl: Kubectl;
  /** The bench's own API client (separate User-Agent, not counted by the operator). */
  client: ApiClient;
  log: (line: string) => void;
  /** Directory to keep each size's full operator log in (BENCH_OPERATOR_LOG_DIR), for diagnosis. */
  operatorLogDir?: string;
}

/** Per-guard outcome of the rollout. */
export interface GuardResult {
  name: string;
  category: Category;
  finalState?: string;
  cause?: string;
  /** Ever Stalled during the rollout (true for every broken/exhausted guard, false for healthy ones). */
  stalled: boolean;
  /** Healthy guards only: ever Suspect (a healthy rollout that paused longer than suspectAfterSeconds). */
  suspect: boolean;
  /** Seconds from the deadline (lastProgressAt + progressDeadlineSeconds) to the Stalled condition's lastTransitionTime. */
  detectionWrittenS?: number;
  /** … to the bench's watch delivering the Stalled status. */
  detectionObservedS?: number;
  /** … to the RolloutStalled Event's eventTime. */
  detectionEventS?: number;
  /** Seconds from the first blocked pod appearing (bench's watch) to a status naming a blocked node and the cause. */
  explanationFromPodS?: number;
  /** … from that pod first showing ImagePullBackOff / Unschedulable. */
  explanationFromFailureS?: number;
  /**
   * From that failure to the first status listing the node with that reason, cause or not: the guard
   * names the guard-level cause only once the failure is the dominant one among the nodes in flight.
   */
  nodeNamedFromFailureS?: number;
  /** The explanation's two ends, to account for its parts (bench/tail.ts). */
  explanationMoments?: SampleMoments;
  /** Seconds from the v2 apply to Stalled (rollout-guard) and to KubeDaemonSetRolloutStuck firing. */
  guardStalledAfterS?: number;
  alertFiresAfterS?: number;
  /** Status writes the bench's watch saw during the rollout window. */
  statusWrites: number;
  /** Pod and DaemonSet changes of the target in that window: each was a reason to reconcile. */
  targetChanges: number;
}

export interface SizeResult {
  nodes: number;
  daemonsets: number;
  /** Daemon pods at v1: nodes × DaemonSets. */
  pods: number;
  categories: Record<Category, number>;
  /** Nodes in the whole cluster (the operator's node cache is cluster-wide). */
  clusterNodes: number;
  /** Seconds each phase took. */
  phases: Record<string, number>;
  /** Load average (1 min) sampled during the size, and namespaces of other tenants: was the machine shared? */
  machine: { loadavg1Max: number; loadavg1Min: number; otherNamespaces: string[] };
  detection: {
    writtenS: Summary;
    observedS: Summary;
    eventS: Summary;
    /** The operator's own rollout_guard_detection_latency_seconds over the rollout (bucket-interpolated). */
    operatorHistogram: { count: number; p50?: number; p99?: number };
  };
  /**
   * First explanations: `fromFailureS` over every sample (the fleet-wide rollout's and the waves'),
   * `fleetFromFailureS` and `wavesFromFailureS` apart, and the waves' own record.
   */
  /** Every explanation over 1 s, part by part, and how far behind the watches ran (bench/tail.ts). */
  tail: TailResult;
  explanation: {
    fromPodS: Summary;
    fromFailureS: Summary;
    nodeNamedFromFailureS: Summary;
    fleetFromFailureS: Summary;
    wavesFromFailureS: Summary;
    /** The waves' samples whose DaemonSet's pods the operator still watched at the break, and the others. */
    wavesWatchedFromFailureS: Summary;
    wavesUnwatchedFromFailureS: Summary;
    waves: { count: number; seconds: number[]; unexplained: WavesResult['unexplained']; samples: WaveSample[] };
    /**
     * The operator's own rollout_guard_explanation_seconds over the fleet-wide rollout and the waves: each
     * status write that newly named a failing node, by part (ms, bucket-interpolated).
     */
    operator: Record<'fromEvent' | 'queue' | 'pass' | 'write' | 'total', HistogramSummary>;
  };
  api: {
    /** Requests by `VERB resource` in each window (WATCH = watches opened). */
    startup: Record<string, number>;
    setup: Record<string, number>;
    steady: Record<string, number>;
    steadySeconds: number;
    steadyNonWatch: number;
    rollout: Record<string, number>;
    rolloutSeconds: number;
    rolloutTotal: number;
    /** Watches the operator opened over the whole run (one per informer unless one was restarted). */
    watchesOpened: number;
    /**
     * Watches the API server ended before their timeout, counted by the informers still open at the end
     * of the fleet-wide rollout (a pod watch that ended took its count with it): gaps in the operator's view.
     */
    watchEarlyEnds?: number;
    statusWritesPerGuard: { operatorCounterMean: number; byCategory: Record<Category, Summary> };
    /** Status writes ÷ target changes during the rollout, over all guards: how much the queue coalesces. */
    writesPerTargetChange: number;
    /**
     * Status PATCHes the server accepted without changing the guard (no new resourceVersion reached the
     * bench's watch): requests that carried no information.
     */
    noopStatusPatches: number;
  };
  cost: {
    rssMiB: { nodesOnly: number; withPods: number; peak: number };
    /**
     * Live heap of the operator's caches (bench/footprint.ts), with nodes only and with the DaemonSets'
     * pods, and what that makes per cached node and per cached daemon pod.
     */
    cache: {
      nodesOnlyKiB: number;
      withPodsKiB: number;
      bytesPerNode: number;
      bytesPerPod: number;
      fullPodBytes?: number;
      objects: Record<string, { count: number; bytes: number; perObject: number }>;
    };
    heapUsedMiB: { nodesOnly: number; withPods: number; max: number };
    cpuSeconds: { startup: number; setup: number; steady: number; rollout: number; total: number };
    reconcile: { count: number; p50Ms?: number; p99Ms?: number; bucketBoundMs?: number };
    /** How long guard keys waited for a worker during the fleet-wide rollout (rollout_guard_queue_wait_seconds). */
    queueWait?: { count: number; p50Ms?: number; p99Ms?: number; bucketBoundMs?: number };
    /** Latency of the status PATCHes during the fleet-wide rollout (rollout_guard_api_request_duration_seconds). */
    statusPatch?: { count: number; p50Ms?: number; p99Ms?: number; bucketBoundMs?: number };
    /**
     * The same PATCHes as the API server timed them, from receiving the request to writing the response
     * (its apiserver_request_duration_seconds): what the client's figure holds beyond this is the
     * network and the operator's own event loop.
     */
    statusPatchServer?: { count: number; p50Ms?: number; p99Ms?: number; bucketBoundMs?: number };
    /** The operator's event-loop delay during the fleet-wide rollout (Node's monitorEventLoopDelay, via prom-client). */
    eventLoopLag?: { maxMs: number; windowMaxP99Ms: number };
    maxQueueDepth: number;
    /** What watching Warning Events costs (set once the size's scenarios are over). */
    events?: EventCost;
  };
  alert: {
    name: string;
    /** Stalled guards: seconds after the v2 apply; rollout-guard vs the alert. */
    guardStalledAfterS: Summary;
    alertFiresAfterS: Summary;
    /** DaemonSets whose rollout completed (healthy) but for which the alert would have fired anyway. */
    falseFirings: number;
  };
  verdict: {
    expectedStalls: number;
    stalled: number;
    missedStalls: string[];
    unexpectedStalls: string[];
    suspectHealthy: string[];
    /** Undos the operator attempted (every guard reports only: any is a false verdict). */
    undos: number;
    /** Suspect or Stalled guards of the single rollout (it is healthy: any is a false verdict). */
    singleFalse: string[];
    operatorExitCode: number | null;
    /**
     * Scrapes of the operator's /metrics whose connection failed before any answer and that a new
     * connection then answered, with the first connection's error (bench/operator.ts).
     */
    retriedScrapes: string[];
  };
  /**
   * Pods cached against what rolls: idle (every guard Healthy, nothing rolling), one DaemonSet of all
   * rolling, and every DaemonSet rolling at once. Memory as RSS, and heap used: its lowest sample over the
   * idle window (closest to the live heap without forcing a collection), its highest over a rollout.
   */
  podCache: {
    lingerMs: number;
    idleOne: MemoryPoint;
    idleAll: MemoryPoint;
    single: {
      peak: MemoryPoint;
      rollSeconds: number;
      releasedAfterS?: number;
      statusWrites: number;
      requests: Record<string, number>;
      requestsTotal: number;
    };
    fleet: { peak: MemoryPoint };
  };
  guards: GuardResult[];
  /** A revision that passes readiness and then crashes, contained by a guard with Undo (absent with --containment-nodes 0). */
  containment?: ContainmentResult;
}

/** The operator's memory and the daemon pods it caches at one moment (or the peak over a window). */
export interface MemoryPoint {
  podsCached: number;
  rssMiB: number;
  /** nodejs_heap_size_used_bytes: lowest sample of an idle window, highest of a rollout. */
  heapMiB: number;
  /**
   * Where the RSS of an idle point lives (its last sample): the V8 heap reserved in all and per space
   * (new space is the young generation, which V8 grows under allocation bursts), memory outside the
   * heap held by JavaScript objects (buffers), and the rest (code, libuv, OpenSSL, malloc arenas).
   */
  breakdownMiB?: {
    heapTotal: number;
    newSpace: number;
    oldSpace: number;
    codeSpace: number;
    largeObjects: number;
    external: number;
    outsideHeap: number;
  };
  /**
   * Idle collections (rollout_guard_idle_collection_seconds_count) that ran within an idle window: 0
   * means work kept coming for the whole window, so the young generation a burst grew is still there.
   */
  idleCollections?: number;
}

/** A {@link MemoryPoint.breakdownMiB} from one scrape and the RSS read beside it. */
function breakdownOf(scrape: Scrape, rss: number): NonNullable<MemoryPoint['breakdownMiB']> {
  const space = (name: string) => scrape.sum('nodejs_heap_space_size_total_bytes', { space: name });
  const heapTotal = scrape.sum('nodejs_heap_size_total_bytes');
  const external = scrape.sum('nodejs_external_memory_bytes');
  return {
    heapTotal: mib(heapTotal),
    newSpace: mib(space('new')),
    oldSpace: mib(space('old')),
    codeSpace: mib(space('code')),
    largeObjects: mib(space('large_object')),
    external: mib(external),
    outsideHeap: mib(Math.max(0, rss - heapTotal - external)),
  };
}

/** The operator's informers on Warning Events (src/runtime/caches.ts). */
export const EVENT_INFORMERS = ['events-daemonsets', 'events-pods'] as const;

export interface EventCost {
  /**
   * rollout_guard_informer_objects of each Warning-Event informer: when the size's rollout was measured,
   * at the end of the size (after the containment scenario), and the peak of those and of the 2/s samples
   * taken since the operator started.
   */
  objects: Record<(typeof EVENT_INFORMERS)[number], { afterRollout: number; end: number; peak: number }>;
  /** Live heap of those Events as the operator slims them (bench/footprint.ts), per Event and in all at the end. */
  bytesPerEvent: number;
  cacheKiB: number;
  /** Every Event in the namespace at the end, Normal ones included: what the field selectors leave on the server. */
  namespaceEvents: number;
}

/** Categories in a stable order: broken first, then exhausted, the rest healthy. */
export function categories(p: Pick<SizeParams, 'daemonsets' | 'brokenFraction' | 'exhaustedFraction'>): Category[] {
  const broken = Math.round(p.daemonsets * p.brokenFraction);
  const exhausted = Math.min(p.daemonsets - broken, Math.round(p.daemonsets * p.exhaustedFraction));
  return Array.from({ length: p.daemonsets }, (_, i): Category =>
    i < broken ? 'broken' : i < broken + exhausted ? 'exhausted' : 'healthy',
  );
}

/**
 * The image and CPU request of revision `version` of a workload of category `cat`: from v2 on, a broken
 * one cannot pull its image and an exhausted one asks for twice a node's CPU. Small requests otherwise
 * keep up to ~100 pods per node schedulable.
 */
export function revisionPod(repository: string, version: number, cat: Category, nodeCpu: number): { image: string; cpu: string } {
  const image = version >= 2 && cat === 'broken' ? `${repository}:${version}-broken` : `${repository}:${version}`;
  return { image, cpu: version >= 2 && cat === 'exhausted' ? String(nodeCpu * 2) : '10m' };
}

function dsManifest(ns: string, name: string, pool: string, p: SizeParams, version: number, cat: Category): Record<string, unknown> {
  const { image, cpu } = revisionPod('registry.local/bench-agent', version, cat, p.nodeCpu);
  return daemonSetManifest({
    name,
    namespace: ns,
    maxUnavailable: p.maxUnavailable,
    nodeSelector: { [POOL_LABEL]: pool },
    tolerations: [toleration(BENCH_TAINT)],
    container: { name: 'agent', image, requests: { cpu, memory: '16Mi' } },
  });
}

function guardManifest(ns: string, name: string, p: SizeParams): Record<string, unknown> {
  // No bake: the bench measures detection at the deadline and completion at the controller's counters.
  return rolloutGuardManifest({
    name,
    namespace: ns,
    spec: { suspectAfterSeconds: p.suspectSeconds, progressDeadlineSeconds: p.deadlineSeconds, bakeSeconds: 0 },
  });
}

export const list = (items: unknown[]) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
export const mib = (b: number) => round(b / 1024 / 1024, 1)!;
export const secs = (ms: number) => round(ms / 1000, 3)!;

/** Background sampling of the operator every 500 ms: RSS, heap, queue depth, pods cached. */
class Sampler {
  /** `lagMax`: the longest event-loop delay since the previous scrape (prom-client resets it on each). */
  readonly samples: Array<{
    t: number;
    rss: number;
    heap: number;
    queue: number;
    pods: number;
    lagMax: number;
    idleCollections: number;
    events: Record<string, number>;
    breakdown: NonNullable<MemoryPoint['breakdownMiB']>;
  }> = [];
  readonly load: number[] = [];
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(private readonly op: BenchOperator) {}

  start(): void {
    this.loop = (async () => {
      while (!this.stopped && this.op.alive) {
        try {
          const [scrape, mem] = await Promise.all([this.op.scrape(), this.op.memory()]);
          const events = Object.fromEntries(EVENT_INFORMERS.map((r) => [r, scrape.sum('rollout_guard_informer_objects', { resource: r })]));
          this.samples.push({
            t: Date.now(),
            rss: mem.rss,
            heap: scrape.sum('nodejs_heap_size_used_bytes'),
            queue: scrape.sum('rollout_guard_queue_depth'),
            pods: scrape.sum('rollout_guard_informer_objects', { resource: 'pods' }),
            lagMax: scrape.sum('nodejs_eventloop_lag_max_seconds'),
            idleCollections: scrape.sum('rollout_guard_idle_collection_seconds_count'),
            events,
            breakdown: breakdownOf(scrape, mem.rss),
          });
          this.load.push(loadavg()[0] ?? 0);
        } catch {
          // The operator is stopping; the loop ends with it.
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  /**
   * The operator's event-loop delay over [from, to]: the longest, and the p99 of each sample window's
   * longest. A response the API server has sent waits this long for the operator to read it.
   */
  eventLoopLag(from: number, to: number): { maxMs: number; windowMaxP99Ms: number } {
    const w = this.samples.filter((s) => s.t >= from && s.t <= to).map((s) => s.lagMax * 1000);
    return { maxMs: round(Math.max(0, ...w), 1)!, windowMaxP99Ms: round(summarize(w).p99 ?? 0, 1)! };
  }

  maxQueue(from: number, to: number): number {
    return Math.max(0, ...this.samples.filter((s) => s.t >= from && s.t <= to).map((s) => s.queue));
  }

  /** The most pods cached over [from, to], with the highest RSS and the heap of that window's low point. */
  peak(from: number, to: number): MemoryPoint {
    const w = this.samples.filter((s) => s.t >= from && s.t <= to);
    return {
      podsCached: Math.max(0, ...w.map((s) => s.pods)),
      rssMiB: mib(Math.max(0, ...w.map((s) => s.rss))),
      heapMiB: mib(Math.max(0, ...w.map((s) => s.heap))),
    };
  }

  /** Samples at [from, to]: pods cached now, RSS, and the lowest heap-used sample (after a collection). */
  at(from: number, to: number): MemoryPoint {
    const w = this.samples.filter((s) => s.t >= from && s.t <= to);
    const last = w[w.length - 1];
    const point: MemoryPoint = {
      podsCached: last?.pods ?? 0,
      rssMiB: mib(last?.rss ?? 0),
      heapMiB: mib(Math.min(...w.map((s) => s.heap))),
    };
    if (last) point.breakdownMiB = last.breakdown;
    if (last && w[0]) point.idleCollections = last.idleCollections - w[0].idleCollections;
    return point;
  }

  maxEvents(resource: string): number {
    return Math.max(0, ...this.samples.map((s) => s.events[resource] ?? 0));
  }
}

/** The Warning-Event informers' objects (operator's /metrics) and their weight, at the end of a size. */
async function eventCost(op: BenchOperator, sampler: Sampler, atRollout: Scrape, client: ApiClient, ns: string): Promise<EventCost> {
  const end = await op.scrape();
  const fp = await eventFootprint(client, ns);
  const count = (s: Scrape, r: string) => s.sum('rollout_guard_informer_objects', { resource: r });
  const objects = Object.fromEntries(
    EVENT_INFORMERS.map((r) => [
      r,
      {
        afterRollout: count(atRollout, r),
        end: count(end, r),
        peak: Math.max(count(atRollout, r), count(end, r), sampler.maxEvents(r)),
      },
    ]),
  ) as EventCost['objects'];
  const n = Object.values(fp.objects).reduce((a, o) => a + o.count, 0);
  return {
    objects,
    bytesPerEvent: n > 0 ? Math.round(fp.bytes / n) : 0,
    cacheKiB: round(fp.bytes / 1024, 1)!,
    namespaceEvents: fp.allEvents,
  };
}

export async function clusterSnapshot(client: ApiClient, ownNs: string): Promise<{ nodes: number; otherNamespaces: string[] }> {
  const nodes = await client.request<{ items: unknown[] }>('GET', '/api/v1/nodes');
  const nss = await client.request<{ items: Array<{ metadata: { name: string } }> }>('GET', '/api/v1/namespaces');
  const system = new Set(['default', 'kube-system', 'kube-public', 'kube-node-lease', ownNs]);
  return { nodes: nodes.items.length, otherNamespaces: nss.items.map((n) => n.metadata.name).filter((n) => !system.has(n)) };
}

/** What the phases of one size share: its parameters, names, the processes it runs and the phase clock. */
interface SizeRun {
  ctx: Ctx;
  p: SizeParams;
  ns: string;
  pool: string;
  cats: Category[];
  names: string[];
  catOf: Map<string, Category>;
  nodeNames: string[];
  containmentPool: string;
  containmentNodes: string[];
  /** Seconds each phase took; {@link SizeRun.phase} ends one. */
  phases: Record<string, number>;
  phase: (name: string) => void;
  loads: number[];
  /** Set as each starts, so that the clean-up stops whatever is running. */
  op?: BenchOperator;
  sampler?: Sampler;
  observer?: Observer;
}

/** The operator and what watches it, once started. */
interface Running {
  op: BenchOperator;
  sampler: Sampler;
  obs: Observer;
}

/** Runs one size end to end and always cleans up what it created. */
export async function runSize(ctx: Ctx, p: SizeParams, tag: string): Promise<SizeResult> {
  const run = newSizeRun(ctx, p, tag);
  const { kubectl, client, log } = ctx;
  try {
    const before = await createPool(run);
    const { running, s0, mem0, fp0 } = await startOperator(run);
    const { op, sampler, obs } = running;
    await rollOutV1(run, obs);
    const idle = await guardsHealthy(run, running);
    const steady = await steadyWindow(run, running, idle.s1);
    const single = await singleRollout(run, running, steady.s2);
    const fleet = await fleetRollout(run, running, single.name);

    const events = await client.request<{ items: RolloutEvent[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${run.ns}/events`);
    const after = await clusterSnapshot(client, run.ns);
    run.loads.push(...sampler.load, loadavg()[0] ?? 0);
    const guards = run.names.map((n) => guardResult(run, obs, fleet, events.items, n));
    const waves = await runWaves(run, obs, fleet, guards);
    const wavesEnd = await op.scrape();
    const benchLags = obs.podDeliveries;
    const result = sizeResult(run, {
      before,
      after,
      s0,
      mem0,
      fp0,
      idle,
      steady,
      single,
      fleet,
      guards,
      sampler,
      waves,
      wavesEnd,
      benchLags,
    });

    // --- Containment: a revision that crashes after readiness, on its own pool (bench/containment.ts). ---
    if (run.containmentNodes.length > 0) {
      result.containment = await runContainment({
        kubectl,
        client,
        log,
        ns: run.ns,
        pool: run.containmentPool,
        nodeNames: run.containmentNodes,
        observer: obs,
        poolLabel: POOL_LABEL,
        taint: BENCH_TAINT,
        nodeCpu: p.nodeCpu,
      });
      run.phase('containment');
    }
    result.cost.events = await eventCost(op, sampler, fleet.s3, client, run.ns);

    await sampler.stop();
    run.sampler = undefined;
    await obs.stop();
    run.observer = undefined;
    result.verdict.operatorExitCode = await op.stop();
    result.verdict.retriedScrapes = [...op.retriedScrapes];
    run.op = undefined;
    return result;
  } finally {
    const cleanStart = Date.now();
    await run.sampler?.stop();
    await run.observer?.stop();
    if (run.op) await run.op.stop();
    await cleanup(
      kubectl,
      client,
      run.ns,
      [
        { pool: run.pool, nodes: run.nodeNames },
        { pool: run.containmentPool, nodes: run.containmentNodes },
      ],
      log,
    );
    log(`  cleanup: ${secs(Date.now() - cleanStart)} s (${hostname()})`);
  }
}

function newSizeRun(ctx: Ctx, p: SizeParams, tag: string): SizeRun {
  const suffix = `${tag}-${Date.now().toString(36).slice(-4)}`;
  const pool = `bench-${suffix}`;
  const cats = categories(p);
  const names = cats.map((_, i) => `agent-${String(i + 1).padStart(3, '0')}`);
  const containmentPool = `${pool}-c`;
  const phases: Record<string, number> = {};
  let mark = Date.now();
  return {
    ctx,
    p,
    ns: `bench-${suffix}`,
    pool,
    cats,
    names,
    catOf: new Map(names.map((n, i) => [n, cats[i]!])),
    nodeNames: Array.from({ length: p.nodes }, (_, i) => `${pool}-${i + 1}`),
    containmentPool,
    containmentNodes: Array.from({ length: p.containmentNodes }, (_, i) => `${containmentPool}-${i + 1}`),
    phases,
    phase: (name: string): void => {
      const now = Date.now();
      phases[name] = secs(now - mark);
      ctx.log(`  ${name}: ${phases[name]} s`);
      mark = now;
    },
    loads: [loadavg()[0] ?? 0],
  };
}

/** Nodes, in their own pool, tainted so only the bench's DaemonSets run there; and the namespace. */
/**
 * A size's pool of kwok nodes, tainted so that only the bench's pods land there, created 100 at a time
 * and waited for until Ready; then the size's namespace. Every kind's size starts with it.
 */
export async function createSizePool(
  kubectl: Ctx['kubectl'],
  pool: { name: string; nodeNames: readonly string[]; nodeCpu: number; ns: string },
): Promise<void> {
  const specs: NodeSpec[] = pool.nodeNames.map((name) => ({
    name,
    labels: { [POOL_LABEL]: pool.name },
    taints: [{ key: BENCH_TAINT, value: 'true', effect: 'NoSchedule' }],
    allocatable: { cpu: String(pool.nodeCpu), memory: '64Gi', pods: '110' },
  }));
  for (let i = 0; i < specs.length; i += 100) await createNodes(kubectl, specs.slice(i, i + 100));
  await waitForNodesReady(kubectl, pool.nodeNames, { timeoutMs: 120_000 + pool.nodeNames.length * 500 });
  await createNamespace(kubectl, pool.ns);
}

async function createPool(run: SizeRun): Promise<{ nodes: number; otherNamespaces: string[] }> {
  await createSizePool(run.ctx.kubectl, { name: run.pool, nodeNames: run.nodeNames, nodeCpu: run.p.nodeCpu, ns: run.ns });
  const before = await clusterSnapshot(run.ctx.client, run.ns);
  run.phase('nodes');
  return before;
}

/** The operator, its caches synced with nodes only; the sampler and the bench's own watch started. */
async function startOperator(run: SizeRun): Promise<{ running: Running; s0: Scrape; mem0: { rss: number; hwm: number }; fp0: Footprint }> {
  const { ctx, p, ns } = run;
  const op = await BenchOperator.start(ctx.kubeconfig, [ns], ctx.operatorLogDir ? `${ctx.operatorLogDir}/operator-${ns}.log` : undefined, [
    `--pod-cache-linger-ms=${p.podCacheLingerMs}`,
  ]);
  run.op = op;
  const sampler = new Sampler(op);
  run.sampler = sampler;
  sampler.start();
  const obs = new Observer(ctx.client, ns);
  run.observer = obs;
  await obs.start();
  const s0 = await op.scrape();
  const mem0 = await op.memory();
  const fp0 = await cacheFootprint(ctx.client, ns);
  run.phase('operatorStart');
  return { running: { op, sampler, obs }, s0, mem0, fp0 };
}

/** DaemonSets v1, fully rolled out. */
async function rollOutV1(run: SizeRun, obs: Observer): Promise<void> {
  const { p, ns, pool, names, catOf } = run;
  await run.ctx.kubectl(['apply', '-f', '-'], { input: list(names.map((n) => dsManifest(ns, n, pool, p, 1, catOf.get(n)!))) });
  const rolledOut = (n: string): boolean => {
    const d = obs.daemonSet(n);
    return (
      !!d &&
      d.observedGeneration >= (d.metadata.generation ?? 0) &&
      d.sample.desired === p.nodes &&
      d.sample.updated === p.nodes &&
      d.sample.available === p.nodes &&
      d.sample.current === p.nodes
    );
  };
  const podsTimeout = 120_000 + p.nodes * p.daemonsets * 150;
  await waitFor(() => names.every(rolledOut), {
    timeoutMs: podsTimeout,
    intervalMs: 500,
    describe: `${names.length} DaemonSets rolled out on ${p.nodes} nodes`,
  });
  run.phase('daemonsetsV1');
}

/** Lets the last writes of the Healthy transitions land before an idle window starts. */
export function quiet(obs: Observer, what: string): Promise<unknown> {
  return waitFor(() => Date.now() - obs.lastGuardWrite() > 2_000, {
    timeoutMs: 60_000,
    intervalMs: 250,
    describe: `guard writes quiet (${what})`,
  });
}

interface IdleGuards {
  idleOne: MemoryPoint;
  fp1: Footprint;
  s1: Scrape;
  mem1: { rss: number; hwm: number };
}

/** Guards: one, then all, every one Healthy. Idle guarded DaemonSets must cost no pods. */
async function guardsHealthy(run: SizeRun, { op, sampler, obs }: Running): Promise<IdleGuards> {
  const { ctx, p, ns, names } = run;
  await ctx.kubectl(['apply', '-f', '-'], { input: list([guardManifest(ns, names[0]!, p)]) });
  await waitFor(() => obs.guard(names[0]!)?.state === 'Healthy', {
    timeoutMs: 120_000,
    intervalMs: 250,
    describe: 'the first guard Healthy',
  });
  await quiet(obs, 'one guard');
  // As long an idle window as the steady one that measures every guard idle: the runtime returns memory
  // after a burst only once it has been idle a while, so both points are taken after the same wait.
  const oneFrom = Date.now();
  await new Promise((r) => setTimeout(r, p.steadySeconds * 1000));
  const idleOne = sampler.at(oneFrom, Date.now());
  await ctx.kubectl(['apply', '-f', '-'], { input: list(names.slice(1).map((n) => guardManifest(ns, n, p))) });
  await waitFor(() => names.every((n) => obs.guard(n)?.state === 'Healthy'), {
    timeoutMs: 120_000,
    intervalMs: 250,
    describe: 'every guard Healthy',
  });
  const fp1 = await cacheFootprint(ctx.client, ns);
  await quiet(obs, 'every guard');
  const s1 = await op.scrape();
  const mem1 = await op.memory();
  run.phase('guardsHealthy');
  return { idleOne, fp1, s1, mem1 };
}

/** Steady state: no rollout. A measurement window, not a wait for a condition. */
async function steadyWindow(run: SizeRun, { op, sampler }: Running, s1: Scrape): Promise<{ s2: Scrape; idleAll: MemoryPoint }> {
  await new Promise((r) => setTimeout(r, run.p.steadySeconds * 1000));
  const s2 = await op.scrape();
  const idleAll = sampler.at(s1.at, s2.at);
  run.phase('steady');
  return { s2, idleAll };
}

interface SingleRollout {
  name: string;
  tS: number;
  tSDone: number;
  statusWrites: number;
  singleFalse: string[];
  requests: Record<string, number>;
  released: number | undefined;
  peak: MemoryPoint;
  /** The scrape the fleet-wide rollout is measured from. */
  s2f: Scrape;
  /** The API server's own metrics at the same moment. */
  a2f: Scrape;
}

/** One DaemonSet of all rolls (healthy): only its pods are cached, and released after. */
async function singleRollout(run: SizeRun, { op, sampler, obs }: Running, s2: Scrape): Promise<SingleRollout> {
  const { p, ns, pool, names } = run;
  const single = names[names.length - 1]!;
  const tS = Date.now();
  await run.ctx.kubectl(['apply', '-f', '-'], { input: list([dsManifest(ns, single, pool, p, 2, 'healthy')]) });
  await waitFor(
    () => {
      const g = obs.guard(single);
      return g?.state === 'Healthy' && g.completedAt !== undefined && Date.parse(g.completedAt) >= tS;
    },
    { timeoutMs: 120_000 + p.nodes * 400, intervalMs: 250, describe: `${single} rolled out on its own` },
  );
  const tSDone = Date.now();
  await waitFor(() => Date.now() - obs.lastGuardWrite() > 2_000, {
    timeoutMs: 60_000,
    intervalMs: 250,
    describe: 'guard writes quiet after the single rollout',
  });
  const sS = await op.scrape();
  const singleHist = (obs.guardLog.get(single) ?? []).filter((g) => g.t >= tS);
  const singleFalse = names.filter((n) =>
    (obs.guardLog.get(n) ?? []).some((g) => g.t >= tS && (g.state === 'Suspect' || g.state === 'Stalled')),
  );
  const requests = requestDelta(s2, sS);
  const released = await waitFor(
    async () => ((await op.scrape()).sum('rollout_guard_informer_objects', { resource: 'pods' }) === 0 ? Date.now() : undefined),
    {
      timeoutMs: p.podCacheLingerMs + 30_000,
      intervalMs: 250,
      describe: "the single rollout's pods released",
    },
  ).catch(() => undefined);
  // Up to the release: a small rollout can finish between two samples, its pods stay cached for the linger.
  const peak = sampler.peak(tS, released ?? Date.now());
  run.phase('singleRollout');
  const [s2f, a2f] = await Promise.all([op.scrape(), apiServerScrape(run.ctx)]);
  return { name: single, tS, tSDone, statusWrites: singleHist.length, singleFalse, requests, released, peak, s2f, a2f };
}

interface FleetRollout {
  v1Hash: Map<string, string>;
  t0: number;
  tEnd: number;
  s3: Scrape;
  a3: Scrape;
  hwm: number;
}

/** Fleet-wide: every DaemonSet rolls at once (v2; the one already on v2 goes to v3), until every guard settles. */
async function fleetRollout(run: SizeRun, { op, obs }: Running, single: string): Promise<FleetRollout> {
  const { p, ns, pool, names, cats, catOf } = run;
  const v1Hash = new Map(names.map((n) => [n, [...obs.podHashes(n)][0] ?? '']));
  if (process.env.BENCH_TWIN_WATCHES) await obs.watchLikeOperator(names.filter((n) => catOf.get(n) !== 'healthy'));
  const t0 = Date.now();
  await run.ctx.kubectl(['apply', '-f', '-'], {
    input: list(names.map((n) => dsManifest(ns, n, pool, p, n === single ? 3 : 2, catOf.get(n)!))),
  });
  const settled = (n: string): boolean => {
    const g = obs.guard(n);
    if (catOf.get(n) !== 'healthy') return g?.state === 'Stalled';
    return g?.state === 'Healthy' && g.completedAt !== undefined && Date.parse(g.completedAt) >= t0;
  };
  const healthyPods = cats.filter((c) => c === 'healthy').length * p.nodes;
  await waitFor(() => names.every(settled), {
    timeoutMs: 180_000 + p.deadlineSeconds * 3000 + healthyPods * 400,
    intervalMs: 250,
    describe: 'every broken/exhausted guard Stalled and every healthy guard Healthy on v2',
  }).catch((e: unknown) => {
    const states = names.map((n) => `${n}(${catOf.get(n)}):${obs.guard(n)?.state ?? '?'}`).join(' ');
    throw new Error(`${e instanceof Error ? e.message : String(e)}\nstates: ${states}`);
  });
  // The writes that follow Stalled (the undo dry-run result) belong to this rollout too.
  await waitFor(() => Date.now() - obs.lastGuardWrite() > 3_000, {
    timeoutMs: 60_000,
    intervalMs: 250,
    describe: 'guard writes quiet after the rollout',
  });
  const tEnd = Date.now();
  const [s3, a3] = await Promise.all([op.scrape(), apiServerScrape(run.ctx)]);
  const hwm = (await op.memory()).hwm;
  run.phase('rollout');
  return { v1Hash, t0, tEnd, s3, a3, hwm };
}

type RolloutEvent = { reason?: string; eventTime?: string; regarding?: { kind?: string; name?: string } };

/** One guard's outcome of the fleet-wide rollout. */
function guardResult(run: SizeRun, obs: Observer, fleet: FleetRollout, events: readonly RolloutEvent[], n: string): GuardResult {
  const { t0, tEnd } = fleet;
  const cat = run.catOf.get(n)!;
  const hist = (obs.guardLog.get(n) ?? []).filter((g) => g.t >= t0);
  const inRollout = hist.filter((g) => g.t <= tEnd);
  const final = obs.guard(n);
  const r: GuardResult = {
    name: n,
    category: cat,
    ...(final?.state ? { finalState: final.state } : {}),
    ...(final?.cause ? { cause: final.cause } : {}),
    stalled: hist.some((g) => g.state === 'Stalled'),
    suspect: hist.some((g) => g.state === 'Suspect'),
    statusWrites: inRollout.length,
    targetChanges: (obs.changesByDs.get(n) ?? []).filter((t) => t >= t0 && t <= tEnd).length,
  };
  const samples = obs.dsLog.get(n) ?? [];
  const verdict = samples.length > 0 ? evaluateRolloutStuck(samples, t0) : undefined;
  if (verdict?.firesAt !== undefined) r.alertFiresAfterS = secs(verdict.firesAt - t0);
  if (cat === 'healthy') return r;

  const firstStalled: GuardObs | undefined = hist.find((g) => g.state === 'Stalled');
  if (firstStalled?.lastProgressAt) {
    const deadlineAt = Date.parse(firstStalled.lastProgressAt) + run.p.deadlineSeconds * 1000;
    if (firstStalled.stalledSince) r.detectionWrittenS = secs(Date.parse(firstStalled.stalledSince) - deadlineAt);
    r.detectionObservedS = secs(firstStalled.t - deadlineAt);
    r.guardStalledAfterS = secs(Date.parse(firstStalled.stalledSince ?? new Date(firstStalled.t).toISOString()) - t0);
    const ev = events
      .filter((e) => e.reason === 'RolloutStalled' && e.regarding?.kind === 'RolloutGuard' && e.regarding.name === n && e.eventTime)
      .map((e) => Date.parse(e.eventTime!))
      .filter((t) => t >= t0)
      .sort((a, b) => a - b)[0];
    if (ev !== undefined) r.detectionEventS = secs(ev - deadlineAt);
  }

  // Explanation: the first status naming a node whose new pod is blocked, with its cause.
  const e = explanationOf(obs, n, cat, t0, fleet.v1Hash.get(n));
  if (e.fromPodS !== undefined) r.explanationFromPodS = e.fromPodS;
  if (e.fromFailureS !== undefined) r.explanationFromFailureS = e.fromFailureS;
  if (e.nodeNamedFromFailureS !== undefined) r.nodeNamedFromFailureS = e.nodeNamedFromFailureS;
  if (e.moments) r.explanationMoments = e.moments;
  return r;
}

/** Everything a size measured, before the containment scenario and the Event informers' cost. */
interface Measured {
  before: { nodes: number; otherNamespaces: string[] };
  after: { nodes: number; otherNamespaces: string[] };
  s0: Scrape;
  mem0: { rss: number; hwm: number };
  fp0: Footprint;
  idle: IdleGuards;
  steady: { s2: Scrape; idleAll: MemoryPoint };
  single: SingleRollout;
  fleet: FleetRollout;
  guards: GuardResult[];
  sampler: Sampler;
  waves: WavesResult;
  /** The operator's metrics after the waves. */
  wavesEnd: Scrape;
  /** The bench's own pod watch: how far behind the API server's writes each event arrived. */
  benchLags: ReadonlyArray<{ t: number; lagMs: number }>;
}

const rSum = (s: Summary): Summary => ({ count: s.count, p50: round(s.p50), p99: round(s.p99), max: round(s.max), mean: round(s.mean) });

/** The guards that should stall (broken and exhausted), and a value of each where it has one. */
function stallValues(guards: readonly GuardResult[], f: (g: GuardResult) => number | undefined): number[] {
  return guards
    .filter((g) => g.category !== 'healthy')
    .map(f)
    .filter((v): v is number => v !== undefined);
}

/** One scrape of the API server's /metrics, as the bench's admin user. */
export async function apiServerScrape(ctx: Ctx): Promise<Scrape> {
  const r = await ctx.kubectl(['get', '--raw', '/metrics']);
  return new Scrape(parseMetrics(r.stdout), Date.now());
}

/** The size's result, aggregated from its phases. */
function sizeResult(run: SizeRun, m: Measured): SizeResult {
  const { p, cats } = run;
  const { guards, fleet, single } = m;
  const stallGuards = guards.filter((g) => g.category !== 'healthy');
  const detHist = histogramDelta(single.s2f, fleet.s3, 'rollout_guard_detection_latency_seconds');
  return {
    nodes: p.nodes,
    daemonsets: p.daemonsets,
    pods: p.nodes * p.daemonsets,
    categories: {
      healthy: cats.filter((c) => c === 'healthy').length,
      broken: cats.filter((c) => c === 'broken').length,
      exhausted: cats.filter((c) => c === 'exhausted').length,
    },
    clusterNodes: m.before.nodes,
    phases: run.phases,
    machine: {
      loadavg1Max: round(Math.max(...run.loads), 2)!,
      loadavg1Min: round(Math.min(...run.loads), 2)!,
      otherNamespaces: [...new Set([...m.before.otherNamespaces, ...m.after.otherNamespaces])].sort(),
    },
    detection: {
      writtenS: rSum(summarize(stallValues(guards, (g) => g.detectionWrittenS))),
      observedS: rSum(summarize(stallValues(guards, (g) => g.detectionObservedS))),
      eventS: rSum(summarize(stallValues(guards, (g) => g.detectionEventS))),
      operatorHistogram: {
        count: detHist.count,
        p50: round(histogramQuantile(0.5, detHist.buckets)),
        p99: round(histogramQuantile(0.99, detHist.buckets)),
      },
    },
    explanation: explanationResult(guards, m),
    tail: tailResult(
      run.ns,
      [
        ...guards.flatMap((g) =>
          g.category === 'healthy' || g.explanationFromFailureS === undefined
            ? []
            : [
                {
                  guard: g.name,
                  category: g.category,
                  wave: 0,
                  fromFailureS: g.explanationFromFailureS,
                  ...(g.explanationMoments ? { moments: g.explanationMoments } : {}),
                },
              ],
        ),
        ...m.waves.samples,
      ],
      run.op?.log,
      { from: m.single.s2f, to: m.wavesEnd, benchLags: m.benchLags },
    ),
    api: apiResult(run, m),
    cost: costResult(m),
    alert: {
      name: 'KubeDaemonSetRolloutStuck',
      guardStalledAfterS: rSum(summarize(stallValues(guards, (g) => g.guardStalledAfterS))),
      alertFiresAfterS: rSum(summarize(stallValues(guards, (g) => g.alertFiresAfterS))),
      falseFirings: guards.filter((g) => g.category === 'healthy' && g.alertFiresAfterS !== undefined).length,
    },
    verdict: {
      expectedStalls: stallGuards.length,
      stalled: stallGuards.filter((g) => g.stalled).length,
      missedStalls: stallGuards.filter((g) => !g.stalled).map((g) => g.name),
      unexpectedStalls: guards.filter((g) => g.category === 'healthy' && g.stalled).map((g) => g.name),
      suspectHealthy: guards.filter((g) => g.category === 'healthy' && g.suspect).map((g) => g.name),
      undos: fleet.s3.sum('rollout_guard_undos_total') - m.idle.s1.sum('rollout_guard_undos_total'),
      singleFalse: single.singleFalse,
      operatorExitCode: null,
      retriedScrapes: [],
    },
    podCache: {
      lingerMs: p.podCacheLingerMs,
      idleOne: m.idle.idleOne,
      idleAll: m.steady.idleAll,
      single: {
        peak: single.peak,
        rollSeconds: secs(single.tSDone - single.tS),
        ...(single.released !== undefined ? { releasedAfterS: secs(single.released - single.tSDone) } : {}),
        statusWrites: single.statusWrites,
        requests: single.requests,
        requestsTotal: Object.values(single.requests).reduce((a, v) => a + v, 0),
      },
      fleet: { peak: m.sampler.peak(fleet.t0, fleet.tEnd) },
    },
    guards,
  };
}

/** The first explanations of the fleet-wide rollout (one per failing guard) and of the waves after it. */
function explanationResult(guards: readonly GuardResult[], m: Measured): SizeResult['explanation'] {
  const { waves } = m;
  const part = (p: string) => histogramSummary(histogramDelta(m.single.s2f, m.wavesEnd, 'rollout_guard_explanation_seconds', { part: p }));
  const wave = (f: (s: WaveSample) => number | undefined) => waves.samples.map(f).filter((v): v is number => v !== undefined);
  const both = (g: (r: GuardResult) => number | undefined, w: (s: WaveSample) => number | undefined) =>
    rSum(summarize([...stallValues(guards, g), ...wave(w)]));
  return {
    fromPodS: both(
      (g) => g.explanationFromPodS,
      (s) => s.fromPodS,
    ),
    fromFailureS: both(
      (g) => g.explanationFromFailureS,
      (s) => s.fromFailureS,
    ),
    nodeNamedFromFailureS: both(
      (g) => g.nodeNamedFromFailureS,
      (s) => s.nodeNamedFromFailureS,
    ),
    fleetFromFailureS: rSum(summarize(stallValues(guards, (g) => g.explanationFromFailureS))),
    wavesFromFailureS: rSum(summarize(wave((s) => s.fromFailureS))),
    wavesWatchedFromFailureS: rSum(summarize(wave((s) => (s.podsWatched === true ? s.fromFailureS : undefined)))),
    wavesUnwatchedFromFailureS: rSum(summarize(wave((s) => (s.podsWatched === false ? s.fromFailureS : undefined)))),
    waves: { count: waves.waves, seconds: waves.seconds, unexplained: waves.unexplained, samples: waves.samples },
    operator: { fromEvent: part('fromEvent'), queue: part('queue'), pass: part('pass'), write: part('write'), total: part('total') },
  };
}

/** Enough explanation waves (bench/waves.ts) for p.minExplanations samples with the fleet-wide rollout's. */
async function runWaves(run: SizeRun, obs: Observer, fleet: FleetRollout, guards: readonly GuardResult[]): Promise<WavesResult> {
  const { p, ns, pool, names, catOf, op } = run;
  const failing = names.flatMap((name) => {
    const category = catOf.get(name)!;
    return category === 'healthy' ? [] : [{ name, category }];
  });
  const have = stallValues(guards, (g) => g.explanationFromFailureS).length;
  const waves = wavesNeeded(p.minExplanations, have, failing.length);
  if (waves === 0) return { waves: 0, samples: [], unexplained: [], seconds: [] };
  const result = await explanationWaves(
    {
      failing,
      obs,
      v1Hash: fleet.v1Hash,
      log: run.ctx.log,
      timeoutMs: 120_000 + p.nodes * 100,
      ...(op ? { podsWatched: async () => podsWatched(await op.scrape(), ns) } : {}),
      apply: async (version, which) => {
        await run.ctx.kubectl(['apply', '-f', '-'], { input: list(which.map((n) => dsManifest(ns, n, pool, p, version, catOf.get(n)!))) });
      },
    },
    waves,
  );
  run.phase('waves');
  return result;
}

/** The operator's API requests in each window, and its status writes per guard. */
function apiResult(run: SizeRun, m: Measured): SizeResult['api'] {
  const { s0 } = m;
  const { s1 } = m.idle;
  const { s2 } = m.steady;
  const { s2f } = m.single;
  const { s3 } = m.fleet;
  const steady = requestDelta(s1, s2);
  const rollout = requestDelta(s2f, s3);
  const writes = (c: Category) => rSum(summarize(m.guards.filter((g) => g.category === c).map((g) => g.statusWrites)));
  const totalWrites = m.guards.reduce((a, g) => a + g.statusWrites, 0);
  const totalChanges = m.guards.reduce((a, g) => a + g.targetChanges, 0);
  return {
    startup: requestDelta(new Scrape([], s0.at), s0),
    setup: requestDelta(s0, s1),
    steady,
    steadySeconds: secs(s2.at - s1.at),
    steadyNonWatch: nonWatch(steady),
    rollout,
    rolloutSeconds: secs(s3.at - s2f.at),
    rolloutTotal: Object.values(rollout).reduce((a, v) => a + v, 0),
    watchesOpened: s3.sum('rollout_guard_api_requests_total', { verb: 'WATCH' }),
    watchEarlyEnds: s3.sum('rollout_guard_informer_watch_early_ends_total'),
    statusWritesPerGuard: {
      operatorCounterMean: round(
        (s3.sum('rollout_guard_status_writes_total') - s2f.sum('rollout_guard_status_writes_total')) / run.names.length,
        2,
      )!,
      byCategory: { healthy: writes('healthy'), broken: writes('broken'), exhausted: writes('exhausted') },
    },
    writesPerTargetChange: round(totalChanges > 0 ? totalWrites / totalChanges : 0, 3)!,
    noopStatusPatches: (rollout['PATCH rolloutguards/status'] ?? 0) - totalWrites,
  };
}

/** What the operator cost: memory, its caches, CPU, reconcile time and queue depth. */
function costResult(m: Measured): SizeResult['cost'] {
  const { s0, mem0, fp0, sampler } = m;
  const { s1, mem1, fp1 } = m.idle;
  const { s2 } = m.steady;
  const { s2f } = m.single;
  const { s3, a3, hwm, t0, tEnd } = m.fleet;
  const serverHist = histogramDelta(m.single.a2f, a3, 'apiserver_request_duration_seconds', {
    verb: 'PATCH',
    resource: 'rolloutguards',
    subresource: 'status',
  });
  const recHist = histogramDelta(s2f, s3, 'rollout_guard_reconcile_duration_seconds');
  const waitHist = histogramDelta(s2f, s3, 'rollout_guard_queue_wait_seconds');
  const patchHist = histogramDelta(s2f, s3, 'rollout_guard_api_request_duration_seconds', {
    verb: 'PATCH',
    resource: 'rolloutguards/status',
  });
  const cpu = (a: Scrape, b: Scrape) => round(b.sum('process_cpu_seconds_total') - a.sum('process_cpu_seconds_total'), 2)!;
  const heaps = sampler.samples.map((s) => s.heap);
  return {
    rssMiB: { nodesOnly: mib(mem0.rss), withPods: mib(mem1.rss), peak: mib(hwm) },
    cache: {
      nodesOnlyKiB: round(fp0.bytes / 1024, 1)!,
      withPodsKiB: round(fp1.bytes / 1024, 1)!,
      bytesPerNode: fp1.objects.nodes?.perObject ?? 0,
      bytesPerPod: fp1.objects.pods?.perObject ?? 0,
      ...(fp1.fullPodBytes !== undefined ? { fullPodBytes: fp1.fullPodBytes } : {}),
      objects: fp1.objects,
    },
    heapUsedMiB: {
      nodesOnly: mib(s0.sum('nodejs_heap_size_used_bytes')),
      withPods: mib(s1.sum('nodejs_heap_size_used_bytes')),
      max: mib(Math.max(0, ...heaps)),
    },
    cpuSeconds: {
      startup: round(s0.sum('process_cpu_seconds_total'), 2)!,
      setup: cpu(s0, s1),
      steady: cpu(s1, s2),
      rollout: cpu(s2f, s3),
      total: round(s3.sum('process_cpu_seconds_total'), 2)!,
    },
    reconcile: histogramSummary(recHist),
    ...(waitHist.count > 0 ? { queueWait: histogramSummary(waitHist) } : {}),
    ...(patchHist.count > 0 ? { statusPatch: histogramSummary(patchHist) } : {}),
    ...(serverHist.count > 0 ? { statusPatchServer: histogramSummary(serverHist) } : {}),
    eventLoopLag: sampler.eventLoopLag(t0, tEnd),
    maxQueueDepth: sampler.maxQueue(t0, tEnd),
  };
}

/**
 * Deletes the namespace (the namespace controller removes the DaemonSets and pods, kwok finishes the
 * pod deletions while the nodes still exist), then the nodes, then force-deletes any pod still bound to
 * one of them (nothing else would: there is no kubelet and no pod GC here).
 */
export async function cleanup(
  kubectl: Kubectl,
  client: ApiClient,
  ns: string,
  pools: ReadonlyArray<{ pool: string; nodes: readonly string[] }>,
  log: (l: string) => void,
): Promise<void> {
  const t = Date.now();
  const r = await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=true', '--timeout=300s'], { allowFail: true });
  if (r.code !== 0) log(`  cleanup: namespace ${ns} not gone yet: ${r.stderr.trim()}`);
  log(`  cleanup: namespace deleted in ${secs(Date.now() - t)} s`);
  // By label, without kubectl's per-object wait (which polls the nodes one by one), then one poll for all.
  const used = pools.filter((x) => x.nodes.length > 0);
  if (used.length > 0) {
    const selector = `${POOL_LABEL} in (${used.map((x) => x.pool).join(',')})`;
    await kubectl(['delete', 'nodes', '-l', selector, '--wait=false'], { allowFail: true });
    await waitFor(async () => (await kubectl(['get', 'nodes', '-l', selector, '-o', 'name'], { allowFail: true })).stdout.trim() === '', {
      timeoutMs: 120_000,
      intervalMs: 500,
      describe: `nodes of pool(s) ${used.map((x) => x.pool).join(', ')} deleted`,
    }).catch((e: unknown) => log(`  cleanup: ${e instanceof Error ? e.message : String(e)}`));
  }
  const mine = new Set(used.flatMap((x) => x.nodes));
  const pods = await client
    .request<{ items: Array<{ metadata: { name: string; namespace: string }; spec?: { nodeName?: string } }> }>('GET', '/api/v1/pods')
    .catch(() => ({ items: [] as Array<{ metadata: { name: string; namespace: string }; spec?: { nodeName?: string } }> }));
  for (const pod of pods.items.filter((x) => x.spec?.nodeName && mine.has(x.spec.nodeName))) {
    await kubectl(
      [
        'delete',
        'pod',
        pod.metadata.name,
        '-n',
        pod.metadata.namespace,
        '--grace-period=0',
        '--force',
        '--ignore-not-found',
        '--wait=false',
      ],
      { allowFail: true },
    );
  }
}
