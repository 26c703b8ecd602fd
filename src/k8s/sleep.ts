/**
 * A wait that ends early when its signal aborts: a stopping informer or a leader that steps down must
 * not sit out a backoff or retry period first.
 */
import type { Timers } from '../reconcile/ports.js';

/** The real Node.js timers. */
export const systemTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout> | undefined),
};

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). `timers` are injectable for fake time. */
export function abortableSleep(ms: number, signal: AbortSignal, timers: Timers = systemTimers): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = (): void => {
      timers.clearTimeout(handle);
      resolve();
    };
    const handle = timers.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
