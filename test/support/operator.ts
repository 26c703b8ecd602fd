/**
 * Runs the real operator (`node dist/src/main.js run`) as a child process against the test cluster,
 * scoped to one test namespace, and installs the CRDs. End-to-end tests talk to it only the way a user
 * would: through the API server (kubectl), its /metrics endpoint and its probes. The process itself is
 * {@link OperatorChild}'s: both listeners on loopback ports it picks, ready when /readyz answers 200.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubeconfigPath, kubectl } from './cluster.js';
import { waitForCrdsEstablished } from '../../cluster/kubectl.js';
import { rolloutGuardManifest } from '../../cluster/manifests.js';
import { OperatorChild } from '../../cluster/operatorProcess.js';
import { FAILPOINTS_ENV, type Failpoint } from './failpoints.js';

/** Repository root (this file is compiled to dist/test/support/). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** The failpoint subscriber, preloaded with `node --import` when a test asks for a failpoint. */
const FAILPOINTS_MODULE = resolve(ROOT, 'dist/test/support/failpoints.js');

let crds: Promise<void> | undefined;

/** Applies config/crd and waits until the API server serves it. Once per process. */
export function installCrds(): Promise<void> {
  crds ??= (async () => {
    await kubectl(['apply', '--server-side', '--force-conflicts', '-k', resolve(ROOT, 'config/crd')]);
    await waitForCrdsEstablished(kubectl, ['rolloutguards.rolloutguard.dev', 'rolloutguardpolicies.rolloutguard.dev']);
  })();
  return crds;
}

export interface OperatorOptions {
  namespaces: string[];
  leaderElect?: boolean;
  leaseNamespace?: string;
  identity?: string;
  extraArgs?: string[];
  /**
   * Run the policy controller. Off by default: policies are cluster-scoped, and an operator scoped to one
   * test's namespaces would write every other suite's policy status from its partial view.
   */
  policies?: boolean;
  env?: Record<string, string>;
  /** Kubeconfig to run against; default: the shared test cluster's. */
  kubeconfig?: string;
  /** Points at which the process exits with 137, as a crash there would (see ./failpoints.ts). */
  failpoints?: Failpoint[];
}

/** A running operator process. */
export class OperatorProcess {
  /** Port of /metrics (null: metrics disabled). */
  readonly metricsPort: number | null;
  /** Port of /healthz and /readyz. */
  readonly probePort: number;

  private constructor(private readonly op: OperatorChild) {
    this.metricsPort = op.metricsPort;
    this.probePort = op.probePort;
  }

  /** Every line the operator wrote (stdout and stderr). */
  get logs(): string[] {
    return this.op.logs;
  }

  /** Starts the operator and waits until it serves /readyz (caches synced). */
  static async start(o: OperatorOptions): Promise<OperatorProcess> {
    const args = [
      `--namespaces=${o.namespaces.join(',')}`,
      `--leader-elect=${o.leaderElect ? 'true' : 'false'}`,
      `--lease-namespace=${o.leaseNamespace ?? o.namespaces[0] ?? 'default'}`,
      `--kubeconfig=${o.kubeconfig ?? kubeconfigPath()}`,
      ...(o.identity ? [`--identity=${o.identity}`] : []),
      `--policies=${o.policies ? 'true' : 'false'}`,
      ...(o.extraArgs ?? []),
    ];
    const failpoints = o.failpoints ?? [];
    const op = await OperatorChild.start({
      args,
      ...(failpoints.length > 0 ? { nodeArgs: ['--import', FAILPOINTS_MODULE] } : {}),
      env: { ...process.env, LOG_LEVEL: 'debug', ...o.env, ...(failpoints.length > 0 ? { [FAILPOINTS_ENV]: failpoints.join(',') } : {}) },
    });
    return new OperatorProcess(op);
  }

  /** GET over plain HTTP: /metrics from the metrics port, every other path from the probe port. */
  get(path: string): Promise<{ status: number; body: string }> {
    return this.op.get(path);
  }

  /** Value of a metric sample from /metrics (first line whose name and labels start with `prefix`). */
  async metric(prefix: string): Promise<number | undefined> {
    const { body } = await this.get('/metrics');
    const line = body.split('\n').find((l) => l.startsWith(prefix));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : undefined;
  }

  /** Log lines parsed as JSON (pino), for assertions on what the operator said. */
  jsonLogs(): Array<Record<string, unknown>> {
    return this.logs.flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  }

  get pid(): number | undefined {
    return this.op.pid;
  }

  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null> {
    return this.op.stop();
  }

  /** SIGKILL: a crash, no chance to clean up. */
  kill(): Promise<void> {
    return this.op.kill();
  }

  signal(sig: NodeJS.Signals): void {
    this.op.signal(sig);
  }

  waitExit(): Promise<number | null> {
    return this.op.exited;
  }
}

/** Applies a manifest object (or list) with kubectl. */
export async function apply(obj: unknown, ns?: string): Promise<void> {
  await kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj), ...(ns ? { ns } : {}) });
}

/**
 * A RolloutGuard manifest. `bakeSeconds` defaults to 0 here: most suites judge a rollout complete when
 * the controller's counters say so, and would otherwise wait out the 180 s bake on every rollout. The
 * suites about the bake window set it.
 */
export function guard(name: string, ns: string, target: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return rolloutGuardManifest({ name, namespace: ns, target, spec: { bakeSeconds: 0, ...spec } });
}
