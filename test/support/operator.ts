/**
 * Runs the real operator (`node dist/src/main.js run`) as a child process against the test cluster,
 * scoped to one test namespace, and installs the CRDs. End-to-end tests talk to it only the way a user
 * would: through the API server (kubectl), its /metrics endpoint and its probes. Both listeners are
 * bound to loopback on ports the kernel picks; the 'starting' log line says which.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubeconfigPath, kubectl, waitFor } from './cluster.js';
import { waitForCrdsEstablished } from '../../cluster/controlPlane.js';

/** Repository root (this file is compiled to dist/test/support/). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const MAIN = resolve(ROOT, 'dist/src/main.js');

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
}

/** A running operator process. */
export class OperatorProcess {
  readonly logs: string[] = [];
  /** Port of /metrics (null: metrics disabled); undefined until the operator logs 'starting'. */
  metricsPort: number | null | undefined;
  /** Port of /healthz and /readyz; undefined until the operator logs 'starting'. */
  probePort: number | undefined;
  private exited: Promise<number | null>;
  private exitCode: number | null | undefined;

  private constructor(private readonly child: ChildProcess) {
    let buf = '';
    const onData = (d: Buffer): void => {
      buf += d.toString();
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        this.logs.push(line);
        if (this.probePort === undefined && line.includes('"msg":"starting"')) {
          try {
            const started = JSON.parse(line) as { metricsPort?: number | null; probePort?: number };
            this.metricsPort = started.metricsPort;
            this.probePort = started.probePort;
          } catch {
            // not JSON: ignore
          }
        }
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    this.exited = new Promise((res) => child.on('exit', (code) => {
      this.exitCode = code;
      res(code);
    }));
  }

  /** Starts the operator and waits until it serves /readyz (caches synced). */
  static async start(o: OperatorOptions): Promise<OperatorProcess> {
    const args = [
      MAIN, 'run',
      `--namespaces=${o.namespaces.join(',')}`,
      '--metrics-bind-address=127.0.0.1:0',
      '--health-probe-bind-address=127.0.0.1:0',
      `--leader-elect=${o.leaderElect ? 'true' : 'false'}`,
      `--lease-namespace=${o.leaseNamespace ?? o.namespaces[0] ?? 'default'}`,
      `--kubeconfig=${o.kubeconfig ?? kubeconfigPath()}`,
      ...(o.identity ? [`--identity=${o.identity}`] : []),
      `--policies=${o.policies ? 'true' : 'false'}`,
      ...(o.extraArgs ?? []),
    ];
    const child = spawn(process.execPath, args, { env: { ...process.env, LOG_LEVEL: 'debug', ...o.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const op = new OperatorProcess(child);
    await waitFor(async () => op.exitCode === undefined && op.probePort !== undefined && (await op.get('/readyz')).status === 200, {
      timeoutMs: 30_000,
      describe: 'operator ready',
    }).catch((e: unknown) => {
      throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- operator log ---\n${op.logs.slice(-40).join('\n')}`);
    });
    return op;
  }

  /** GET over plain HTTP: /metrics from the metrics port, every other path from the probe port. */
  async get(path: string): Promise<{ status: number; body: string }> {
    const port = path.split('?')[0] === '/metrics' ? this.metricsPort : this.probePort;
    if (port === undefined || port === null) return { status: 0, body: '' };
    try {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      return { status: res.status, body: await res.text() };
    } catch {
      return { status: 0, body: '' };
    }
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
    return this.child.pid;
  }

  /** SIGTERM and wait for the exit code. */
  async stop(): Promise<number | null> {
    if (this.exitCode !== undefined) return this.exitCode;
    this.child.kill('SIGTERM');
    return this.exited;
  }

  /** SIGKILL: a crash, no chance to clean up. */
  async kill(): Promise<void> {
    if (this.exitCode !== undefined) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  signal(sig: NodeJS.Signals): void {
    this.child.kill(sig);
  }

  waitExit(): Promise<number | null> {
    return this.exited;
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
  return {
    apiVersion: 'rolloutguard.dev/v1alpha1',
    kind: 'RolloutGuard',
    metadata: { name, namespace: ns },
    spec: { targetRef: { kind: 'DaemonSet', name: target }, bakeSeconds: 0, ...spec },
  };
}
