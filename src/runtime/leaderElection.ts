/**
 * Lease-based leader election with client-go semantics (kubernetes/client-go `tools/leaderelection/
 * leaderelection.go`, `resourcelock/leaselock.go`); @kubernetes/client-node 1.4 has no leader election of its own.
 *
 * ```
 *   run() ──> ACQUIRE: every retryPeriod (jittered ×[1, 2.2]) tryAcquireOrRenew
 *               │ success
 *               v
 *             LEADING: onStartedLeading(signal)
 *               │ every retryPeriod: a renew round; it retries every retryPeriod until renewDeadline
 *               ├── round misses renewDeadline ──> abort signal, onStoppedLeading() (caller exits non-zero)
 *               ├── another holder in the Lease, or
 *               │   last renewal ≥ leaseDuration ago ─> the same, at once (a pause outlived the lease)
 *               └── release() ──────────────────> abort signal, write holderIdentity '' / leaseDurationSeconds 1
 * ```
 *
 * tryAcquireOrRenew: GET the Lease → create it if 404 → if another holder's lease is still valid, wait → else PUT
 * with the resourceVersion we read (compare-and-swap: a 409 means another candidate won the race).
 *
 * Validity is judged on local monotonic time, never on the holder's `renewTime` (see leaseRecord.ts), so clock skew
 * between nodes cannot make us steal a live lease.
 *
 * This is not fencing (see the client-go package doc): two replicas may both believe they lead for a moment.
 * Every action must therefore be idempotent and resourceVersion-checked on its own. To keep that moment short,
 * {@link LeaderElector.stillLeading} is checked when a worker takes a key and before every write made under
 * leadership: a leader that was paused (SIGSTOP, a stopped VM, a long GC) or starved for a lease duration may
 * have been replaced, so it declares the loss instead of deciding or writing, rather than acting for up to
 * another renew deadline after it wakes.
 */
import type { Logger } from 'pino';
import type { ApiClient } from '../k8s/apiClient.js';
import { isConflict, isNotFound } from '../k8s/apiErrors.js';
import { abortableSleep } from '../k8s/sleep.js';
import { microTime } from '../api/time.js';
import { monotonicClock, systemClock } from './clock.js';
import { systemTimers } from '../k8s/sleep.js';
import { type Clock, type Timers } from '../reconcile/ports.js';
import { LeaseLock } from './leaseLock.js';
import { ObservedLease, acquiredSpec, newLease, releasedSpec, renewedSpec, type Lease } from './leaseRecord.js';

/** client-go's jitter factor for acquire retries (`wait.JitterUntil(..., RetryPeriod, 1.2, ...)`). */
export const ACQUIRE_JITTER_FACTOR = 1.2;

/** Options of {@link LeaderElector}. Durations follow client-go; defaults (15 s / 10 s / 2 s) live in config. */
export interface LeaderElectorOptions {
  /** API client used for the Lease. */
  client: ApiClient;
  /** Namespace of the Lease (the operator's own namespace). */
  namespace: string;
  /** Lease name. */
  name: string;
  /** This candidate's identity, unique per replica (the pod name). */
  identity: string;
  /** How long a non-leader waits after the last observed change before taking over (client-go default 15 s). */
  leaseDurationMs: number;
  /** How long the leader keeps retrying a renewal before giving up (default 10 s); must be < leaseDurationMs. */
  renewDeadlineMs: number;
  /** Interval between attempts (default 2 s); must be < renewDeadlineMs / 1.2. */
  retryPeriodMs: number;
  /** Monotonic time for lease expiry; defaults to `performance.now()`. */
  clock?: Clock;
  /** Wall time for `acquireTime`/`renewTime` written into the Lease; defaults to `Date.now()`. */
  wallClock?: Clock;
  /** Timers for retries and the renew deadline. */
  timers?: Timers;
  /** Logger; the elector logs through `logger.child({ lease })`. */
  logger: Logger;
}

/** Callbacks of {@link LeaderElector.run}. */
export interface LeaderCallbacks {
  /** Called once leadership is acquired; `signal` aborts when leadership ends (lost or released). */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /**
   * Called when leadership is lost (a renew round missed the renew deadline). Not called by
   * {@link LeaderElector.release}: a graceful shutdown is not a failure. The caller should exit non-zero.
   */
  onStoppedLeading(): void;
}

/** Lease-based leader elector. One instance per process; {@link LeaderElector.run} once. */
export class LeaderElector {
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly wallClock: Clock;
  private readonly timers: Timers;
  private readonly leaseDurationSeconds: number;
  private readonly lock: LeaseLock;
  private readonly observed: ObservedLease;
  private readonly stopController = new AbortController();
  private leader = false;
  private running: Promise<void> | undefined;
  private callbacks: LeaderCallbacks | undefined;
  /** Aborts when the current term of leadership ends. */
  private leading: AbortController | undefined;
  private lossReported = false;
  /** Whether the missing lease namespace was already reported at error level. */
  private toldMissingNamespace = false;

  /** @param opts see {@link LeaderElectorOptions}; the durations are validated as in client-go's NewLeaderElector. */
  constructor(private readonly opts: LeaderElectorOptions) {
    if (!opts.identity) throw new Error('leader election: identity must not be empty');
    if (!(opts.retryPeriodMs > 0)) throw new RangeError('leader election: retryPeriodMs must be > 0');
    if (!(opts.leaseDurationMs > opts.renewDeadlineMs)) {
      throw new RangeError('leader election: leaseDurationMs must be greater than renewDeadlineMs');
    }
    if (!(opts.renewDeadlineMs > ACQUIRE_JITTER_FACTOR * opts.retryPeriodMs)) {
      throw new RangeError('leader election: renewDeadlineMs must be greater than 1.2 × retryPeriodMs');
    }
    this.clock = opts.clock ?? monotonicClock;
    this.wallClock = opts.wallClock ?? systemClock;
    this.timers = opts.timers ?? systemTimers;
    this.leaseDurationSeconds = Math.max(1, Math.ceil(opts.leaseDurationMs / 1000));
    this.lock = new LeaseLock(opts.client, opts.namespace, opts.name);
    this.observed = new ObservedLease(this.clock);
    this.log = opts.logger.child({ lease: `${opts.namespace}/${opts.name}`, identity: opts.identity });
  }

  /** True while we hold the lease (between onStartedLeading and loss/release). */
  isLeader(): boolean {
    return this.leader;
  }

  /**
   * True while we lead and our last successful renewal was sent less than a lease duration ago (local
   * monotonic time): no other candidate can have taken over yet, since each waits a lease duration from the
   * moment it saw our last write. Check it right before every write made under leadership.
   *
   * If we think we lead but the renewal is older than that, the process was paused or starved past its lease
   * and another replica may be acting: leadership is declared lost on the spot (the leading signal aborts and
   * onStoppedLeading is called, once), and this returns false.
   */
  stillLeading(): boolean {
    if (!this.leader) return false;
    const sinceRenewMs = this.clock.now() - this.observed.renewedAt;
    if (sinceRenewMs < this.opts.leaseDurationMs) return true;
    this.lose('lost leadership: last renewal is older than the lease duration (paused or starved?)', {
      sinceRenewMs: Math.round(sinceRenewMs),
    });
    return false;
  }

  /**
   * Campaigns until leadership is acquired, leads until it is lost or released, then resolves. Never rejects:
   * API errors are logged and retried.
   */
  run(callbacks: LeaderCallbacks): Promise<void> {
    if (this.running) throw new Error('leader election: run() called twice');
    this.running = this.campaign(callbacks);
    return this.running;
  }

  /**
   * Stops campaigning or leading and, if we hold the lease, gives it up so a successor need not wait for expiry
   * (client-go `ReleaseOnCancel`): holderIdentity '' and leaseDurationSeconds 1, checked against the last
   * resourceVersion. Call after the workers stopped. Never rejects; failures are logged (the lease then expires).
   */
  async release(): Promise<void> {
    this.stopController.abort();
    await this.running;
    const lease = this.observed.lease;
    if (!lease || lease.spec?.holderIdentity !== this.opts.identity) return;
    const body: Lease = { ...lease, spec: releasedSpec(lease.spec, microTime(this.wallClock.now())) };
    // Bounded by the renew deadline: the shutdown budget is finite and an expired lease frees itself anyway.
    const ac = new AbortController();
    const timer = this.timers.setTimeout(() => ac.abort(), this.opts.renewDeadlineMs);
    try {
      this.observed.lease = await this.lock.update(body, ac.signal);
      this.log.info('released leader lease');
    } catch (err) {
      this.log.warn({ err: errSummary(err) }, 'could not release leader lease; it will expire instead');
    } finally {
      this.timers.clearTimeout(timer);
    }
  }

  private async campaign(cb: LeaderCallbacks): Promise<void> {
    const stop = this.stopController.signal;
    this.log.info('campaigning for leadership');
    while (!stop.aborted) {
      if (await this.tryAcquireOrRenew(stop)) break;
      const jittered = this.opts.retryPeriodMs * (1 + Math.random() * ACQUIRE_JITTER_FACTOR);
      await this.sleep(jittered, stop);
    }
    if (stop.aborted) return;

    this.leader = true;
    this.callbacks = cb;
    const leading = (this.leading = new AbortController());
    this.log.info('became leader');
    try {
      const started = cb.onStartedLeading(leading.signal);
      if (started) started.catch((err: unknown) => this.log.error({ err: errSummary(err) }, 'onStartedLeading failed'));
    } catch (err) {
      this.log.error({ err: errSummary(err) }, 'onStartedLeading threw');
    }

    const lost = await this.renewLoop(stop);
    if (lost) {
      this.lose(lost.message, lost.fields);
    } else if (this.leader) {
      this.leader = false;
      leading.abort();
      this.log.info('stopped leading (released)');
    }
  }

  /** Ends leadership as lost: abort the leading signal, log, and call onStoppedLeading (once). */
  private lose(message: string, fields: Record<string, unknown>): void {
    if (!this.leader) return;
    this.leader = false;
    this.leading?.abort();
    if (this.lossReported) return;
    this.lossReported = true;
    this.log.error(fields, message);
    this.callbacks?.onStoppedLeading();
  }

  /**
   * Renew rounds until leadership is lost (returns why) or we are stopped (returns undefined). Lost: a round
   * missed its renew deadline, another candidate holds the Lease, or the last renewal is a lease duration old.
   */
  private async renewLoop(stop: AbortSignal): Promise<{ message: string; fields: Record<string, unknown> } | undefined> {
    const missed = {
      message: 'lost leadership: lease not renewed within the renew deadline',
      fields: { renewDeadlineMs: this.opts.renewDeadlineMs },
    };
    for (;;) {
      await this.sleep(this.opts.retryPeriodMs, stop);
      if (stop.aborted) return undefined;
      // Lost meanwhile through stillLeading(), or our lease ran out while we slept (a pause outlived it).
      if (!this.stillLeading()) return undefined;
      const round = new AbortController();
      const signal = AbortSignal.any([round.signal, stop]);
      let deadlinePassed = false;
      // The deadline also aborts an in-flight request: a hung connection must not keep us "leading".
      const deadline = this.timers.setTimeout(() => {
        deadlinePassed = true;
        round.abort();
      }, this.opts.renewDeadlineMs);
      try {
        for (;;) {
          if (await this.tryAcquireOrRenew(signal)) break;
          if (stop.aborted) return undefined;
          // Someone else wrote the Lease with their name: it is theirs until they let it lapse.
          const holder = this.observed.holder;
          if (holder !== '' && holder !== this.opts.identity) {
            return { message: 'lost leadership: another candidate holds the lease', fields: { holder } };
          }
          if (!this.leader) return undefined;
          if (deadlinePassed) return missed;
          await this.sleep(this.opts.retryPeriodMs, signal);
          if (stop.aborted) return undefined;
          if (deadlinePassed) return missed;
        }
      } finally {
        this.timers.clearTimeout(deadline);
      }
    }
  }

  /** One attempt; true when we hold a freshly written lease. Never throws. */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const now = microTime(this.wallClock.now());
    if (this.leader && this.observed.holder === this.opts.identity && this.observed.valid()) {
      const renewed = await this.fastRenew(now, signal);
      if (renewed !== undefined) return renewed;
    }
    const current = await this.read(signal);
    if (current === 'absent') return this.create(now, signal);
    if (current === undefined) return false;
    return this.acquire(current, now, signal);
  }

  /**
   * Fast path while leading (as newer client-go does): update the cached object directly, skipping the GET.
   * True when renewed, false when aborted, undefined when the caller should re-read the Lease.
   */
  private async fastRenew(now: string, signal: AbortSignal): Promise<boolean | undefined> {
    const lease = this.observed.lease!;
    const sentAt = this.clock.now();
    try {
      const updated = await this.lock.update({ ...lease, spec: renewedSpec(lease.spec ?? {}, this.leaseDurationSeconds, now) }, signal);
      this.observed.wrote(updated, sentAt);
      return true;
    } catch (err) {
      if (signal.aborted) return false;
      this.log.debug({ err: errSummary(err) }, 'fast renew failed, re-reading lease');
      return undefined;
    }
  }

  /** The Lease as stored, `'absent'` when there is none, undefined when it could not be read. */
  private async read(signal: AbortSignal): Promise<Lease | 'absent' | undefined> {
    try {
      return await this.lock.get(signal);
    } catch (err) {
      if (signal.aborted) return undefined;
      if (isNotFound(err)) return 'absent';
      this.log.warn({ err: errSummary(err) }, 'error reading leader lease');
      return undefined;
    }
  }

  /** Creates the Lease with us as its holder. */
  private async create(now: string, signal: AbortSignal): Promise<boolean> {
    const sentAt = this.clock.now();
    try {
      const lease = newLease(this.opts.name, this.opts.namespace, this.opts.identity, this.leaseDurationSeconds, now);
      this.observed.wrote(await this.lock.create(lease, signal), sentAt);
      return true;
    } catch (err) {
      if (signal.aborted) return false;
      if (isNotFound(err)) this.missingNamespace();
      else this.logAttemptError('creating', err);
      return false;
    }
  }

  /** Takes over (or keeps) the Lease just read, unless another holder's lease is still valid. */
  private async acquire(current: Lease, now: string, signal: AbortSignal): Promise<boolean> {
    this.observed.saw(current);
    const holder = this.observed.holder;
    if (holder !== '' && holder !== this.opts.identity && this.observed.valid()) {
      this.log.debug({ holder }, 'lease held by another candidate');
      return false;
    }
    const spec = acquiredSpec(current.spec ?? {}, this.opts.identity, this.leaseDurationSeconds, now);
    const sentAt = this.clock.now();
    try {
      // Compare-and-swap: `current.metadata.resourceVersion` is sent along, so a concurrent writer makes this 409.
      this.observed.wrote(await this.lock.update({ ...current, spec }, signal), sentAt);
      if (holder !== this.opts.identity) this.log.info({ previousHolder: holder || undefined }, 'acquired leader lease');
      return true;
    } catch (err) {
      if (!signal.aborted) this.logAttemptError('updating', err);
      return false;
    }
  }

  /**
   * The Lease cannot be created because its namespace does not exist: said once, plainly, at error level
   * (then at debug on each retry). The candidate keeps trying, as the namespace may be on its way.
   */
  private missingNamespace(): void {
    const msg = `the lease namespace "${this.opts.namespace}" does not exist: create it (kubectl create namespace ${this.opts.namespace}), pass --lease-namespace NS, or run with --leader-elect=false`;
    if (this.toldMissingNamespace) this.log.debug(msg);
    else this.log.error(msg);
    this.toldMissingNamespace = true;
  }

  private logAttemptError(what: string, err: unknown): void {
    if (isConflict(err)) this.log.info(`conflict ${what} leader lease: another candidate won the race`);
    else this.log.warn({ err: errSummary(err) }, `error ${what} leader lease`);
  }

  private sleep(ms: number, signal: AbortSignal): Promise<void> {
    return abortableSleep(ms, signal, this.timers);
  }
}

function errSummary(err: unknown): { message: string; statusCode?: number } {
  if (err instanceof Error) {
    const statusCode = (err as { statusCode?: unknown }).statusCode;
    return { message: err.message, ...(typeof statusCode === 'number' ? { statusCode } : {}) };
  }
  return { message: String(err) };
}
