/**
 * How long each guard's observations have been set aside because its DaemonSet and ControllerRevision
 * caches disagree (see decide). decide reads the duration from the observation and stops waiting at its
 * limit; the reconciler relists the caches when a wait grows long.
 */
import type { Observation } from '../domain/types.js';

/**
 * How long a wait may last before the caches are relisted, and again after each further such interval
 * while it goes on. The gap is normally one watch event; one this long means a watch stopped delivering
 * while it still looks open. decide itself stops waiting at CACHE_WAIT_LIMIT_MS.
 */
export const CACHE_RELIST_AFTER_MS = 10_000;

export class CacheWaits {
  private readonly waits = new Map<string, { since: number; relistDueFrom: number }>();

  /** Tells decide, through the observation, how long this guard has been waiting. */
  stamp(key: string, obs: Observation, now: number): void {
    const w = this.waits.get(key);
    if (w && obs.kind === 'Target') obs.cacheWaitMs = now - w.since;
  }

  /**
   * Records whether decide set this pass aside. Returns how long the wait has lasted when it is time to
   * relist (every {@link CACHE_RELIST_AFTER_MS} of waiting), otherwise undefined.
   */
  record(key: string, deferred: boolean, now: number): number | undefined {
    if (!deferred) {
      this.waits.delete(key);
      return undefined;
    }
    const w = this.waits.get(key);
    if (!w) {
      this.waits.set(key, { since: now, relistDueFrom: now + CACHE_RELIST_AFTER_MS });
      return undefined;
    }
    if (now < w.relistDueFrom) return undefined;
    w.relistDueFrom = now + CACHE_RELIST_AFTER_MS;
    return now - w.since;
  }

  forget(key: string): void {
    this.waits.delete(key);
  }
}
