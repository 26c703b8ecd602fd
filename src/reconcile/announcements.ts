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

export class Announcements {
  /** Per guard key, the ids this process has seen announced (created, or refused as already existing). */
  private readonly done = new Map<string, Set<string>>();
  /** Per guard key, the last id handed out: ids grow strictly even within one millisecond. */
  private readonly lastId = new Map<string, number>();

  /**
   * `status` with its announcements: those of `prev` not yet known announced, then `events`, new. When
   * there are no new Events and only announced entries would be dropped, prev's list is kept unchanged, so
   * that dropping them never causes a write of its own.
   */
  attach(key: string, prev: GuardStatus, status: GuardStatus, events: readonly PlannedEvent[], now: number): GuardStatus {
    const done = this.done.get(key);
    const carried = (prev.announcements ?? []).filter((a) => !done?.has(a.id));
    if (events.length === 0) {
      const unchanged = withList(status, prev.announcements ?? []);
      if (carried.length === (prev.announcements ?? []).length || mergePatchDiff(prev, unchanged) === undefined) return unchanged;
    }
    const at = new Date(now).toISOString();
    const fresh = events.map((e): Announcement => ({ ...e, id: this.nextId(key, now), at }));
    return withList(status, [...carried, ...fresh].slice(-MAX_ANNOUNCEMENTS));
  }

  /** The entries of `status` that this process has not seen announced. */
  pending(key: string, status: GuardStatus | undefined): Announcement[] {
    const done = this.done.get(key);
    return (status?.announcements ?? []).filter((a) => !done?.has(a.id));
  }

  markAnnounced(key: string, ids: readonly string[]): void {
    if (ids.length === 0) return;
    let done = this.done.get(key);
    if (!done) this.done.set(key, (done = new Set()));
    for (const id of ids) done.add(id);
    // Only ids still in status matter; keep the set as small as the status list.
    if (done.size > 4 * MAX_ANNOUNCEMENTS) this.done.set(key, new Set([...done].slice(-MAX_ANNOUNCEMENTS)));
  }

  forget(key: string): void {
    this.done.delete(key);
    this.lastId.delete(key);
  }

  /** Time-ordered, lower-case base-36 (valid in an object name), unique per guard. */
  private nextId(key: string, now: number): string {
    const n = Math.max(Math.trunc(now) * 100, (this.lastId.get(key) ?? 0) + 1);
    this.lastId.set(key, n);
    return n.toString(36);
  }
}

function withList(status: GuardStatus, list: readonly Announcement[]): GuardStatus {
  const out: GuardStatus = { ...status };
  if (list.length > 0) out.announcements = [...list];
  else delete out.announcements;
  return out;
}
