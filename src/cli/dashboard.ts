/**
 * `rollout-guard dashboard [-n NS | -A] [--address 127.0.0.1] [--port 3200]`: a read-only web page of the
 * guards, served on this machine through the user's kubeconfig, as `kubectl argo rollouts dashboard`
 * serves Argo Rollouts'. The list of guards; for one guard its revision map (a cell per node, ordinal or
 * pod), its timeline, its message, the commands Report mode would run and its `kubectl describe`; all
 * live, pushed to the page as the cluster changes.
 *
 * This file is the command: its arguments, then the hub's shared watches (dashboardHub.ts) and the
 * server (dashboardServer.ts) until SIGINT or SIGTERM. The page is ui/dashboard/, built by vite into
 * dist/dashboard/. It writes nothing to the cluster: it lists and watches only.
 *
 * Exit codes: 0 stopped, 1 error (the port is taken, the guards cannot be listed), 2 usage.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { summarizeError } from '../k8s/apiErrors.js';
import { type ApiClient } from '../k8s/apiClient.js';
import type { Connection } from '../k8s/kubeConfig.js';
import { type Clock } from '../reconcile/ports.js';
import { systemClock } from '../runtime/clock.js';
import { UsageError } from '../runtime/config.js';
import { CONNECTION_FLAGS, CONNECTION_HELP, CONNECTION_USAGE, connectionOf, parseArgs, text, wantsHelp } from './args.js';
import { ExitCode, connect, stderrLogger } from './command.js';
import { DashboardHub } from './dashboardHub.js';
import { DEFAULT_ADDRESS, DEFAULT_PORT, startServer } from './dashboardServer.js';

export interface DashboardOptions extends Connection {
  /** Absent: the kubeconfig context's namespace, else `default` (as kubectl); ignored with allNamespaces. */
  namespace?: string;
  allNamespaces: boolean;
  address: string;
  port: number;
}

/** Usage of the dashboard subcommand, printed by `dashboard --help`. */
export const DASHBOARD_USAGE = `usage: rollout-guard dashboard [-n NAMESPACE | -A] [--address ${DEFAULT_ADDRESS}] [--port ${DEFAULT_PORT}] ${CONNECTION_USAGE}
       kubectl rollout-guard dashboard …

Serves a read-only web page of the RolloutGuards on this machine and prints its URL: the list (kind,
target, state, cause, whose fault, age, the policy or selector that made each), and for one guard its
revision map (a cell per node, ordinal or pod, by revision and state), its timeline of states and
Events, its message, the commands Report mode would run and its kubectl describe. The page updates
live; it reads through your kubeconfig and never writes to the cluster. Ctrl-C stops it.
  -A, --all-namespaces   every namespace
  -n                     the namespace (default: the kubeconfig context's, else default)
  --address              where to listen (default ${DEFAULT_ADDRESS}: this machine only)
  --port                 the port (default ${DEFAULT_PORT}; 0 picks a free one)
${CONNECTION_HELP}
exit codes: 0 stopped, 1 error, 2 usage`;

/** `--port`: 0 to 65535. */
function portNumber(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > 65_535) throw new UsageError(`--port wants a number from 0 to 65535, got ${JSON.stringify(v)}`);
  return n;
}

/** The flags of `dashboard`; see {@link DASHBOARD_USAGE}. */
const DASHBOARD_FLAGS = {
  namespace: { names: ['-n', '--namespace'], value: text },
  allNamespaces: { names: ['-A', '--all-namespaces'], switch: true },
  address: { names: ['--address'], value: text },
  port: { names: ['--port'], value: portNumber },
  ...CONNECTION_FLAGS,
} as const;

export function parseDashboardArgs(args: readonly string[]): DashboardOptions {
  const { target, flags } = parseArgs(args, DASHBOARD_FLAGS);
  if (target !== undefined) throw new UsageError(`dashboard takes no target, got ${target}: the page lists the guards`);
  const opts: DashboardOptions = {
    allNamespaces: flags.allNamespaces ?? false,
    address: flags.address ?? DEFAULT_ADDRESS,
    port: flags.port ?? DEFAULT_PORT,
    ...connectionOf(flags),
  };
  if (flags.namespace !== undefined) opts.namespace = flags.namespace;
  return opts;
}

/** dist/dashboard/, beside dist/src/ where this module runs from (dist/src/cli/dashboard.js). */
export const STATIC_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dashboard');

/** A running dashboard: its URL, its hub (for tests) and how to stop both. */
export interface RunningDashboard {
  url: string;
  hub: DashboardHub;
  stop: () => Promise<void>;
}

/** Starts the hub and the server; resolves once the guards and Events are listed and the server listens. */
export async function startDashboard(
  opts: Pick<DashboardOptions, 'address' | 'port'> & { namespace: string | undefined; staticDir?: string },
  client: ApiClient,
  clock: Clock,
  log: Logger,
): Promise<RunningDashboard> {
  const hub = new DashboardHub(client, opts.namespace, clock, log);
  hub.start();
  try {
    await hub.synced();
    const server = await startServer(hub, { address: opts.address, port: opts.port, staticDir: opts.staticDir ?? STATIC_DIR });
    return {
      url: server.url,
      hub,
      stop: async () => {
        await server.close();
        await hub.stop();
      },
    };
  } catch (e) {
    await hub.stop();
    throw e;
  }
}

/** Entry point of `rollout-guard dashboard` (and `kubectl rollout-guard dashboard`). */
export async function runDashboard(args: readonly string[]): Promise<number> {
  if (wantsHelp(args)) {
    console.log(DASHBOARD_USAGE);
    return ExitCode.Ok;
  }
  const opts = parseDashboardArgs(args);
  const conn = connect('rollout-guard dashboard', opts);
  if (!conn) return ExitCode.Failure;
  const namespace = opts.allNamespaces ? undefined : conn.namespace;
  let running: RunningDashboard | undefined;
  let onSignal: (() => void) | undefined;
  const stopped = new Promise<void>((resolve) => (onSignal = resolve));
  for (const s of ['SIGINT', 'SIGTERM'] as const) process.on(s, onSignal!);
  try {
    running = await startDashboard({ ...opts, namespace }, conn.client, systemClock, stderrLogger('rollout-guard-dashboard'));
    console.log(
      `rollout-guard dashboard: ${running.url} (${namespace === undefined ? 'every namespace' : `namespace ${namespace}`}, read-only); Ctrl-C stops it`,
    );
    await stopped;
    return ExitCode.Ok;
  } catch (e) {
    console.error(`rollout-guard dashboard: ${summarizeError(e)}`);
    return ExitCode.Failure;
  } finally {
    for (const s of ['SIGINT', 'SIGTERM'] as const) process.off(s, onSignal!);
    await running?.stop();
    conn.client.close();
  }
}
