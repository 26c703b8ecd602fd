/**
 * When would the standard `KubeDaemonSetRolloutStuck` alert (kubernetes-mixin, apps_alerts.libsonnet)
 * first fire on a DaemonSet's recorded status timeline?
 *
 * ```
 * (
 *   (current_number_scheduled != desired_number_scheduled) or (number_misscheduled != 0)
 *   or (updated_number_scheduled != desired_number_scheduled) or (number_available != desired_number_scheduled)
 * ) and (
 *   changes(kube_daemonset_status_updated_number_scheduled[5m]) == 0
 * )
 * for: 15m
 * ```
 *
 * The timeline (every DaemonSet status the bench's watch saw) is sampled on a 1 s grid, i.e. an ideal
 * kube-state-metrics scraped every second and a rule evaluated every second. Real setups scrape every
 * 15–60 s and evaluate every 30–60 s, which only adds to the figure: it is a lower bound.
 *
 * The bench records for a minute or two, far less than the 20 minutes the rule needs, so the last
 * recorded status is assumed to hold afterwards (a stalled rollout does not move by itself; the result
 * says from when the timeline was extrapolated).
 */

/** The kube-state-metrics series the rule reads, at one instant. */
export interface DsStatusSample {
  /** Wall-clock ms when the bench saw this status. */
  t: number;
  desired: number;
  current: number;
  updated: number;
  available: number;
  misscheduled: number;
}

export const ALERT = {
  name: 'KubeDaemonSetRolloutStuck',
  forSeconds: 15 * 60,
  changesWindowSeconds: 5 * 60,
} as const;

export interface AlertVerdict {
  /** Wall-clock ms the alert would first fire; undefined when it would not fire within `horizonMs`. */
  firesAt?: number;
  /** Wall-clock ms the expression first became true (the alert goes Pending). */
  pendingAt?: number;
  /** The last recorded sample, from which the timeline is assumed constant. */
  extrapolatedFrom: number;
}

function incomplete(s: DsStatusSample): boolean {
  return s.current !== s.desired || s.misscheduled !== 0 || s.updated !== s.desired || s.available !== s.desired;
}

/**
 * Evaluates the rule every second from `from` until it fires or `horizonMs` has passed. `samples` must
 * be sorted by time; the first one also stands for the time before it (the DaemonSet was settled then).
 */
export function evaluateRolloutStuck(samples: readonly DsStatusSample[], from: number, horizonMs = 45 * 60_000): AlertVerdict {
  const first = samples[0];
  if (!first) throw new Error('no DaemonSet status samples');
  const last = samples.at(-1)!;
  let i = 0;
  const at = (t: number): DsStatusSample => {
    // Samples are visited in time order, so a moving cursor gives the step function's value at t.
    while (i + 1 < samples.length && samples[i + 1]!.t <= t) i++;
    return samples[i]!.t <= t ? samples[i]! : first;
  };
  const window = ALERT.changesWindowSeconds; // samples in the 5 m range at a 1 s scrape interval
  // Seed the 5 m window with the values before `from`.
  const updatedHistory: number[] = [];
  for (let k = window - 1; k >= 1; k--) updatedHistory.push(valueBefore(samples, from - k * 1000));
  let pendingAt: number | undefined;
  for (let t = from; t <= from + horizonMs; t += 1000) {
    const s = at(t);
    updatedHistory.push(s.updated);
    if (updatedHistory.length > window) updatedHistory.shift();
    let changes = 0;
    for (let k = 1; k < updatedHistory.length; k++) if (updatedHistory[k] !== updatedHistory[k - 1]) changes++;
    const expr = incomplete(s) && changes === 0;
    if (!expr) {
      pendingAt = undefined;
      continue;
    }
    pendingAt ??= t;
    if (t - pendingAt >= ALERT.forSeconds * 1000) return { firesAt: t, pendingAt, extrapolatedFrom: last.t };
  }
  return pendingAt !== undefined ? { pendingAt, extrapolatedFrom: last.t } : { extrapolatedFrom: last.t };
}

function valueBefore(samples: readonly DsStatusSample[], t: number): number {
  let v = samples[0]!.updated;
  for (const s of samples) {
    if (s.t > t) break;
    v = s.updated;
  }
  return v;
}
