/**
 * Explanation waves: after the fleet-wide rollout, the failing DaemonSets (broken and exhausted) are
 * restored to v1 and rolled to a new failing revision again, wave after wave, until the size has at
 * least `minSamples` first explanations (bench/explanation.ts). One fleet-wide rollout gives one sample
 * per failing DaemonSet, 12 at 20 DaemonSets: too few to see a p99. A wave keeps each DaemonSet's own
 * maxUnavailable, so each break replaces as many pods per DaemonSet as the fleet-wide rollout did,
 * while the healthy DaemonSets stay put (and their guards stay watched for false verdicts).
 *
 * @module
 */
import { waitFor } from '../cluster/wait.js';
import { explanationOf, type Explanation, type FailingCategory } from './explanation.js';
import type { Observer } from './observer.js';
import type { Scrape } from './stats.js';

/** One wave's first explanation of one DaemonSet. */
export interface WaveSample extends Explanation {
  guard: string;
  category: FailingCategory;
  /** 1, 2, …: the wave (the fleet-wide rollout is wave 0 and is reported apart). */
  wave: number;
  /**
   * Whether the operator still watched the DaemonSet's pods when the break was applied (its watch had
   * not yet ended the linger after the restore). When it did not, the explanation waits for a new pod
   * watch's first list, as it does for a DaemonSet that was idle; absent when not read.
   */
  podsWatched?: boolean;
}

export interface WaveDeps {
  /** The failing DaemonSets (same names as their guards), with their category. */
  failing: ReadonlyArray<{ name: string; category: FailingCategory }>;
  obs: Observer;
  /** Applies version `version` of the DaemonSets named (1: the healthy v1; ≥ 2: each one's failing kind). */
  apply: (version: number, names: readonly string[]) => Promise<void>;
  /** The v1 pod-template hash of each DaemonSet. */
  v1Hash: ReadonlyMap<string, string>;
  log: (line: string) => void;
  /** Allowance for one restore or one break to settle, ms. */
  timeoutMs: number;
  /** The DaemonSets whose pods the operator watches now (read from its /metrics), if the bench can tell. */
  podsWatched?: () => Promise<ReadonlySet<string>>;
}

export interface WavesResult {
  waves: number;
  samples: WaveSample[];
  /** Guards a wave never saw explained within the allowance: a missed explanation, not a skipped one. */
  unexplained: Array<{ guard: string; wave: number }>;
  /** Seconds each wave took, restore and break. */
  seconds: number[];
}

/** The waves needed for `minSamples` explanations when the fleet-wide rollout already gave `have`. */
export function wavesNeeded(minSamples: number, have: number, perWave: number): number {
  if (perWave <= 0 || have >= minSamples) return 0;
  return Math.ceil((minSamples - have) / perWave);
}

/**
 * The DaemonSets of namespace `ns` whose pods the operator watches, from a scrape of its /metrics: each
 * pod watch has its own rollout_guard_informer_objects series, labelled with its DaemonSet, while it runs.
 */
export function podsWatched(scrape: Scrape, ns: string): Set<string> {
  return new Set(
    scrape
      .all('rollout_guard_informer_objects')
      .filter((x) => x.labels.resource === 'pods' && x.labels.namespace === ns && x.labels.daemonset)
      .map((x) => x.labels.daemonset!),
  );
}

/** The version a wave's break applies: distinct per wave, so each break is a new revision. */
export const waveVersion = (wave: number): number => 10 + wave;

export async function explanationWaves(d: WaveDeps, waves: number): Promise<WavesResult> {
  const out: WavesResult = { waves, samples: [], unexplained: [], seconds: [] };
  const names = d.failing.map((f) => f.name);
  for (let w = 1; w <= waves; w++) {
    const start = Date.now();
    // Restore: every failing guard Healthy again on v1, its rollout completed after the restore.
    await d.apply(1, names);
    await waitFor(
      () =>
        names.every((n) => {
          const g = d.obs.guard(n);
          return g?.state === 'Healthy' && g.completedAt !== undefined && Date.parse(g.completedAt) >= start - 1000;
        }),
      { timeoutMs: d.timeoutMs, intervalMs: 250, describe: `wave ${w}: every failing DaemonSet restored to v1 and Healthy` },
    );
    // Break: a new failing revision; the wave ends when each guard has named a failing node and the cause.
    const watched = await d.podsWatched?.();
    const tBreak = Date.now();
    await d.apply(waveVersion(w), names);
    const explain = (f: { name: string; category: FailingCategory }): Explanation =>
      explanationOf(d.obs, f.name, f.category, tBreak, d.v1Hash.get(f.name));
    await waitFor(() => d.failing.every((f) => explain(f).fromFailureS !== undefined), {
      timeoutMs: d.timeoutMs,
      intervalMs: 250,
      describe: `wave ${w}: every failing DaemonSet explained`,
    }).catch(() => undefined); // a guard never explained is recorded below as missed
    for (const f of d.failing) {
      const e = explain(f);
      if (e.fromFailureS === undefined) out.unexplained.push({ guard: f.name, wave: w });
      out.samples.push({ guard: f.name, category: f.category, wave: w, ...e, ...(watched ? { podsWatched: watched.has(f.name) } : {}) });
    }
    out.seconds.push(Math.round((Date.now() - start) / 100) / 10);
    const got = out.samples.filter((s) => s.wave === w && s.fromFailureS !== undefined).map((s) => s.fromFailureS!);
    d.log(`  wave ${w}/${waves}: ${got.length}/${d.failing.length} explained, max ${Math.max(...got, 0)} s, ${out.seconds.at(-1)} s`);
  }
  return out;
}
