/**
 * Small pieces every phase of decide shares: timestamps as status stores them, Event construction and
 * the requeue bounds.
 */
import { truncate } from './messages.js';
import { EventAction } from './reasons.js';
import type { PlannedEvent, RevisionRef } from './types.js';

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
export function event(type: PlannedEvent['type'], reason: string, note: string, onTarget = true, action: string = EventAction.Observe): PlannedEvent {
  return { type, reason, note: truncate(note, 1000), action, onTarget };
}

/**
 * Whether two references name the same ControllerRevision: the same hash and, when both numbers are
 * known, the same number. The DaemonSet controller renumbers a template that comes back (our undo, or a
 * re-apply) to the highest number, so the same hash under a new number is a template that changed and
 * came back between two passes (a GitOps tool reverting an undo within a second), not the same revision.
 */
export function sameRevision(a: RevisionRef, b: RevisionRef): boolean {
  return a.hash === b.hash && (a.revision === undefined || b.revision === undefined || a.revision === b.revision);
}

/** The earlier of two optional delays. */
export function sooner(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}
