/**
 * Time sources, injected wherever behaviour depends on time so tests can drive it with a fake clock
 * (never a module-global clock that tests would have to patch).
 *
 * Two kinds of time matter here and must not be mixed up:
 * - wall time (`systemClock`): epoch milliseconds, comparable with timestamps written by other processes
 *   (e.g. `lastTransitionTime`); it can jump when NTP corrects the host clock;
 * - monotonic time (`monotonicClock`): only differences are meaningful; it never jumps. Rate limiting, backoff and
 *   leader-election expiry use it, so a clock step can neither burst the token bucket nor steal a Lease.
 */
import { performance } from 'node:perf_hooks';

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

/** Wall-clock time (`Date.now()`): epoch milliseconds. Use for timestamps shared with the API server. */
export const systemClock: Clock = { now: () => Date.now() };

/**
 * Monotonic time (`performance.now()`): milliseconds since process start, never jumps backwards. Use for
 * measuring intervals (rate limits, lease expiry), never for timestamps that leave the process.
 */
export const monotonicClock: Clock = { now: () => performance.now() };

/** The real Node.js timers. */
export const systemTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout> | undefined),
};
