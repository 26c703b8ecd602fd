/**
 * Sends the guards' Events beside their passes, not in them. A transition's Event is two POSTs (the
 * guard and its DaemonSet); a pass that waited for them would hold the guard's key, and the pass that
 * names a node failing a moment later would wait in the queue behind them.
 *
 * What makes this safe is the bookkeeping of announcements.ts: an Event being sent stays in status
 * until it is known announced (a later write carries it), a later pass does not send it again, and one
 * the API server did not take brings the guard back soon.
 */
import type { Logger } from 'pino';
import type { GuardStatus } from '../api/types.js';
import type { ObjectRef } from '../api/objects.js';
import type { GuardMemory } from './guardMemory.js';
import type { ReconcilerPorts } from './ports.js';
import { errorMessage } from './portErrors.js';

/** How soon an Event the API server did not take is offered again. */
export const ANNOUNCE_RETRY_MS = 5000;

/** One guard's Events to announce: whose, about what, and the status that holds them. */
export interface AnnounceRequest {
  memory: GuardMemory;
  guard: ObjectRef;
  /** The DaemonSet, when the guard's target exists (it gets a copy of the Events meant for it). */
  target: ObjectRef | undefined;
  status: GuardStatus | undefined;
  log: Logger;
}

export class Announcer {
  /** Announcements under way. */
  private readonly running = new Set<Promise<void>>();

  /** `requeue` brings a guard's key back after a delay (the queue's addAfter); absent, the next pass retries. */
  constructor(
    private readonly emit: ReconcilerPorts['emit'],
    private readonly requeue?: (key: string, afterMs: number) => void,
  ) {}

  /** Starts announcing what the status holds and this process has neither announced nor is announcing; returns at once. */
  start(r: AnnounceRequest): void {
    const batch = r.memory.announcements.take(r.status);
    if (batch.length === 0) return;
    const run = this.emit(r.guard, r.target, batch)
      .catch((e: unknown) => {
        r.log.warn({ err: errorMessage(e) }, 'announcing Events failed; they stay in status');
        return [] as string[];
      })
      .then((ids) => {
        r.memory.announcements.settle(batch, ids);
        if (ids.length < batch.length) this.requeue?.(r.memory.key, ANNOUNCE_RETRY_MS);
      })
      // Nothing above is expected to throw; if it did, it must not become an unhandled rejection that
      // ends the process. The Events stay in status for the next pass.
      .catch((e: unknown) => r.log.error({ err: errorMessage(e) }, 'settling an announcement failed'));
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }

  /** Resolves when every announcement under way has ended (at shutdown; what is left stays in status). */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
