/**
 * Time as the rest of the code sees it: injected wherever behaviour depends on time so tests can drive
 * it with a fake clock (never a module-global clock that tests would have to patch).
 */

/** A source of "now" in milliseconds. Whether it is wall or monotonic time depends on the instance. */
export interface Clock {
  /** Current time in milliseconds. */
  now(): number;
}

/** Timer functions, injectable so tests can fire timers with fake time instead of sleeping. */
export interface Timers {
  /** Schedules `fn` after `ms` milliseconds; returns an opaque handle for {@link Timers.clearTimeout}. */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancels a timer; a handle that already fired or was cleared is ignored. */
  clearTimeout(handle: unknown): void;
}

/**
 * Formats epoch ms as a Kubernetes MicroTime (`2026-11-29T16:32:51.123456Z`): RFC 3339 with exactly six
 * fractional digits, the only form the API server's MicroTime parser accepts. Sub-millisecond parts of
 * `epochMs` (a monotonic-derived time) fill the last three digits.
 */
export function microTime(epochMs: number): string {
  const whole = Math.floor(epochMs);
  const micros = Math.floor((epochMs - whole) * 1000);
  return new Date(whole).toISOString().replace(/\.(\d{3})Z$/, (_m, ms: string) => `.${ms}${String(micros).padStart(3, '0')}Z`);
}
