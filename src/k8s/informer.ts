/**
 * A supervised informer: list + watch + cache for one resource, that never gives up.
 *
 * ```
 *   start ──> LIST (paginated; an expired continue token restarts the list)
 *               │ replace the cache, emit add/update/delete diff against the old cache, call onRelist
 *               v
 *             WATCH from the list's resourceVersion (allowWatchBookmarks, timeoutSeconds ±10 %)
 *               ├─ ADDED/MODIFIED/DELETED: update cache, emit │ BOOKMARK: advance resourceVersion only
 *               ├─ stream ends normally ─────────────────> WATCH again from the last resourceVersion
 *               ├─ watchdog: silent for idleTimeoutMs ───> WATCH again from the last resourceVersion
 *               ├─ 410 Gone (on start or in-stream ERROR) > LIST
 *               ├─ requestRelist (a reader saw the cache behind) > LIST
 *               └─ any other error ──────────────────────> jittered exponential backoff, then LIST
 * ```
 *
 * Why not client-node's informer: in 1.4 it stops for good on any error other than 410, has no watch timeout, no
 * bookmarks and no watchdog, and a half-open connection hangs it silently. The upstream model
 * for these semantics is client-go's reflector (kubernetes/client-go `tools/cache/reflector.go`).
 *
 * Cached objects are shared by every reader and deep-frozen (see informerStore.ts): never mutate them.
 *
 * The cache is informerStore.ts, the paginated list listPager.ts, one watch informerWatch.ts: this module supervises them.
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { ApiClient } from './apiClient.js';
import { errorFields } from './apiErrors.js';
import { InformerStore, type Entry, type InformerEvent, type ObjectMeta } from './informerStore.js';
import { endedEarly, watchOnce, type WatchOutcome } from './informerWatch.js';
import { listAll } from './listPager.js';
import { abortableSleep } from './sleep.js';
import type { WatchEvent } from './watchStream.js';

// The controller takes the informer and the shape of its changes from this one module.

/** Default list page size; kubectl's `--chunk-size` default, small enough to keep each response cheap. */
export const DEFAULT_PAGE_SIZE = 500;
/** Default server-side watch timeout: client-go's reflector uses 5 min (jittered) too. */
export const DEFAULT_WATCH_TIMEOUT_SECONDS = 300;
/** Default restart backoff: 1 s doubling to 30 s. */
export const DEFAULT_BACKOFF = { initialMs: 1_000, maxMs: 30_000 } as const;
/** {@link Informer.requestRelist} lists at most this often: evidence from many readers costs one list. */
export const MIN_REQUESTED_RELIST_INTERVAL_MS = 30_000;
/** A watch ending sooner than this with nothing delivered is a failure: a proxy closing each stream cannot spin us. */
export const MIN_HEALTHY_WATCH_MS = 1_000;

/** Configuration of one {@link Informer}. */
export interface InformerOptions<T> {
  /** For logs and metrics, e.g. `'pods'`. */
  name: string;
  /** Collection path, e.g. `/api/v1/namespaces/ns1/pods` or `/apis/apps/v1/daemonsets`. */
  listPath: string;
  /** Server-side label selector for list and watch. */
  labelSelector?: string;
  /** Server-side field selector for list and watch. */
  fieldSelector?: string;
  /** Keeps only the fields we need: memory scales with what we cache. Must be pure and deterministic. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- input is raw JSON from the API server
  slim?: (raw: any) => T;
  /** Page size of the paginated list (`limit`/`continue`); default {@link DEFAULT_PAGE_SIZE}. */
  pageSize?: number;
  /** Server-side watch timeout (±10 % jitter per watch); default {@link DEFAULT_WATCH_TIMEOUT_SECONDS}. */
  watchTimeoutSeconds?: number;
  /**
   * Watchdog: no event nor bookmark for this long aborts the stream and re-watches. Default: the watch timeout
   * plus 10 % plus 30 s — by then the server should have closed the stream itself, so silence means a dead
   * (half-open) connection. With bookmarks (sent about once a minute) a tighter value also works.
   */
  idleTimeoutMs?: number;
  /** Jittered exponential restart backoff; default {@link DEFAULT_BACKOFF}. */
  backoff?: { initialMs: number; maxMs: number };
  /** Told of each watch event that adds or changes an object: its last write (k8s/writtenAt.ts) and its arrival. */
  onDelivery?: (resource: string, writtenAtMs: number, receivedAtMs: number) => void;
}

/** Counters for health endpoints and metrics. */
export interface InformerStats {
  /** Objects currently cached. */
  objects: number;
  /** Completed lists, the initial one included. */
  relists: number;
  /** Restarts after an error, a 410 or the watchdog (a normal watch end is not a restart). */
  restarts: number;
  /** Watches the server ended normally before the timeout they asked for ({@link endedEarly}). */
  earlyEnds: number;
  /** Wall-clock ms of the last watch event, bookmark or completed list; absent before the first. */
  lastEventAt?: number;
}

/**
 * List + watch + cache for one resource collection, supervised: it restarts with jittered backoff on any error and
 * never exits the process. Register handlers and indexes before {@link Informer.start}.
 */
export class Informer<T extends { metadata: ObjectMeta }> {
  private readonly log: Logger;
  private readonly pageSize: number;
  private readonly watchTimeoutSeconds: number;
  private readonly idleTimeoutMs: number;
  private readonly backoff: { initialMs: number; maxMs: number };
  private readonly store: InformerStore<T>;
  private readonly eventHandlers: Array<(ev: InformerEvent<T>) => void> = [];
  private readonly relistHandlers: Array<() => void> = [];
  private resourceVersion: string | undefined;
  private synced = false;
  private started = false;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly stopController = new AbortController();
  private readonly syncPromise: Promise<void>;
  private resolveSync!: () => void;
  private rejectSync!: (err: Error) => void;
  private relists = 0;
  private restarts = 0;
  private earlyEnds = 0;
  private lastEventAt: number | undefined;
  /** Ends the open watch so the loop lists again; set while a watch is open. */
  private endWatchForRelist: (() => void) | undefined;
  /** performance.now() of the last honoured {@link requestRelist}. */
  private lastRequestedRelistAt = Number.NEGATIVE_INFINITY;

  /**
   * @param client API client used for list and watch.
   * @param opts what to watch and how to supervise it.
   * @param logger parent logger; the informer logs through `logger.child({ informer: opts.name })`.
   */
  constructor(
    private readonly client: ApiClient,
    private readonly opts: InformerOptions<T>,
    logger: Logger,
  ) {
    this.log = logger.child({ informer: opts.name });
    this.store = new InformerStore(opts.name, opts.slim);
    this.pageSize = opts.pageSize ?? DEFAULT_PAGE_SIZE;
    this.watchTimeoutSeconds = opts.watchTimeoutSeconds ?? DEFAULT_WATCH_TIMEOUT_SECONDS;
    this.idleTimeoutMs = opts.idleTimeoutMs ?? Math.round((this.watchTimeoutSeconds * 1.1 + 30) * 1000);
    this.backoff = opts.backoff ?? DEFAULT_BACKOFF;
    this.syncPromise = new Promise<void>((resolve, reject) => {
      this.resolveSync = resolve;
      this.rejectSync = reject;
    });
    // Nobody may be waiting when stop() rejects it; that must not become an unhandled rejection.
    this.syncPromise.catch(() => undefined);
  }

  /**
   * Registers a change handler. Handlers run synchronously after the cache was updated, so they see the new state;
   * they should only enqueue keys (level-based reconcile). A throwing handler is logged and does not stop the
   * informer.
   */
  onEvent(fn: (ev: InformerEvent<T>) => void): void {
    this.eventHandlers.push(fn);
  }

  /** Registers a handler called after every completed (re)list, after that list's diff events. */
  onRelist(fn: () => void): void {
    this.relistHandlers.push(fn);
  }

  /**
   * Adds an index; `fn` returns the index values of an object (e.g. its owner's name). Only before
   * {@link Informer.start}: indexes are maintained incrementally from then on.
   */
  addIndex(name: string, fn: (obj: T) => string[]): void {
    if (this.started) throw new Error(`informer ${this.opts.name}: addIndex(${name}) after start()`);
    this.store.addIndex(name, fn);
  }

  /** Starts the supervised list/watch loop in the background. Call once. */
  start(): void {
    if (this.started) throw new Error(`informer ${this.opts.name}: start() called twice`);
    this.started = true;
    this.loop = this.run().catch((err: unknown) => {
      // run() catches everything itself; reaching this is a bug, but it must not crash the process.
      this.log.error({ err }, 'informer loop crashed');
    });
  }

  /** Stops the loop, aborts the in-flight list or watch and resolves once it has ended. Idempotent. */
  async stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      this.stopController.abort();
      if (!this.synced) this.rejectSync(new Error(`informer ${this.opts.name} stopped before it synced`));
    }
    await this.loop;
  }

  /** True once the first list completed; stays true through later outages (the cache is then stale, not empty). */
  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves after the first completed list; rejects if `signal` aborts or the informer stops first. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced || !signal) return this.syncPromise;
    if (signal.aborted) return Promise.reject(new Error(`waiting for informer ${this.opts.name} aborted`));
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(new Error(`waiting for informer ${this.opts.name} aborted`));
      signal.addEventListener('abort', onAbort, { once: true });
      this.syncPromise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** Cached object by key. The result is shared and frozen: never mutate it. */
  get(namespace: string | undefined, name: string): Readonly<T> | undefined {
    return this.store.get(namespace, name);
  }

  /** All cached objects, or those of one namespace. Shared and frozen: never mutate them. */
  list(namespace?: string): ReadonlyArray<Readonly<T>> {
    return this.store.list(namespace);
  }

  /** Cached objects whose index `indexName` contains `value`. Throws for an unknown index (a wiring bug). */
  byIndex(indexName: string, value: string): ReadonlyArray<Readonly<T>> {
    return this.store.byIndex(indexName, value);
  }

  /**
   * Lists again now, as if the watch had expired, when a caller has evidence the cache is behind: an
   * object the API server must already hold has not arrived through the open watch. At most one per
   * {@link MIN_REQUESTED_RELIST_INTERVAL_MS}, so many callers with the same evidence cost one list.
   * Returns whether a relist was started.
   */
  requestRelist(reason: string): boolean {
    const now = performance.now();
    if (!this.endWatchForRelist || now - this.lastRequestedRelistAt < MIN_REQUESTED_RELIST_INTERVAL_MS) return false;
    this.lastRequestedRelistAt = now;
    this.log.warn({ reason, resourceVersion: this.resourceVersion }, 'relisting on request: the cache looks behind');
    this.endWatchForRelist();
    return true;
  }

  /** The watched resource, as named in {@link InformerOptions.name}. */
  get resource(): string {
    return this.opts.name;
  }

  /** Counters for `/readyz` and metrics. */
  stats(): InformerStats {
    return {
      objects: this.store.size,
      relists: this.relists,
      restarts: this.restarts,
      earlyEnds: this.earlyEnds,
      ...(this.lastEventAt !== undefined ? { lastEventAt: this.lastEventAt } : {}),
    };
  }

  /**
   * The supervisor loop. `failures` counts consecutive cycles without progress (no event delivered). Hard errors
   * always back off; "soft" endings (410, watchdog, an instantly closed stream) retry at once the first time and
   * back off when they repeat, so neither a compaction nor a flapping proxy can storm the API server (#1933).
   */
  private async run(): Promise<void> {
    let needList = true;
    let failures = 0;
    while (!this.stopped) {
      let delay = 0;
      try {
        if (needList) {
          await this.listAll();
          needList = false;
        }
        const r = await this.watchOnce();
        if (r.progress) failures = 0;
        switch (r.end) {
          case 'stopped':
            return;
          case 'closed':
            if (!r.progress && r.durationMs < MIN_HEALTHY_WATCH_MS) delay = this.softFailure(++failures);
            if (endedEarly(r)) {
              this.earlyEnds++;
              this.log.info(
                { resourceVersion: this.resourceVersion, durationMs: Math.round(r.durationMs) },
                'the API server ended the watch before its timeout, re-watching',
              );
            } else this.log.debug({ resourceVersion: this.resourceVersion }, 'watch ended, re-watching');
            break;
          case 'gone':
            needList = true;
            this.restarts++;
            delay = this.softFailure(++failures);
            this.log.info({ resourceVersion: this.resourceVersion, delayMs: delay }, 'watch history expired (410), relisting');
            break;
          case 'relist':
            needList = true;
            break;
          case 'idle':
            this.restarts++;
            delay = this.softFailure(++failures);
            this.log.warn({ idleTimeoutMs: this.idleTimeoutMs, delayMs: delay }, 'watch silent too long, re-watching');
            break;
        }
      } catch (err) {
        if (this.stopped) return;
        // Restart from a fresh list, like client-go's reflector after a failed ListAndWatch.
        needList = true;
        this.restarts++;
        failures++;
        delay = this.backoffDelay(failures);
        this.log.warn({ err: errorFields(err), failures, delayMs: delay }, 'list/watch failed, restarting after backoff');
      }
      if (delay > 0) await abortableSleep(delay, this.stopController.signal);
    }
  }

  private softFailure(failures: number): number {
    return failures <= 1 ? 0 : this.backoffDelay(failures - 1);
  }

  /** `initial·2^(n-1)` capped at max, with "equal jitter" in [d/2, d] so restarts of many replicas spread out. */
  private backoffDelay(n: number): number {
    const d = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** Math.max(0, n - 1));
    return Math.round(d / 2 + Math.random() * (d / 2));
  }

  /** Paginated list, then swap it into the cache. */
  private async listAll(): Promise<void> {
    const { items, resourceVersion } = await listAll<Entry<T>>(
      this.client,
      { path: this.opts.listPath, labelSelector: this.opts.labelSelector, fieldSelector: this.opts.fieldSelector, pageSize: this.pageSize },
      (raw) => this.store.prepare(raw),
      this.stopController.signal,
      this.log,
    );
    this.replace(items, resourceVersion);
  }

  /** Swaps in a complete list and emits the diff against the previous cache, then tells the relist handlers. */
  private replace(items: Map<string, Entry<T>>, resourceVersion: string | undefined): void {
    const diff = this.store.replace(items);
    this.resourceVersion = resourceVersion;
    this.relists++;
    this.lastEventAt = Date.now();
    const wasSynced = this.synced;
    this.synced = true;
    this.log.info({ objects: items.size, resourceVersion, relists: this.relists }, wasSynced ? 'relisted' : 'initial list complete');
    if (!wasSynced) this.resolveSync();
    for (const ev of diff) this.emit(ev);
    for (const fn of this.relistHandlers) {
      try {
        fn();
      } catch (err) {
        this.log.error({ err: errorFields(err) }, 'relist handler threw');
      }
    }
  }

  /** One watch from the current resourceVersion, until it ends, expires, goes silent or the informer stops. */
  private watchOnce(): Promise<WatchOutcome> {
    return watchOnce(
      this.client,
      {
        path: this.opts.listPath,
        labelSelector: this.opts.labelSelector,
        fieldSelector: this.opts.fieldSelector,
        resourceVersion: this.resourceVersion,
        watchTimeoutSeconds: this.watchTimeoutSeconds,
        idleTimeoutMs: this.idleTimeoutMs,
        apply: (ev, writtenAt) => {
          this.lastEventAt = Date.now();
          this.applyWatchEvent(ev, writtenAt);
        },
        relistTrigger: (end) => (this.endWatchForRelist = end),
        ...(this.opts.onDelivery ? { delivered: (w: number, r: number) => this.opts.onDelivery?.(this.opts.name, w, r) } : {}),
      },
      this.stopController.signal,
    );
  }

  private applyWatchEvent(ev: WatchEvent, writtenAt: number | undefined): void {
    if (ev.type === 'BOOKMARK') {
      // A bookmark carries only a resourceVersion: resuming from it avoids a 410 after long quiet periods.
      const rv = (ev.object as { metadata?: { resourceVersion?: unknown } } | undefined)?.metadata?.resourceVersion;
      if (typeof rv === 'string' && rv !== '') this.resourceVersion = rv;
      return;
    }
    if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED' && ev.type !== 'DELETED') {
      this.log.debug({ type: String(ev.type) }, 'ignoring unknown watch event type');
      return;
    }
    const { event, rv } = this.store.apply(ev.type, ev.object);
    if (rv !== undefined) this.resourceVersion = rv;
    this.emit(writtenAt !== undefined && event.type !== 'delete' ? { ...event, writtenAt } : event);
  }

  private emit(ev: InformerEvent<T>): void {
    for (const fn of this.eventHandlers) {
      try {
        fn(ev);
      } catch (err) {
        this.log.error({ err: errorFields(err), event: ev.type, name: ev.obj.metadata.name }, 'event handler threw');
      }
    }
  }
}
