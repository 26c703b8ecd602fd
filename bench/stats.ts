/**
 * Small statistics and Prometheus-text helpers for the benchmark: percentiles of raw samples, quantiles
 * of histogram deltas (the way PromQL's histogram_quantile interpolates), and deltas of counters between
 * two /metrics scrapes.
 */

/** p-th percentile (0..100) of raw samples, nearest-rank; undefined for no samples. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** p50/p99/max/mean/count of raw samples. */
export interface Summary {
  count: number;
  p50?: number;
  p99?: number;
  max?: number;
  mean?: number;
}

export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) return { count: 0 };
  // No spread of the values: a watch's deliveries at 5,000 nodes are hundreds of thousands, past the
  // arguments a call can take.
  return {
    count: values.length,
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    max: values.reduce((a, b) => (b > a ? b : a), Number.NEGATIVE_INFINITY),
    mean: values.reduce((a, b) => a + b, 0) / values.length,
  };
}

/** One parsed sample of the Prometheus text format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text exposition format (what prom-client serves); comments are skipped. */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[4]) });
  }
  return out;
}

/** A scrape of /metrics, indexed for lookups. */
export class Scrape {
  constructor(
    readonly samples: readonly Sample[],
    readonly at: number,
  ) {}

  /** Sum of every sample named `name` whose labels include `match`. */
  sum(name: string, match: Record<string, string> = {}): number {
    let s = 0;
    for (const x of this.samples) {
      if (x.name !== name) continue;
      if (Object.entries(match).every(([k, v]) => x.labels[k] === v)) s += x.value;
    }
    return s;
  }

  /** Samples named `name`. */
  all(name: string): Sample[] {
    return this.samples.filter((x) => x.name === name);
  }
}

/** API requests by `VERB resource` between two scrapes, zero entries dropped. */
export function requestDelta(before: Scrape, after: Scrape): Record<string, number> {
  // Successful requests are keyed `VERB resource`; others keep their code (`PATCH rolloutguards/status 409`).
  const key = (s: Sample) => {
    const code = s.labels.code ?? '';
    return `${s.labels.verb ?? '?'} ${s.labels.resource ?? '?'}${/^2\d\d$/.test(code) ? '' : ` ${code}`}`;
  };
  const acc = new Map<string, number>();
  for (const s of after.all('rollout_guard_api_requests_total')) acc.set(key(s), (acc.get(key(s)) ?? 0) + s.value);
  for (const s of before.all('rollout_guard_api_requests_total')) acc.set(key(s), (acc.get(key(s)) ?? 0) - s.value);
  return Object.fromEntries([...acc].filter(([, v]) => v !== 0).sort(([a], [b]) => a.localeCompare(b)));
}

/** Cumulative bucket counts of a histogram between two scrapes: [upper bound, count ≤ bound]. */
export function histogramDelta(
  before: Scrape | undefined,
  after: Scrape,
  name: string,
  match: Record<string, string> = {},
): { buckets: Array<[number, number]>; count: number; sum: number } {
  const matches = (labels: Record<string, string>) => Object.entries(match).every(([k, v]) => labels[k] === v);
  const read = (s: Scrape | undefined) => {
    const m = new Map<number, number>();
    for (const x of s?.all(`${name}_bucket`) ?? []) {
      if (!matches(x.labels)) continue;
      const le = x.labels.le === '+Inf' ? Infinity : Number(x.labels.le);
      m.set(le, (m.get(le) ?? 0) + x.value);
    }
    return m;
  };
  const a = read(before);
  const b = read(after);
  const buckets: Array<[number, number]> = [...b]
    .map(([le, v]) => [le, v - (a.get(le) ?? 0)] as [number, number])
    .sort((x, y) => x[0] - y[0]);
  return {
    buckets,
    count: after.sum(`${name}_count`, match) - (before?.sum(`${name}_count`, match) ?? 0),
    sum: after.sum(`${name}_sum`, match) - (before?.sum(`${name}_sum`, match) ?? 0),
  };
}

/**
 * The q-quantile (0..1) of a cumulative histogram, interpolated linearly inside the bucket as PromQL's
 * histogram_quantile does; undefined for an empty histogram. Its precision is the bucket width.
 */
export function histogramQuantile(q: number, buckets: ReadonlyArray<[number, number]>): number | undefined {
  const total = buckets.at(-1)?.[1] ?? 0;
  if (total === 0) return undefined;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const [le, count] of buckets) {
    if (count >= rank) {
      if (le === Infinity) return prevLe; // as PromQL: the highest finite bound
      return prevLe + ((le - prevLe) * (rank - prevCount)) / Math.max(1, count - prevCount);
    }
    prevLe = le;
    prevCount = count;
  }
  return prevLe;
}

/** Rounds for display and JSON (keeps results files readable). */
export function round(v: number | undefined, digits = 3): number | undefined {
  if (v === undefined || !Number.isFinite(v)) return v;
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

/** p50 and p99 of a histogram's delta in ms, and the bucket the p99 falls in. */
export type HistogramSummary = { count: number; p50Ms?: number; p99Ms?: number; bucketBoundMs?: number };

export function histogramSummary(h: ReturnType<typeof histogramDelta>): HistogramSummary {
  return {
    count: h.count,
    p50Ms: round((histogramQuantile(0.5, h.buckets) ?? NaN) * 1000, 1),
    p99Ms: round((histogramQuantile(0.99, h.buckets) ?? NaN) * 1000, 1),
    // The bucket the p99 falls in: the histogram cannot say more precisely than this.
    bucketBoundMs: round((h.buckets.find(([, c]) => c >= 0.99 * h.count)?.[0] ?? NaN) * 1000, 1),
  };
}

/** A summary with its figures rounded to the millisecond, as the results files keep them. */
export function roundSummary(v: Summary): Summary {
  return { count: v.count, p50: round(v.p50), p99: round(v.p99), max: round(v.max), mean: round(v.mean) };
}

/** The requests of a window (by `VERB resource`) that were not watches: in the steady window, requests that carried no information. */
export function nonWatch(requests: Readonly<Record<string, number>>): number {
  return Object.entries(requests)
    .filter(([k]) => !k.startsWith('WATCH '))
    .reduce((a, [, v]) => a + v, 0);
}
