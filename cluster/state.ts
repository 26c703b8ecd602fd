/**
 * What a cluster was created with, kept in its `state.json` so that a later `up`, `startComponent` or
 * private-cluster helper runs every process with the same command line: ports, tokens, binaries, and
 * the settings that only take effect at creation (each from its env var).
 *
 * @module
 */
import { readFile, writeFile } from 'node:fs/promises';
import { paths } from './paths.js';
import type { Ports } from './ports.js';

/** Env var that, set to `1` when a cluster is created, enables the API server audit log of writes. */
export const AUDIT_LOG_ENV = 'RG_AUDIT_LOG';
/**
 * Env var that, set to `1` when a cluster is created, adds the node-lifecycle, pod-GC and taint-eviction
 * controllers to the controller manager, with the short timings of {@link NODE_LIFECYCLE_TIMINGS}.
 */
export const NODE_LIFECYCLE_ENV = 'RG_NODE_LIFECYCLE';
/**
 * Env var that, set to a number when a cluster is created, gives the controller manager and the
 * scheduler that API QPS (burst twice it) instead of their defaults (20 and 50). For the benchmark at
 * fleet scale: at 20 requests/s the DaemonSet controller needs minutes to create or replace 10,000 pods,
 * and the scheduler as long to bind them, so the run would measure the control plane, not the operator.
 */
export const CONTROLLER_QPS_ENV = 'RG_CONTROLLER_QPS';
/**
 * Env var that, set to a number when a cluster is created, gives kwok that many workers playing pod
 * stages (kwok's `podPlayStageParallelism`, default 4). A real node runs its own kubelet; kwok plays
 * every simulated kubelet through this one pool, each play an API request. With 20,000 pods replaced at
 * once, four workers leave old pods Terminating for over a minute after their grace period: a node's
 * fault the benchmark would report against the operator.
 */
export const KWOK_PARALLELISM_ENV = 'RG_KWOK_PARALLELISM';
/**
 * Env var that, set to a number of seconds when a cluster is created, gives kwok's node Leases that
 * duration (a kubelet's is 40 s, renewed every quarter of it) and the controller manager a
 * `--node-monitor-grace-period` in upstream's ratio to it ({@link monitorGraceFor}). For a fleet of
 * thousands of simulated nodes: one kwok process renews every node's Lease on the machine's shared cores,
 * 500 requests a second at 5,000 nodes, and a renewal it leaves late past the grace period turns a
 * healthy node NotReady, a fault of the simulation that every guard would rightly follow.
 */
export const NODE_LEASE_SECONDS_ENV = 'RG_NODE_LEASE_SECONDS';

/** A kubelet's default node Lease duration (it renews every quarter of it). */
export const KUBELET_LEASE_SECONDS = 40;

/**
 * The controller manager's grace period for a node Lease of `leaseSeconds`, in upstream's ratio (a
 * 40 s Lease, a 50 s grace period): five renewals fit in it.
 */
export function monitorGraceFor(leaseSeconds: number): number {
  return Math.ceil(leaseSeconds * 1.25);
}

/** The contents of a cluster's `state.json`. */
export interface State {
  ports: Ports;
  token: string;
  /** The bearer token of the real node's kubelet, `system:node:real-1` in group `system:nodes`. */
  nodeToken: string;
  binDir: string;
  /** The API server writes an audit log of writes (see {@link AUDIT_LOG_ENV}); absent means no. */
  audit?: boolean;
  /** The controller manager runs the node-lifecycle controllers (see {@link NODE_LIFECYCLE_ENV}); absent means no. */
  nodeLifecycle?: boolean;
  /** The controller manager's and scheduler's API QPS (see {@link CONTROLLER_QPS_ENV}); absent means their defaults. */
  controllerQps?: number;
  /** kwok's pod workers (see {@link KWOK_PARALLELISM_ENV}); absent means kwok's default. */
  kwokParallelism?: number;
  /** kwok's node Lease duration, seconds (see {@link NODE_LEASE_SECONDS_ENV}); absent means a kubelet's 40 s. */
  nodeLeaseSeconds?: number;
}

/** The fleet-scale settings a cluster takes when it is created, each from its env var; absent means the component's default. */
export type Raises = Pick<State, 'controllerQps' | 'kwokParallelism' | 'nodeLeaseSeconds'>;
export const RAISES: ReadonlyArray<{ key: keyof Raises; env: string; integer: boolean }> = [
  { key: 'controllerQps', env: CONTROLLER_QPS_ENV, integer: false },
  { key: 'kwokParallelism', env: KWOK_PARALLELISM_ENV, integer: true },
  { key: 'nodeLeaseSeconds', env: NODE_LEASE_SECONDS_ENV, integer: true },
];

/** What {@link RAISES} sets, from the env: only the variables that are set, each checked. */
export function raisesFrom(env: NodeJS.ProcessEnv): Raises {
  const out: Raises = {};
  for (const { key, env: name, integer } of RAISES) {
    const raw = env[name];
    if (!raw) continue;
    const v = Number(raw);
    if (!(integer ? Number.isInteger(v) : Number.isFinite(v)) || v <= 0)
      throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'}, got ${raw}`);
    out[key] = v;
  }
  return out;
}

/** The state of the cluster in {@link paths}' directory, or undefined when it has none (or an unreadable one). */
export async function readState(): Promise<State | undefined> {
  try {
    return JSON.parse(await readFile(paths().state, 'utf8')) as State;
  } catch {
    return undefined;
  }
}

/** Writes `state.json`, readable only by the owner: it holds the bearer tokens. */
export async function writeState(state: State): Promise<void> {
  await writeFile(paths().state, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
}
