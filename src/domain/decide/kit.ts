/**
 * Small pieces the phases of decide share (timestamps as status stores them, Event construction, the
 * requeue bounds), and which ControllerRevision is which, for decide and for gather.
 */
import { truncate } from '../messages.js';
import { EventAction } from '../../api/reasons.js';
import type { PlannedEvent, RevisionRef } from '../../api/types.js';
import type { RevisionView } from '../observation.js';

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

/** An Event; `onTarget` mirrors it on the DaemonSet. Notes are cut to the API server's 1 kB. */
export function event(
  type: PlannedEvent['type'],
  reason: string,
  note: string,
  onTarget = true,
  action: string = EventAction.Observe,
): PlannedEvent {
  return { type, reason, note: truncate(note, 1000), action, onTarget };
}

/**
 * Whether the current revision `cur` is the one the status recorded, `prev`: the same hash and, when
 * both numbers are known, the same number. The DaemonSet controller renumbers a template that comes
 * back (our undo, or a re-apply) to the highest number, so the same hash under a new number is a
 * template that changed and came back between two passes (a GitOps tool reverting an undo within a
 * second), not the same revision. One exception, seen in the cached `revisions`: a number another
 * revision also holds was given from a stale revision cache (see currentRevisionOf), and the controller
 * moving the revision off it is a correction, not a change.
 */
export function sameRevision(cur: RevisionRef, prev: RevisionRef, revisions: readonly RevisionRef[]): boolean {
  if (cur.hash !== prev.hash) return false;
  if (cur.revision === undefined || prev.revision === undefined || cur.revision === prev.revision) return true;
  return revisions.some((r) => r.hash !== cur.hash && r.revision === prev.revision);
}

/**
 * The DaemonSet's current revision among `revisions` (newest number first): the newest, and of several
 * holding that number, the one storing the live template. The controller numbers a new revision one above
 * the highest it has cached, so a controller-manager syncing from a stale revision cache can give the new
 * template the number an old one already holds; the first of the tie could be the old one. A lower-numbered
 * revision that stores the live template is not taken: it is an old template coming back (an undo, a
 * re-apply), which the controller renumbers to the highest on its next sync, and until then the cache
 * wait (preconditions.ts) sees the mismatch.
 */
export function currentRevisionOf(revisions: readonly RevisionView[], templateDigest: string | undefined): RevisionView | undefined {
  const newest = revisions[0];
  if (newest === undefined || templateDigest === undefined) return newest;
  return revisions.find((r) => r.revision === newest.revision && r.templateDigest === templateDigest) ?? newest;
}

/** The earlier of two optional delays. */
export function sooner(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}
