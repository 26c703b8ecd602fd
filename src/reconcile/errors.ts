/**
 * Error classes that decide what the work queue does with a failed key:
 * - TransientError (network, 5xx, 429, repeated 409): retry with per-key exponential backoff;
 * - TerminalError (403, invalid target): no retry until the object changes (or the safety resync);
 *   the reason is already in a condition or a log line, retrying would only spin.
 */
import { isForbidden, isTransient } from '../k8s/apiClient.js';

export class TransientError extends Error {
  override readonly name = 'TransientError';
}

export class TerminalError extends Error {
  override readonly name = 'TerminalError';
}

/** Classifies anything thrown by a reconcile pass. */
export function classify(e: unknown): 'transient' | 'terminal' {
  if (e instanceof TerminalError) return 'terminal';
  if (e instanceof TransientError) return 'transient';
  if (isForbidden(e)) return 'terminal';
  if (isTransient(e)) return 'transient';
  // Unknown errors are retried with backoff: a bug must not silently stop a guard for good.
  return 'transient';
}

/**
 * How long the API server asked us to wait before trying again (Retry-After on a 429 or 503), in ms, or 0.
 * Looked up on the error and its `cause`, as reconcile may wrap the API error.
 */
export function retryAfterMs(e: unknown): number {
  for (let cur: unknown = e, depth = 0; cur && depth < 3; cur = (cur as { cause?: unknown }).cause, depth++) {
    const r = cur as { statusCode?: unknown; retryAfterSeconds?: unknown };
    if ((r.statusCode === 429 || r.statusCode === 503) && typeof r.retryAfterSeconds === 'number' && r.retryAfterSeconds > 0) return r.retryAfterSeconds * 1000;
  }
  return 0;
}
