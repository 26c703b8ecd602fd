/**
 * The explanation's tail, accounted for: every first explanation over 1 s split into its parts
 * (bench/explanationParts.ts), the parts' spread over all samples, how far behind each watch ran, and why
 * the operator's pod watches were opened and ended while the size ran.
 *
 * @module
 */
import type { Explanation, FailingCategory } from './explanation.js';
import { PART_NAMES, largestPart, partsOf, type ExplanationParts, type PartName } from './explanationParts.js';
import type { OperatorLog, PodWatchChange } from './operatorLog.js';
import { histogramDelta, histogramSummary, roundSummary, summarize, type HistogramSummary, type Scrape, type Summary } from './stats.js';

/** A sample over {@link SLOW_S}, with its parts where the operator's write was found. */
export interface SlowSample {
  guard: string;
  category: FailingCategory;
  /** 0: the fleet-wide rollout; 1, 2, …: the waves. */
  wave: number;
  fromFailureS: number;
  pod?: string;
  parts?: ExplanationParts;
  largest?: PartName;
}

export interface TailResult {
  /** Samples with their parts found / all samples. */
  accounted: number;
  samples: number;
  /** Every sample over 1 s. */
  slow: SlowSample[];
  /**
   * The {@link SLOWEST} slowest samples, whatever their time: over at most 100 samples the p99 is the
   * slowest one, so these are what the p99 rests on.
   */
  slowest: SlowSample[];
  /** Each part over every accounted sample, in seconds. */
  parts: Record<PartName | 'benchWatchLag' | 'operatorWatchLag' | 'operatorEventLag', Summary>;
  /**
   * The operator's rollout_guard_watch_delivery_seconds by informer, over the fleet-wide rollout and the
   * waves, with how many events arrived more than 2 s after the write (the stamp reads 0 to 1 s high).
   */
  watchDelivery: Record<string, HistogramSummary & { overTwoSeconds: number }>;
  /** The bench's own pod watch, the same way: seconds behind, over the same window. */
  benchWatchDelivery: Summary;
  /** The operator's pod watches over the size: how often each thing happened, and why a watch ended. */
  podWatches: Record<PodWatchChange['what'], number> & {
    endedWhy: Record<string, number>;
    /** The target whose pods were watched anew most often, and how often. */
    mostOpened?: { target: string; opened: number };
    /** The ended watches whose events arrived furthest behind their writes: the five slowest. */
    slowest: Array<{ target: string; at: number; maxLagMs: number; events: number }>;
  };
}

/** A first explanation slower than this is accounted for part by part. */
export const SLOW_S = 1;

/** How many of the slowest samples are accounted for part by part, however fast. */
export const SLOWEST = 3;

export interface TailSample extends Explanation {
  guard: string;
  category: FailingCategory;
  wave: number;
}

export function tailResult(
  ns: string,
  samples: readonly TailSample[],
  log: OperatorLog | undefined,
  window: { from: Scrape; to: Scrape; benchLags: ReadonlyArray<{ t: number; lagMs: number }> },
): TailResult {
  const withParts = samples.map((x) => {
    const m = x.moments;
    const found = m && log ? log.writeFor(`${ns}/${x.guard}`, m.explainedRv, m.explainedAt) : undefined;
    const parts = m && found ? partsOf(m, found.write, found.same) : undefined;
    return { x, parts };
  });
  const accounted = withParts.filter((w) => w.parts !== undefined);
  const timed = withParts.filter(({ x }) => x.fromFailureS !== undefined);
  const asSlow = ({ x, parts }: (typeof withParts)[number]): SlowSample => ({
    guard: x.guard,
    category: x.category,
    wave: x.wave,
    fromFailureS: x.fromFailureS!,
    ...(x.moments ? { pod: x.moments.pod } : {}),
    ...(parts ? { parts, largest: largestPart(parts) } : {}),
  });
  const slow = timed.filter(({ x }) => x.fromFailureS! > SLOW_S).map(asSlow);
  const slowest = [...timed]
    .sort((a, b) => b.x.fromFailureS! - a.x.fromFailureS!)
    .slice(0, SLOWEST)
    .map(asSlow);
  const partSummary = (k: keyof ExplanationParts): Summary =>
    roundSummary(summarize(accounted.map((w) => w.parts![k]).filter((v): v is number => v !== undefined)));
  const parts = Object.fromEntries(
    [...PART_NAMES, 'benchWatchLag' as const, 'operatorWatchLag' as const, 'operatorEventLag' as const].map((k) => [k, partSummary(k)]),
  ) as TailResult['parts'];
  const { from, to } = window;
  const resources = [...new Set(to.all('rollout_guard_watch_delivery_seconds_count').map((x) => x.labels.resource ?? ''))];
  const watchDelivery = Object.fromEntries(
    resources.map((resource) => {
      const h = histogramDelta(from, to, 'rollout_guard_watch_delivery_seconds', { resource });
      const atMostTwo = h.buckets.find(([le]) => le === 2)?.[1] ?? 0;
      return [resource, { ...histogramSummary(h), overTwoSeconds: h.count - atMostTwo }];
    }),
  );
  const benchLags = window.benchLags.filter((l) => l.t >= from.at && l.t <= to.at).map((l) => l.lagMs / 1000);
  const changes = log?.podWatches.filter((c) => c.target.startsWith(`${ns}/`)) ?? [];
  const count = (what: PodWatchChange['what']): number => changes.filter((c) => c.what === what).length;
  const endedWhy: Record<string, number> = {};
  for (const c of changes) if (c.what === 'ended') endedWhy[c.why ?? '?'] = (endedWhy[c.why ?? '?'] ?? 0) + 1;
  const opened = new Map<string, number>();
  for (const c of changes) if (c.what === 'opened') opened.set(c.target, (opened.get(c.target) ?? 0) + 1);
  const most = [...opened].sort((a, b) => b[1] - a[1])[0];
  return {
    accounted: accounted.length,
    samples: samples.length,
    slow,
    slowest,
    parts,
    watchDelivery,
    benchWatchDelivery: roundSummary(summarize(benchLags)),
    podWatches: {
      opened: count('opened'),
      ended: count('ended'),
      endedEarly: count('endedEarly'),
      expired: count('expired'),
      relisted: count('relisted'),
      failed: count('failed'),
      endedWhy,
      ...(most ? { mostOpened: { target: most[0], opened: most[1] } } : {}),
      slowest: changes
        .filter((c) => c.what === 'ended' && c.maxLagMs !== undefined)
        .sort((a, b) => b.maxLagMs! - a.maxLagMs!)
        .slice(0, 5)
        .map((c) => ({ target: c.target, at: c.at, maxLagMs: c.maxLagMs!, events: c.events ?? 0 })),
    },
  };
}
