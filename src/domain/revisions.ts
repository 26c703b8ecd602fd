/**
 * Which ControllerRevision is which: the target's current one, and whether two passes saw the same one.
 * For decide and for the gather adapters alike.
 */
import type { RevisionRef } from '../api/types.js';
import type { RevisionView } from './observation.js';

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
 * wait (decide/settle.ts) sees the mismatch.
 */
export function currentRevisionOf(revisions: readonly RevisionView[], templateDigest: string | undefined): RevisionView | undefined {
  const newest = revisions[0];
  if (newest === undefined || templateDigest === undefined) return newest;
  return revisions.find((r) => r.revision === newest.revision && r.templateDigest === templateDigest) ?? newest;
}
