/**
 * The StatefulSet size of the bench (`--statefulsets 100x5`): the second kind's own figures, measured the
 * way the DaemonSet sizes are (bench/scenario.ts), on a kwok node pool of its own.
 *
 * 1. S StatefulSets of R replicas (OrderedReady, RollingUpdate) roll out v1, then a guard each, and the
 *    operator idles through a steady window with no rollout;
 * 2. every StatefulSet rolls at once: 40 % to a `broken` image, 20 % to a CPU request above a node's
 *    allocatable, the rest healthy. The controller replaces the highest ordinal first and waits for it
 *    to be Ready, so each failing StatefulSet stops at one ordinal: one first explanation each.
 *
 * It measures what the issue asks of each size: the first explanation (from the bench's watch seeing the
 * new pod fail to its watch seeing the status that names that ordinal and the cause), every sample over
 * 1 s part by part (bench/tail.ts), detection, false verdicts (a healthy rollout Suspect or Stalled, an
 * undo), the requests of the steady window, the status PATCH as the operator and the API server timed it,
 * and the operator's memory.
 *
 * @module
 */
import { loadavg } from 'node:os';
import { rolloutGuardManifest, statefulSetManifest, toleration } from '../cluster/manifests.js';
import { POOL_LABEL } from '../cluster/nodes.js';
import { waitFor } from '../cluster/wait.js';
import { EXPECTED, explanationOf, unexplainedWhy, type FailingCategory } from './explanation.js';
import { Observer, statefulSetRolledOut } from './observer.js';
import { BenchOperator } from './operator.js';
import {
  BENCH_TAINT,
  apiServerScrape,
  categories,
  cleanup,
  list,
  mib,
  quiet,
  revisionPod,
  secs,
  type Category,
  type Ctx,
  createSizePool,
} from './scenario.js';
import {
  histogramDelta,
  histogramSummary,
  nonWatch,
  requestDelta,
  round,
  roundSummary,
  summarize,
  type HistogramSummary,
  type Scrape,
  type Summary,
} from './stats.js';
import { tailResult, type TailResult, type TailSample } from './tail.js';

/** One StatefulSet size. */
export interface StatefulSetParams {
  statefulSets: number;
  replicas: number;
  brokenFraction: number;
  exhaustedFraction: number;
  suspectSeconds: number;
  deadlineSeconds: number;
  steadySeconds: number;
  /** Allocatable CPU of a bench node; the exhausted revision requests twice this. */
  nodeCpu: number;
}

export interface StatefulSetSizeResult {
  statefulSets: number;
  replicas: number;
  pods: number;
  nodes: number;
  categories: Record<Category, number>;
  phases: Record<string, number>;
  machine: { loadavg1Max: number };
  verdict: {
    expectedStalls: number;
    stalled: number;
    /** Failing StatefulSets never Stalled, or Stalled with another cause. */
    missed: string[];
    wrongCause: string[];
    /** Failing StatefulSets without a first explanation sample, each with what the bench saw of it. */
    unexplained: string[];
    /** Healthy rollouts ever Suspect or Stalled: each a false verdict. */
    suspectHealthy: string[];
    stalledHealthy: string[];
    undos: number;
  };
  /** Deadline → the Stalled condition's lastTransitionTime, seconds. */
  detection: Summary;
  explanation: {
    fromFailureS: Summary;
    /** The operator's rollout_guard_explanation_seconds over the rollout, by part. */
    operator: Record<'fromEvent' | 'queue' | 'pass' | 'write' | 'total', HistogramSummary>;
  };
  tail: TailResult;
  api: { steadySeconds: number; steady: Record<string, number>; steadyNonWatch: number; rolloutTotal: number };
  cost: {
    rssMiB: { idle: number; peak: number };
    cpuSeconds: { rollout: number };
    statusPatch: HistogramSummary;
    statusPatchServer: HistogramSummary;
  };
}

/** Pods per node the pool is sized for (a node allows 110). */
const PODS_PER_NODE = 25;

function stsManifest(
  ns: string,
  name: string,
  pool: string,
  p: StatefulSetParams,
  version: number,
  cat: Category,
): Record<string, unknown> {
  const { image, cpu } = revisionPod('registry.local/bench-store', version, cat, p.nodeCpu);
  return statefulSetManifest({
    name,
    namespace: ns,
    replicas: p.replicas,
    nodeSelector: { [POOL_LABEL]: pool },
    tolerations: [toleration(BENCH_TAINT)],
    container: { name: 'store', image, requests: { cpu, memory: '16Mi' } },
  });
}

/** What one size's run knows of itself: its namespace, its pool, its StatefulSets and their categories. */
interface Size {
  ns: string;
  pool: string;
  nodeNames: string[];
  names: string[];
  cats: Category[];
  catOf: Map<string, Category>;
}

function sizeOf(p: StatefulSetParams, tag: string): Size {
  const suffix = `${tag}-${Math.random().toString(36).slice(2, 6)}`;
  const nodes = Math.max(4, Math.ceil((p.statefulSets * p.replicas) / PODS_PER_NODE));
  const pool = `bench-sts-${suffix}`;
  const cats = categories({ daemonsets: p.statefulSets, brokenFraction: p.brokenFraction, exhaustedFraction: p.exhaustedFraction });
  const names = cats.map((_, i) => `store-${String(i + 1).padStart(3, '0')}`);
  return {
    ns: `bench-sts-${suffix}`,
    pool,
    nodeNames: Array.from({ length: nodes }, (_, i) => `${pool}-${i + 1}`),
    names,
    cats,
    catOf: new Map(names.map((n, i) => [n, cats[i]!])),
  };
}

/** v1: every StatefulSet ready and on one revision, as the bench's watch sees them. */
async function rollOutV1(ctx: Ctx, z: Size, p: StatefulSetParams, o: Observer): Promise<void> {
  await ctx.kubectl(['apply', '-f', '-'], { input: list(z.names.map((n) => stsManifest(z.ns, n, z.pool, p, 1, z.catOf.get(n)!))) });
  await waitFor(() => z.names.every((n) => statefulSetRolledOut(o.statefulSet(n))), {
    timeoutMs: 120_000 + p.statefulSets * p.replicas * 200,
    intervalMs: 250,
    describe: `${z.names.length} StatefulSets of ${p.replicas} ready on v1`,
  });
}

/** A guard each, every one Healthy, and the operator quiet. */
async function guardAll(ctx: Ctx, z: Size, p: StatefulSetParams, o: Observer): Promise<void> {
  const spec = { suspectAfterSeconds: p.suspectSeconds, progressDeadlineSeconds: p.deadlineSeconds, bakeSeconds: 0 };
  await ctx.kubectl(['apply', '-f', '-'], {
    input: list(z.names.map((n) => rolloutGuardManifest({ name: n, namespace: z.ns, kind: 'StatefulSet', spec }))),
  });
  await waitFor(() => z.names.every((n) => o.guard(n)?.state === 'Healthy'), {
    timeoutMs: 120_000,
    intervalMs: 250,
    describe: `${z.names.length} StatefulSet guards Healthy`,
  });
  await quiet(o, 'guards Healthy');
}

/** Every StatefulSet rolls at once; waits until each healthy one finished and each failing one Stalled. Returns when it began. */
async function rollOutV2(ctx: Ctx, z: Size, p: StatefulSetParams, o: Observer): Promise<number> {
  const t0 = Date.now();
  await ctx.kubectl(['apply', '-f', '-'], { input: list(z.names.map((n) => stsManifest(z.ns, n, z.pool, p, 2, z.catOf.get(n)!))) });
  const settled = (n: string): boolean => {
    const g = o.guard(n);
    if (z.catOf.get(n) !== 'healthy') return g?.state === 'Stalled';
    return g?.state === 'Healthy' && g.completedAt !== undefined && Date.parse(g.completedAt) >= t0;
  };
  await waitFor(() => z.names.every(settled), {
    timeoutMs: 180_000 + p.deadlineSeconds * 1000 + p.statefulSets * p.replicas * 100,
    intervalMs: 500,
    describe: 'every healthy StatefulSet rolled out on v2 and every failing one Stalled',
  }).catch((e: unknown) => ctx.log(`  ${e instanceof Error ? e.message : String(e)}`)); // what did not settle is a miss below
  return t0;
}

/** Each guard's history since the rollout, judged: stalls missed or with the wrong cause, false verdicts, detection, explanations. */
function judge(z: Size, p: StatefulSetParams, o: Observer, t0: number, v1Hash: ReadonlyMap<string, string>) {
  const samples: TailSample[] = [];
  const missed: string[] = [];
  const wrongCause: string[] = [];
  const unexplained: string[] = [];
  const detection: number[] = [];
  const suspectHealthy: string[] = [];
  const stalledHealthy: string[] = [];
  let stalledCount = 0;
  for (const n of z.names) {
    const cat = z.catOf.get(n)!;
    const hist = (o.guardLog.get(n) ?? []).filter((g) => g.t >= t0);
    if (cat === 'healthy') {
      if (hist.some((g) => g.state === 'Suspect')) suspectHealthy.push(n);
      if (hist.some((g) => g.state === 'Stalled')) stalledHealthy.push(n);
      continue;
    }
    const failing: FailingCategory = cat;
    const stalled = hist.find((g) => g.state === 'Stalled');
    if (!stalled) missed.push(n);
    else {
      stalledCount++;
      if (stalled.cause !== EXPECTED[failing].cause) wrongCause.push(`${n}: ${stalled.cause ?? 'none'}`);
    }
    if (stalled?.stalledSince && stalled.lastProgressAt)
      detection.push((Date.parse(stalled.stalledSince) - Date.parse(stalled.lastProgressAt) - p.deadlineSeconds * 1000) / 1000);
    const e = explanationOf(o, n, failing, t0, v1Hash.get(n));
    if (e.fromFailureS !== undefined) samples.push({ guard: n, category: failing, wave: 0, ...e });
    else unexplained.push(unexplainedWhy(o, n, failing, t0, v1Hash.get(n)));
  }
  return { samples, missed, wrongCause, unexplained, detection, suspectHealthy, stalledHealthy, stalledCount };
}

/** The operator's metrics at each end of the windows, the API server's around the rollout, and the memory. */
interface Readings {
  s1: Scrape;
  s2: Scrape;
  s3: Scrape;
  a2: Scrape;
  a3: Scrape;
  idle: { rss: number };
  peak: { hwm: number };
}

function sizeResult(
  z: Size,
  p: StatefulSetParams,
  m: Readings,
  verdicts: ReturnType<typeof judge>,
  tail: TailResult,
  phases: Record<string, number>,
  loads: number[],
): StatefulSetSizeResult {
  const { s1, s2, s3, a2, a3 } = m;
  const part = (x: string) => histogramSummary(histogramDelta(s2, s3, 'rollout_guard_explanation_seconds', { part: x }));
  const steady = requestDelta(s1, s2);
  const rollout = requestDelta(s2, s3);
  const { samples, stalledCount, detection, ...lists } = verdicts;
  return {
    statefulSets: p.statefulSets,
    replicas: p.replicas,
    pods: p.statefulSets * p.replicas,
    nodes: z.nodeNames.length,
    categories: {
      healthy: z.cats.filter((c) => c === 'healthy').length,
      broken: z.cats.filter((c) => c === 'broken').length,
      exhausted: z.cats.filter((c) => c === 'exhausted').length,
    },
    phases,
    machine: { loadavg1Max: round(Math.max(...loads), 2)! },
    verdict: {
      expectedStalls: z.cats.filter((c) => c !== 'healthy').length,
      stalled: stalledCount,
      ...lists,
      undos: s3.sum('rollout_guard_undos_total') - s1.sum('rollout_guard_undos_total'),
    },
    detection: roundSummary(summarize(detection)),
    explanation: {
      fromFailureS: roundSummary(summarize(samples.map((x) => x.fromFailureS!))),
      operator: { fromEvent: part('fromEvent'), queue: part('queue'), pass: part('pass'), write: part('write'), total: part('total') },
    },
    tail,
    api: {
      steadySeconds: secs(s2.at - s1.at),
      steady,
      steadyNonWatch: nonWatch(steady),
      rolloutTotal: Object.values(rollout).reduce((a, v) => a + v, 0),
    },
    cost: {
      rssMiB: { idle: mib(m.idle.rss), peak: mib(m.peak.hwm) },
      cpuSeconds: { rollout: round(s3.sum('process_cpu_seconds_total') - s2.sum('process_cpu_seconds_total'), 2)! },
      statusPatch: histogramSummary(
        histogramDelta(s2, s3, 'rollout_guard_api_request_duration_seconds', { verb: 'PATCH', resource: 'rolloutguards/status' }),
      ),
      statusPatchServer: histogramSummary(
        histogramDelta(a2, a3, 'apiserver_request_duration_seconds', { verb: 'PATCH', resource: 'rolloutguards', subresource: 'status' }),
      ),
    },
  };
}

/** Runs one StatefulSet size end to end, phase by phase, and always cleans up what it created. */
export async function runStatefulSetSize(ctx: Ctx, p: StatefulSetParams, tag: string): Promise<StatefulSetSizeResult> {
  const z = sizeOf(p, tag);
  const phases: Record<string, number> = {};
  const loads = [loadavg()[0] ?? 0];
  let mark = Date.now();
  const phase = (name: string): void => {
    phases[name] = secs(Date.now() - mark);
    ctx.log(`  ${name}: ${phases[name]} s`);
    mark = Date.now();
    loads.push(loadavg()[0] ?? 0);
  };
  let op: BenchOperator | undefined;
  let obs: Observer | undefined;
  try {
    await createSizePool(ctx.kubectl, { name: z.pool, nodeNames: z.nodeNames, nodeCpu: p.nodeCpu, ns: z.ns });
    phase('nodes');
    op = await BenchOperator.start(ctx.kubeconfig, [z.ns], ctx.operatorLogDir ? `${ctx.operatorLogDir}/operator-${z.ns}.log` : undefined);
    obs = new Observer(ctx.client, z.ns);
    await obs.start();
    phase('operatorStart');
    await rollOutV1(ctx, z, p, obs);
    phase('statefulSetsV1');
    await guardAll(ctx, z, p, obs);
    phase('guardsHealthy');

    const s1 = await op.scrape();
    const idle = await op.memory();
    await new Promise((r) => setTimeout(r, p.steadySeconds * 1000)); // the window measured, not a wait for a condition
    const s2 = await op.scrape();
    phase('steady');

    const o = obs;
    const v1Hash = new Map(z.names.map((n) => [n, [...o.podHashes(n)][0] ?? '']));
    const a2 = await apiServerScrape(ctx);
    const t0 = await rollOutV2(ctx, z, p, o);
    const s3 = await op.scrape();
    const a3 = await apiServerScrape(ctx);
    const peak = await op.memory();
    phase('rollout');

    const verdicts = judge(z, p, o, t0, v1Hash);
    const tail = tailResult(z.ns, verdicts.samples, op.log, { from: s2, to: s3, benchLags: o.podDeliveries });
    return sizeResult(z, p, { s1, s2, s3, a2, a3, idle, peak }, verdicts, tail, phases, loads);
  } finally {
    await obs?.stop();
    await op?.stop();
    await cleanup(ctx.kubectl, ctx.client, z.ns, [{ pool: z.pool, nodes: z.nodeNames }], ctx.log);
  }
}

/** `SxR` (StatefulSets × replicas) as a size. */
export function parseStatefulSetSize(spec: string): { statefulSets: number; replicas: number } {
  const m = /^(\d+)x(\d+)$/.exec(spec.trim());
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1)
    throw new Error(`--statefulsets: ${spec} is not SxR (StatefulSets × replicas, e.g. 100x5)`);
  return { statefulSets: Number(m[1]), replicas: Number(m[2]) };
}
