/**
 * The controller: informers feed keyed work queues, workers run the reconcilers. Guards and policies
 * each have their own queue and workers (workers.ts): guard keys are `namespace/name`, policy keys a name.
 *
 * Watch handlers only enqueue guard keys (level-based): a DaemonSet, daemon pod or ControllerRevision
 * event maps back to the guards that target its DaemonSet; a node whose labels or taints change
 * re-enqueues every guard (eligibility may have changed). Reconcile never trusts an event payload.
 *
 * What is watched, and why it costs what it costs:
 * - RolloutGuards and DaemonSets in the watched namespaces: few, small;
 * - daemon pods, only of the DaemonSets that need them (rolling, baking, or with counters not settled;
 *   podWatches.ts), slimmed to a few hundred bytes each: needed for the per-node split. A settled
 *   DaemonSet is judged from its counters, so memory follows what is rolling, not the fleet;
 * - ControllerRevisions, slimmed (no data: the undo reads the one it needs fresh);
 * - Nodes, cluster-wide, slimmed to name, labels and taints: needed to name empty nodes and nodes that
 *   left the targets. Heartbeat-only updates do not enqueue anything.
 */
import type { Logger } from 'pino';
import type { CacheHealth } from './healthServer.js';
import type { ApiClient } from '../k8s/apiClient.js';
import { Informer, type InformerEvent, type InformerStats } from '../k8s/informer.js';
import {
  controllerRevisionsPath,
  coreEventsPath,
  daemonSetsPath,
  guardsPath,
  namespacesPath,
  nodesPath,
  policiesPath,
} from '../k8s/apiPaths.js';
import { slimDaemonSet, slimEvent, slimGuard, slimNamespace, slimNode, slimPolicy, slimRevision } from '../k8s/slim.js';
import { DAEMONSET_KIND, POLICY_LABEL } from '../api/names.js';
import {
  controllerOf,
  type SlimDaemonSet,
  type SlimEvent,
  type SlimGuard,
  type SlimNamespace,
  type SlimNode,
  type SlimPod,
  type SlimPolicy,
  type SlimRevision,
} from '../api/objects.js';
import type { CacheView, PolicyPorts, ReconcilerPorts } from '../reconcile/ports.js';
import { Reconciler } from '../reconcile/reconciler.js';
import { PolicyReconciler } from '../reconcile/policyReconciler.js';
import type { OperatorConfig } from './config.js';
import type { Metrics } from './metrics.js';
import { PodWatches } from './podWatches.js';
import { systemTimers, type Clock, type Timers } from './clock.js';
import { WorkQueue } from './workQueue.js';
import { Workers } from './workers.js';
import { InformerSet, type Meta } from './informerSet.js';

const BY_TARGET = 'target';
const BY_OWNER = 'owner';
const BY_INVOLVED = 'involved';

/**
 * The Warning Events that explain a blocked node, chosen by field selectors so the API server filters
 * them: the DaemonSet controller's on DaemonSets (FailedCreate: admission and quota refusals; our own
 * Warnings mirrored on the DaemonSet are not read back), and the
 * kubelet's on pods, less the chatty reasons that explain nothing new (a back-off is already in the pod's
 * status; an unschedulable pod's reason is in its PodScheduled condition). A failing readiness probe is
 * read (`Unhealthy`): the pod's status says only "containers with unready status", while the kubelet's
 * Event carries what the probe printed.
 */
export const DAEMONSET_WARNINGS = 'involvedObject.kind=DaemonSet,type=Warning,source=daemonset-controller';
export const POD_WARNINGS = 'involvedObject.kind=Pod,type=Warning,reason!=BackOff,reason!=FailedScheduling,reason!=ProbeWarning';

/** A pod watch that has not listed within this long counts against /readyz (a list takes milliseconds). */
const POD_WATCH_SYNC_GRACE_MS = 60_000;

export interface ControllerDeps {
  client: ApiClient;
  ports: Omit<ReconcilerPorts, 'guard'>;
  /** Writes of the policy controller; absent when policies are disabled. */
  policyPorts?: PolicyPorts;
  config: OperatorConfig;
  clock: Clock;
  metrics: Metrics;
  log: Logger;
  /** API server time − local time, ms (see k8s/clockSkew.ts); absent in tests that do not estimate it. */
  clockSkewMs?: () => number | undefined;
  /** Timers of the pod watches' linger; the real ones unless a test drives them. */
  timers?: Timers;
  /** Told of every key queued and every pass ended, by both controllers (the idle collector). */
  onWork?: () => void;
  /** Asked before every pass of either controller: false stops the workers (see WorkersOptions.mayRun). */
  mayRun?: () => boolean;
}

export class Controller {
  readonly guards: InformerSet<SlimGuard>;
  readonly daemonSets: InformerSet<SlimDaemonSet>;
  readonly pods: PodWatches;
  readonly revisions: InformerSet<SlimRevision>;
  readonly nodes: Informer<SlimNode>;
  readonly dsWarnings: InformerSet<SlimEvent>;
  readonly podWarnings: InformerSet<SlimEvent>;
  readonly policies: Informer<SlimPolicy> | undefined;
  readonly namespaces: Informer<SlimNamespace> | undefined;
  readonly reconciler: Reconciler;
  readonly policyReconciler: PolicyReconciler | undefined;
  /** The guards' queue and workers. */
  readonly guardWork: Workers;
  /** The policies' queue and workers; absent when policies are disabled. */
  readonly policyWork: Workers | undefined;
  private resyncTimer: ReturnType<typeof setTimeout> | undefined;
  private workersStarted = false;

  constructor(private readonly deps: ControllerDeps) {
    const { client, config, log } = deps;
    const common = {
      watchTimeoutSeconds: config.watchTimeoutSeconds,
      idleTimeoutMs: config.watchIdleTimeoutMs,
      backoff: config.informerBackoffMs,
    };
    const ns = config.namespaces;
    this.guards = new InformerSet(client, log, ns, (n) => ({ name: 'rolloutguards', listPath: guardsPath(n), slim: slimGuard }), common);
    this.daemonSets = new InformerSet(
      client,
      log,
      ns,
      (n) => ({ name: 'daemonsets', listPath: daemonSetsPath(n), slim: slimDaemonSet }),
      common,
    );
    this.pods = new PodWatches(
      {
        daemonSet: (n, name) => this.daemonSets.get(n, name),
        guardsTargeting: (n, name) => this.guards.byIndex(BY_TARGET, `${n}/${name}`),
      },
      {
        client,
        log,
        clock: deps.clock,
        timers: deps.timers ?? systemTimers,
        lingerMs: config.podCacheLingerMs,
        informer: common,
        onChange: (n, name) => this.enqueueForTarget(n, name),
      },
    );
    this.revisions = new InformerSet(
      client,
      log,
      ns,
      (n) => ({ name: 'controllerrevisions', listPath: controllerRevisionsPath(n), slim: slimRevision }),
      common,
    );
    this.nodes = new Informer<SlimNode>(client, { name: 'nodes', listPath: nodesPath(), slim: slimNode, ...common }, log);
    this.dsWarnings = new InformerSet(
      client,
      log,
      ns,
      (n) => ({ name: 'events-daemonsets', listPath: coreEventsPath(n), fieldSelector: DAEMONSET_WARNINGS, slim: slimEvent }),
      common,
    );
    this.podWarnings = new InformerSet(
      client,
      log,
      ns,
      (n) => ({ name: 'events-pods', listPath: coreEventsPath(n), fieldSelector: POD_WARNINGS, slim: slimEvent }),
      common,
    );
    if (config.policies && deps.policyPorts) {
      this.policies = new Informer<SlimPolicy>(
        client,
        { name: 'rolloutguardpolicies', listPath: policiesPath(), slim: slimPolicy, ...common },
        log,
      );
      this.namespaces = new Informer<SlimNamespace>(
        client,
        { name: 'namespaces', listPath: namespacesPath(), slim: slimNamespace, ...common },
        log,
      );
      const watched = new Set(ns);
      const policies = this.policies;
      const namespaces = this.namespaces;
      this.policyReconciler = new PolicyReconciler(
        {
          policy: (name) => policies.get(undefined, name),
          policies: () => policies.list(),
          // In namespaced mode a policy can only act where the operator watches.
          namespaces: () => namespaces.list().filter((n) => watched.size === 0 || watched.has(n.metadata.name)),
          daemonSets: () => this.daemonSets.list(),
          guards: () => this.guards.list(),
        },
        deps.policyPorts,
        deps.clock,
        log,
      );
    }

    this.guards.addIndex(BY_TARGET, (g) => [`${g.metadata.namespace ?? ''}/${g.spec?.targetRef?.name ?? ''}`]);
    const ownerIndex = (o: SlimPod | SlimRevision): string[] => {
      const c = controllerOf(o.metadata, DAEMONSET_KIND);
      return c ? [c.uid] : [];
    };
    const involved = (e: SlimEvent): string[] => [`${e.metadata.namespace ?? e.involved.namespace ?? ''}/${e.involved.name}`];
    this.dsWarnings.addIndex(BY_INVOLVED, involved);
    this.podWarnings.addIndex(BY_INVOLVED, involved);
    this.revisions.addIndex(BY_OWNER, ownerIndex);

    const queue = (): WorkQueue =>
      new WorkQueue({ baseDelayMs: config.backoffBaseMs, maxDelayMs: config.backoffMaxMs, qps: config.queueQps, burst: config.queueBurst });
    const work = {
      count: config.workers,
      metrics: deps.metrics,
      log,
      ...(deps.onWork ? { onWork: deps.onWork } : {}),
      ...(deps.mayRun ? { mayRun: deps.mayRun } : {}),
    };

    const cache: CacheView = {
      daemonSet: (n, name) => this.daemonSets.get(n, name),
      podsOwnedBy: (uid) => this.pods.podsOwnedBy(uid),
      podCache: (n, name, uid) => this.pods.state(n, name, uid),
      wantPods: (n, name) => this.pods.want(n, name),
      revisionsOwnedBy: (uid) => this.revisions.byIndex(BY_OWNER, uid),
      nodes: () => this.nodes.list(),
      guardsTargeting: (n, name) => this.guards.byIndex(BY_TARGET, `${n}/${name}`),
      warningsFor: (kind, n, name) => (kind === 'DaemonSet' ? this.dsWarnings : this.podWarnings).byIndex(BY_INVOLVED, `${n}/${name}`),
      ...(deps.clockSkewMs ? { clockSkewMs: deps.clockSkewMs } : {}),
    };
    this.reconciler = new Reconciler(
      {
        ...deps.ports,
        guard: (n, name) => this.guards.get(n, name),
        relistTargetCaches: (n, reason) => {
          this.daemonSets.requestRelist(n, reason);
          this.revisions.requestRelist(n, reason);
        },
      },
      cache,
      deps.clock,
      deps.metrics,
      log,
    );
    this.guardWork = new Workers({
      name: 'guard',
      queueName: 'guards',
      queue: queue(),
      reconcile: (key) => this.reconciler.reconcile(key),
      ...work,
    });
    const policyReconciler = this.policyReconciler;
    this.policyWork =
      policyReconciler &&
      new Workers({
        name: 'policy',
        queueName: 'policies',
        queue: queue(),
        reconcile: (name) => policyReconciler.reconcile(name),
        ...work,
      });
    this.wireHandlers();
  }

  private enqueue(key: string): void {
    this.guardWork.add(key);
  }

  /** Enqueues every guard targeting DaemonSet `namespace/name`. */
  private enqueueForTarget(namespace: string | undefined, name: string): void {
    for (const g of this.guards.byIndex(BY_TARGET, `${namespace ?? ''}/${name}`)) {
      this.enqueue(`${g.metadata.namespace ?? ''}/${g.metadata.name}`);
    }
  }

  private enqueueAll(): void {
    for (const g of this.guards.list()) this.enqueue(`${g.metadata.namespace ?? ''}/${g.metadata.name}`);
    this.enqueuePolicies();
  }

  private enqueuePolicies(): void {
    for (const p of this.policies?.list() ?? []) this.policyWork?.add(p.metadata.name);
  }

  /** Every DaemonSet the pod watches must look at again: each cached one, and each watched one (it may be gone). */
  private syncPodWatches(): void {
    const keys = new Set([...this.daemonSets.list().map((d) => `${d.metadata.namespace ?? ''}/${d.metadata.name}`), ...this.pods.keys()]);
    for (const k of keys) {
      const slash = k.indexOf('/');
      this.pods.sync(k.slice(0, slash), k.slice(slash + 1));
    }
  }

  private wireHandlers(): void {
    this.guards.onEvent((e) => {
      // A guard's status says whether it follows a rollout, which decides whether its pods are watched.
      this.pods.sync(e.obj.metadata.namespace ?? '', e.obj.spec?.targetRef?.name ?? '');
      if (e.old && e.old.spec?.targetRef?.name !== e.obj.spec?.targetRef?.name)
        this.pods.sync(e.old.metadata.namespace ?? '', e.old.spec?.targetRef?.name ?? '');
      this.enqueue(`${e.obj.metadata.namespace ?? ''}/${e.obj.metadata.name}`);
      // A guard that appears, goes or retargets can change which guard is in charge of a DaemonSet:
      // every guard of the old and new target looks again.
      if (
        e.type !== 'update' ||
        e.old?.spec?.targetRef?.name !== e.obj.spec?.targetRef?.name ||
        e.old?.metadata.deletionTimestamp !== e.obj.metadata.deletionTimestamp
      ) {
        this.enqueueForTarget(e.obj.metadata.namespace, e.obj.spec?.targetRef?.name ?? '');
        if (e.old && e.old.spec?.targetRef?.name !== e.obj.spec?.targetRef?.name)
          this.enqueueForTarget(e.old.metadata.namespace, e.old.spec?.targetRef?.name ?? '');
      }
      if (!this.policies) return;
      const policy = e.obj.metadata.labels?.[POLICY_LABEL];
      if (policy) this.policyWork?.add(policy);
      // A hand-written guard appearing, going or retargeting changes which DaemonSets policies may claim.
      else if (e.type !== 'update' || e.old?.spec?.targetRef?.name !== e.obj.spec?.targetRef?.name) this.enqueuePolicies();
    });
    this.daemonSets.onEvent((e) => {
      // Before the guards run: a DaemonSet that starts rolling has its pods listed by then or soon after.
      this.pods.sync(e.obj.metadata.namespace ?? '', e.obj.metadata.name);
      this.enqueueForTarget(e.obj.metadata.namespace, e.obj.metadata.name);
      if (
        e.type !== 'update' ||
        JSON.stringify(e.old?.metadata.labels) !== JSON.stringify(e.obj.metadata.labels) ||
        JSON.stringify(e.old?.metadata.annotations) !== JSON.stringify(e.obj.metadata.annotations)
      ) {
        this.enqueuePolicies();
      }
    });
    // Any policy change can move an overlap's winner: every policy looks again (policies are few).
    this.policies?.onEvent(() => this.enqueuePolicies());
    this.namespaces?.onEvent((e) => {
      if (e.type !== 'update' || JSON.stringify(e.old?.metadata.labels) !== JSON.stringify(e.obj.metadata.labels)) this.enqueuePolicies();
    });
    this.policies?.onRelist(() => this.enqueuePolicies());
    this.namespaces?.onRelist(() => this.enqueuePolicies());
    this.daemonSets.onRelist(() => this.syncPodWatches());
    this.guards.onRelist(() => this.syncPodWatches());
    this.revisions.onEvent((e: InformerEvent<SlimRevision>) => {
      const c = controllerOf(e.obj.metadata, DAEMONSET_KIND);
      if (c) this.enqueueForTarget(e.obj.metadata.namespace, c.name);
    });
    // A refusal or a mount failure explains a node: the guards of its DaemonSet look again.
    this.dsWarnings.onEvent((e) => {
      if (e.type !== 'delete') this.enqueueForTarget(e.obj.metadata.namespace, e.obj.involved.name);
    });
    this.podWarnings.onEvent((e) => {
      if (e.type === 'delete') return;
      const ns = e.obj.metadata.namespace ?? '';
      const pod = this.pods.pod(ns, e.obj.involved.name);
      const c = pod ? controllerOf(pod.metadata, DAEMONSET_KIND) : undefined;
      if (c) this.enqueueForTarget(ns, c.name);
    });
    this.nodes.onEvent((e) => {
      // Heartbeats change only timestamps, which we do not keep: skip updates that change nothing kept.
      const kept = (n: SlimNode): string => JSON.stringify({ l: n.metadata.labels, t: n.taints, h: n.health });
      if (e.type === 'update' && e.old && kept(e.old) === kept(e.obj)) return;
      this.enqueueAll();
    });
    // After any relist the cache may have jumped (an outage, a 410): look at every guard again.
    // (A pod watch's relist enqueues the guards of its own DaemonSet: podWatches.ts.)
    for (const s of [this.guards, this.daemonSets, this.revisions, this.dsWarnings, this.podWarnings] as unknown as InformerSet<Meta>[])
      s.onRelist(() => this.enqueueAll());
    this.nodes.onRelist(() => this.enqueueAll());
  }

  private allInformers(): Informer<Meta>[] {
    return [
      ...this.guards.members,
      ...this.daemonSets.members,
      ...this.revisions.members,
      ...this.dsWarnings.members,
      ...this.podWarnings.members,
      this.nodes,
      ...(this.policies ? [this.policies] : []),
      ...(this.namespaces ? [this.namespaces] : []),
    ] as unknown as Informer<Meta>[];
  }

  /** Every informer with the namespace it watches (`''`: all or cluster-scoped), for metrics. */
  informerStats(): Array<{ resource: string; namespace: string; daemonset: string; stats: InformerStats }> {
    const out: Array<{ resource: string; namespace: string; daemonset: string; stats: InformerStats }> = [];
    for (const set of [this.guards, this.daemonSets, this.revisions, this.dsWarnings, this.podWarnings] as unknown as InformerSet<Meta>[]) {
      set.members.forEach((m, i) => out.push({ resource: m.resource, namespace: set.scopes[i] ?? '', daemonset: '', stats: m.stats() }));
    }
    for (const m of [this.nodes, this.policies, this.namespaces]) {
      if (m) out.push({ resource: m.resource, namespace: '', daemonset: '', stats: m.stats() });
    }
    // One pod watch per DaemonSet that needs its pods: its series come and go with the watch.
    for (const w of this.pods.samples()) out.push({ resource: 'pods', namespace: w.namespace, daemonset: w.daemonSet, stats: w.stats });
    return out;
  }

  /** Starts the informers (on every replica, so a standby has a warm cache). */
  startInformers(): void {
    for (const i of this.allInformers()) i.start();
  }

  /** True once every informer has listed: workers never act on a half-filled cache. */
  synced(): boolean {
    return this.allInformers().every((i) => i.hasSynced());
  }

  /** Each cache's sync and last contact, for /readyz. */
  cacheHealth(): CacheHealth[] {
    const synced = new Map(this.allInformers().map((i) => [i as unknown, i.hasSynced()]));
    const out: CacheHealth[] = [];
    for (const set of [this.guards, this.daemonSets, this.revisions, this.dsWarnings, this.podWarnings] as unknown as InformerSet<Meta>[]) {
      set.members.forEach((m, i) =>
        out.push({ resource: m.resource, namespace: set.scopes[i] ?? '', synced: synced.get(m) ?? false, ...lastEvent(m.stats()) }),
      );
    }
    for (const m of [this.nodes, this.policies, this.namespaces]) {
      if (m) out.push({ resource: m.resource, namespace: '', synced: m.hasSynced(), ...lastEvent(m.stats()) });
    }
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

  /** Starts the workers (leader only) and the safety resync. */
  startWorkers(signal: AbortSignal): void {
    if (this.workersStarted) return;
    this.workersStarted = true;
    this.enqueueAll();
    this.guardWork.start(signal);
    this.policyWork?.start(signal);
    this.scheduleResync();
  }

  private scheduleResync(): void {
    const base = this.deps.config.resyncMs;
    const jitter = base * 0.1 * (Math.random() * 2 - 1);
    this.resyncTimer = setTimeout(() => {
      this.enqueueAll();
      this.scheduleResync();
    }, base + jitter);
    this.resyncTimer.unref();
  }

  /**
   * Graceful stop: no new keys are handed out, in-flight reconciles get `budgetMs` to finish, then the
   * watches are closed.
   */
  async stop(budgetMs: number): Promise<void> {
    if (this.resyncTimer) clearTimeout(this.resyncTimer);
    const drained = Promise.all([this.guardWork.shutDown(), this.policyWork?.shutDown()]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      drained,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, budgetMs);
        timer.unref();
      }),
    ]);
    if (timer) clearTimeout(timer);
    await Promise.allSettled([...this.allInformers().map((i) => i.stop()), this.pods.stop()]);
  }
}

function lastEvent(s: InformerStats): { lastEventAt?: number } {
  return s.lastEventAt !== undefined ? { lastEventAt: s.lastEventAt } : {};
}
