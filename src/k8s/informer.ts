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
 * Invariant: cached objects are shared by every reader and are deep-frozen (`Object.freeze`) when they enter the
 * cache; writing to one throws in strict-mode code. Never mutate them: `structuredClone` first.
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { ApiError, isGone, type ApiClient, type WatchEvent } from './apiClient.js';
import { abortableSleep } from './sleep.js';

/** Default list page size; kubectl's `--chunk-size` default, small enough to keep each response cheap. */
export const DEFAULT_PAGE_SIZE = 500;
/** Default server-side watch timeout: client-go's reflector uses 5 min (jittered) too. */
export const DEFAULT_WATCH_TIMEOUT_SECONDS = 300;
/** Default restart backoff: 1 s doubling to 30 s. */
export const DEFAULT_BACKOFF = { initialMs: 1_000, maxMs: 30_000 } as const;
/** {@link Informer.requestRelist} lists at most this often: evidence from many readers costs one list. */
export const MIN_REQUESTED_RELIST_INTERVAL_MS = 30_000;
/**
 * A watch that ends normally sooner than this without delivering anything counts as a failure, so a proxy that
 * closes every stream at once cannot drive us into a tight re-watch loop.
 */
export const MIN_HEALTHY_WATCH_MS = 1_000;
/** How often an expired `continue` token may restart one list before the whole cycle backs off. */
export const MAX_LIST_RESTARTS = 3;

/** Metadata every cached kind must keep (even after slimming). */
export interface ObjectMeta {
  /** Object name. */
  name: string;
  /** Namespace; absent for cluster-scoped kinds. */
  namespace?: string;
  /** Opaque version used for change detection and watch resumption. */
  resourceVersion?: string;
  /** Unique id across re-creations with the same name. */
  uid?: string;
}

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
}

/** A cache change. `old` is the previous cached state for `update`. Objects are frozen: never mutate. */
export type InformerEvent<T> = { type: 'add' | 'update' | 'delete'; obj: Readonly<T>; old?: Readonly<T> };

/** Counters for health endpoints and metrics. */
export interface InformerStats {
  /** Objects currently cached. */
  objects: number;
  /** Completed lists, the initial one included. */
  relists: number;
  /** Restarts after an error, a 410 or the watchdog (a normal watch end is not a restart). */
  restarts: number;
  /** Wall-clock ms of the last watch event, bookmark or completed list; absent before the first. */
  lastEventAt?: number;
}

interface Entry<T> {
  obj: T;
  /** Kept separately because `slim` may drop `metadata.resourceVersion`, and the relist diff needs it. */
  rv: string | undefined;
}

interface Index<T> {
  fn: (obj: T) => string[];
  byValue: Map<string, Set<string>>;
}

type WatchEnd = 'closed' | 'gone' | 'idle' | 'relist' | 'stopped';

interface ListResponse {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: unknown[];
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
  private cache = new Map<string, Entry<T>>();
  private readonly indexes = new Map<string, Index<T>>();
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
    if (this.indexes.has(name)) throw new Error(`informer ${this.opts.name}: index ${name} already exists`);
    this.indexes.set(name, { fn, byValue: new Map() });
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
    return this.cache.get(cacheKey(namespace, name))?.obj;
  }

  /** All cached objects, or those of one namespace. Shared and frozen: never mutate them. */
  list(namespace?: string): ReadonlyArray<Readonly<T>> {
    const out: T[] = [];
    for (const { obj } of this.cache.values()) {
      if (namespace === undefined || obj.metadata.namespace === namespace) out.push(obj);
    }
    return out;
  }

  /** Cached objects whose index `indexName` contains `value`. Throws for an unknown index (a wiring bug). */
  byIndex(indexName: string, value: string): ReadonlyArray<Readonly<T>> {
    const index = this.indexes.get(indexName);
    if (!index) throw new Error(`informer ${this.opts.name}: no index ${indexName}`);
    const out: T[] = [];
    for (const key of index.byValue.get(value) ?? []) {
      const entry = this.cache.get(key);
      if (entry) out.push(entry.obj);
    }
    return out;
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
      objects: this.cache.size,
      relists: this.relists,
      restarts: this.restarts,
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
            this.log.debug({ resourceVersion: this.resourceVersion }, 'watch ended, re-watching');
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
        this.log.warn({ err: describe(err), failures, delayMs: delay }, 'list/watch failed, restarting after backoff');
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

  /** Paginated list into a fresh map, then {@link Informer.replace}. */
  private async listAll(): Promise<void> {
    const items = new Map<string, Entry<T>>();
    let cont: string | undefined;
    let resourceVersion: string | undefined;
    let listRestarts = 0;
    for (;;) {
      let page: ListResponse;
      try {
        page = await this.client.request<ListResponse>('GET', this.opts.listPath, {
          query: {
            labelSelector: this.opts.labelSelector,
            fieldSelector: this.opts.fieldSelector,
            limit: this.pageSize,
            continue: cont,
          },
          signal: this.stopController.signal,
        });
      } catch (err) {
        // A continue token expires with the snapshot it pins (etcd compaction): pages fetched so far belong to
        // that snapshot, so start over without it rather than mixing snapshots.
        if (cont !== undefined && isGone(err) && listRestarts < MAX_LIST_RESTARTS) {
          listRestarts++;
          this.log.info({ pagesRestart: listRestarts }, 'list continue token expired (410), restarting list');
          items.clear();
          cont = undefined;
          continue;
        }
        throw err;
      }
      for (const raw of page.items ?? []) {
        const { key, entry } = this.prepare(raw);
        items.set(key, entry);
      }
      resourceVersion = page.metadata?.resourceVersion;
      cont = page.metadata?.continue ? page.metadata.continue : undefined;
      if (cont === undefined) break;
    }
    this.replace(items, resourceVersion);
  }

  /**
   * Swaps in a complete list and emits the diff against the previous cache, so that changes — deletes in
   * particular — that happened while we were not watching still reach the handlers.
   */
  private replace(items: Map<string, Entry<T>>, resourceVersion: string | undefined): void {
    const previous = this.cache;
    this.cache = items;
    for (const index of this.indexes.values()) index.byValue.clear();
    for (const [key, entry] of items) this.indexAdd(key, entry.obj);
    this.resourceVersion = resourceVersion;
    this.relists++;
    this.lastEventAt = Date.now();
    const wasSynced = this.synced;
    this.synced = true;
    this.log.info({ objects: items.size, resourceVersion, relists: this.relists }, wasSynced ? 'relisted' : 'initial list complete');
    if (!wasSynced) this.resolveSync();

    for (const [key, old] of previous) {
      if (!items.has(key)) this.emit({ type: 'delete', obj: old.obj });
    }
    for (const [key, entry] of items) {
      const old = previous.get(key);
      if (!old) this.emit({ type: 'add', obj: entry.obj });
      // Unchanged resourceVersion means unchanged object: no event, as client-node's informer does.
      else if (old.rv !== entry.rv || entry.rv === undefined) this.emit({ type: 'update', obj: entry.obj, old: old.obj });
    }
    for (const fn of this.relistHandlers) {
      try {
        fn();
      } catch (err) {
        this.log.error({ err: describe(err) }, 'relist handler threw');
      }
    }
  }

  /** One watch from the current resourceVersion, until it ends, expires, goes silent or the informer stops. */
  private async watchOnce(): Promise<{ end: WatchEnd; progress: boolean; durationMs: number }> {
    const startedAt = performance.now();
    const ac = new AbortController();
    const signal = AbortSignal.any([ac.signal, this.stopController.signal]);
    let progress = false;
    let end: 'gone' | 'idle' | 'relist' | undefined;
    let streamError: ApiError | undefined;
    const watchdog = setTimeout(() => {
      end ??= 'idle';
      ac.abort();
    }, this.idleTimeoutMs);
    this.endWatchForRelist = () => {
      end ??= 'relist';
      ac.abort();
    };
    const timeoutSeconds = Math.max(1, Math.round(this.watchTimeoutSeconds * (0.9 + Math.random() * 0.2)));
    const result = (e: WatchEnd): { end: WatchEnd; progress: boolean; durationMs: number } => ({
      end: e,
      progress,
      durationMs: performance.now() - startedAt,
    });
    try {
      await this.client.watch(
        this.opts.listPath,
        {
          labelSelector: this.opts.labelSelector,
          fieldSelector: this.opts.fieldSelector,
          resourceVersion: this.resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds,
        },
        (ev) => {
          if (end !== undefined || streamError !== undefined) return;
          watchdog.refresh();
          if (ev.type === 'ERROR') {
            const err = ApiError.fromStatus(ev.object, 500);
            // 410 Gone / Expired: our resourceVersion was compacted away; anything else ends this stream as an error.
            if (isGone(err)) end = 'gone';
            else streamError = err;
            ac.abort();
            return;
          }
          this.lastEventAt = Date.now();
          progress = true;
          this.applyWatchEvent(ev);
        },
        signal,
      );
      return result(end ?? 'closed');
    } catch (err) {
      if (this.stopped) return result('stopped');
      if (streamError) throw streamError;
      if (end !== undefined) return result(end);
      if (isGone(err)) return result('gone'); // 410 as the HTTP status of the watch request
      throw err;
    } finally {
      clearTimeout(watchdog);
      this.endWatchForRelist = undefined;
    }
  }

  private applyWatchEvent(ev: WatchEvent): void {
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
    const { key, entry } = this.prepare(ev.object);
    const old = this.cache.get(key);
    if (old) this.indexRemove(key, old.obj);
    if (ev.type === 'DELETED') {
      this.cache.delete(key);
    } else {
      this.cache.set(key, entry);
      this.indexAdd(key, entry.obj);
    }
    if (entry.rv !== undefined) this.resourceVersion = entry.rv;
    if (ev.type === 'DELETED') this.emit({ type: 'delete', obj: entry.obj });
    else if (old) this.emit({ type: 'update', obj: entry.obj, old: old.obj });
    else this.emit({ type: 'add', obj: entry.obj });
  }

  /** Key and version come from the raw object, so a `slim` that drops them cannot corrupt the cache. */
  private prepare(raw: unknown): { key: string; entry: Entry<T> } {
    const meta = (raw as { metadata?: { name?: unknown; namespace?: unknown; resourceVersion?: unknown } } | null)?.metadata;
    if (!meta || typeof meta.name !== 'string') throw new Error(`informer ${this.opts.name}: object without metadata.name`);
    const key = cacheKey(typeof meta.namespace === 'string' ? meta.namespace : undefined, meta.name);
    const rv = typeof meta.resourceVersion === 'string' ? meta.resourceVersion : undefined;
    const obj = deepFreeze(this.opts.slim ? this.opts.slim(raw) : (raw as T));
    return { key, entry: { obj, rv } };
  }

  private indexAdd(key: string, obj: T): void {
    for (const index of this.indexes.values()) {
      for (const value of index.fn(obj)) {
        let keys = index.byValue.get(value);
        if (!keys) index.byValue.set(value, (keys = new Set()));
        keys.add(key);
      }
    }
  }

  private indexRemove(key: string, obj: T): void {
    for (const index of this.indexes.values()) {
      for (const value of index.fn(obj)) {
        const keys = index.byValue.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.byValue.delete(value);
      }
    }
  }

  private emit(ev: InformerEvent<T>): void {
    for (const fn of this.eventHandlers) {
      try {
        fn(ev);
      } catch (err) {
        this.log.error({ err: describe(err), event: ev.type, name: ev.obj.metadata.name }, 'event handler threw');
      }
    }
  }
}

/** `namespace/name`, or `name` for cluster-scoped objects — the same key the work queue uses. */
function cacheKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

function deepFreeze<O>(obj: O): O {
  if (obj !== null && typeof obj === 'object' && !Object.isFrozen(obj)) {
    Object.freeze(obj);
    for (const v of Object.values(obj)) deepFreeze(v);
  }
  return obj;
}

/** Log-friendly error summary: message, status code and reason, never a whole object. */
function describe(err: unknown): { message: string; statusCode?: number; reason?: string; code?: string } {
  if (err instanceof ApiError) {
    return { message: err.message, statusCode: err.statusCode, ...(err.reason !== undefined ? { reason: err.reason } : {}) };
  }
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { message: err.message, ...(typeof code === 'string' ? { code } : {}) };
  }
  return { message: String(err) };
}
