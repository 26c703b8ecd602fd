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
 * - the workloads of a kind cached on demand (StatefulSets, Deployments: KindDescriptor.cachedOnDemand),
 *   their controller's Warnings and, for a kind whose history is ReplicaSets, the ReplicaSets (slimmed
 *   like ControllerRevisions), only once a guard targets one ({@link Caches.watchKind}): an install that
 *   guards DaemonSets alone never lists StatefulSets, and needs no right to (an operator upgraded before its RBAC keeps working for its DaemonSets).
 */
import type { Logger } from 'pino';
import type { CacheHealth } from './healthServer.js';
import type { ApiClient } from '../k8s/apiClient.js';
import { Informer, type InformerStats } from '../k8s/informer.js';
import {
  controllerRevisionsPath,
  coreEventsPath,
  daemonSetsPath,
  deploymentsPath,
  replicaSetsPath,
  guardsPath,
  namespacesPath,
  nodesPath,
  policiesPath,
  statefulSetsPath,
  claimsPath,
} from '../k8s/apiPaths.js';
import { slimDaemonSet, slimEvent, slimGuard, slimNamespace, slimNode, slimPolicy, slimRevision } from '../k8s/slim.js';
import { slimClaim, slimStatefulSet } from '../k8s/slimStatefulSet.js';
import { slimDeployment, slimReplicaSet } from '../k8s/slimDeployment.js';
import { DEFAULT_KIND, KINDS, TARGET_KINDS, controllingWorkload, mapKinds } from '../api/kinds.js';
import type { TargetKind } from '../api/types.js';
import type { SettledCounters } from '../domain/podInterest.js';
import { targetKey } from './targetKey.js';
import { settledCountersOf } from '../reconcile/targets/daemonSet.js';
import { statefulSetCounters } from '../reconcile/targets/statefulSet.js';
import { deploymentCounters } from '../reconcile/targets/deployment.js';
import {
  type SlimWorkload,
  type SlimWorkloads,
  type SlimClaim,
  type SlimEvent,
  type SlimGuard,
  type SlimNamespace,
  type SlimNode,
  type SlimPod,
  type SlimPolicy,
  type SlimReplicaSet,
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

/** Each kind's workloads in their cache: one entry per kind, which tsc holds complete. */
export type WorkloadSets = { readonly [K in TargetKind]: InformerSet<SlimWorkloads[K]> };

/** How the pod watches read each kind's counters: one entry per kind, which tsc holds complete. */
const COUNTERS: { readonly [K in TargetKind]: (w: Readonly<SlimWorkloads[K]>) => SettledCounters } = {
  DaemonSet: settledCountersOf,
  StatefulSet: statefulSetCounters,
  Deployment: deploymentCounters,
};

export class Caches {
  readonly guards: InformerSet<SlimGuard>;
  /** Each kind's workloads (a kind cached on demand: once {@link watchKind} asked for it). */
  readonly workloads: WorkloadSets;
  /** Each kind's controller's Warning Events on its workloads (FailedCreate), started with its workloads. */
  readonly warnings: Readonly<Record<TargetKind, InformerSet<SlimEvent>>>;
  /** The claims of the units of kinds that keep claims (KindDescriptor.claims): started with the first of them. */
  readonly claims: InformerSet<SlimClaim>;
  readonly pods: PodWatches;
  readonly revisions: InformerSet<SlimRevision>;
  /** The ReplicaSets of kinds whose history they are (KindDescriptor.history): started with the first of them. */
  readonly replicaSets: InformerSet<SlimReplicaSet>;
  readonly nodes: Informer<SlimNode>;
  readonly podWarnings: InformerSet<SlimEvent>;
  readonly policies: Informer<SlimPolicy> | undefined;
  readonly namespaces: Informer<SlimNamespace> | undefined;
  private readonly podListeners: Array<(kind: TargetKind, namespace: string, name: string, urgent: boolean) => void> = [];
  /** The kinds cached on demand that were asked for ({@link watchKind}); the others are not started. */
  private readonly watchedOnDemand = new Set<TargetKind>();
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
    this.workloads = {
      DaemonSet: set(KINDS.DaemonSet.resource, daemonSetsPath, slimDaemonSet),
      StatefulSet: set(KINDS.StatefulSet.resource, statefulSetsPath, slimStatefulSet),
      Deployment: set(KINDS.Deployment.resource, deploymentsPath, slimDeployment),
    };
    this.replicaSets = set('replicasets', replicaSetsPath, slimReplicaSet);
    this.claims = set('persistentvolumeclaims', claimsPath, slimClaim);
    this.pods = new PodWatches(
      {
        target: (kind, n, name) => this.watchedTarget(kind, n, name),
        guardsTargeting: (kind, n, name) => this.guardsTargeting(kind, n, name),
        workloadOf: (n, m) => this.workloadOf(n, m),
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
    this.warnings = mapKinds((d) => set(`events-${d.resource}`, coreEventsPath, slimEvent, d.controllerWarnings));
    this.podWarnings = set('events-pods', coreEventsPath, slimEvent, POD_WARNINGS);
    this.policies = deps.policies ? cluster('rolloutguardpolicies', policiesPath(), slimPolicy) : undefined;
    this.namespaces = deps.policies ? cluster('namespaces', namespacesPath(), slimNamespace) : undefined;

    this.guards.addIndex(BY_TARGET, (g) => [
      targetKey(g.spec?.targetRef?.kind ?? DEFAULT_KIND, g.metadata.namespace, g.spec?.targetRef?.name ?? ''),
    ]);
    const ownerIndex = (o: SlimPod | SlimRevision | SlimReplicaSet): string[] => {
      const c = controllingWorkload(o.metadata);
      return c ? [c.uid] : [];
    };
    const involved = (e: SlimEvent): string[] => [`${e.metadata.namespace ?? e.involved.namespace ?? ''}/${e.involved.name}`];
    for (const kind of TARGET_KINDS) this.warnings[kind].addIndex(BY_INVOLVED, involved);
    this.podWarnings.addIndex(BY_INVOLVED, involved);
    this.revisions.addIndex(BY_OWNER, ownerIndex);
    this.replicaSets.addIndex(BY_OWNER, ownerIndex);
  }

  /**
   * The workload controlling object `m` of `namespace` (a pod, a ReplicaSet), through its ReplicaSet where
   * a ReplicaSet controls it (KindDescriptor.podOwner): undefined while that ReplicaSet is not cached.
   */
  workloadOf(
    namespace: string,
    m: Readonly<Pick<SlimPod['metadata'], 'ownerReferences'>>,
  ): { kind: TargetKind; name: string; uid: string } | undefined {
    return controllingWorkload(m, (owner) => {
      const rs = this.replicaSets.get(namespace, owner.name);
      return rs?.metadata.uid === owner.uid ? rs.metadata : undefined;
    });
  }

  /**
   * The workload a Warning of `kind`'s controller about object `name` is about: the workload itself, or,
   * where the kind's controller Warnings are about its ReplicaSets, the workload controlling that one.
   */
  warnedWorkload(kind: TargetKind, namespace: string, name: string): string | undefined {
    if (KINDS[kind].podOwner === 'controller') return name;
    const rs = this.replicaSets.get(namespace, name);
    const w = rs ? controllingWorkload(rs.metadata) : undefined;
    return w?.kind === kind ? w.name : undefined;
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
    const w = this.workload(kind, namespace, name);
    if (!w?.metadata.uid) return undefined;
    const counters = (COUNTERS[kind] as (w: Readonly<SlimWorkload>) => SettledCounters)(w);
    return { uid: w.metadata.uid, ...(w.spec.selector ? { selector: w.spec.selector } : {}), counters };
  }

  /** The cached Warning Events about `kind` `namespace/name` (a target, or a pod). */
  warningsAbout(kind: TargetKind | 'Pod', namespace: string, name: string): ReadonlyArray<Readonly<SlimEvent>> {
    const set = kind === 'Pod' ? this.podWarnings : this.warnings[kind];
    return set.byIndex(BY_INVOLVED, `${namespace}/${name}`);
  }

  /** The cache of `kind`'s workloads, read as workloads of any kind. */
  workloadSet(kind: TargetKind): InformerSet<SlimWorkload> {
    return this.workloads[kind] as InformerSet<SlimWorkload>;
  }

  /** The cached workload `kind` `namespace/name`. */
  workload<K extends TargetKind>(kind: K, namespace: string, name: string): Readonly<SlimWorkloads[K]> | undefined {
    return (this.workloads[kind] as InformerSet<SlimWorkloads[K]>).get(namespace, name);
  }

  /**
   * The cached workloads of `kind` for policies and selector guards; undefined while the kind's cache
   * (started on demand) has not listed, and asking starts it.
   */
  listedWorkloads(kind: TargetKind): ReadonlyArray<Readonly<SlimWorkload>> | undefined {
    return this.kindListed(kind) ? this.workloadSet(kind).list() : undefined;
  }

  /** The cached targets of `kind`, by namespace and name. */
  targetsOf(kind: TargetKind): Array<{ namespace: string; name: string }> {
    return this.workloadSet(kind)
      .list()
      .map((t) => ({ namespace: t.metadata.namespace ?? '', name: t.metadata.name }));
  }

  /**
   * Starts the caches of `kind` if it is cached on demand, once: gather asks when it observes a guard's
   * target of that kind. Until they have listed, such a guard's pass waits (see {@link kindListed}).
   */
  watchKind(kind: TargetKind): void {
    if (!KINDS[kind].cachedOnDemand || this.watchedOnDemand.has(kind)) return;
    this.watchedOnDemand.add(kind);
    if (this.started) for (const i of this.onDemandInformers(kind)) i.start();
  }

  /** Whether the caches of `kind` have listed; asking starts them where they are cached on demand. */
  kindListed(kind: TargetKind): boolean {
    if (!KINDS[kind].cachedOnDemand) return true;
    this.watchKind(kind);
    return this.onDemandInformers(kind).every((i) => i.hasSynced());
  }

  /** The informers of `kind` started on demand: its workloads, its controller's Warnings, and the claims if it keeps any. */
  private onDemandInformers(kind: TargetKind): Informer<Meta>[] {
    const sets = [
      this.workloads[kind],
      this.warnings[kind],
      ...(KINDS[kind].claims ? [this.claims] : []),
      ...(KINDS[kind].history === 'ReplicaSets' ? [this.replicaSets] : []),
    ] as unknown as InformerSet<Meta>[];
    return sets.flatMap((s) => s.members);
  }

  /** Whether the caches of `kind` run: from the start, or once asked for. */
  private kindRuns(kind: TargetKind): boolean {
    return !KINDS[kind].cachedOnDemand || this.watchedOnDemand.has(kind);
  }

  /** The namespaced caches that run: one informer per watched namespace each (a kind cached on demand once asked for). */
  private sets(): InformerSet<Meta>[] {
    const running = TARGET_KINDS.filter((k) => this.kindRuns(k));
    return [
      this.guards,
      ...running.flatMap((k) => [this.workloads[k], this.warnings[k]]),
      ...(running.some((k) => KINDS[k].claims) ? [this.claims] : []),
      ...(running.some((k) => KINDS[k].history === 'ReplicaSets') ? [this.replicaSets] : []),
      this.revisions,
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
