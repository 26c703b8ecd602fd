/**
 * Events that are never lost and never doubled.
 *
 * A transition's Events are written into the guard's status (`status.announcements`) in the same write
 * as the transition itself, and announced after it. Each Event's name derives from its announcement id,
 * so announcing it again is refused by the API server as AlreadyExists. Hence:
 * - a pass abandoned after its status write (crash, lost leadership, a failed emit) leaves the Events in
 *   status, and the next pass — in this process or the next leader — announces them: at least once;
 * - an Event already created is refused the second time: at most once.
 *
 * Which ids this process has seen announced is kept in memory; an announced entry is dropped from status
 * with the next write made for another reason, never by a write of its own (that would double the
 * status writes of every transition). A new leader therefore re-sends at most the entries of each
 * guard's last transition once, and the API server refuses them.
 */
import type { Announcement, GuardStatus, PlannedEvent } from '../api/types.js';
import { mergePatchDiff } from '../api/mergePatch.js';

/** Bound on the entries kept in status (the CRD's maxItems): a guard whose Events keep failing keeps the newest. */
export const MAX_ANNOUNCEMENTS = 16;

/** One guard's announcement bookkeeping in this process (held in its GuardMemory). */
export class Announcements {
  /** The ids this process has seen announced (created, or refused as already existing). */
  private done = new Set<string>();
  /** The ids being announced now (taken, not yet settled): a pass meanwhile carries them, but does not send them again. */
  private readonly sending = new Set<string>();
  /** The last id handed out: ids grow strictly even within one millisecond. */
  private lastId = 0;

  /**
   * `status` with its announcements: those of `prev` not yet known announced, then `events`, new. When
   * there are no new Events and only announced entries would be dropped, prev's list is kept unchanged, so
   * that dropping them never causes a write of its own.
   */
  attach(prev: GuardStatus, status: GuardStatus, events: readonly PlannedEvent[], now: number): GuardStatus {
    const carried = this.pending(prev);
    if (events.length === 0) {
      const unchanged = withList(status, prev.announcements ?? []);
      if (carried.length === (prev.announcements ?? []).length || mergePatchDiff(prev, unchanged) === undefined) return unchanged;
    }
    const at = new Date(now).toISOString();
    const fresh = events.map((e): Announcement => ({ ...e, id: this.nextId(now), at }));
    return withList(status, [...carried, ...fresh].slice(-MAX_ANNOUNCEMENTS));
  }

  /** The entries of `status` that this process has not seen announced. */
  pending(status: GuardStatus | undefined): Announcement[] {
    return (status?.announcements ?? []).filter((a) => !this.done.has(a.id));
  }

  /** The entries of `status` to announce now: not known announced and not being announced; marked as being announced. */
  take(status: GuardStatus | undefined): Announcement[] {
    const batch = this.pending(status).filter((a) => !this.sending.has(a.id));
    for (const a of batch) this.sending.add(a.id);
    return batch;
  }

  /** Ends the announcement of `batch` (from {@link take}): `announced` are known to exist; the rest are pending again. */
  settle(batch: readonly Announcement[], announced: readonly string[]): void {
    for (const a of batch) this.sending.delete(a.id);
    this.markAnnounced(announced);
  }

  markAnnounced(ids: readonly string[]): void {
    for (const id of ids) this.done.add(id);
    // Only ids still in status matter; keep the set as small as the status list.
    if (this.done.size > 4 * MAX_ANNOUNCEMENTS) this.done = new Set([...this.done].slice(-MAX_ANNOUNCEMENTS));
  }

  /** Time-ordered, lower-case base-36 (valid in an object name), unique per guard. */
  private nextId(now: number): string {
    this.lastId = Math.max(Math.trunc(now) * 100, this.lastId + 1);
    return this.lastId.toString(36);
  }
}

function withList(status: GuardStatus, list: readonly Announcement[]): GuardStatus {
  const out: GuardStatus = { ...status };
  if (list.length > 0) out.announcements = [...list];
  else delete out.announcements;
  return out;
}
