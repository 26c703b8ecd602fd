/**
 * The caches every controller reads: one informer (or one per watched namespace) per kind, their
 * indexes, and the pod watches. Started on every replica, so a standby has a warm cache; only the
 * leader's workers act on them.
 *
 * What is watched, and why it costs what it costs:
 * - RolloutGuards and DaemonSets in the watched namespaces: few, small;
 * - daemon pods, only of the DaemonSets that need them (rolling, baking, or with counters not settled;
 *   podWatches.ts), slimmed to a few hundred bytes each: needed for the per-node split. A settled
 *   DaemonSet is judged from its counters, so memory follows what is rolling, not the fleet;
 * - ControllerRevisions, slimmed (no data: the undo reads the one it needs fresh);
 * - Nodes, cluster-wide, slimmed to name, labels and taints: needed to name empty nodes and nodes that
 *   left the targets;
 * - StatefulSets and their controller's Warnings, only once a guard targets a StatefulSet
 *   ({@link Caches.watchStatefulSets}): an install that guards DaemonSets alone never lists them, and
 *   needs no right to (an operator upgraded before its RBAC keeps working for its DaemonSets).
 */
import type { Logger } from 'pino';
import type { CacheHealth } from './healthServer.js';
import type { ApiClient } from '../k8s/apiClient.js';
import { Informer, type InformerStats } from '../k8s/informer.js';
import {
  controllerRevisionsPath,
  coreEventsPath,
  daemonSetsPath,
  guardsPath,
  namespacesPath,
  nodesPath,
  policiesPath,
  statefulSetsPath,
  claimsPath,
} from '../k8s/apiPaths.js';
import { slimDaemonSet, slimEvent, slimGuard, slimNamespace, slimNode, slimPolicy, slimRevision } from '../k8s/slim.js';
import { slimClaim, slimStatefulSet } from '../k8s/slimStatefulSet.js';
import { DEFAULT_KIND, controllingWorkload, mapKinds } from '../api/kinds.js';
import type { TargetKind } from '../api/types.js';
import type { SettledCounters } from '../domain/podInterest.js';
import { targetKey } from './targetKey.js';
import { settledCountersOf } from '../reconcile/targets/daemonSet.js';
import { statefulSetCounters } from '../reconcile/targets/statefulSet.js';
import {
  type SlimDaemonSet,
  type SlimStatefulSet,
  type SlimClaim,
  type SlimEvent,
  type SlimGuard,
  type SlimNamespace,
  type SlimNode,
  type SlimPod,
  type SlimPolicy,
  type SlimRevision,
} from '../api/objects.js';
import type { OperatorConfig } from './config.js';
import { PodWatches, type WatchedTarget } from './podWatches.js';
import { systemTimers } from '../k8s/sleep.js';
import { type Clock, type Timers } from '../reconcile/ports.js';
import { InformerSet, type Meta } from './informerSet.js';

/** The index names: guards by target `ns/name`, revisions by owner UID, Warning Events by involved `ns/name`. */
export const BY_TARGET = 'target';
export const BY_OWNER = 'owner';
export const BY_INVOLVED = 'involved';

/**
 * The Warning Events that explain a blocked node, chosen by field selectors so the API server filters
 * them: each kind's controller's on its workloads (KindDescriptor.controllerWarnings; FailedCreate:
 * admission and quota refusals, a missing ServiceAccount; our own Warnings mirrored on the DaemonSet are
 * not read back), and the
 * kubelet's on pods, less the chatty reasons that explain nothing new (a back-off is already in the pod's
 * status; an unschedulable pod's reason is in its PodScheduled condition). A failing readiness probe is
 * read (`Unhealthy`): the pod's status says only "containers with unready status", while the kubelet's
 * Event carries what the probe printed.
 */
export const POD_WARNINGS = 'involvedObject.kind=Pod,type=Warning,reason!=BackOff,reason!=FailedScheduling,reason!=ProbeWarning';

/** A pod watch that has not listed within this long counts against /readyz (a list takes milliseconds). */
const POD_WATCH_SYNC_GRACE_MS = 60_000;

export interface CachesDeps {
  client: ApiClient;
  config: OperatorConfig;
  /** Whether the policies and namespaces are cached: only when the policy controller runs. */
  policies: boolean;
  clock: Clock;
  log: Logger;
  /** Timers of the pod watches' linger; the real ones unless a test drives them. */
  timers?: Timers;
  /** Told of every watch event's delivery (see InformerOptions.onDelivery): the watch lag metric. */
  onDelivery?: (resource: string, writtenAtMs: number, receivedAtMs: number) => void;
}

/** A cached workload of any kind. */
export type SlimWorkload = SlimDaemonSet | SlimStatefulSet;

/** Where {@link Caches} keeps each kind's workloads and its controller's Warnings: one entry per kind, which tsc holds complete. */
export const KIND_CACHE_FIELDS = {
  DaemonSet: { workloads: 'daemonSets', warnings: 'dsWarnings' },
  StatefulSet: { workloads: 'statefulSets', warnings: 'stsWarnings' },
} as const satisfies Readonly<Record<TargetKind, { workloads: keyof Caches; warnings: keyof Caches }>>;

/** The cached workloads of `kind`. */
export function workloadsOf(caches: Pick<Caches, 'daemonSets' | 'statefulSets'>, kind: TargetKind): InformerSet<SlimWorkload> {
  return caches[KIND_CACHE_FIELDS[kind].workloads] as unknown as InformerSet<SlimWorkload>;
}

/** The cached Warning Events of `kind`'s controller. */
export function warningsOf(caches: Pick<Caches, 'dsWarnings' | 'stsWarnings'>, kind: TargetKind): InformerSet<SlimEvent> {
  return caches[KIND_CACHE_FIELDS[kind].warnings];
}

/** The caches of one kind of target, read the same way for every kind. */
interface KindCaches {
  /** Its workloads. */
  workloads: InformerSet<SlimWorkload>;
  /** Its controller's Warning Events on them. */
  warnings: InformerSet<SlimEvent>;
  /** Its counters, as the pod watches read them. */
  counters(w: Readonly<SlimWorkload>): SettledCounters;
  /** Whether its caches have listed, where they are started on demand (always true for the others). */
  listed(): boolean;
  /** Asks for its caches, where they are started on demand (nothing for the others). */
  watch(): void;
}

export class Caches {
  readonly guards: InformerSet<SlimGuard>;
  readonly daemonSets: InformerSet<SlimDaemonSet>;
  readonly statefulSets: InformerSet<SlimStatefulSet>;
  /** The claims of StatefulSet ordinals: started with the StatefulSet caches. */
  readonly claims: InformerSet<SlimClaim>;
  readonly pods: PodWatches;
  readonly revisions: InformerSet<SlimRevision>;
  readonly nodes: Informer<SlimNode>;
  readonly dsWarnings: InformerSet<SlimEvent>;
  readonly stsWarnings: InformerSet<SlimEvent>;
  readonly podWarnings: InformerSet<SlimEvent>;
  readonly policies: Informer<SlimPolicy> | undefined;
  readonly namespaces: Informer<SlimNamespace> | undefined;
  /** The caches of each kind. */
  private readonly byKind: Readonly<Record<TargetKind, KindCaches>>;
  private readonly podListeners: Array<(kind: TargetKind, namespace: string, name: string, urgent: boolean) => void> = [];
  /** The StatefulSet caches were asked for (watchStatefulSets); until then they are not started. */
  private statefulSetsWatched = false;
  private started = false;

  constructor(private readonly deps: CachesDeps) {
    const { client, config, log } = deps;
    const common = {
      watchTimeoutSeconds: config.watchTimeoutSeconds,
      idleTimeoutMs: config.watchIdleTimeoutMs,
      backoff: config.informerBackoffMs,
      ...(deps.onDelivery ? { onDelivery: deps.onDelivery } : {}),
    };
    const ns = config.namespaces;
    const set = <T extends Meta>(
      name: string,
      listPath: (n: string | undefined) => string,
      slim: (raw: unknown) => T,
      fieldSelector?: string,
    ) =>
      new InformerSet<T>(
        client,
        log,
        ns,
        (n) => ({ name, listPath: listPath(n), slim, ...(fieldSelector ? { fieldSelector } : {}) }),
        common,
      );
    const cluster = <T extends Meta>(name: string, listPath: string, slim: (raw: unknown) => T) =>
      new Informer<T>(client, { name, listPath, slim, ...common }, log);
    this.guards = set('rolloutguards', guardsPath, slimGuard);
    this.daemonSets = set('daemonsets', daemonSetsPath, slimDaemonSet);
    this.statefulSets = set('statefulsets', statefulSetsPath, slimStatefulSet);
    this.claims = set('persistentvolumeclaims', claimsPath, slimClaim);
    this.pods = new PodWatches(
      {
        target: (kind, n, name) => this.watchedTarget(kind, n, name),
        guardsTargeting: (kind, n, name) => this.guardsTargeting(kind, n, name),
      },
      {
        client,
        log,
        clock: deps.clock,
        timers: deps.timers ?? systemTimers,
        lingerMs: config.podCacheLingerMs,
        informer: common,
        onChange: (kind, n, name, urgent) => {
          for (const fn of this.podListeners) fn(kind, n, name, urgent);
        },
      },
    );
    this.revisions = set('controllerrevisions', controllerRevisionsPath, slimRevision);
    this.nodes = cluster('nodes', nodesPath(), slimNode);
    const warnings = mapKinds((d) => set(`events-${d.resource}`, coreEventsPath, slimEvent, d.controllerWarnings));
    this.dsWarnings = warnings.DaemonSet;
    this.stsWarnings = warnings.StatefulSet;
    this.podWarnings = set('events-pods', coreEventsPath, slimEvent, POD_WARNINGS);
    this.policies = deps.policies ? cluster('rolloutguardpolicies', policiesPath(), slimPolicy) : undefined;
    this.namespaces = deps.policies ? cluster('namespaces', namespacesPath(), slimNamespace) : undefined;

    this.byKind = this.kindCaches();

    this.guards.addIndex(BY_TARGET, (g) => [
      targetKey(g.spec?.targetRef?.kind ?? DEFAULT_KIND, g.metadata.namespace, g.spec?.targetRef?.name ?? ''),
    ]);
    const ownerIndex = (o: SlimPod | SlimRevision): string[] => {
      const c = controllingWorkload(o.metadata);
      return c ? [c.uid] : [];
    };
    const involved = (e: SlimEvent): string[] => [`${e.metadata.namespace ?? e.involved.namespace ?? ''}/${e.involved.name}`];
    this.dsWarnings.addIndex(BY_INVOLVED, involved);
    this.stsWarnings.addIndex(BY_INVOLVED, involved);
    this.podWarnings.addIndex(BY_INVOLVED, involved);
    this.revisions.addIndex(BY_OWNER, ownerIndex);
  }

  /** The caches of each kind: one entry per kind, which tsc holds complete. */
  private kindCaches(): Record<TargetKind, KindCaches> {
    const own: Record<TargetKind, Pick<KindCaches, 'counters' | 'listed' | 'watch'>> = {
      DaemonSet: {
        counters: (w) => settledCountersOf(w as SlimDaemonSet),
        listed: () => true,
        watch: () => {},
      },
      StatefulSet: {
        counters: (w) => statefulSetCounters(w as SlimStatefulSet),
        listed: () => this.statefulSetsSynced(),
        watch: () => this.watchStatefulSets(),
      },
    };
    return mapKinds((d) => ({ workloads: workloadsOf(this, d.kind), warnings: warningsOf(this, d.kind), ...own[d.kind] }));
  }

  /** Called when the pods of target `namespace/name` change or their watch lists again. */
  onPodsChanged(fn: (kind: TargetKind, namespace: string, name: string, urgent: boolean) => void): void {
    this.podListeners.push(fn);
  }

  /** The guards whose targetRef names `kind` `namespace/name`. */
  guardsTargeting(kind: TargetKind, namespace: string | undefined, name: string): ReadonlyArray<Readonly<SlimGuard>> {
    return this.guards.byIndex(BY_TARGET, targetKey(kind, namespace, name));
  }

  /** The cached target as the pod watches read it. */
  private watchedTarget(kind: TargetKind, namespace: string, name: string): WatchedTarget | undefined {
    const k = this.byKind[kind];
    const w = k.workloads.get(namespace, name);
    if (!w?.metadata.uid) return undefined;
    const counters = k.counters(w);
    return { uid: w.metadata.uid, ...(w.spec.selector ? { selector: w.spec.selector } : {}), counters };
  }

  /** The cached Warning Events about `kind` `namespace/name` (a target, or a pod). */
  warningsAbout(kind: TargetKind | 'Pod', namespace: string, name: string): ReadonlyArray<Readonly<SlimEvent>> {
    const set = kind === 'Pod' ? this.podWarnings : this.byKind[kind].warnings;
    return set.byIndex(BY_INVOLVED, `${namespace}/${name}`);
  }

  /**
   * The cached workloads of `kind` for policies and selector guards; undefined while the kind's cache
   * (started on demand) has not listed, and asking starts it.
   */
  workloads(kind: TargetKind): ReadonlyArray<Readonly<SlimWorkload>> | undefined {
    const k = this.byKind[kind];
    if (!k.listed()) {
      k.watch();
      return undefined;
    }
    return k.workloads.list();
  }

  /** The cached targets of `kind`, by namespace and name. */
  targetsOf(kind: TargetKind): Array<{ namespace: string; name: string }> {
    return this.byKind[kind].workloads.list().map((t) => ({ namespace: t.metadata.namespace ?? '', name: t.metadata.name }));
  }

  /**
   * Starts the StatefulSet caches, once: gather asks when it observes a StatefulSet guard's target. Until
   * they have listed, such a guard's pass waits (see {@link statefulSetsSynced}).
   */
  watchStatefulSets(): void {
    if (this.statefulSetsWatched) return;
    this.statefulSetsWatched = true;
    if (this.started) for (const i of this.statefulSetInformers()) i.start();
  }

  /** Whether the StatefulSet caches have listed (false before {@link watchStatefulSets}). */
  statefulSetsSynced(): boolean {
    return this.statefulSetsWatched && this.statefulSetInformers().every((i) => i.hasSynced());
  }

  private statefulSetInformers(): Informer<Meta>[] {
    return [...this.statefulSets.members, ...this.stsWarnings.members, ...this.claims.members] as unknown as Informer<Meta>[];
  }

  /** The namespaced caches: one informer per watched namespace each (the StatefulSet ones once watched). */
  private sets(): InformerSet<Meta>[] {
    return [
      this.guards,
      this.daemonSets,
      ...(this.statefulSetsWatched ? [this.statefulSets] : []),
      this.revisions,
      this.dsWarnings,
      ...(this.statefulSetsWatched ? [this.stsWarnings, this.claims] : []),
      this.podWarnings,
    ] as unknown as InformerSet<Meta>[];
  }

  /** The cluster-scoped caches. */
  private clusterWide(): Informer<Meta>[] {
    return [this.nodes, this.policies, this.namespaces].filter((m) => m !== undefined) as unknown as Informer<Meta>[];
  }

  private allInformers(): Informer<Meta>[] {
    return [...this.sets().flatMap((s) => s.members), ...this.clusterWide()];
  }

  /** Every informer with the namespace it watches (`''`: all or cluster-scoped), for metrics. */
  informerStats(): Array<{ resource: string; namespace: string; daemonset: string; stats: InformerStats }> {
    const out: Array<{ resource: string; namespace: string; daemonset: string; stats: InformerStats }> = [];
    for (const set of this.sets()) {
      set.members.forEach((m, i) => out.push({ resource: m.resource, namespace: set.scopes[i] ?? '', daemonset: '', stats: m.stats() }));
    }
    for (const m of this.clusterWide()) out.push({ resource: m.resource, namespace: '', daemonset: '', stats: m.stats() });
    // One pod watch per DaemonSet that needs its pods: its series come and go with the watch.
    for (const w of this.pods.samples()) out.push({ resource: 'pods', namespace: w.namespace, daemonset: w.daemonSet, stats: w.stats });
    return out;
  }

  /** Starts the informers (on every replica, so a standby has a warm cache). */
  start(): void {
    this.started = true;
    for (const i of this.allInformers()) i.start();
  }

  /** True once every informer has listed: workers never act on a half-filled cache. */
  synced(): boolean {
    return this.allInformers().every((i) => i.hasSynced());
  }

  /** Each cache's sync and last contact, for /readyz. */
  cacheHealth(): CacheHealth[] {
    const out: CacheHealth[] = [];
    for (const set of this.sets()) {
      set.members.forEach((m, i) =>
        out.push({ resource: m.resource, namespace: set.scopes[i] ?? '', synced: m.hasSynced(), ...lastEvent(m.stats()) }),
      );
    }
    for (const m of this.clusterWide()) out.push({ resource: m.resource, namespace: '', synced: m.hasSynced(), ...lastEvent(m.stats()) });
    // A pod watch starts whenever a rollout does: only one that has listed, or that still has not after
    // the grace, says something about this replica's health.
    const now = this.deps.clock.now();
    for (const w of this.pods.samples()) {
      if (w.synced || now - w.startedAt > POD_WATCH_SYNC_GRACE_MS)
        out.push({ resource: `pods of ${w.daemonSet}`, namespace: w.namespace, synced: w.synced, ...lastEvent(w.stats) });
    }
    return out;
  }

  async waitForSync(signal?: AbortSignal): Promise<void> {
    await Promise.all(this.allInformers().map((i) => i.waitForSync(signal)));
  }

  /** Closes every watch, the pod watches' too. */
  async stop(): Promise<void> {
    this.started = false;
    await Promise.allSettled([...this.allInformers().map((i) => i.stop()), this.pods.stop()]);
  }
}

function lastEvent(s: InformerStats): { lastEventAt?: number } {
  return s.lastEventAt !== undefined ? { lastEventAt: s.lastEventAt } : {};
}
