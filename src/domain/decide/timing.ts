/**
 * Time as decide reads and writes it: status timestamps, and the bounds of every requeue it asks for.
 */

/**
 * Timer skew allowance added to every requeue, so we never wake up a hair before a deadline. Node's
 * timers do not fire early by more than a millisecond, so 100 ms is ample and keeps detection within
 * a fraction of a second of the deadline.
 */
export const REQUEUE_SKEW_MS = 100;
/** Never requeue sooner than this: a ≤ 0 delay while caches catch up would spin. */
export const MIN_REQUEUE_MS = 500;

/** Status timestamps: RFC 3339 with milliseconds. */
export const iso = (ms: number): string => new Date(ms).toISOString();
/** A status timestamp back to ms; undefined stays undefined. */
export const parseTime = (s: string | undefined): number | undefined => (s ? Date.parse(s) : undefined);

/** The earlier of two optional delays. */
export function sooner(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}
