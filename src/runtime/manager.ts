/**
 * The manager: what runs the operator process, as controller-runtime's manager does. It assembles the
 * ports (the writes, gated by leadership, and the read views over the caches), starts the caches on
 * every replica and the workers only under leadership, serves health and metrics, and on SIGTERM or
 * SIGINT shuts down in order: workers drained, watches closed, lease released, servers closed.
 */
import type { Logger } from 'pino';
import { ApiClient } from '../k8s/apiClient.js';
import { ClockSkew } from '../k8s/clockSkew.js';
import { AdmissionCheck } from '../k8s/admissionCheck.js';
import { TemplateUndo } from '../k8s/templateUndo.js';
import { evictPod } from '../k8s/podEviction.js';
import { EventRecorder } from '../k8s/eventRecorder.js';
import { StatusWriter } from '../k8s/statusWriter.js';
import { PolicyWriter } from '../k8s/policyWriter.js';
import { ApiAccessReviewer } from '../k8s/metricsAuth.js';
import { loadKubeConfig } from '../k8s/kubeConfig.js';
import { MAX_CLOCK_SKEW_MS } from '../api/defaults.js';
import type { CacheView, Clock, PolicyCache, PolicyPorts, ReconcilerPorts, Timers } from '../reconcile/ports.js';
import { Reconciler } from '../reconcile/reconciler.js';
import { PolicyReconciler } from '../reconcile/policyReconciler.js';
import { guardDispatch } from './selectorWiring.js';
import { monotonicClock, systemClock } from './clock.js';
import { systemTimers } from '../k8s/sleep.js';
import type { OperatorConfig } from './config.js';
import { Caches, BY_OWNER } from './caches.js';
import { Controller } from './controller.js';
import { IdleCollector, exposedGc, youngGenerationBytes } from './idleCollector.js';
import { readiness, startProbeServer } from './healthServer.js';
import { MetricsAuthFilter } from './metricsAuth.js';
import { loadServingCert, startMetricsServer, type ServingCert } from './metricsServer.js';
import { LeaderElector } from './leaderElection.js';
import { createLogger } from './logger.js';
import { Metrics } from './metrics.js';
import { addedAnnouncements, publish } from './diagnostics.js';

/** The process's exit codes, as the command line defines them. */
export interface ExitCodes {
  ok: number;
  failure: number;
}

/** What the manager runs; the real ones from {@link startManager}, fakes in tests. */
export interface ManagerParts {
  config: Pick<OperatorConfig, 'shutdownBudgetMs'>;
  log: Logger;
  metrics: { leader: { set(value: number): void } };
  caches: Pick<Caches, 'start' | 'waitForSync' | 'stop'>;
  controller: Pick<Controller, 'startWorkers' | 'stop'>;
  /** Absent without leader election: this process leads from the start. */
  elector?: Pick<LeaderElector, 'run' | 'release'>;
  /** Closed in this order at shutdown, after the lease is released: the probe server, then the metrics server. */
  servers: ReadonlyArray<{ close(): unknown }>;
  idle?: Pick<IdleCollector, 'worked' | 'stop'>;
  clockSkewMs: () => number | undefined;
  exitCodes: ExitCodes;
  exit: (code: number) => void;
  onSignal: (signal: 'SIGTERM' | 'SIGINT', handler: () => void) => void;
}

export class Manager {
  private readonly stopWork = new AbortController();
  private shuttingDown = false;

  constructor(private readonly p: ManagerParts) {}

  /** Starts the caches and waits for leadership (at once without leader election), then runs the workers. */
  async run(): Promise<void> {
    const { caches, idle, elector } = this.p;
    caches.start();
    // The first lists are a burst of their own (every node, DaemonSet and revision), and a follower
    // queues no key after them: a quiet spell starts when they are in.
    if (idle)
      void caches.waitForSync(this.stopWork.signal).then(
        () => idle.worked(),
        () => undefined,
      );
    // PID 1 in a container gets no default signal actions: without handlers SIGTERM would be ignored.
    for (const sig of ['SIGTERM', 'SIGINT'] as const) {
      this.p.onSignal(sig, () => {
        void this.shutdown(sig); // shutdown handles its own errors by exiting
      });
    }
    if (!elector) {
      await this.lead(this.stopWork.signal);
      return;
    }
    await elector.run({ onStartedLeading: (signal) => this.lead(signal), onStoppedLeading: () => this.lostLeadership() });
  }

  /** The ordered stop; a second signal while it runs changes nothing. */
  async shutdown(signal: string): Promise<void> {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    const { log, config, controller, caches, elector } = this.p;
    log.info({ signal, budgetMs: config.shutdownBudgetMs }, 'shutting down');
    this.stopWork.abort();
    this.p.idle?.stop();
    await controller.stop(config.shutdownBudgetMs);
    await caches.stop();
    if (elector) await elector.release();
    for (const s of this.p.servers) s.close();
    this.p.metrics.leader.set(0);
    log.info('stopped');
    log.flush();
    this.p.exit(this.p.exitCodes.ok);
  }

  private async lead(signal: AbortSignal): Promise<void> {
    const { log, metrics, caches, controller } = this.p;
    metrics.leader.set(1);
    await caches.waitForSync(signal);
    // The caches' lists sampled the API server's clock: say how far ours is, warn past the bound that refuses undos.
    const skewMs = this.p.clockSkewMs();
    if (skewMs !== undefined && Math.abs(skewMs) > MAX_CLOCK_SKEW_MS) {
      log.warn(
        { clockSkewMs: skewMs, boundMs: MAX_CLOCK_SKEW_MS },
        "the operator's clock differs from the API server's past the bound: undos are refused until time sync is fixed",
      );
    }
    log.info({ clockSkewMs: skewMs }, 'caches synced; starting workers');
    controller.startWorkers(AbortSignal.any([signal, this.stopWork.signal]));
  }

  private lostLeadership(): void {
    if (this.shuttingDown) return;
    // Lost the lease: another replica may act now. Stop at once; Kubernetes restarts us as a follower.
    this.p.log.error('lost leadership; exiting');
    this.p.log.flush();
    this.p.exit(this.p.exitCodes.failure);
  }
}

/** Builds the operator from its configuration, starts its servers and runs it until a signal ends it. */
export async function startManager(cfg: OperatorConfig, exitCodes: ExitCodes): Promise<void> {
  // Before anything connects: a missing or broken certificate is a usage error, said once, at start.
  let servingCert: ServingCert | undefined;
  if (cfg.metricsBindAddress && cfg.metricsSecure && cfg.metricsCertDir) servingCert = await loadServingCert(cfg.metricsCertDir);
  const log = createLogger(cfg.logLevel);
  const metrics = new Metrics();
  const skew = new ClockSkew();
  const client = ApiClient.fromKubeConfig(loadKubeConfig(cfg.kubeconfig), { onRequest: (r) => metrics.recordRequest(r), clockSkew: skew });
  metrics.observeClockSkew(() => skew.estimateMs());
  const { writes, policyWrites, elector, namespaceTerminatingSince } = leaderGatedWrites(client, cfg, log);
  const idle = idleCollector(cfg, log, metrics);
  const { caches, controller } = assembleController({
    client,
    config: cfg,
    writes,
    policyWrites,
    ...(idle ? { onWork: () => idle.worked() } : {}),
    // Checked when a worker takes a key too: a leader woken from a pause runs its overdue requeues before
    // its renew loop wakes, and a pass decides (and logs its decision) before its first write.
    ...(elector ? { mayRun: () => elector.stillLeading() } : {}),
    clock: systemClock,
    metrics,
    log,
    clockSkewMs: () => skew.estimateMs(),
    namespaceTerminatingSince,
  });
  metrics.observeInformers(() => caches.informerStats());
  // Twice the watchdog's idle timeout: by then a silent watch was restarted and is still silent.
  const staleAfterMs = 2 * cfg.watchIdleTimeoutMs;
  const probes = await startProbeServer(cfg.healthProbeBindAddress, {
    ready: () => readiness(caches.cacheHealth(), Date.now(), staleAfterMs),
  });
  const metricsServer = cfg.metricsBindAddress
    ? await startMetricsServer({
        address: cfg.metricsBindAddress,
        metrics,
        log,
        ...(servingCert ? { tls: servingCert, auth: new MetricsAuthFilter(new ApiAccessReviewer(client), cfg.metricsAuth) } : {}),
      })
    : undefined;
  log.info(
    {
      namespaces: cfg.namespaces.length ? cfg.namespaces : 'all',
      // The bound ports (the kernel's choice for port 0); metricsPort is null when metrics are disabled.
      metricsPort: metricsServer?.port ?? null,
      probePort: probes.port,
      metricsSecure: metricsServer !== undefined && cfg.metricsSecure,
      leaderElect: cfg.leaderElect,
      identity: cfg.identity,
    },
    'starting',
  );
  await new Manager({
    config: cfg,
    log,
    metrics,
    caches,
    controller,
    ...(elector ? { elector } : {}),
    servers: [probes.server, ...(metricsServer ? [metricsServer.server] : [])],
    ...(idle ? { idle } : {}),
    clockSkewMs: () => skew.estimateMs(),
    exitCodes,
    exit: (code) => process.exit(code),
    onSignal: (sig, handler) => process.on(sig, handler),
  }).run();
}

/**
 * The writes of both reconcilers and, with leader election, the elector that gates them. Every write
 * made under leadership goes through stillLeading() first. A leader that was paused or starved past its
 * lease may have been replaced; stillLeading() then declares the loss (onStoppedLeading exits) instead of
 * letting a stale pass write. Not fencing, but it shrinks the overlap to a request in flight.
 */
function leaderGatedWrites(
  client: ApiClient,
  cfg: OperatorConfig,
  log: Logger,
): Pick<Assembly, 'writes' | 'namespaceTerminatingSince'> & { policyWrites: PolicyPorts; elector: LeaderElector | undefined } {
  const statusWriter = new StatusWriter(client);
  const undo = new TemplateUndo(client);
  const admission = new AdmissionCheck(client);
  const events = new EventRecorder(client, cfg.identity, log);
  const policyWriter = new PolicyWriter(client);
  const elector = cfg.leaderElect
    ? new LeaderElector({
        client,
        namespace: cfg.leaseNamespace,
        name: cfg.leaseName,
        identity: cfg.identity,
        leaseDurationMs: cfg.leaseDurationMs,
        renewDeadlineMs: cfg.renewDeadlineMs,
        retryPeriodMs: cfg.retryPeriodMs,
        logger: log,
      })
    : undefined;
  const leading =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      elector && !elector.stillLeading() ? Promise.reject(new Error('not the leader: write skipped')) : write(...args);
  const policyWrites: PolicyPorts = {
    createGuard: leading(policyWriter.createGuard.bind(policyWriter)),
    patchGuardSpec: leading(policyWriter.patchGuardSpec.bind(policyWriter)),
    deleteGuard: leading(policyWriter.deleteGuard.bind(policyWriter)),
    writeStatus: leading(policyWriter.writeStatus.bind(policyWriter)),
    readPolicy: (name) => policyWriter.readPolicy(name),
  };
  const writes: Assembly['writes'] = {
    readGuard: (ns, name) => statusWriter.read(ns, name),
    writeStatus: leading(async (g, s) => {
      const written = await statusWriter.write(g, s);
      if (written)
        publish('beforeAnnounce', () => ({
          namespace: g.metadata.namespace ?? '',
          name: g.metadata.name,
          announcements: addedAnnouncements(g.status?.announcements, s.announcements),
        }));
      return written;
    }),
    emit: leading((g, t, e) => events.emit(g, t, e)),
    undo: leading(async (req) => {
      const outcome = await undo.undo(req);
      publish('undoPatched', () => ({ namespace: req.namespace, name: req.name, outcome }));
      return outcome;
    }),
    dryRun: leading((kind, ns, name, rev) => undo.dryRun(kind, ns, name, rev)),
    evict: leading((ns, pod, uid) => evictPod(client, ns, pod, uid)),
    compareAdmission: leading((kind, ns, name, rev, node) => admission.compare(kind, ns, name, rev, node)),
  };
  return { writes, policyWrites, elector, namespaceTerminatingSince: (ns) => events.terminatingSince(ns) };
}

/** What the caches and controllers are assembled from. */
export interface Assembly {
  client: ApiClient;
  config: OperatorConfig;
  /** The guard reconciler's API writes and reads; the cache reads are added here. */
  writes: Omit<ReconcilerPorts, 'guard' | 'relistTargetCaches'>;
  /** The policy reconciler's; absent when policies are disabled. */
  policyWrites?: PolicyPorts;
  clock: Clock;
  metrics: Metrics;
  log: Logger;
  /** API server time − local time, ms (see k8s/clockSkew.ts); absent in tests that do not estimate it. */
  clockSkewMs?: () => number | undefined;
  /** Timers of the pod watches' linger; the real ones unless a test drives them. */
  timers?: Timers;
  /** Namespaces the API server refused an Event in as terminating (k8s/eventRecorder.ts), beside the namespace cache. */
  namespaceTerminatingSince?: (namespace: string) => string | undefined;
  onWork?: () => void;
  mayRun?: () => boolean;
}

/** The caches, the reconcilers over them, and the controller that schedules their passes. */
export function assembleController(a: Assembly): { caches: Caches; controller: Controller } {
  const { config, log } = a;
  const policyWrites = config.policies ? a.policyWrites : undefined;
  const caches = new Caches({
    client: a.client,
    config,
    policies: policyWrites !== undefined,
    clock: a.clock,
    log,
    ...(a.timers ? { timers: a.timers } : {}),
    onDelivery: (resource, writtenAt, receivedAt) => a.metrics.observeDelivery(resource, writtenAt, receivedAt, a.clockSkewMs?.()),
  });
  const reconciler = new Reconciler(
    {
      ...a.writes,
      guard: (n, name) => caches.guards.get(n, name),
      relistTargetCaches: (kind, n, reason) => {
        caches.workloadSet(kind).requestRelist(n, reason);
        caches.revisions.requestRelist(n, reason);
      },
    },
    cacheView(caches, a),
    a.clock,
    a.metrics,
    log,
    // The controller is made below from this reconciler; a requeue comes only after a pass, once it exists.
    { requeue: (key, afterMs) => controller.guardWork.addAfter(key, afterMs) },
  );
  const policyReconciler = policyWrites && new PolicyReconciler(policyCache(caches, config.namespaces), policyWrites, a.clock, log);
  // The guard writes come with the policies' RBAC; without them a selector guard says so in its status.
  const reconcileGuard = guardDispatch(caches, reconciler, {
    ports: { ...(policyWrites ? { guardWrites: policyWrites } : {}), readGuard: a.writes.readGuard, writeStatus: a.writes.writeStatus },
    clock: a.clock,
    log,
  });
  const controller = new Controller({
    caches,
    reconcileGuard,
    ...(policyReconciler ? { reconcilePolicy: (name: string) => policyReconciler.reconcile(name) } : {}),
    config,
    metrics: a.metrics,
    log,
    ...(a.onWork ? { onWork: a.onWork } : {}),
    ...(a.mayRun ? { mayRun: a.mayRun } : {}),
    settled: () => reconciler.settled(),
  });
  return { caches, controller };
}

/** What a guard's pass reads: the caches, never the API. */
function cacheView(caches: Caches, a: Pick<Assembly, 'clockSkewMs' | 'namespaceTerminatingSince'>): CacheView {
  const { clockSkewMs } = a;
  return {
    workload: (kind, n, name) => caches.workload(kind, n, name),
    workloadsListed: (kind) => caches.kindListed(kind),
    claim: (n, name) => caches.claims.get(n, name),
    podsOwnedBy: (uid, within) => caches.pods.podsOwnedBy(uid, within),
    podCache: (kind, n, name, uid) => caches.pods.state(kind, n, name, uid),
    wantPods: (kind, n, name) => caches.pods.want(kind, n, name),
    podFailureSighting: (n, pod) => caches.pods.failureSighting(n, pod),
    revisionsOwnedBy: (uid) => caches.revisions.byIndex(BY_OWNER, uid),
    replicaSetsOwnedBy: (uid) => caches.replicaSets.byIndex(BY_OWNER, uid),
    nodes: () => caches.nodes.list(),
    guardsTargeting: (kind, n, name) => caches.guardsTargeting(kind, n, name),
    warningsFor: (kind, n, name) => caches.warningsAbout(kind, n, name),
    ...(clockSkewMs ? { clockSkewMs } : {}),
    // The namespace cache runs with the policies; without it, the API server's refusals say it.
    namespaceTerminatingSince: (n) => caches.namespaces?.get(undefined, n)?.metadata.deletionTimestamp ?? a.namespaceTerminatingSince?.(n),
  };
}

/** What a policy's pass reads; only built when the policies and namespaces are cached. */
function policyCache(caches: Caches, watchedNamespaces: readonly string[]): PolicyCache {
  const { policies, namespaces } = caches;
  if (!policies || !namespaces) throw new Error('policy cache without the policies and namespaces cached');
  const watched = new Set(watchedNamespaces);
  return {
    policy: (name) => policies.get(undefined, name),
    policies: () => policies.list(),
    // In namespaced mode a policy can only act where the operator watches.
    namespaces: () => namespaces.list().filter((n) => watched.size === 0 || watched.has(n.metadata.name)),
    workloads: (kind) => caches.listedWorkloads(kind),
    guards: () => caches.guards.list(),
  };
}

/** The idle collector, when it is on and Node exposes a collection (the image starts it with `--expose-gc`). */
function idleCollector(cfg: OperatorConfig, log: Logger, metrics: Metrics): IdleCollector | undefined {
  if (cfg.idleCollectAfterMs === 0) return undefined;
  const collect = exposedGc();
  if (!collect) {
    log.info('node was started without --expose-gc: memory a burst of work reserved is not given back once idle');
    return undefined;
  }
  const mib = (b: number): number => Math.round((b / 1048576) * 10) / 10;
  return new IdleCollector({
    clock: monotonicClock,
    timers: systemTimers,
    quietMs: cfg.idleCollectAfterMs,
    collect,
    youngGenerationBytes,
    onCollected: (c) => {
      metrics.idleCollection.observe(c.ms / 1000);
      log.debug(
        { ms: Math.round(c.ms), youngMiB: [mib(c.youngBefore), mib(c.youngAfter)] },
        'idle: one full collection after a quiet spell',
      );
    },
  });
}
