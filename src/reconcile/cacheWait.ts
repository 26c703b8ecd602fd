/**
 * How long one guard's observations have been set aside because its DaemonSet and ControllerRevision
 * caches disagree (see decide). decide takes the duration as an input and stops waiting at its limit;
 * the reconciler relists the caches when a wait grows long.
 */

/**
 * How long a wait may last before the caches are relisted, and again after each further such interval
 * while it goes on. The gap is normally one watch event; one this long means a watch stopped delivering
 * while it still looks open. decide itself stops waiting at CACHE_WAIT_LIMIT_MS.
 */
export const CACHE_RELIST_AFTER_MS = 10_000;

export class CacheWait {
  private wait: { since: number; relistDueFrom: number } | undefined;

  /** How long decide has been setting this guard's passes aside, for decide's `cacheWaitMs` (0: not waiting). */
  waitedMs(now: number): number {
    return this.wait ? now - this.wait.since : 0;
  }

  /**
   * Records whether decide set this pass aside. Returns how long the wait has lasted when it is time to
   * relist (every {@link CACHE_RELIST_AFTER_MS} of waiting), otherwise undefined.
   */
  record(deferred: boolean, now: number): number | undefined {
    if (!deferred) {
      this.wait = undefined;
      return undefined;
    }
    const w = this.wait;
    if (!w) {
      this.wait = { since: now, relistDueFrom: now + CACHE_RELIST_AFTER_MS };
      return undefined;
    }
    if (now < w.relistDueFrom) return undefined;
    w.relistDueFrom = now + CACHE_RELIST_AFTER_MS;
    return now - w.since;
  }
}
