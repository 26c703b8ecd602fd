/**
 * Every default of the operator, in one place, each with its reason; and the parsing of flags and
 * environment variables that override them. Flags win over environment variables.
 */
import { hostname } from 'node:os';

/** Defaults of a RolloutGuard's timings (mirrored in the CRD's OpenAPI defaults). */
/** The spec defaults live in the domain, with withDefaults; re-exported for the process settings' readers. */
export { GUARD_DEFAULTS } from '../domain/defaults.js';

export interface OperatorConfig {
  /** Namespaces to watch; empty means all namespaces (needs cluster-wide RBAC). */
  namespaces: string[];
  /** Port of /metrics, /healthz and /readyz. */
  port: number;
  logLevel: string;
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
  port: 8080,
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
  resyncMs: 600_000,
  watchTimeoutSeconds: 300,
  watchIdleTimeoutMs: 180_000,
  informerBackoffMs: { initialMs: 1_000, maxMs: 10_000 },
  shutdownBudgetMs: 20_000,
  policies: true,
};

/** Thrown for bad flags; main prints the message and exits with the usage error code. */
export class UsageError extends Error {}

const FLAGS: Record<string, { env: string; key: keyof OperatorConfig; kind: 'list' | 'int' | 'bool' | 'string' }> = {
  '--namespaces': { env: 'WATCH_NAMESPACES', key: 'namespaces', kind: 'list' },
  '--port': { env: 'PORT', key: 'port', kind: 'int' },
  '--log-level': { env: 'LOG_LEVEL', key: 'logLevel', kind: 'string' },
  '--leader-elect': { env: 'LEADER_ELECT', key: 'leaderElect', kind: 'bool' },
  '--lease-namespace': { env: 'POD_NAMESPACE', key: 'leaseNamespace', kind: 'string' },
  '--lease-name': { env: 'LEASE_NAME', key: 'leaseName', kind: 'string' },
  '--identity': { env: 'POD_NAME', key: 'identity', kind: 'string' },
  '--workers': { env: 'WORKERS', key: 'workers', kind: 'int' },
  '--kubeconfig': { env: 'KUBECONFIG', key: 'kubeconfig', kind: 'string' },
  '--lease-duration-ms': { env: 'LEASE_DURATION_MS', key: 'leaseDurationMs', kind: 'int' },
  '--renew-deadline-ms': { env: 'RENEW_DEADLINE_MS', key: 'renewDeadlineMs', kind: 'int' },
  '--retry-period-ms': { env: 'RETRY_PERIOD_MS', key: 'retryPeriodMs', kind: 'int' },
  '--shutdown-budget-ms': { env: 'SHUTDOWN_BUDGET_MS', key: 'shutdownBudgetMs', kind: 'int' },
  '--policies': { env: 'ENABLE_POLICIES', key: 'policies', kind: 'bool' },
};

function convert(flag: string, kind: string, v: string): unknown {
  switch (kind) {
    case 'list':
      return v.split(',').map((s) => s.trim()).filter(Boolean);
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
  if (cfg.renewDeadlineMs >= cfg.leaseDurationMs) throw new UsageError('--renew-deadline-ms must be less than --lease-duration-ms');
  return cfg;
}
