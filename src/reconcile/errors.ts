/**
 * What the work queue does with a failed key. Every failure is retried with per-key exponential backoff
 * (1 s doubling to 5 min); none is dropped, because dropping a key also drops its deadline requeue and a
 * stall would then be seen only at the next event or the 10-minute resync.
 * - `transient` (network, 5xx, 429, a DaemonSet that kept changing, an unknown error): retry;
 * - `forbidden` (403): retried all the same — RBAC is often fixed while the operator runs — but counted
 *   apart and logged as an error naming what was refused, because only a person can fix it.
 */
import { isConflict, isForbidden } from './portErrors.js';

export class TransientError extends Error {
  override readonly name = 'TransientError';
}

/**
 * A pass that failed after `decide` had computed when to look again. The queue keeps that deadline
 * (`requeueAfterMs`) beside the backoff retry, so a failing write can delay a verdict by no more than
 * the deadline itself.
 */
export class PassError extends Error {
  override readonly name = 'PassError';
  constructor(
    message: string,
    readonly requeueAfterMs: number | undefined,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

export type FailureClass = 'transient' | 'forbidden';

/** The error itself and its causes, outermost first (reconcile wraps API errors). */
function chain(e: unknown): unknown[] {
  const out: unknown[] = [];
  for (let cur: unknown = e; cur && out.length < 4; cur = (cur as { cause?: unknown }).cause) out.push(cur);
  return out;
}

/** Classifies anything thrown by a reconcile pass. */
export function classify(e: unknown): FailureClass {
  return chain(e).some(isForbidden) ? 'forbidden' : 'transient';
}

/** The deadline requeue decided before the pass failed, if any. */
export function deadlineOf(e: unknown): number | undefined {
  return e instanceof PassError ? e.requeueAfterMs : undefined;
}

/**
 * How long the API server asked us to wait before trying again (Retry-After on a 429 or 503), in ms, or 0.
 * Looked up on the error and its `cause`, as reconcile may wrap the API error.
 */
export function retryAfterMs(e: unknown): number {
  for (const cur of chain(e)) {
    const r = cur as { statusCode?: unknown; retryAfterSeconds?: unknown };
    if ((r.statusCode === 429 || r.statusCode === 503) && typeof r.retryAfterSeconds === 'number' && r.retryAfterSeconds > 0)
      return r.retryAfterSeconds * 1000;
  }
  return 0;
}

/**
 * Runs a write to the target (a DaemonSet or StatefulSet, or one of its pods). Its conflicts are handled (bounded, each attempt re-checked) inside the
 * undo; one that escapes is a transient failure of this pass, never a conflict on the guard, which would
 * re-run the whole pass and multiply the attempts.
 */
export async function targetWrite<T>(write: () => Promise<T>, what: string): Promise<T> {
  try {
    return await write();
  } catch (e) {
    if (isConflict(e)) throw new TransientError(`${what}: the target kept changing`, { cause: e });
    throw e;
  }
}
