#!/usr/bin/env node
/**
 * rollout-guard: wiring only. `rollout-guard run` starts the operator; `rollout-guard check` runs the
 * same observe-and-decide logic once per interval for a CI pipeline; `rollout-guard get` shows one
 * rollout node by node. kubectlPlugin.ts runs this same CLI as `kubectl rollout-guard`.
 */
import { ApiClient } from './k8s/apiClient.js';
import { ClockSkew } from './k8s/clockSkew.js';
import { MAX_CLOCK_SKEW_MS } from './api/defaults.js';
import { AdmissionCheck } from './k8s/admissionCheck.js';
import { DaemonSetUndo } from './k8s/daemonSetUndo.js';
import { EventRecorder } from './k8s/eventRecorder.js';
import { StatusWriter } from './k8s/statusWriter.js';
import { PolicyWriter } from './k8s/policyWriter.js';
import { monotonicClock, systemClock, systemTimers } from './runtime/clock.js';
import { UsageError, loadConfig, type OperatorConfig } from './runtime/config.js';
import { Controller } from './runtime/controller.js';
import { IdleCollector, exposedGc, youngGenerationBytes } from './runtime/idleCollector.js';
import { readiness, startProbeServer } from './runtime/healthServer.js';
import { MetricsAuthFilter } from './runtime/metricsAuth.js';
import { loadServingCert, startMetricsServer, type ServingCert } from './runtime/metricsServer.js';
import { ApiAccessReviewer } from './k8s/metricsAuth.js';
import { LeaderElector } from './runtime/leaderElection.js';
import { createLogger } from './runtime/logger.js';
import { Metrics } from './runtime/metrics.js';
import { runCheck } from './cli/check.js';
import { ExitCode } from './cli/command.js';
import { packageVersion } from './version.js';
import { runGet } from './cli/get.js';
import { KubeConfigError, loadKubeConfig } from './k8s/kubeConfig.js';
import { addedAnnouncements, publish } from './runtime/diagnostics.js';

async function run(cfg: OperatorConfig): Promise<void> {
  // Before anything connects: a missing or broken certificate is a usage error, said once, at start.
  let servingCert: ServingCert | undefined;
  if (cfg.metricsBindAddress && cfg.metricsSecure && cfg.metricsCertDir) servingCert = await loadServingCert(cfg.metricsCertDir);
  const log = createLogger(cfg.logLevel);
  const metrics = new Metrics();
  const skew = new ClockSkew();
  const client = ApiClient.fromKubeConfig(loadKubeConfig(cfg.kubeconfig), { onRequest: (r) => metrics.recordRequest(r), clockSkew: skew });
  metrics.observeClockSkew(() => skew.estimateMs());
  const statusWriter = new StatusWriter(client);
  const undo = new DaemonSetUndo(client);
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
  /**
   * Every write made under leadership goes through this check first. A leader that was paused or starved
   * past its lease may have been replaced; stillLeading() then declares the loss (onStoppedLeading exits)
   * instead of letting a stale pass write. Not fencing, but it shrinks the overlap to a request in flight.
   */
  const leading =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      elector && !elector.stillLeading() ? Promise.reject(new Error('not the leader: write skipped')) : write(...args);
  const idle = idleCollector(cfg, log, metrics);
  const controller = new Controller({
    client,
    config: cfg,
    ...(idle ? { onWork: () => idle.worked() } : {}),
    // Checked when a worker takes a key too: a leader woken from a pause runs its overdue requeues before
    // its renew loop wakes, and a pass decides (and logs its decision) before its first write.
    ...(elector ? { mayRun: () => elector.stillLeading() } : {}),
    clock: systemClock,
    metrics,
    log,
    clockSkewMs: () => skew.estimateMs(),
    policyPorts: {
      createGuard: leading(policyWriter.createGuard.bind(policyWriter)),
      patchGuardSpec: leading(policyWriter.patchGuardSpec.bind(policyWriter)),
      deleteGuard: leading(policyWriter.deleteGuard.bind(policyWriter)),
      writeStatus: leading(policyWriter.writeStatus.bind(policyWriter)),
      readPolicy: (name) => policyWriter.readPolicy(name),
    },
    ports: {
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
      dryRun: leading((ns, name, rev) => undo.dryRun(ns, name, rev)),
      compareAdmission: leading((ns, name, rev, node) => admission.compare(ns, name, rev, node)),
    },
  });
  metrics.observeInformers(() => controller.informerStats());
  // Twice the watchdog's idle timeout: by then a silent watch was restarted and is still silent.
  const staleAfterMs = 2 * cfg.watchIdleTimeoutMs;
  const probes = await startProbeServer(cfg.healthProbeBindAddress, {
    ready: () => readiness(controller.cacheHealth(), Date.now(), staleAfterMs),
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
  controller.startInformers();

  const stopWork = new AbortController();
  // The first lists are a burst of their own (every node, DaemonSet and revision), and a follower
  // queues no key after them: a quiet spell starts when they are in.
  if (idle)
    void controller.waitForSync(stopWork.signal).then(
      () => idle.worked(),
      () => undefined,
    );
  let shuttingDown = false;

  const shutdown = async (signal: string): Promise<void> => {
    if (shuttingDown) return;
    shuttingDown = true;
    log.info({ signal, budgetMs: cfg.shutdownBudgetMs }, 'shutting down');
    stopWork.abort();
    idle?.stop();
    await controller.stop(cfg.shutdownBudgetMs);
    if (elector) await elector.release();
    probes.server.close();
    metricsServer?.server.close();
    metrics.leader.set(0);
    log.info('stopped');
    log.flush();
    process.exit(ExitCode.Ok);
  };
  // PID 1 in a container gets no default signal actions: without handlers SIGTERM would be ignored.
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.on(sig, () => {
      void shutdown(sig); // shutdown handles its own errors by exiting
    });
  }

  const lead = async (signal: AbortSignal): Promise<void> => {
    metrics.leader.set(1);
    await controller.waitForSync(signal);
    // The caches' lists have sampled the API server's clock by now: say how far ours is, and warn past
    // the bound at which undos are refused.
    const skewMs = skew.estimateMs();
    if (skewMs !== undefined && Math.abs(skewMs) > MAX_CLOCK_SKEW_MS) {
      log.warn(
        { clockSkewMs: skewMs, boundMs: MAX_CLOCK_SKEW_MS },
        "the operator's clock differs from the API server's past the bound: undos are refused until time sync is fixed",
      );
    }
    log.info({ clockSkewMs: skewMs }, 'caches synced; starting workers');
    controller.startWorkers(AbortSignal.any([signal, stopWork.signal]));
  };

  if (!elector) {
    await lead(stopWork.signal);
    return;
  }
  await elector.run({
    onStartedLeading: lead,
    onStoppedLeading: () => {
      if (shuttingDown) return;
      // Lost the lease: another replica may be acting now. Stop at once and let Kubernetes restart us
      // as a follower rather than linger half-alive.
      log.error('lost leadership; exiting');
      log.flush();
      process.exit(ExitCode.Failure);
    },
  });
}

/** The idle collector, when it is on and Node exposes a collection (the image starts it with `--expose-gc`). */
function idleCollector(cfg: OperatorConfig, log: ReturnType<typeof createLogger>, metrics: Metrics): IdleCollector | undefined {
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

const USAGE = `usage:
  rollout-guard run [--namespaces a,b] [--log-level info] [--leader-elect=true|false (default: true in a pod)]
                    [--metrics-bind-address :8080|0] [--health-probe-bind-address :8081]
                    [--metrics-secure --metrics-cert-dir DIR]
                    [--lease-namespace NS] [--identity ID] [--workers N] [--kubeconfig PATH]
  rollout-guard check ds/NAME [-n NAMESPACE] [--deadline 10m] [--suspect 2m] [--output text|json] [connection flags]
  rollout-guard get ds/NAME|rg/NAME [-n NAMESPACE] [--watch] [--output text|json] [connection flags]
  rollout-guard version (or --version)
connection flags, as kubectl's: --kubeconfig PATH[:PATH…] --context NAME --cluster NAME --user NAME
as a kubectl plugin (kubectl-rollout_guard on PATH): kubectl rollout-guard check|get …
check --help and get --help describe those commands in full`;

async function main(argv: string[]): Promise<number> {
  process.on('unhandledRejection', (err) => {
    console.error('unhandled rejection', err);
    process.exit(ExitCode.Failure);
  });
  const [cmd, ...rest] = argv;
  try {
    if (cmd === 'run') {
      await run(loadConfig(rest, process.env));
      return -1; // keeps running until a signal
    }
    if (cmd === 'check') return await runCheck(rest);
    if (cmd === 'get') return await runGet(rest);
    if (cmd === 'version' || cmd === '--version') {
      console.log(`rollout-guard ${packageVersion()}`);
      return ExitCode.Ok;
    }
    if (cmd === '--help' || cmd === '-h' || cmd === 'help') {
      console.log(USAGE);
      return ExitCode.Ok;
    }
    throw new UsageError(cmd ? `unknown command ${cmd}` : 'no command given');
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`rollout-guard: ${e.message}\n${USAGE}`);
      return ExitCode.Usage;
    }
    if (e instanceof KubeConfigError) {
      console.error(`rollout-guard: ${e.message}`);
      return ExitCode.Usage;
    }
    throw e;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err);
    process.exit(ExitCode.Failure);
  },
);
