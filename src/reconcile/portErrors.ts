/**
 * The error kinds reconcile acts on, whoever raised them. An adapter that implements a port marks its
 * errors with a `kind` (src/k8s/apiClient.ts sets it on every API error from the HTTP status), so the
 * reconcilers can tell "deleted under us", "changed under us" and "not allowed" apart without knowing
 * which client made the call.
 */

/**
 * NotFound: the object is gone. Conflict: it changed since it was read (or the name is taken). Forbidden: RBAC refused.
 * SchemaOutdated: the API server's schema of our own resource refused a status field value it does not
 * know (a new enum value, an undeclared field): the installed CRD is older than the operator.
 */
export type PortErrorKind = 'NotFound' | 'Conflict' | 'Forbidden' | 'SchemaOutdated';

const KINDS: ReadonlySet<unknown> = new Set<PortErrorKind>(['NotFound', 'Conflict', 'Forbidden', 'SchemaOutdated']);

/** The kind an error carries, if any. */
export function errorKind(e: unknown): PortErrorKind | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const k = (e as { kind?: unknown }).kind;
  return KINDS.has(k) ? (k as PortErrorKind) : undefined;
}

export function isNotFound(e: unknown): boolean {
  return errorKind(e) === 'NotFound';
}

export function isConflict(e: unknown): boolean {
  return errorKind(e) === 'Conflict';
}

export function isForbidden(e: unknown): boolean {
  return errorKind(e) === 'Forbidden';
}

export function isSchemaOutdated(e: unknown): boolean {
  return errorKind(e) === 'SchemaOutdated';
}

/**
 * How many times a write that drew a Conflict is re-read and tried again before the failure is handed
 * back (to the work queue's backoff, or recorded as given up): the same bound for guard status, policy
 * status and the undo's DaemonSet patch, and the same as client-go's DefaultRetry (5 steps). A write that
 * conflicts five times in a row has another active writer; more quick attempts would only race it.
 */
export const CONFLICT_ATTEMPTS = 5;

/**
 * Runs `run` again while it fails with a Conflict, at most {@link CONFLICT_ATTEMPTS} times in all; then
 * `exhausted` says what becomes of the last Conflict (an error to throw, or an outcome to record). Any
 * other error is thrown as it is. `run` is told its attempt number and re-reads what it decides from on
 * every attempt after the first, so that nothing computed from a stale object is sent: the one loop of
 * every write decided from what it read (a guard's, a selector guard's and a policy's status, the
 * undo's patch).
 */
export async function retryOnConflict<R>(
  run: (attempt: number) => Promise<R>,
  exhausted: (attempts: number, cause: unknown) => R | Promise<R>,
): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run(attempt);
    } catch (e) {
      if (!isConflict(e)) throw e;
      if (attempt >= CONFLICT_ATTEMPTS) return exhausted(attempt, e);
    }
  }
}

/** One line for a failure, without a stack: what log lines and status messages quote. */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
