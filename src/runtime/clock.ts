/**
 * The real time sources behind the domain's Clock and Timers (src/reconcile/ports.ts), which are injected
 * wherever behaviour depends on time so tests can drive it with a fake clock.
 *
 * Two kinds of time matter here and must not be mixed up:
 * - wall time (`systemClock`): epoch milliseconds, comparable with timestamps written by other processes
 *   (e.g. `lastTransitionTime`); it can jump when NTP corrects the host clock;
 * - monotonic time (`monotonicClock`): only differences are meaningful; it never jumps. Rate limiting, backoff and
 *   leader-election expiry use it, so a clock step can neither burst the token bucket nor steal a Lease.
 */
import { performance } from 'node:perf_hooks';
import type { Clock } from '../reconcile/ports.js';

/** Wall-clock time (`Date.now()`): epoch milliseconds. Use for timestamps shared with the API server. */
export const systemClock: Clock = { now: () => Date.now() };

/**
 * Monotonic time (`performance.now()`): milliseconds since process start, never jumps backwards. Use for
 * measuring intervals (rate limits, lease expiry), never for timestamps that leave the process.
 */
export const monotonicClock: Clock = { now: () => performance.now() };

/** The real Node.js timers (defined beside the abortable sleep that uses them by default). */
