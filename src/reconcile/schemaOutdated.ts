/**
 * A status write refused because the installed CRD is older than the operator (the port error
 * `SchemaOutdated`: a 422 Invalid naming a `status.` value the old schema does not know, such as a new
 * cause). Retrying the same status can never succeed, so the reconciler says so instead, in three
 * places a person looks:
 * - the log, at error level, once per guard and refusal (the guard's memory keeps the last one);
 * - the metric `rollout_guard_status_writes_refused_total{reason="SchemaOutdated"}`, on every refusal;
 * - a reduced status the old schema accepts: the status as stored (state, cause and owner as they were,
 *   so no new value) with Ready=False, reason CRDOutdated — a condition's reason is a free string in
 *   every version of the schema.
 * Then it looks again after {@link SCHEMA_OUTDATED_RETRY_MS} (or at the next event), not in a hot loop.
 * Nothing is announced and no undo acts meanwhile: both wait for their status to be recorded first.
 */
import { Reason } from '../api/reasons.js';
import type { GuardStatus } from '../api/types.js';
import { ConditionSet } from '../domain/conditions.js';

/** The sentence of the log line and of the Ready condition; end-to-end tests look for it. */
export const CRD_OUTDATED_MSG = 'the installed CRD is older than the operator: apply config/crd';

/** How soon a guard whose status the CRD refused is looked at again, without an event. */
export const SCHEMA_OUTDATED_RETRY_MS = 60_000;

/** The Ready condition's message: the sentence and what the API server refused. */
export function crdOutdatedMessage(refusal: string): string {
  return `${CRD_OUTDATED_MSG}; the API server refused the status: ${refusal}`;
}

/**
 * The status to write instead of the refused one: `stored` (what the old schema accepted) with Ready
 * False, reason CRDOutdated. Everything else is left as it was.
 */
export function crdOutdatedStatus(stored: Readonly<GuardStatus>, refusal: string, nowIso: string, generation: number): GuardStatus {
  const conditions = new ConditionSet(stored.conditions, nowIso, generation);
  conditions.set({ type: 'Ready', status: 'False', reason: Reason.CRDOutdated, message: crdOutdatedMessage(refusal) });
  return { ...structuredClone(stored), conditions: conditions.list };
}
