/**
 * Pod watches that follow what is rolling: one list + watch per target (a DaemonSet or a StatefulSet)
 * whose pods are needed (domain/podInterest.ts), started when it begins to need them and stopped, its
 * cache dropped, once it has not needed them for `lingerMs`.
 *
 * ```
 *   off ──needed (target or guard event, or gather asks)──> syncing ──first list──> synced
 *    ^                                                                               │
 *    └──── not needed for lingerMs, the target deleted, or its UID or selector changed ┘
 * ```
 *
 * Why one watch per target and not one shared watch: a watch takes one label selector, and selectors
 * cannot be OR-ed, so a shared watch of only the rolling targets' pods does not exist. The shared
 * alternative is a watch of every such pod (`controller-revision-hash` exists), which is what made memory
 * grow with the fleet. Each watch selects with its target's own selector, which the API server's watch
 * cache filters; pods are then matched to the target by owner UID.
 *
 * The linger keeps a target whose counters flap (a pod restarting now and then) from listing its pods
 * on every flap. Each watch is a full supervised {@link Informer}: relist on 410, watchdog, metrics.
 */
import type { Logger } from 'pino';
import type { ApiClient } from '../k8s/apiClient.js';
import { Informer, type InformerOptions, type InformerStats } from '../k8s/informer.js';
import { selectorString } from '../k8s/labelSelector.js';
import { KINDS, podControllerKind } from '../api/kinds.js';
import { controllerOf, type LabelSelector, type Meta, type SlimGuard, type SlimPod } from '../api/objects.js';
import type { TargetKind } from '../api/types.js';
import { targetKey } from './targetKey.js';
import { podsPath } from '../k8s/apiPaths.js';
import { slimPod } from '../k8s/slim.js';
import { podNewlyFailing } from '../domain/causes.js';
import { needsPods, type SettledCounters } from '../domain/podInterest.js';
import type { Clock, FailureSighting, Timers } from '../reconcile/ports.js';

const BY_OWNER = 'owner';
/**
 * A request from gather keeps the watch at least this long, even with no linger: long enough for the
 * status write of the guard that asked to reach the cache this manager reads.
 */
const ASK_HOLD_MS = 5_000;

/** A target as the pod watches read it: its UID, its pod selector and its controller's counters. */
export interface WatchedTarget {
  uid: string;
  selector?: LabelSelector;
  counters: SettledCounters;
}

/** What the manager reads: the target and the guards that target it, from the controller's caches. */
export interface PodWatchSources {
  target(kind: TargetKind, namespace: string, name: string): WatchedTarget | undefined;
  guardsTargeting(kind: TargetKind, namespace: string, name: string): ReadonlyArray<Readonly<SlimGuard>>;
  /**
   * The workload controlling a pod of `namespace` whose controller is a ReplicaSet (KindDescriptor.podOwner
   * 'replicaSet'), undefined while that ReplicaSet is not cached. Optional: without it such a pod's
   * change is taken as its target's.
   */
  workloadOf?(namespace: string, m: Readonly<Pick<Meta, 'ownerReferences'>>): { uid: string } | undefined;
}

export interface PodWatchOptions {
  client: ApiClient;
  log: Logger;
  clock: Clock;
  timers: Timers;
  /** How long a DaemonSet keeps its pod watch after it stopped needing it. */
  lingerMs: number;
  /** Options every watch shares with the controller's other informers. */
  informer: Pick<InformerOptions<SlimPod>, 'watchTimeoutSeconds' | 'idleTimeoutMs' | 'backoff' | 'onDelivery'>;
  /**
   * Called with the kind and `namespace/name` of the target when its pods changed or were (re)listed;
   * `urgent` when a pod just failed (domain/causes.ts podNewlyFailing): the change a person waits to read about.
   */
  onChange(kind: TargetKind, namespace: string, name: string, urgent: boolean): void;
}

interface Watch {
  kind: TargetKind;
  namespace: string;
  name: string;
  uid: string;
  selector: string;
  informer: Informer<SlimPod>;
  startedAt: number;
  /**
   * When each of its pods that is failing was first seen failing here (wall ms, by pod name): where the
   * operator's part of an explanation begins. Only failing pods, dropped with the pod or the watch.
   */
  failureSeen: Map<string, FailureSighting>;
  /** Its watch events, and the most any arrived behind its write stamp (k8s/writtenAt.ts; whole seconds): said when it ends. */
  lag: { events: number; maxMs: number };
  /** Since when the DaemonSet has not needed its pods; absent while it does. */
  idleSince?: number;
  timer?: unknown;
}

/** One pod watch, for metrics and /readyz. */
export interface PodWatchSample {
  kind: TargetKind;
  namespace: string;
  /** The target's name. */
  daemonSet: string;
  stats: InformerStats;
  synced: boolean;
  startedAt: number;
}

/**
 * The target's own selector plus the label its pods name their revision by (KindDescriptor.revisionLabel:
 * `controller-revision-hash` on DaemonSet and StatefulSet pods). A selector this code cannot write (an
 * operator the API may add) falls back to every such pod of the namespace: wider, never narrower, and
 * pods are matched by owner UID anyway.
 */
function podSelector(kind: TargetKind, selector: LabelSelector | undefined): string {
  const label = KINDS[kind].revisionLabel;
  try {
    return selectorString(selector, [label]);
  } catch {
    return label;
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
   * Starts, keeps or stops the watch of target `namespace/name` as its need says. Called on every event
   * of the target and of its guards; cheap when nothing changes.
   */
  sync(kind: TargetKind, namespace: string, name: string): void {
    if (this.stopped) return;
    const key = targetKey(kind, namespace, name);
    const target = this.sources.target(kind, namespace, name);
    const w = this.watches.get(key);
    if (!target) {
      this.asked.delete(key);
      if (w) this.end(w, 'the target is gone');
      return;
    }
    const now = this.opts.clock.now();
    const needed = needsPods(
      target.counters,
      this.sources.guardsTargeting(kind, namespace, name).map((g) => g.status),
    );
    const selector = podSelector(kind, target.selector);
    if (w && (w.uid !== target.uid || w.selector !== selector)) this.end(w, 'the target was recreated or its selector changed');
    let cur = this.watches.get(key);
    if (needed) {
      if (!cur) this.begin(kind, namespace, name, target.uid, selector, 'its rollout needs them');
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
      cur = this.begin(kind, namespace, name, target.uid, selector, 'a pass asked for them');
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
        this.sync(kind, namespace, name);
      }, left);
    }
  }

  /** gather needs the pods of target `namespace/name` and they are not cached: watch them now. */
  want(kind: TargetKind, namespace: string, name: string): void {
    this.asked.set(targetKey(kind, namespace, name), this.opts.clock.now());
    this.sync(kind, namespace, name);
  }

  /** Whether the pods of the target with this UID are cached. */
  state(kind: TargetKind, namespace: string, name: string, uid: string): 'synced' | 'syncing' | 'off' {
    const w = this.watches.get(targetKey(kind, namespace, name));
    if (!w || w.uid !== uid) return 'off';
    return w.informer.hasSynced() ? 'synced' : 'syncing';
  }

  /**
   * The cached pods whose controller has this UID (none when its pods are not watched), from the watch of
   * target `within` (default: the controller itself; a Deployment's for its ReplicaSets' pods).
   */
  podsOwnedBy(uid: string, within = uid): ReadonlyArray<Readonly<SlimPod>> {
    return this.byUid.get(within)?.informer.byIndex(BY_OWNER, uid) ?? [];
  }

  /**
   * Whether a pod (its metadata `m`) belongs to the target `uid` of `kind`: its controller is the target,
   * or a ReplicaSet the target controls. A ReplicaSet not cached yet is given the benefit of the doubt:
   * an extra pass costs little, a missed one delays an explanation.
   */
  private ofTarget(kind: TargetKind, namespace: string, uid: string, m: Readonly<Meta>): boolean {
    const c = controllerOf(m, podControllerKind(kind));
    if (!c) return false;
    if (KINDS[kind].podOwner === 'controller') return c.uid === uid;
    const w = this.sources.workloadOf?.(namespace, m);
    return w === undefined || w.uid === uid;
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

  /**
   * When pod `namespace/name` was first seen failing by the watch that holds it (wall ms), and the write
   * stamp of the event that showed it; absent if it was not.
   */
  failureSighting(namespace: string, name: string): FailureSighting | undefined {
    for (const w of this.watches.values()) {
      if (w.namespace !== namespace) continue;
      const seen = w.failureSeen.get(name);
      if (seen !== undefined) return seen;
    }
    return undefined;
  }

  /** Every target whose pods are watched. */
  targets(): Array<{ kind: TargetKind; namespace: string; name: string }> {
    return [...this.watches.values()].map((w) => ({ kind: w.kind, namespace: w.namespace, name: w.name }));
  }

  samples(): PodWatchSample[] {
    return [...this.watches.values()].map((w) => ({
      kind: w.kind,
      namespace: w.namespace,
      daemonSet: w.name,
      stats: w.informer.stats(),
      synced: w.informer.hasSynced(),
      startedAt: w.startedAt,
    }));
  }

  /** Asks the watch of target `namespace/name` to list again (see {@link Informer.requestRelist}). */
  requestRelist(kind: TargetKind, namespace: string, name: string, reason: string): boolean {
    return this.watches.get(targetKey(kind, namespace, name))?.informer.requestRelist(reason) ?? false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const all = [...this.watches.values()];
    for (const w of all) this.clearTimer(w);
    this.watches.clear();
    this.byUid.clear();
    await Promise.allSettled(all.map((w) => w.informer.stop()));
  }

  private begin(kind: TargetKind, namespace: string, name: string, uid: string, selector: string, why: string): Watch {
    const path = podsPath(namespace);
    const lag = { events: 0, maxMs: 0 };
    const informer = new Informer<SlimPod>(
      this.opts.client,
      {
        name: 'pods',
        listPath: path,
        labelSelector: selector,
        slim: slimPod,
        ...this.opts.informer,
        onDelivery: (resource, writtenAt, receivedAt) => {
          this.opts.informer.onDelivery?.(resource, writtenAt, receivedAt);
          lag.events++;
          lag.maxMs = Math.max(lag.maxMs, receivedAt - writtenAt);
        },
      },
      this.opts.log.child(logKey(kind, namespace, name)),
    );
    // Pods are indexed by their own controller: the target, or the ReplicaSet of the target that created
    // them (gather asks by each ReplicaSet's UID). A fact of the pod alone, so the index never depends on
    // which of two watches delivered first.
    const ownerKind = podControllerKind(kind);
    informer.addIndex(BY_OWNER, (p) => {
      const c = controllerOf(p.metadata, ownerKind);
      return c ? [c.uid] : [];
    });
    const w: Watch = { kind, namespace, name, uid, selector, informer, startedAt: this.opts.clock.now(), failureSeen: new Map(), lag };
    informer.onEvent((e) => {
      if (!this.ofTarget(kind, namespace, uid, e.obj.metadata)) return;
      const pod = e.obj.metadata.name;
      const failing = e.type !== 'delete' && podNewlyFailing(e.old, e.obj);
      if (e.type === 'delete') w.failureSeen.delete(pod);
      else if (failing && !w.failureSeen.has(pod)) {
        // The event's write stamp tells a late watch from a later write when the sighting is late.
        const seen: FailureSighting = { at: this.opts.clock.now(), ...(e.writtenAt !== undefined ? { writtenAt: e.writtenAt } : {}) };
        w.failureSeen.set(pod, seen);
      }
      this.opts.onChange(kind, namespace, name, failing);
    });
    informer.onRelist(() => {
      this.opts.onChange(kind, namespace, name, false);
    });
    this.watches.set(targetKey(kind, namespace, name), w);
    this.byUid.set(uid, w);
    this.started++;
    // Info, as the end below: once per rollout each, and a watch that reopens within seconds is what
    // delays the next explanation (it must list the target's pods again first).
    this.opts.log.info({ ...logKey(kind, namespace, name), selector, why }, 'watching the pods of the target');
    informer.start();
    return w;
  }

  private end(w: Watch, why: string): void {
    this.clearTimer(w);
    const key = targetKey(w.kind, w.namespace, w.name);
    if (this.watches.get(key) === w) this.watches.delete(key);
    if (this.byUid.get(w.uid) === w) this.byUid.delete(w.uid);
    this.ended++;
    const watchedMs = this.opts.clock.now() - w.startedAt;
    const { events, maxMs } = w.lag;
    this.opts.log.info(
      { ...logKey(w.kind, w.namespace, w.name), why, watchedMs, events, maxLagMs: maxMs },
      'no longer watching the pods of the target',
    );
    void w.informer.stop();
  }

  private clearTimer(w: Watch): void {
    if (w.timer !== undefined) this.opts.timers.clearTimeout(w.timer);
    delete w.timer;
  }
}

/** How the logs name a target: `daemonSet` or `statefulSet`, `namespace/name`. */
function logKey(kind: TargetKind, namespace: string, name: string): Record<string, string> {
  return { [KINDS[kind].field]: `${namespace}/${name}` };
}
