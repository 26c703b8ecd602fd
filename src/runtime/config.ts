/**
 * Every default of the operator, in one place, each with its reason; and the parsing of flags and
 * environment variables that override them. Flags win over environment variables.
 */
import { hostname } from 'node:os';
import { formatBindAddress, parseBindAddress, type BindAddress } from './bindAddress.js';
import { errorMessage } from '../reconcile/portErrors.js';

export interface OperatorConfig {
  /** Namespaces to watch; empty means all namespaces (needs cluster-wide RBAC). */
  namespaces: string[];
  /**
   * Listener of /metrics; null when disabled (`--metrics-bind-address=0`). Apart from the probes so that
   * the kubelet reaches /healthz and /readyz without credentials while /metrics can demand them, and so
   * that a NetworkPolicy can open the one to Prometheus without opening the other.
   */
  metricsBindAddress: BindAddress | null;
  /** Listener of /healthz and /readyz: plain HTTP, no credentials (the kubelet has none to give). */
  healthProbeBindAddress: BindAddress;
  /**
   * Serve /metrics over HTTPS and only to callers whose bearer token a TokenReview authenticates and a
   * SubjectAccessReview allows to `get` the non-resource URL /metrics (controller-runtime's
   * WithAuthenticationAndAuthorization filter). Off by default: it needs a certificate and the opt-in
   * RBAC of config/rbac-metrics-auth, neither of which a plain install has.
   */
  metricsSecure: boolean;
  /** Directory holding tls.crt and tls.key for the secure metrics server (a mounted Secret). */
  metricsCertDir?: string;
  /** How the secure metrics server remembers and bounds its reviews; see DEFAULTS for the reasons. */
  metricsAuth: { allowTtlMs: number; denyTtlMs: number; maxEntries: number; reviewTimeoutMs: number };
  logLevel: string;
  /**
   * Lease-based leader election. Default: on in a pod (KUBERNETES_SERVICE_HOST set, no --kubeconfig),
   * off elsewhere, as a developer's local run has no replicas to elect among.
   */
  leaderElect: boolean;
  leaseNamespace: string;
  leaseName: string;
  identity: string;
  /** client-go defaults: the Lease lasts 15 s, the leader renews within 10 s, candidates retry every 2 s. */
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Concurrent reconciles; keys are never processed twice at once, so this only bounds parallelism. */
  workers: number;
  /** Per-key error backoff: 1 s doubling to 5 min (client-go goes to 1000 s; a guard should retry sooner). */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Global token bucket for retries: client-go's 10 qps, burst 100. */
  queueQps: number;
  queueBurst: number;
  /**
   * The guards' batch period (runtime/workQueue.ts): a guard queued by a plain change (not a pod that just
   * failed, not a deadline) within this long after its last pass waits until it is over, and one pass sees
   * every change that came meanwhile. 500 ms: half the interval at which progress is written anyway, so a
   * completion or a shrink is written at most that much later, while a DaemonSet rolling over thousands of
   * nodes queues its guard with every pod event. 0 turns it off.
   */
  batchPeriodMs: number;
  /**
   * Safety-net resync: every guard re-enqueued every 10 min ±10 %. Correctness never depends on it;
   * deadlines use requeueAfter.
   */
  resyncMs: number;
  /** Server-side watch timeout (randomised ±10 % per watch to spread reconnects). */
  watchTimeoutSeconds: number;
  /** Watchdog: a watch silent this long (no event, no bookmark) is restarted. Bookmarks come every ~1 min. */
  watchIdleTimeoutMs: number;
  /**
   * Informer restart backoff after an error: 1 s doubling to 10 s, jittered. The cap bounds how late a
   * stall is seen after an API server outage ends (at 30 s, relists came up to 27 s after recovery).
   */
  informerBackoffMs: { initialMs: number; maxMs: number };
  /**
   * How long the pods of a DaemonSet stay watched after it stopped needing them (runtime/podWatches.ts):
   * 30 s, so that a DaemonSet whose counters flap with an occasional restart is not listed on every flap,
   * while the memory of a finished rollout is released half a minute after its bake.
   */
  podCacheLingerMs: number;
  /**
   * How long the operator must go without work before it runs one full garbage collection to give back
   * the memory a burst left reserved (runtime/idleCollector.ts): 15 s, three times the span over which
   * V8 judges the allocation rate, so the collection is one it reads as low-allocation. 0 turns it off;
   * it is off too when Node was started without `--expose-gc`.
   */
  idleCollectAfterMs: number;
  /** Time allowed for in-flight reconciles on SIGTERM; below terminationGracePeriodSeconds (30 s) minus 5 s. */
  shutdownBudgetMs: number;
  /** Kubeconfig file; unset means in-cluster config, then $KUBECONFIG, then ~/.kube/config. */
  kubeconfig?: string;
  /**
   * Run the RolloutGuardPolicy controller (needs cluster-wide read of namespaces and policies). Default:
   * on when watching all namespaces, off with --namespaces — policies are cluster-scoped, and an operator
   * that sees only some namespaces would write every policy's status from a partial view, fighting an
   * operator that sees them all. Set --policies=true to run it anyway.
   */
  policies: boolean;
}

export const DEFAULTS: Omit<OperatorConfig, 'identity' | 'leaseNamespace'> = {
  namespaces: [],
  // kubebuilder's ports, so that Deployments, Services and ServiceMonitors written for kubebuilder
  // operators fit: metrics on 8080, probes on 8081, every interface (the kubelet and Prometheus reach the
  // pod from outside it).
  metricsBindAddress: { port: 8080 },
  healthProbeBindAddress: { port: 8081 },
  metricsSecure: false,
  metricsAuth: {
    // A scraper that is allowed is remembered for 60 s: longer than the 15 s and 30 s scrape intervals
    // Prometheus is usually given, so a steady scraper costs two API calls a minute, not two a scrape;
    // and short enough that a revoked binding or a deleted ServiceAccount stops reading within a minute
    // (controller-runtime's token cache keeps 1 min too).
    allowTtlMs: 60_000,
    // A refusal (401 or 403) is remembered for 10 s only: a scraper that was just granted access gets in
    // within 10 s, while a misconfigured one that retries costs at most two API calls per 10 s.
    denyTtlMs: 10_000,
    // One entry per distinct token (a hash of it, never the token). Scrapers are a handful; the bound
    // only matters against a caller sending many different tokens, whose entries then evict each other.
    maxEntries: 256,
    // Below Prometheus's default scrape_timeout (10 s): a slow API server gives the scraper a 503 that
    // says why, rather than a timeout of its own.
    reviewTimeoutMs: 5_000,
  },
  logLevel: 'info',
  leaderElect: true,
  leaseName: 'rollout-guard',
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
  workers: 4,
  backoffBaseMs: 1_000,
  backoffMaxMs: 300_000,
  queueQps: 10,
  queueBurst: 100,
  batchPeriodMs: 500,
  resyncMs: 600_000,
  watchTimeoutSeconds: 300,
  watchIdleTimeoutMs: 180_000,
  informerBackoffMs: { initialMs: 1_000, maxMs: 10_000 },
  podCacheLingerMs: 30_000,
  idleCollectAfterMs: 15_000,
  shutdownBudgetMs: 20_000,
  policies: true,
};

/** Thrown for bad flags; main prints the message and exits with the usage error code. */
export class UsageError extends Error {}

const FLAGS: Record<string, { env: string; key: keyof OperatorConfig; kind: 'list' | 'int' | 'bool' | 'string' | 'address' }> = {
  '--namespaces': { env: 'WATCH_NAMESPACES', key: 'namespaces', kind: 'list' },
  '--metrics-bind-address': { env: 'METRICS_BIND_ADDRESS', key: 'metricsBindAddress', kind: 'address' },
  '--health-probe-bind-address': { env: 'HEALTH_PROBE_BIND_ADDRESS', key: 'healthProbeBindAddress', kind: 'address' },
  '--metrics-secure': { env: 'METRICS_SECURE', key: 'metricsSecure', kind: 'bool' },
  '--metrics-cert-dir': { env: 'METRICS_CERT_DIR', key: 'metricsCertDir', kind: 'string' },
  '--log-level': { env: 'LOG_LEVEL', key: 'logLevel', kind: 'string' },
  '--leader-elect': { env: 'LEADER_ELECT', key: 'leaderElect', kind: 'bool' },
  '--lease-namespace': { env: 'POD_NAMESPACE', key: 'leaseNamespace', kind: 'string' },
  '--lease-name': { env: 'LEASE_NAME', key: 'leaseName', kind: 'string' },
  '--identity': { env: 'POD_NAME', key: 'identity', kind: 'string' },
  '--workers': { env: 'WORKERS', key: 'workers', kind: 'int' },
  '--batch-period-ms': { env: 'BATCH_PERIOD_MS', key: 'batchPeriodMs', kind: 'int' },
  '--kubeconfig': { env: 'KUBECONFIG', key: 'kubeconfig', kind: 'string' },
  '--lease-duration-ms': { env: 'LEASE_DURATION_MS', key: 'leaseDurationMs', kind: 'int' },
  '--renew-deadline-ms': { env: 'RENEW_DEADLINE_MS', key: 'renewDeadlineMs', kind: 'int' },
  '--retry-period-ms': { env: 'RETRY_PERIOD_MS', key: 'retryPeriodMs', kind: 'int' },
  '--shutdown-budget-ms': { env: 'SHUTDOWN_BUDGET_MS', key: 'shutdownBudgetMs', kind: 'int' },
  '--pod-cache-linger-ms': { env: 'POD_CACHE_LINGER_MS', key: 'podCacheLingerMs', kind: 'int' },
  '--idle-collect-after-ms': { env: 'IDLE_COLLECT_AFTER_MS', key: 'idleCollectAfterMs', kind: 'int' },
  '--policies': { env: 'ENABLE_POLICIES', key: 'policies', kind: 'bool' },
};

/**
 * Flags that no longer exist, with what replaced them: an old manifest fails with the way forward rather
 * than a list of every flag. (The PORT environment variable is ignored, not refused: platforms set it.)
 */
const REMOVED: Record<string, string> = {
  '--port':
    '--port was split into --metrics-bind-address (/metrics, default :8080) and --health-probe-bind-address (/healthz and /readyz, default :8081)',
};

function convert(flag: string, kind: string, v: string): unknown {
  switch (kind) {
    case 'address':
      try {
        return parseBindAddress(v);
      } catch (e) {
        throw new UsageError(`${flag} ${errorMessage(e)}`);
      }
    case 'list':
      return v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    case 'int': {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0) throw new UsageError(`${flag} wants a whole number, got ${JSON.stringify(v)}`);
      return n;
    }
    case 'bool':
      if (!['true', 'false', '1', '0'].includes(v)) throw new UsageError(`${flag} wants true or false, got ${JSON.stringify(v)}`);
      return v === 'true' || v === '1';
    default:
      return v;
  }
}

/** Builds the configuration from defaults, then the environment, then `--flag=value` arguments. */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): OperatorConfig {
  const cfg: OperatorConfig = {
    ...DEFAULTS,
    namespaces: [],
    leaseNamespace: 'rollout-guard-system',
    identity: `${hostname()}-${process.pid}`,
  };
  /** Settings given by the environment or a flag, as opposed to left at their default. */
  const given = new Set<keyof OperatorConfig>();
  const set = (key: keyof OperatorConfig, value: unknown): void => {
    (cfg as unknown as Record<string, unknown>)[key] = value;
    given.add(key);
  };
  for (const f of Object.values(FLAGS)) {
    const v = env[f.env];
    if (v !== undefined && v !== '') set(f.key, convert(f.env, f.kind, v));
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    const f = FLAGS[name];
    const removed = REMOVED[name];
    if (removed !== undefined) throw new UsageError(removed);
    if (!f) throw new UsageError(`unknown flag ${name}; known: ${Object.keys(FLAGS).join(' ')}`);
    let value = eq >= 0 ? arg.slice(eq + 1) : argv[i + 1];
    if (eq < 0) {
      if (f.kind === 'bool' && (value === undefined || value.startsWith('--'))) value = 'true';
      else i++;
    }
    if (value === undefined) throw new UsageError(`${name} needs a value`);
    set(f.key, convert(name, f.kind, value));
  }
  if (!given.has('policies')) cfg.policies = cfg.namespaces.length === 0;
  // Leader election only where replicas exist: in a pod (kubebuilder's `make run` runs without it too).
  // A developer's `npm start` against a local cluster then needs no lease namespace; --leader-elect asks.
  if (!given.has('leaderElect')) cfg.leaderElect = Boolean(env.KUBERNETES_SERVICE_HOST) && cfg.kubeconfig === undefined;
  if (cfg.renewDeadlineMs >= cfg.leaseDurationMs) throw new UsageError('--renew-deadline-ms must be less than --lease-duration-ms');
  checkListeners(cfg);
  return cfg;
}

/** The two listeners' settings, judged together. */
function checkListeners(cfg: OperatorConfig): void {
  // Typed as always set, but `0` parses to null like the metrics address; refused here. The kubelet's
  // probes and everything that waits for readiness need this listener.
  const probes = cfg.healthProbeBindAddress as BindAddress | null;
  if (probes === null) throw new UsageError('--health-probe-bind-address cannot be 0: /healthz and /readyz are always served');
  const metrics = cfg.metricsBindAddress;
  if (metrics === null) return; // disabled: nothing to secure, no certificate needed
  const overlap = metrics.host === undefined || probes.host === undefined || metrics.host === probes.host;
  if (metrics.port !== 0 && metrics.port === probes.port && overlap) {
    throw new UsageError(
      `--metrics-bind-address (${formatBindAddress(metrics)}) and --health-probe-bind-address (${formatBindAddress(probes)}) need different ports`,
    );
  }
  if (cfg.metricsSecure && !cfg.metricsCertDir) {
    throw new UsageError('--metrics-secure needs --metrics-cert-dir, a directory with tls.crt and tls.key (no certificate is generated)');
  }
}
