/**
 * Pod watches that follow what is rolling: one list + watch per DaemonSet whose pods are needed
 * (domain/podInterest.ts), started when it begins to need them and stopped, its cache dropped, once it has
 * not needed them for `lingerMs`.
 *
 * ```
 *   off ──needed (DaemonSet or guard event, or gather asks)──> syncing ──first list──> synced
 *    ^                                                                                  │
 *    └──── not needed for lingerMs, the DaemonSet deleted, or its UID or selector changed ┘
 * ```
 *
 * Why one watch per DaemonSet and not one shared watch: a watch takes one label selector, and selectors
 * cannot be OR-ed, so a shared watch of only the rolling DaemonSets' pods does not exist. The shared
 * alternative is a watch of every daemon pod (`controller-revision-hash` exists), which is what made memory
 * grow with the fleet. Each per-DaemonSet watch selects with the DaemonSet's own selector, which the
 * API server's watch cache filters; pods are then matched to the DaemonSet by owner UID, as before.
 *
 * The linger keeps a DaemonSet whose counters flap (a pod restarting now and then) from listing its pods
 * on every flap. Each watch is a full supervised {@link Informer}: relist on 410, watchdog, metrics.
 */
import type { Logger } from 'pino';
import type { ApiClient } from '../k8s/apiClient.js';
import { Informer, type InformerStats } from '../k8s/informer.js';
import { selectorString } from '../k8s/labelSelector.js';
import { DAEMONSET_KIND, HASH_LABEL } from '../api/names.js';
import { controllerOf, type SlimDaemonSet, type SlimGuard, type SlimPod } from '../api/objects.js';
import { podsPath } from '../k8s/apiPaths.js';
import { slimPod } from '../k8s/slim.js';
import { podNewlyFailing } from '../domain/causes.js';
import { needsPods } from '../domain/podInterest.js';
import { settledCountersOf } from '../reconcile/targets/daemonSet.js';
import type { Clock, Timers } from '../reconcile/ports.js';

const BY_OWNER = 'owner';
/**
 * A request from gather keeps the watch at least this long, even with no linger: long enough for the
 * status write of the guard that asked to reach the cache this manager reads.
 */
const ASK_HOLD_MS = 5_000;

/** What the manager reads: the DaemonSet and the guards that target it, from the controller's caches. */
export interface PodWatchSources {
  daemonSet(namespace: string, name: string): Readonly<SlimDaemonSet> | undefined;
  guardsTargeting(namespace: string, name: string): ReadonlyArray<Readonly<SlimGuard>>;
}

export interface PodWatchOptions {
  client: ApiClient;
  log: Logger;
  clock: Clock;
  timers: Timers;
  /** How long a DaemonSet keeps its pod watch after it stopped needing it. */
  lingerMs: number;
  /** Options every watch shares with the controller's other informers. */
  informer: { watchTimeoutSeconds: number; idleTimeoutMs: number; backoff: { initialMs: number; maxMs: number } };
  /**
   * Called with `namespace/name` of the DaemonSet when its pods changed or were (re)listed; `urgent` when
   * a pod just failed (domain/causes.ts podNewlyFailing): the change a person waits to read about.
   */
  onChange(namespace: string, name: string, urgent: boolean): void;
}

interface Watch {
  namespace: string;
  name: string;
  uid: string;
  selector: string;
  informer: Informer<SlimPod>;
  startedAt: number;
  /** Since when the DaemonSet has not needed its pods; absent while it does. */
  idleSince?: number;
  timer?: unknown;
}

/** One pod watch, for metrics and /readyz. */
export interface PodWatchSample {
  namespace: string;
  daemonSet: string;
  stats: InformerStats;
  synced: boolean;
  startedAt: number;
}

/**
 * The DaemonSet's own selector plus `controller-revision-hash`. A selector this code cannot write (an
 * operator the API may add) falls back to every daemon pod of the namespace: wider, never narrower, and
 * pods are matched by owner UID anyway.
 */
function podSelector(ds: Readonly<SlimDaemonSet>): string {
  try {
    return selectorString(ds.spec.selector, [HASH_LABEL]);
  } catch {
    return HASH_LABEL;
  }
}

export class PodWatches {
  private readonly watches = new Map<string, Watch>();
  private readonly byUid = new Map<string, Watch>();
  /** When gather last asked for a DaemonSet's pods: counts as needing them for the linger. */
  private readonly asked = new Map<string, number>();
  private stopped = false;
  /** Watches started and ended since the process started (read by tests). */
  started = 0;
  ended = 0;

  constructor(
    private readonly sources: PodWatchSources,
    private readonly opts: PodWatchOptions,
  ) {}

  /**
   * Starts, keeps or stops the watch of DaemonSet `namespace/name` as its need says. Called on every
   * DaemonSet and guard event for it; cheap when nothing changes.
   */
  sync(namespace: string, name: string): void {
    if (this.stopped) return;
    const key = `${namespace}/${name}`;
    const ds = this.sources.daemonSet(namespace, name);
    const w = this.watches.get(key);
    if (!ds?.metadata.uid) {
      this.asked.delete(key);
      if (w) this.end(w, 'the DaemonSet is gone');
      return;
    }
    const now = this.opts.clock.now();
    const needed = needsPods(
      settledCountersOf(ds),
      this.sources.guardsTargeting(namespace, name).map((g) => g.status),
    );
    const selector = podSelector(ds);
    if (w && (w.uid !== ds.metadata.uid || w.selector !== selector)) this.end(w, 'the DaemonSet was recreated or its selector changed');
    let cur = this.watches.get(key);
    if (needed) {
      if (!cur) this.begin(namespace, name, ds.metadata.uid, selector);
      else if (cur.idleSince !== undefined) {
        delete cur.idleSince;
        this.clearTimer(cur);
      }
      return;
    }
    // Not needed by the counters nor by any guard's status. A request from gather (whose guard status
    // may be newer than the cache's) still counts for the linger.
    let askedAt = this.asked.get(key);
    if (askedAt !== undefined && now - askedAt >= Math.max(this.opts.lingerMs, ASK_HOLD_MS)) {
      this.asked.delete(key);
      askedAt = undefined;
    }
    if (!cur) {
      if (askedAt === undefined) return;
      cur = this.begin(namespace, name, ds.metadata.uid, selector);
    }
    cur.idleSince ??= now;
    const until = Math.max(
      cur.idleSince + this.opts.lingerMs,
      askedAt === undefined ? 0 : askedAt + Math.max(this.opts.lingerMs, ASK_HOLD_MS),
    );
    const left = until - now;
    if (left <= 0) {
      this.end(cur, 'its pods are no longer needed');
      return;
    }
    const armed = cur;
    if (armed.timer === undefined) {
      armed.timer = this.opts.timers.setTimeout(() => {
        delete armed.timer;
        this.sync(namespace, name);
      }, left);
    }
  }

  /** gather needs the pods of DaemonSet `namespace/name` and they are not cached: watch them now. */
  want(namespace: string, name: string): void {
    this.asked.set(`${namespace}/${name}`, this.opts.clock.now());
    this.sync(namespace, name);
  }

  /** Whether the pods of the DaemonSet with this UID are cached. */
  state(namespace: string, name: string, uid: string): 'synced' | 'syncing' | 'off' {
    const w = this.watches.get(`${namespace}/${name}`);
    if (!w || w.uid !== uid) return 'off';
    return w.informer.hasSynced() ? 'synced' : 'syncing';
  }

  /** The cached pods whose controller has this UID (none when its pods are not watched). */
  podsOwnedBy(uid: string): ReadonlyArray<Readonly<SlimPod>> {
    return this.byUid.get(uid)?.informer.byIndex(BY_OWNER, uid) ?? [];
  }

  /** A cached pod by name, from whichever watch of `namespace` holds it. */
  pod(namespace: string, name: string): Readonly<SlimPod> | undefined {
    for (const w of this.watches.values()) {
      if (w.namespace !== namespace) continue;
      const p = w.informer.get(namespace, name);
      if (p) return p;
    }
    return undefined;
  }

  /** Every DaemonSet whose pods are watched, as `namespace/name`. */
  keys(): string[] {
    return [...this.watches.keys()];
  }

  samples(): PodWatchSample[] {
    return [...this.watches.values()].map((w) => ({
      namespace: w.namespace,
      daemonSet: w.name,
      stats: w.informer.stats(),
      synced: w.informer.hasSynced(),
      startedAt: w.startedAt,
    }));
  }

  /** Asks the watch of DaemonSet `namespace/name` to list again (see {@link Informer.requestRelist}). */
  requestRelist(namespace: string, name: string, reason: string): boolean {
    return this.watches.get(`${namespace}/${name}`)?.informer.requestRelist(reason) ?? false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const all = [...this.watches.values()];
    for (const w of all) this.clearTimer(w);
    this.watches.clear();
    this.byUid.clear();
    await Promise.allSettled(all.map((w) => w.informer.stop()));
  }

  private begin(namespace: string, name: string, uid: string, selector: string): Watch {
    const path = podsPath(namespace);
    const informer = new Informer<SlimPod>(
      this.opts.client,
      { name: 'pods', listPath: path, labelSelector: selector, slim: slimPod, ...this.opts.informer },
      this.opts.log.child({ daemonSet: `${namespace}/${name}` }),
    );
    informer.addIndex(BY_OWNER, (p) => {
      const c = controllerOf(p.metadata, DAEMONSET_KIND);
      return c ? [c.uid] : [];
    });
    const w: Watch = { namespace, name, uid, selector, informer, startedAt: this.opts.clock.now() };
    informer.onEvent((e) => {
      const c = controllerOf(e.obj.metadata, DAEMONSET_KIND);
      if (c?.uid === uid) this.opts.onChange(namespace, name, e.type !== 'delete' && podNewlyFailing(e.old, e.obj));
    });
    informer.onRelist(() => this.opts.onChange(namespace, name, false));
    this.watches.set(`${namespace}/${name}`, w);
    this.byUid.set(uid, w);
    this.started++;
    this.opts.log.debug({ daemonSet: `${namespace}/${name}`, selector }, 'watching the pods of the DaemonSet');
    informer.start();
    return w;
  }

  private end(w: Watch, why: string): void {
    this.clearTimer(w);
    const key = `${w.namespace}/${w.name}`;
    if (this.watches.get(key) === w) this.watches.delete(key);
    if (this.byUid.get(w.uid) === w) this.byUid.delete(w.uid);
    this.ended++;
    this.opts.log.debug({ daemonSet: key, why }, 'no longer watching the pods of the DaemonSet');
    void w.informer.stop();
  }

  private clearTimer(w: Watch): void {
    if (w.timer !== undefined) this.opts.timers.clearTimeout(w.timer);
    delete w.timer;
  }
}
