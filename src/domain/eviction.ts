/**
 * The outcome of a forced-rollback eviction (decide/forcedRollback.ts plans it), recorded in the guard's
 * status and announced: the pod named, and why the guard evicted it.
 */
import type { GuardStatus, PlannedEvent, TargetKind } from '../api/types.js';
import type { Eviction } from '../api/forcedRollback.js';
import { EventAction, Reason } from '../api/reasons.js';
import { fmtDuration, fmtRev, truncate } from './messages.js';
import { EVICTION_BACKOFF_MS, retryAt } from './decide/forcedRollback.js';

/** What the Eviction API answered. */
export type EvictionOutcome =
  | { kind: 'Evicted' }
  /** 429: a PodDisruptionBudget has no room for it now. */
  | { kind: 'Refused'; detail: string }
  /** 404, or a UID precondition that no longer holds: the pod is gone or is another pod now. */
  | { kind: 'Gone' };

/** Every kind of {@link EvictionOutcome}: a Record, so that `tsc` names one added to the union and missing here. */
export const EVICTION_OUTCOME_KINDS = Object.keys({ Evicted: 1, Refused: 1, Gone: 1 } satisfies Record<EvictionOutcome['kind'], 1>);

/**
 * The status after eviction `pod`/`uid` (recorded as Requested) came back with `outcome`, and its Event;
 * `kind` is the target's, whose controller the Event says does not replace the pod.
 */
export function recordEviction(
  status: Readonly<GuardStatus>,
  pod: string,
  uid: string,
  outcome: EvictionOutcome,
  now: number,
  kind: TargetKind,
): { status: GuardStatus; events: PlannedEvent[]; retryAfterMs?: number } {
  const record = status.forcedRollback;
  const entry = record?.evictions.find((e) => e.uid === uid);
  if (!record || !entry) return { status: { ...status }, events: [] };
  const at = new Date(now).toISOString();
  const done: Eviction = { ...entry, at, result: outcome.kind };
  if (outcome.kind === 'Refused') done.message = truncate(outcome.detail, 500);
  else delete done.message;
  const next: GuardStatus = {
    ...status,
    forcedRollback: { ...record, evictions: record.evictions.map((e) => (e.uid === uid ? done : e)) },
  };
  if (outcome.kind === 'Gone') return { status: next, events: [] };
  if (outcome.kind === 'Evicted') {
    // A pod left on a revision the rollout superseded (a fix pushed forward) is recreated on the new one.
    const superseded = status.rollout?.superseded?.find((r) => r.hash === record.forHash);
    const note = superseded
      ? `Evicted ${pod}: it was not Ready on superseded ${fmtRev(superseded)}, and under OrderedReady the ${kind} controller does not replace a pod that never became Ready; it recreates it on ${fmtRev(status.rollout?.toRevision)}`
      : `Evicted ${pod}: it was not Ready on the undone revision, and under OrderedReady the ${kind} controller does not replace a pod that never became Ready after a revert; it recreates it on the restored revision`;
    return { status: next, events: [{ type: 'Normal', reason: Reason.PodEvicted, action: EventAction.Evict, onTarget: true, note }] };
  }
  const wait = retryAt(done) - now;
  const note = truncate(
    `Eviction of ${pod} refused: ${outcome.detail}; trying again in ${fmtDuration(Math.max(wait, EVICTION_BACKOFF_MS))}, and no other pod is evicted meanwhile`,
    1000,
  );
  return {
    status: next,
    events: [{ type: 'Warning', reason: Reason.EvictionRefused, action: EventAction.Evict, onTarget: true, note }],
    retryAfterMs: wait,
  };
}
