/**
 * The cluster's components as a set: their command lines, starting them in dependency order, stopping
 * them in reverse, stopping or (re)starting one of them for fault tests, and reporting which are alive.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { apiServerReady, apiServerSpec } from './apiServer.js';
import { controllerManagerSpec, schedulerSpec } from './controllers.js';
import { etcdSpec } from './etcd.js';
import { kwokInstanceSpec, kwokSpec } from './kwok.js';
import { paths } from './paths.js';
import type { Ports } from './ports.js';
import {
  COMPONENTS,
  binaryOf,
  isOurProcess,
  logFile,
  readPids,
  rssMiB,
  spawnComponent,
  stopProcesses,
  waitReady,
  type ComponentName,
  type ComponentSpec,
  type ProcessName,
} from './processes.js';
import { stopRealNode } from './realNode.js';
import { readState, type State } from './state.js';
import { waitFor } from './wait.js';

/** Liveness and memory of one component or kwok instance, as seen by {@link status}. */
export interface ComponentStatus {
  name: ProcessName;
  pid: number | undefined;
  alive: boolean;
  /** Resident set size in MiB, when alive. */
  rssMiB: number | undefined;
  logFile: string;
}

/** Snapshot returned by {@link status}. */
export interface ClusterStatus {
  dir: string;
  exists: boolean;
  kubeconfig: string | undefined;
  apiServerReady: boolean;
  ports: Ports | undefined;
  components: ComponentStatus[];
}

/** Reports which components are alive, their RSS, and whether the apiserver answers `/readyz`. */
export async function status(): Promise<ClusterStatus> {
  const p = paths();
  const state = await readState();
  const tracked = await readPids();
  const pids = new Map(tracked.map((c) => [c.name, c.pid]));
  // The components always (a missing one shows as stopped), then whichever kwok instances are recorded.
  const names: ProcessName[] = [
    ...COMPONENTS,
    ...tracked
      .map((c) => c.name)
      .filter((n) => binaryOf(n) !== n)
      .sort(),
  ];
  const components = names.map((name): ComponentStatus => {
    const pid = pids.get(name);
    const alive = pid !== undefined && isOurProcess(pid, name);
    return { name, pid, alive, rssMiB: alive ? rssMiB(pid) : undefined, logFile: logFile(name) };
  });
  return {
    dir: p.dir,
    exists: existsSync(p.dir),
    kubeconfig: existsSync(p.kubeconfig) ? p.kubeconfig : undefined,
    apiServerReady: state ? await apiServerReady(state) : false,
    ports: state?.ports,
    components,
  };
}

/** Options for {@link stopComponent}. */
export interface StopComponentOptions {
  /** `SIGTERM` (default: a graceful stop, SIGKILL after 10 s) or `SIGKILL` (a crash). */
  signal?: 'SIGTERM' | 'SIGKILL';
  log?: (line: string) => void;
}

/**
 * Stops one component (or kwok instance) of the running cluster and forgets its pid, so that
 * {@link startComponent} can bring it back with the same command line. For fault tests on a private
 * cluster: while a component is stopped, `up` regards the cluster as broken. A frozen (SIGSTOPped)
 * process is thawed after the SIGTERM so that it can act on it.
 */
export async function stopComponent(name: ProcessName, opts: StopComponentOptions = {}): Promise<void> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const c = (await readPids()).find((x) => x.name === name);
  if (!c || !isOurProcess(c.pid, name)) throw new Error(`${name} is not running in ${paths().dir}`);
  if (opts.signal === 'SIGKILL') {
    try {
      process.kill(c.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await waitFor(() => !isOurProcess(c.pid, name), { timeoutMs: 5_000, intervalMs: 50, describe: `${name} to die` });
    log(`killed ${name} (pid ${c.pid})`);
  } else {
    await stopProcesses([c], log);
  }
  await rm(path.join(paths().pids, `${name}.pid`), { force: true });
}

/**
 * Starts one stopped component again with the command line it was first started with (from the
 * cluster's state) and waits until it is ready. `kwok-<pool>` (see {@link kwokInstanceName}) starts an
 * extra kwok that manages only the nodes annotated `kwok.x-k8s.io/node=<pool>`, with the main kwok's
 * stages and flags, on a free loopback port. (A restarted kwok has a new Lease holder identity: it takes
 * over its nodes only once the previous process's node Leases have expired, so on a node-lifecycle
 * cluster they may turn Unknown for a moment.)
 */
export async function startComponent(name: ProcessName, opts: { log?: (line: string) => void; timeoutMs?: number } = {}): Promise<void> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const state = await readState();
  if (!state) throw new Error(`no cluster state in ${paths().dir}`);
  const running = (await readPids()).find((x) => x.name === name);
  if (running && isOurProcess(running.pid, name)) throw new Error(`${name} is already running (pid ${running.pid})`);
  const spec = binaryOf(name) === name ? componentSpecs(state).find((s) => s.name === name)! : await kwokInstanceSpec(state, name);
  await spawnComponent(spec, state.binDir);
  await waitReady(spec, opts.timeoutMs ?? 120_000);
  log(`started ${name}`);
}

/** {@link stopComponent} then {@link startComponent}. */
export async function restartComponent(name: ProcessName, opts: StopComponentOptions & { timeoutMs?: number } = {}): Promise<void> {
  await stopComponent(name, opts);
  await startComponent(name, opts);
}

/** Starts etcd, then the API server, then its clients together, each step once the one before is ready. */
export async function startComponents(state: State, step: (msg: string) => void): Promise<void> {
  const specs = componentSpecs(state);
  const byName = (n: ComponentName) => specs.find((s) => s.name === n)!;

  await spawnComponent(byName('etcd'), state.binDir);
  await waitReady(byName('etcd'), 30_000);
  step('etcd ready');

  await spawnComponent(byName('kube-apiserver'), state.binDir);
  await waitReady(byName('kube-apiserver'), 120_000);
  step('kube-apiserver ready');

  const rest = (['kube-controller-manager', 'kube-scheduler', 'kwok'] as const).map(byName);
  for (const s of rest) await spawnComponent(s, state.binDir);
  await Promise.all(
    rest.map(async (s) => {
      await waitReady(s, 60_000);
      step(`${s.name} ready`);
    }),
  );
}

/** The command line and readiness check of every one of the {@link COMPONENTS}. */
function componentSpecs(state: State): ComponentSpec[] {
  return [
    etcdSpec(state),
    apiServerSpec(state),
    controllerManagerSpec(state),
    schedulerSpec(state),
    kwokSpec(state, 'kwok', 'fake', state.ports.kwok, paths().kwokHome),
  ];
}

/**
 * Stops the recorded processes in reverse dependency order (kwok instances with the API server's
 * clients). Signalled all at once, the apiserver and etcd wait on each other's connections and outlast
 * any sensible grace period; in order, each stops as soon as its clients are gone.
 */
export async function stopAll(log: (line: string) => void): Promise<void> {
  // The real node first: its kubelet is an API client, and its containers must not outlive it.
  await stopRealNode(paths().dir, log);
  const running = (await readPids()).filter((c) => isOurProcess(c.pid, c.name));
  const groups: ComponentName[][] = [['kwok', 'kube-scheduler', 'kube-controller-manager'], ['kube-apiserver'], ['etcd']];
  for (const group of groups)
    await stopProcesses(
      running.filter((c) => group.includes(binaryOf(c.name))),
      log,
    );
}
