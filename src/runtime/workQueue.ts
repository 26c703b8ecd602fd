/**
 * A keyed work queue with client-go semantics (kubernetes/client-go `util/workqueue`: `queue.go`,
 * `delaying_queue.go`, `default_rate_limiters.go`).
 *
 * Invariants (the reasons this is not a plain array):
 * - a key is queued at most once (`dirty` dedups while it waits);
 * - a key is never handed to two workers at once (`processing`); a key added while processing is marked dirty
 *   and re-queued exactly once by {@link WorkQueue.done};
 * - per key, only the earliest pending {@link WorkQueue.addAfter} deadline is kept;
 * - a key added with {@link WorkQueue.addUrgent} is handed out before every key added plainly (first in,
 *   first out among urgent keys), and a key already waiting moves up when it turns urgent: a pod that just
 *   failed is named before the progress of every other rollout is recounted (controller-runtime's
 *   priority queue does the same for the changes it ranks above initial-list events);
 * - with a batch period, a key added plainly within that period after its last pass ended is held until
 *   the period is over, and the changes that come meanwhile are seen by one pass (the EndpointSlice
 *   controller's `--endpointslice-updates-batch-period`): during a wide rollout every pod event of a
 *   DaemonSet queues its guards, and passes that recount progress the status would not show yet took
 *   the CPU that the passes naming failed nodes and the API server's answers needed. Urgent adds and
 *   {@link WorkQueue.addAfter} deadlines are never held;
 * - how long a key waited is measured from the add that made it dirty to the worker taking it (client-go's
 *   `workqueue_queue_duration_seconds`): a key added while its own pass runs waits for that pass too,
 *   which is what the change that added it waited before a pass could see it; a held key, its hold too.
 *
 * The worker loop (workers.ts runs it, one queue per controller), in short:
 * ```ts
 * for (let key; (key = await queue.get()) !== undefined; ) {
 *   try { const r = await reconcile(key); queue.forget(key); if (r.requeueAfter) queue.addAfter(key, r.requeueAfter); }
 *   catch (e) { queue.addRateLimited(key); }
 *   finally { queue.done(key); }
 * }
 * ```
 */
import { monotonicClock } from './clock.js';
import { systemTimers } from '../k8s/sleep.js';
import { type Clock, type Timers } from '../reconcile/ports.js';

/** Constructor options of {@link WorkQueue}. */
export interface WorkQueueOptions {
  /** First per-key retry delay (client-go: 5 ms; we use a larger base, e.g. 1 s, to spare the API server). */
  baseDelayMs: number;
  /** Cap of the per-key exponential delay (client-go: 1000 s; e.g. 5 min for us). */
  maxDelayMs: number;
  /** Global token bucket refill rate in tokens per second (client-go default 10). */
  qps: number;
  /** Global token bucket size (client-go default 100). */
  burst: number;
  /** Time source for the token bucket; defaults to monotonic time so wall-clock steps cannot mint tokens. */
  clock?: Clock;
  /** Timers for delayed adds; defaults to the real ones. */
  timers?: Timers;
  /** Batch period of plain adds after a key's pass (see the class comment); 0 or absent: none. */
  batchMs?: number;
}

/** Size of the last-pass record past which entries older than the batch period are dropped. */
const LAST_DONE_PRUNE_AT = 1024;

interface Delayed {
  readyAt: number;
  handle: unknown;
}

/** Keyed work queue: dedup, per-key exclusivity, delayed and rate-limited adds. */
export class WorkQueue {
  private readonly queue: string[] = [];
  /** Keys added urgently, handed out before {@link queue}'s. */
  private readonly urgentQueue: string[] = [];
  /** Keys added while their pass runs that go back without a hold once it is done: urgently, or as a deadline. */
  private readonly whenDone = new Map<string, 'urgent' | 'due'>();
  /** Keys to run (again), each with when it was first added since it was last taken (the queue's clock). */
  private readonly dirty = new Map<string, number>();
  private readonly processing = new Set<string>();
  private readonly waiting = new Map<string, Delayed>();
  private readonly failures = new Map<string, number>();
  /** How long each key in process waited to be taken. */
  private readonly waited = new Map<string, number>();
  private readonly getters: Array<(key: string | undefined) => void> = [];
  /** Dirty keys held back by the batch period, each with the timer that queues it at the period's end. */
  private readonly held = new Map<string, unknown>();
  /** When each key's last pass ended (with a batch period only; pruned once past it). */
  private readonly lastDone = new Map<string, number>();
  private shutdown = false;
  private readonly clock: Clock;
  private readonly timers: Timers;
  // Token bucket state (golang.org/x/time/rate semantics: reservations may drive tokens negative).
  private tokens: number;
  private lastRefill: number;

  /** @param opts backoff bounds, bucket parameters and injectable time. */
  constructor(private readonly opts: WorkQueueOptions) {
    if (opts.baseDelayMs < 0 || opts.maxDelayMs < opts.baseDelayMs) throw new RangeError('need 0 <= baseDelayMs <= maxDelayMs');
    if (opts.qps <= 0 || opts.burst < 1) throw new RangeError('need qps > 0 and burst >= 1');
    this.clock = opts.clock ?? monotonicClock;
    this.timers = opts.timers ?? systemTimers;
    this.tokens = opts.burst;
    this.lastRefill = this.clock.now();
  }

  /** Queues `key` unless it is already queued; if it is being processed it runs once more after `done`. */
  add(key: string): void {
    if (this.shutdown || this.dirty.has(key)) return;
    this.dirty.set(key, this.clock.now());
    if (this.processing.has(key)) return;
    this.queueOrHold(key);
  }

  /**
   * Queues `key` ahead of every key queued plainly: a change a person needs to read about at once. A key
   * already waiting moves up; a key in process runs again, first, after {@link WorkQueue.done}.
   */
  addUrgent(key: string): void {
    if (this.shutdown) return;
    if (this.processing.has(key)) {
      this.afterPass(key, 'urgent');
      return;
    }
    if (this.dirty.has(key)) {
      if (!this.release(key)) {
        const at = this.queue.indexOf(key);
        if (at < 0) return; // already urgent
        this.queue.splice(at, 1);
      }
    } else {
      this.dirty.set(key, this.clock.now());
    }
    this.enqueue(key, true);
  }

  /**
   * Queues `key` after `delayMs`. If the key already has a pending deadline, the earlier one wins (client-go
   * `delaying_queue.go`); a delay ≤ 0 adds at once. A later {@link WorkQueue.add} does not cancel the deadline.
   */
  addAfter(key: string, delayMs: number): void {
    if (this.shutdown) return;
    if (!(delayMs > 0)) {
      this.addDue(key); // a deadline already past: at once, never held by the batch period
      return;
    }
    const readyAt = this.clock.now() + delayMs;
    const existing = this.waiting.get(key);
    if (existing) {
      if (existing.readyAt <= readyAt) return;
      this.timers.clearTimeout(existing.handle);
    }
    const handle = this.timers.setTimeout(() => {
      // Guard against a stale timer whose entry was replaced or cleared meanwhile.
      if (this.waiting.get(key)?.handle !== handle) return;
      this.waiting.delete(key);
      this.addDue(key);
    }, delayMs);
    this.waiting.set(key, { readyAt, handle });
  }

  /**
   * Queues `key` after `max(per-key exponential backoff, global token-bucket delay)` — client-go's
   * `DefaultControllerRateLimiter` (a `MaxOfRateLimiter`). Each call counts as one more failure of the key and
   * consumes one token, whichever delay wins.
   */
  addRateLimited(key: string, atLeastMs = 0): void {
    if (this.shutdown) return;
    // `atLeastMs`: the server said when to come back (Retry-After on 429/503); never sooner than that.
    this.addAfter(key, Math.max(this.when(key), atLeastMs));
  }

  /** Resets the key's failure count (call after a successful pass). The token bucket is global and unaffected. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** How many times `key` was rate-limited since the last {@link WorkQueue.forget}. */
  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /**
   * Next key to process, waiting until one is available; `undefined` once {@link WorkQueue.shutDown} was called
   * and the queue is drained. The caller must call {@link WorkQueue.done} with the key when finished.
   */
  get(): Promise<string | undefined> {
    if (this.len() > 0) return Promise.resolve(this.take());
    if (this.shutdown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Marks `key` finished; if it was added meanwhile, it is queued again (exactly once). */
  done(key: string): void {
    this.processing.delete(key);
    this.waited.delete(key);
    if (this.batchMs() > 0) this.markDone(key);
    const how = this.whenDone.get(key);
    this.whenDone.delete(key);
    if (!this.dirty.has(key)) return;
    if (how) this.enqueue(key, how === 'urgent');
    else this.queueOrHold(key);
  }

  /**
   * Stops accepting keys and drops pending delayed adds. Keys already queued are still handed out; waiting
   * {@link WorkQueue.get} calls resolve `undefined` once the queue is empty.
   */
  shutDown(): void {
    this.shutdown = true;
    for (const { handle } of this.waiting.values()) this.timers.clearTimeout(handle);
    this.waiting.clear();
    // A held key is a queued one whose pass was put off: it is still handed out.
    for (const key of [...this.held.keys()]) if (this.release(key)) this.queue.push(key);
    this.dispatch();
  }

  /** True after {@link WorkQueue.shutDown}. */
  shuttingDown(): boolean {
    return this.shutdown;
  }

  /**
   * How long `key`, now in process, waited from the add that queued it until it was taken, in ms; 0 for a
   * key not in process.
   */
  waitedMs(key: string): number {
    return this.waited.get(key) ?? 0;
  }

  /** Number of keys ready to be handed out (not counting keys being processed or delayed). */
  len(): number {
    return this.urgentQueue.length + this.queue.length;
  }

  private batchMs(): number {
    return this.opts.batchMs ?? 0;
  }

  /** Queues dirty `key`, or holds it until the batch period after its last pass is over. */
  private queueOrHold(key: string): void {
    const last = this.lastDone.get(key);
    const holdMs = last === undefined ? 0 : last + this.batchMs() - this.clock.now();
    if (holdMs > 0 && this.batchMs() > 0) {
      const handle = this.timers.setTimeout(() => {
        if (this.held.get(key) !== handle) return;
        this.held.delete(key);
        this.enqueue(key);
      }, holdMs);
      this.held.set(key, handle);
      return;
    }
    this.enqueue(key);
  }

  /** Puts `key` at the end of the urgent or the plain queue and hands out what is ready. */
  private enqueue(key: string, urgent = false): void {
    (urgent ? this.urgentQueue : this.queue).push(key);
    this.dispatch();
  }

  /** `key` was added while its pass runs: it runs again after it, without a hold (urgent wins over due). */
  private afterPass(key: string, how: 'urgent' | 'due'): void {
    if (!this.dirty.has(key)) this.dirty.set(key, this.clock.now());
    if (how === 'urgent' || !this.whenDone.has(key)) this.whenDone.set(key, how);
  }

  /** Ends `key`'s hold, if it has one (the caller queues it). */
  private release(key: string): boolean {
    const handle = this.held.get(key);
    if (handle === undefined) return false;
    this.timers.clearTimeout(handle);
    this.held.delete(key);
    return true;
  }

  /** A deadline came ({@link WorkQueue.addAfter}): queued now, never held by the batch period. */
  private addDue(key: string): void {
    if (this.shutdown) return;
    if (this.processing.has(key)) {
      this.afterPass(key, 'due');
      return;
    }
    if (this.dirty.has(key)) {
      if (this.release(key)) this.enqueue(key);
      return; // queued already
    }
    this.dirty.set(key, this.clock.now());
    this.enqueue(key);
  }

  /** Notes when `key`'s pass ended; entries past the period are dropped now and then, so deleted keys go too. */
  private markDone(key: string): void {
    const now = this.clock.now();
    this.lastDone.set(key, now);
    if (this.lastDone.size <= LAST_DONE_PRUNE_AT) return;
    for (const [k, at] of this.lastDone) if (now - at >= this.batchMs()) this.lastDone.delete(k);
  }

  private take(): string {
    const key = (this.urgentQueue.length > 0 ? this.urgentQueue : this.queue).shift()!;
    this.processing.add(key);
    const added = this.dirty.get(key)!;
    this.dirty.delete(key);
    // max(0, …): an injected clock stepping backwards must not report a negative wait.
    this.waited.set(key, Math.max(0, this.clock.now() - added));
    return key;
  }

  /** Hands ready keys to waiting getters; after shutdown with an empty queue, releases them with `undefined`. */
  private dispatch(): void {
    while (this.getters.length > 0 && this.len() > 0) this.getters.shift()!(this.take());
    if (this.shutdown && this.len() === 0) {
      while (this.getters.length > 0) this.getters.shift()!(undefined);
    }
  }

  private when(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    // base·2^n, computed so that a large n cannot overflow to Infinity/NaN before the cap applies.
    const perKey = n >= 64 ? this.opts.maxDelayMs : Math.min(this.opts.maxDelayMs, this.opts.baseDelayMs * 2 ** n);
    return Math.max(perKey, this.reserveToken());
  }

  /** Takes one token, possibly going into debt, and returns how long until that token exists. */
  private reserveToken(): number {
    const now = this.clock.now();
    // max(0, …): an injected clock stepping backwards must not drain the bucket.
    const elapsed = Math.max(0, now - this.lastRefill);
    this.lastRefill = Math.max(this.lastRefill, now);
    this.tokens = Math.min(this.opts.burst, this.tokens + (elapsed / 1000) * this.opts.qps);
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.opts.qps) * 1000;
  }
}
