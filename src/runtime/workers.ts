/**
 * The workers of one controller: N loops pulling keys from the controller's own {@link WorkQueue} and
 * running its reconcile. Each controller (guards, policies) has its own queue and its own workers, so a
 * slow or failing policy never holds up a guard's verdict, their keys never meet in one dedup, and every
 * log line and queue metric names the controller it belongs to.
 *
 * What a pass returns decides what happens to its key:
 * - success: the key's failure count is reset, and `requeueAfterMs` (a deadline decide computed) brings it
 *   back then;
 * - failure: per-key exponential backoff (never sooner than a server's Retry-After), counted by class; a
 *   deadline decided before the failure keeps its own requeue, as the backoff grows to minutes.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import { classify, deadlineOf, retryAfterMs } from '../reconcile/errors.js';
import type { Metrics } from './metrics.js';
import type { WorkQueue } from './workQueue.js';

/** What one pass asks of its key's future; `void` for a controller that never asks for a requeue. */
export type PassResult = { requeueAfterMs?: number } | void;

export interface WorkersOptions {
  /**
   * The controller's name, singular (`guard`, `policy`): the log field that carries the key, so a line
   * reads `guard: ns/name` or `policy: name`.
   */
  name: string;
  /** The queue's name, plural (`guards`, `policies`): the `queue` label of the queue depth. */
  queueName: string;
  queue: WorkQueue;
  /** `waitedMs`: how long the key waited for this worker, as the queue measured it. */
  reconcile: (key: string, waitedMs: number) => Promise<PassResult>;
  /** How many keys may be reconciled at once (never the same key twice: the queue sees to it). */
  count: number;
  metrics: Pick<Metrics, 'queueDepth' | 'queueWait' | 'reconcileErrors'>;
  log: Logger;
  /** Told of every key queued and every pass ended: what tells the idle collector the operator is busy. */
  onWork?: () => void;
  /**
   * Asked each time a worker takes a key, before its pass runs; false means this process may no longer
   * act (its leadership ran out). The key goes back to the queue, untouched, and the worker stops.
   * Checking only at the write is not enough: a pass decides and logs before its first write, and a
   * process that wakes from a pause runs its overdue requeues before it hears that its lease is gone.
   */
  mayRun?: () => boolean;
}

export class Workers {
  private readonly loops = new Set<Promise<void>>();
  private started = false;

  constructor(private readonly opts: WorkersOptions) {}

  /**
   * Queues `key` (deduplicated by the queue) and reports the new depth; `urgent` puts it ahead of the
   * keys queued plainly (see WorkQueue.addUrgent).
   */
  add(key: string, urgent = false): void {
    if (urgent) this.opts.queue.addUrgent(key);
    else this.opts.queue.add(key);
    this.reportDepth();
    this.opts.onWork?.();
  }

  /** Queues `key` after `delayMs`, as a deadline (see WorkQueue.addAfter). */
  addAfter(key: string, delayMs: number): void {
    this.opts.queue.addAfter(key, delayMs);
    this.opts.onWork?.();
  }

  /** Starts the loops, once; they end when `signal` aborts or the queue is shut down and drained. */
  start(signal: AbortSignal): void {
    if (this.started) return;
    this.started = true;
    for (let i = 0; i < this.opts.count; i++) {
      const p = this.loop(signal);
      this.loops.add(p);
      void p.finally(() => this.loops.delete(p)); // a pass's errors are handled inside loop()
    }
  }

  /** Stops handing out keys; resolves when every pass in flight has ended. */
  shutDown(): Promise<void> {
    this.opts.queue.shutDown();
    return Promise.allSettled([...this.loops]).then(() => undefined);
  }

  private reportDepth(): void {
    this.opts.metrics.queueDepth.set({ queue: this.opts.queueName }, this.opts.queue.len());
  }

  private async loop(signal: AbortSignal): Promise<void> {
    const { queue, log, name } = this.opts;
    while (!signal.aborted) {
      const key = await queue.get();
      if (key === undefined) return;
      if (this.opts.mayRun && !this.opts.mayRun()) {
        queue.add(key); // while it is taken: queued again by done(), for whoever may run it
        queue.done(key);
        this.reportDepth();
        log.info({ [name]: key }, 'worker stopped: this process may no longer act; the key stays queued');
        return;
      }
      this.reportDepth();
      const waitedMs = queue.waitedMs(key);
      this.opts.metrics.queueWait.observe({ queue: this.opts.queueName }, waitedMs / 1000);
      try {
        const r = await this.opts.reconcile(key, waitedMs);
        queue.forget(key);
        if (r?.requeueAfterMs !== undefined) queue.addAfter(key, r.requeueAfterMs);
      } catch (e) {
        const cls = classify(e);
        this.opts.metrics.reconcileErrors.inc({ class: cls });
        const serverAsked = retryAfterMs(e);
        const retries = queue.numRequeues(key);
        const fields = { [name]: key, err: e, retries, ...(serverAsked > 0 ? { retryAfterMs: serverAsked } : {}) };
        if (cls === 'forbidden')
          log.error(
            fields,
            "reconcile forbidden: the operator's RBAC refuses a request it needs; retrying with backoff until it is granted",
          );
        else log.warn(fields, 'reconcile failed: retrying with backoff');
        queue.addRateLimited(key, serverAsked);
        // The backoff grows to minutes; a stall deadline decided before the failure must not wait for it.
        const deadline = deadlineOf(e);
        if (deadline !== undefined) queue.addAfter(key, Math.max(deadline, serverAsked));
      } finally {
        queue.done(key);
        this.opts.onWork?.();
      }
      // A queued key is handed over as a resolved promise, and a pass that writes nothing never waits for
      // I/O: without this turn, a backlog of such passes runs as one task, and the watch events and write
      // answers behind it (the status that names a failed node) wait for the whole backlog.
      await nextTurn();
    }
  }
}
