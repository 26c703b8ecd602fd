/**
 * A real, local Kubernetes control plane for integration and end-to-end tests: etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler and kwok (fake nodes and pod lifecycles), all built from Go
 * modules by `cluster/build.sh` and listening on 127.0.0.1.
 *
 * State lives in `<repo>/.cluster/`; the processes are detached so they outlive the command that
 * started them, which lets `npm run cluster:up` hand a running cluster to later test runs.
 *
 * A second, private cluster (e.g. for fault tests that restart the API server) runs beside it when
 * `RG_CLUSTER_DIR` names another directory and the `RG_*_PORT` variables other ports; every file of
 * a cluster (lock, kubeconfig, pids, logs, data) lives in its directory. `RG_AUDIT_LOG=1` at creation
 * additionally writes an API server audit log of every write (`<dir>/logs/audit.log`); `RG_NODE_LIFECYCLE=1`
 * runs the controller manager's node-lifecycle controllers, so that nodes whose kwok stops answering turn
 * `Unknown` and get tainted as in a real cluster (see {@link NODE_LIFECYCLE_TIMINGS}).
 *
 * Besides the {@link COMPONENTS}, a cluster can run extra kwok instances, `kwok-<pool>`, each managing only
 * the nodes annotated `kwok.x-k8s.io/node=<pool>`: a test can freeze one (SIGSTOP) to make exactly those
 * nodes' "kubelets" die. They are tracked like the components (pid file, log), so `down` stops them too.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, openSync, closeSync, readFileSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify as toYaml } from 'yaml';
import { isAlive, runsBinary } from './processes.js';
import { REAL_NODE_NAME, startRealNode, stopRealNode } from './realNode.js';

/** Names of the processes the control plane consists of, in start order. */
export const COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'] as const;
/** One of {@link COMPONENTS}. */
export type ComponentName = (typeof COMPONENTS)[number];

/**
 * A process the cluster tracks, with pid file `pids/<name>.pid` and log `logs/<name>.log`: one of the
 * {@link COMPONENTS}, or `kwok-<pool>`, an extra kwok that manages only the nodes annotated
 * `kwok.x-k8s.io/node=<pool>` (see {@link kwokInstanceName}).
 */
export type ProcessName = ComponentName | `kwok-${string}`;

// Lower-case DNS label: it ends up in a pid file name and in an annotation selector.
const KWOK_INSTANCE_RE = /^kwok-([a-z0-9]([-a-z0-9]*[a-z0-9])?)$/;

/** The {@link ProcessName} of the extra kwok instance that manages the nodes annotated `kwok.x-k8s.io/node=<pool>`. */
export function kwokInstanceName(pool: string): ProcessName {
  const name = `kwok-${pool}` as const;
  if (!KWOK_INSTANCE_RE.test(name) || pool === 'fake')
    throw new Error(`${JSON.stringify(pool)} cannot name a kwok instance (lower-case DNS label, not "fake")`);
  return name;
}

/** `s` as a {@link ProcessName}, or undefined when it names neither a component nor a kwok instance. */
export function parseProcessName(s: string): ProcessName | undefined {
  if ((COMPONENTS as readonly string[]).includes(s)) return s as ComponentName;
  const m = KWOK_INSTANCE_RE.exec(s);
  return m && m[1] !== 'fake' ? (s as ProcessName) : undefined;
}

/** The executable a tracked process runs: the component itself, or `kwok` for a kwok instance. */
export function binaryOf(name: ProcessName): ComponentName {
  return (COMPONENTS as readonly string[]).includes(name) ? (name as ComponentName) : 'kwok';
}

/** Loopback ports used by the control plane. */
export interface Ports {
  apiserver: number;
  etcdClient: number;
  etcdPeer: number;
  controllerManager: number;
  scheduler: number;
  kwok: number;
  /** The real node's kubelet API (`--real-node`), on loopback. */
  kubelet: number;
  /** The real node's kubelet /healthz. */
  kubeletHealthz: number;
}

/** Result of one `kubectl` invocation. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options for a `kubectl` invocation. */
export interface KubectlOptions {
  /** Namespace, passed as `--namespace`. */
  ns?: string;
  /** Written to kubectl's stdin (e.g. a manifest for `apply -f -`). */
  input?: string;
  /** Return a non-zero exit instead of throwing. */
  allowFail?: boolean;
}

/** Runs the pinned kubectl against one cluster. Throws on a non-zero exit unless `allowFail`. */
export type Kubectl = (args: readonly string[], opts?: KubectlOptions) => Promise<KubectlResult>;

/** Options for {@link up}. */
export interface UpOptions {
  /** Number of default kwok nodes `node-1..node-N` (default: env `NODES`, else 3). */
  nodes?: number;
  /** Receives progress lines (default: stdout). */
  log?: (line: string) => void;
  /** Environment to read port overrides from (default: `process.env`). */
  env?: NodeJS.ProcessEnv;
  /**
   * Add the real node (cluster/realNode.ts): a real kubelet over containerd and runc, tainted so that only
   * DaemonSets tolerating it run there. Default: env {@link REAL_NODE_ENV} is `1`.
   */
  realNode?: boolean;
}

/** What {@link up} produced. */
export interface ClusterInfo {
  /** Absolute path of the admin kubeconfig. */
  kubeconfig: string;
  /** Directory holding the pinned binaries (kubectl included). */
  binDir: string;
  /** `reused`: processes were already running; `warm`: binaries cached, processes started; `cold`: binaries built too. */
  mode: 'reused' | 'warm' | 'cold';
  /** Wall time of the build.sh step. */
  buildMs: number;
  /** Wall time of the whole `up`. */
  totalMs: number;
  ports: Ports;
  /** The controller manager's and scheduler's API QPS when raised (see {@link CONTROLLER_QPS_ENV}). */
  controllerQps?: number;
  /** kwok's pod workers when raised (see {@link KWOK_PARALLELISM_ENV}). */
  kwokParallelism?: number;
}

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

/** A kwok-managed fake node. Everything except the name has a default. */
export interface NodeSpec {
  name: string;
  /** Added to the default labels (hostname, os, arch, `type=kwok`). */
  labels?: Record<string, string>;
  /** Added to the annotations kwok needs. */
  annotations?: Record<string, string>;
  taints?: Array<{ key: string; value?: string; effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' }>;
  /**
   * Overrides of the default allocatable (= capacity) `cpu: 32, memory: 256Gi, pods: 110`;
   * extended resources such as `nvidia.com/gpu` go here too.
   */
  allocatable?: Record<string, string>;
}

/** Annotation selecting the nodes our kwok instance manages (`--manage-nodes-with-annotation-selector`). */
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

/** Node label that ties a DaemonSet (via nodeSelector or affinity) to one node pool of the cluster. */
export const POOL_LABEL = 'rollout-guard.dev/pool';

/** A name that is unique across parallel test processes, valid as a namespace or node name prefix. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`.toLowerCase().slice(0, 50);
}

/** The shared cluster's ports; a private cluster offsets each of them. */
export const DEFAULT_PORTS: Readonly<Ports> = {
  apiserver: 6443,
  etcdClient: 2379,
  etcdPeer: 2380,
  controllerManager: 10257,
  scheduler: 10259,
  kwok: 10247,
  kubelet: 10350,
  kubeletHealthz: 10348,
};

/** The environment variable that overrides each port. */
export const PORT_ENV: Readonly<Record<keyof Ports, string>> = {
  apiserver: 'RG_APISERVER_PORT',
  etcdClient: 'RG_ETCD_CLIENT_PORT',
  etcdPeer: 'RG_ETCD_PEER_PORT',
  controllerManager: 'RG_KCM_PORT',
  scheduler: 'RG_SCHEDULER_PORT',
  kwok: 'RG_KWOK_PORT',
  kubelet: 'RG_KUBELET_PORT',
  kubeletHealthz: 'RG_KUBELET_HEALTHZ_PORT',
};

/**
 * Audit policy of a cluster created with `RG_AUDIT_LOG=1`: one Metadata-level record (who, verb, object,
 * response code, time) per write; reads and watches are not recorded.
 */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    verbs: [get, list, watch]
  - level: Metadata
`;

const SERVICE_CIDR = '10.96.0.0/24';
// Pod IPs come from a range distinct from Services so a wrong IP in a test failure is recognisable.
const POD_CIDR = '10.244.0.0/16';
const NODE_IP = '10.0.0.1';

/** Env var naming the cluster directory (relative to the repository root, or absolute); default `.cluster`. */
export const CLUSTER_DIR_ENV = 'RG_CLUSTER_DIR';
/** Env var that, set to `1` when a cluster is created, enables the API server audit log of writes. */
export const AUDIT_LOG_ENV = 'RG_AUDIT_LOG';
/**
 * Env var that, set to `1` when a cluster is created, adds the node-lifecycle, pod-GC and taint-eviction
 * controllers to the controller manager, with the short timings of {@link NODE_LIFECYCLE_TIMINGS}.
 */
export const NODE_LIFECYCLE_ENV = 'RG_NODE_LIFECYCLE';
/** Env var that, set to `1`, makes {@link up} add the real node (as `up --real-node` does). */
export const REAL_NODE_ENV = 'RG_REAL_NODE';
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
 * Node-health timings of a cluster created with {@link NODE_LIFECYCLE_ENV}. Upstream defaults (kubelet
 * lease 40 s renewed every 10 s, grace period 50 s) scaled down five-fold so a dead node is noticed in
 * seconds, keeping upstream's ratio: five lease renewals fit in the grace period, so a kwok delayed by a
 * busy machine for a few seconds does not make a healthy node flap to Unknown.
 */
export const NODE_LIFECYCLE_TIMINGS = {
  /** kwok's `--node-lease-duration-seconds`; kwok renews the node Lease every quarter of it (2 s). */
  leaseDurationSeconds: 8,
  /** KCM `--node-monitor-grace-period`: no Lease renewal (or status heartbeat) seen for this long → Unknown. */
  monitorGracePeriodSeconds: 10,
  /** KCM `--node-monitor-period`: how often the controller checks every node. */
  monitorPeriodSeconds: 1,
} as const;

/** A kubelet's default node Lease duration (it renews every quarter of it). */
const KUBELET_LEASE_SECONDS = 40;

/** Locations of the repository and of the cluster state under it (`$RG_CLUSTER_DIR`, default `.cluster`). */
export function paths() {
  const root = repoRoot();
  const dir = path.resolve(root, process.env[CLUSTER_DIR_ENV] || '.cluster');
  return {
    root,
    dir,
    kubeconfig: path.join(dir, 'kubeconfig'),
    state: path.join(dir, 'state.json'),
    pki: path.join(dir, 'pki'),
    etcdData: path.join(dir, 'etcd'),
    logs: path.join(dir, 'logs'),
    pids: path.join(dir, 'pids'),
    kwokHome: path.join(dir, 'kwok-home'),
    lock: path.join(dir, 'up.lock'),
    auditPolicy: path.join(dir, 'audit-policy.yaml'),
    auditLog: path.join(dir, 'logs', 'audit.log'),
    buildScript: path.join(root, 'cluster', 'build.sh'),
    stages: path.join(root, 'cluster', 'stages.yaml'),
    kwokConfig: path.join(dir, 'kwok-config.yaml'),
  };
}

/** The repository root: the nearest directory above this module with a package.json. */
export const ROOT = repoRoot();

function repoRoot(): string {
  // Compiled to dist/cluster/ and run from there, so find the root instead of assuming a depth.
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

/** Reads port overrides (`RG_APISERVER_PORT`, `RG_ETCD_CLIENT_PORT`, …) on top of the defaults. */
export function portsFromEnv(env: NodeJS.ProcessEnv = process.env): Ports {
  const ports = { ...DEFAULT_PORTS };
  for (const key of Object.keys(PORT_ENV) as Array<keyof Ports>) {
    const raw = env[PORT_ENV[key]];
    if (raw === undefined || raw === '') continue;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`${PORT_ENV[key]}=${raw} is not a port number`);
    ports[key] = n;
  }
  return ports;
}

interface State {
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
}

/** The fleet-scale settings a cluster takes when it is created, each from its env var; absent means the component's default. */
type Raises = Pick<State, 'controllerQps' | 'kwokParallelism'>;
const RAISES: ReadonlyArray<{ key: keyof Raises; env: string; integer: boolean }> = [
  { key: 'controllerQps', env: CONTROLLER_QPS_ENV, integer: false },
  { key: 'kwokParallelism', env: KWOK_PARALLELISM_ENV, integer: true },
];

/**
 * Builds (or finds cached) binaries, then reuses a healthy running cluster or starts a fresh one,
 * and makes sure the default kwok nodes exist and are Ready. Safe to call concurrently from several
 * processes: a lock directory serialises them, and the losers reuse what the winner started.
 */
export async function up(opts: UpOptions = {}): Promise<ClusterInfo> {
  const started = Date.now();
  const log = opts.log ?? ((line: string) => console.log(line));
  const step = (msg: string) => log(`[cluster ${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}`);
  const env = opts.env ?? process.env;
  const nodeCount = opts.nodes ?? Number(env.NODES ?? 3);
  if (!Number.isInteger(nodeCount) || nodeCount < 0) throw new Error(`NODES=${env.NODES} is not a node count`);
  const p = paths();

  await mkdir(p.dir, { recursive: true });
  const release = await acquireLock(p.lock, step);
  try {
    const buildStart = Date.now();
    const { binDir, built } = await runBuild(p.buildScript, log);
    const buildMs = Date.now() - buildStart;
    step(`binaries ${built ? 'built' : 'cached'} in ${binDir}`);

    let mode: ClusterInfo['mode'];
    let state = await readState();
    const existing = state ? await inspect(state) : { kind: 'absent' as const };
    if (state && existing.kind === 'healthy') {
      mode = 'reused';
      step(`reusing running cluster (apiserver https://127.0.0.1:${state.ports.apiserver})`);
    } else {
      if (existing.kind === 'broken') {
        // Restarting would hide why a component died or hangs; the logs stay until `down`.
        throw new Error(`${existing.reason}\nThe running cluster is broken; run \`npm run cluster:down\` and try again.`);
      }
      if (existing.kind === 'stale') step('found a stopped cluster (no process alive); starting a fresh one');
      mode = built ? 'cold' : 'warm';
      state = await startFresh(binDir, portsFromEnv(env), step, {
        audit: env[AUDIT_LOG_ENV] === '1',
        nodeLifecycle: env[NODE_LIFECYCLE_ENV] === '1',
        ...raisesFrom(env),
      });
    }

    const kubectl = kubectlRunner(state.binDir, p.kubeconfig);
    const specs = Array.from({ length: nodeCount }, (_, i) => ({ name: `node-${i + 1}` }));
    await createNodes(kubectl, specs);
    await waitForNodesReady(
      kubectl,
      specs.map((s) => s.name),
      { timeoutMs: 60_000, whileWaiting: () => assertAllAlive() },
    );
    step(`${nodeCount} node(s) Ready`);
    if (opts.realNode ?? env[REAL_NODE_ENV] === '1') {
      const s = state;
      await startRealNode({
        clusterDir: p.dir,
        binDir: s.binDir,
        apiserverPort: s.ports.apiserver,
        nodeToken: s.nodeToken,
        kubeletPort: s.ports.kubelet,
        kubeletHealthzPort: s.ports.kubeletHealthz,
        log: step,
      });
      await waitForNodesReady(kubectl, [REAL_NODE_NAME], { timeoutMs: 90_000, whileWaiting: () => assertAllAlive() });
      step(`real node ${REAL_NODE_NAME} Ready (kubelet, containerd)`);
    }

    const totalMs = Date.now() - started;
    log(`export KUBECONFIG=${p.kubeconfig}`);
    log(`cluster up (${mode}) in ${(totalMs / 1000).toFixed(1)}s (build step ${(buildMs / 1000).toFixed(1)}s)`);
    const wanted = raisesFrom(env);
    const raised: Raises = {};
    for (const { key, env: name } of RAISES) {
      if (state[key] !== undefined) raised[key] = state[key];
      if (mode === 'reused' && wanted[key] !== undefined && wanted[key] !== state[key]) {
        log(
          `note: ${name}=${wanted[key]} applies to a new cluster; the running one keeps ${state[key] ?? 'the default'} (npm run cluster:down first)`,
        );
      }
    }
    return { kubeconfig: p.kubeconfig, binDir: state.binDir, mode, buildMs, totalMs, ports: state.ports, ...raised };
  } finally {
    await release();
  }
}

/**
 * Runs build.sh only (a cached run takes well under a second) and returns the binary directory;
 * for callers that need the pinned kubectl but not a cluster of their own.
 */
export async function buildBinaries(opts: { log?: (line: string) => void } = {}): Promise<string> {
  return (await runBuild(paths().buildScript, opts.log ?? ((line: string) => console.log(line)))).binDir;
}

/** Stops every process recorded in `.cluster/pids` (SIGTERM, then SIGKILL) and removes `.cluster/`. */
export async function down(opts: { log?: (line: string) => void } = {}): Promise<void> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const p = paths();
  if (!existsSync(p.dir)) {
    log('no cluster to stop');
    return;
  }
  await stopAll(log);
  await rm(p.dir, { recursive: true, force: true });
  log(`removed ${p.dir}`);
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

/** Returns a {@link Kubectl} bound to one binary directory and kubeconfig. */
export function kubectlRunner(binDir: string, kubeconfig: string): Kubectl {
  const bin = path.join(binDir, 'kubectl');
  return (args, opts = {}) =>
    new Promise((resolve, reject) => {
      const full = ['--kubeconfig', kubeconfig, ...(opts.ns ? ['--namespace', opts.ns] : []), ...args];
      const child = spawn(bin, full, { stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code, signal) => {
        const result = { code: code ?? (signal ? 128 : 1), stdout, stderr };
        if (result.code !== 0 && !opts.allowFail) {
          reject(new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${stderr.trim() || stdout.trim()}`));
        } else {
          resolve(result);
        }
      });
      child.stdin.on('error', () => undefined); // kubectl may exit before reading all input; `close` reports why
      child.stdin.end(opts.input ?? '');
    });
}

/**
 * Creates namespace `name` and waits for its `default` ServiceAccount. ServiceAccount admission refuses
 * every pod until the serviceaccount controller has made it, a moment after the namespace; a DaemonSet
 * applied in that moment would start with FailedCreate Warnings no test means.
 */
export async function createNamespace(kubectl: Kubectl, name: string, labels: Record<string, string> = {}): Promise<void> {
  await kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } }) });
  // Long: a controller manager whose watches are in back-off after an API server restart takes tens of seconds.
  await waitFor(
    async () => (await kubectl(['get', 'serviceaccount', 'default', '-n', name, '-o', 'name'], { allowFail: true })).code === 0,
    {
      timeoutMs: 120_000,
      intervalMs: 250,
      describe: `the default ServiceAccount of namespace ${name}`,
    },
  );
}

/** The Node object for a {@link NodeSpec}: no kwok taint, so DaemonSet pods land on it. */
export function nodeManifest(spec: NodeSpec): Record<string, unknown> {
  const resources = { cpu: '32', memory: '256Gi', pods: '110', ...spec.allocatable };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: spec.name,
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', [KWOK_NODE_ANNOTATION]: 'fake', ...spec.annotations },
      labels: {
        'kubernetes.io/hostname': spec.name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        type: 'kwok',
        ...spec.labels,
      },
    },
    spec: spec.taints?.length ? { taints: spec.taints } : {},
    status: {
      allocatable: resources,
      capacity: resources,
      // nodeInfo is left to kwok's node-initialize stage: the API schema requires all ten of its
      // fields (kubectl's client-side validation rejects a partial one).
      phase: 'Running',
    },
  };
}

/**
 * Creates kwok-managed nodes; nodes that already exist are left as they are. The status
 * (allocatable/capacity) is kept by the apiserver on create, and kwok's node-initialize stage then
 * copies it while marking the node Ready.
 */
export async function createNodes(kubectl: Kubectl, specs: readonly NodeSpec[]): Promise<void> {
  if (specs.length === 0) return;
  const list = { apiVersion: 'v1', kind: 'List', items: specs.map(nodeManifest) };
  const res = await kubectl(['create', '-f', '-'], { input: JSON.stringify(list), allowFail: true });
  if (res.code === 0) return;
  const errors = res.stderr.split('\n').filter((l) => l.startsWith('Error') && !l.includes('(AlreadyExists)'));
  if (errors.length > 0 || !res.stderr.includes('(AlreadyExists)')) {
    throw new Error(`creating nodes ${specs.map((s) => s.name).join(', ')} failed: ${res.stderr.trim()}`);
  }
}

/**
 * Waits until every named CRD is served: its `Established` condition True. Polls what the API says
 * rather than `kubectl wait --for=condition=Established`, which fails at once ("<nil> is of the type
 * <nil>") when it reads a CRD whose status the API server has not written yet.
 */
export async function waitForCrdsEstablished(kubectl: Kubectl, names: readonly string[], opts: { timeoutMs?: number } = {}): Promise<void> {
  await waitFor(
    async () => {
      const r = await kubectl(['get', 'crd', ...names, '-o', 'json'], { allowFail: true });
      if (r.code !== 0) return false;
      const out = JSON.parse(r.stdout) as { items?: Array<{ status?: { conditions?: Array<{ type: string; status: string }> } }> };
      const items = out.items ?? [out as { status?: { conditions?: Array<{ type: string; status: string }> } }];
      return (
        items.length === names.length &&
        items.every((c) => c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True') === true)
      );
    },
    { timeoutMs: opts.timeoutMs ?? 60_000, intervalMs: 200, describe: `CRDs ${names.join(', ')} established` },
  );
}

/** Polls until every named node reports `Ready=True`. */
export async function waitForNodesReady(
  kubectl: Kubectl,
  names: readonly string[],
  opts: { timeoutMs: number; whileWaiting?: () => void | Promise<void> },
): Promise<void> {
  if (names.length === 0) return;
  await waitFor(
    async () => {
      await opts.whileWaiting?.();
      const res = await kubectl(['get', 'nodes', ...names, '-o', 'json'], { allowFail: true });
      if (res.code !== 0) return false;
      type NodeLike = { status?: { conditions?: Array<{ type: string; status: string }> } };
      // One name gets the Node itself, several a List.
      const parsed = JSON.parse(res.stdout) as NodeLike | { items: NodeLike[] };
      const items = 'items' in parsed ? parsed.items : [parsed];
      return (
        items.length === names.length && items.every((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      );
    },
    { timeoutMs: opts.timeoutMs, intervalMs: 250, describe: `nodes ${names.join(', ')} Ready` },
  );
}

/** Options for {@link waitFor}. */
export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** What is awaited, for the timeout message. */
  describe?: string;
}

/**
 * Polls `fn` until it returns a truthy value, and returns that value. Throws when `timeoutMs` passes;
 * the message names `describe` and the last value or error `fn` produced, which is usually the
 * most useful clue. Errors thrown by `fn` count as "not yet" (the API may be briefly unavailable).
 */
export async function waitFor<T>(
  fn: () => Promise<T | false | null | undefined> | T | false | null | undefined,
  opts: WaitOptions = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const intervalMs = opts.intervalMs ?? 250;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
      last = value;
    } catch (err) {
      if (err instanceof FatalWaitError) throw err.cause;
      last = err;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.describe ?? 'condition'}; last: ${detail}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Thrown (wrapping the real error) from a {@link waitFor} callback to stop waiting at once. */
export class FatalWaitError extends Error {
  constructor(cause: Error) {
    super(cause.message, { cause });
  }
}

// ---------------------------------------------------------------------------------------------
// Starting the processes

async function startFresh(
  binDir: string,
  ports: Ports,
  step: (msg: string) => void,
  { audit = false, nodeLifecycle = false, ...raises }: { audit?: boolean; nodeLifecycle?: boolean } & Raises = {},
): Promise<State> {
  const p = paths();
  await stopAll(step);
  await wipeExceptLock();
  await assertPortsFree(ports);
  for (const d of [p.pki, p.etcdData, p.logs, p.pids, p.kwokHome]) await mkdir(d, { recursive: true });

  const token = randomBytes(16).toString('hex');
  const nodeToken = randomBytes(16).toString('hex');
  await run('openssl', ['genrsa', '-out', path.join(p.pki, 'sa.key'), '2048']);
  // The kubelet's identity is a node's, so the Node authorizer, not system:masters, decides what it may read.
  const tokens = [
    `${token},admin,admin,"system:masters"`,
    `${nodeToken},system:node:${REAL_NODE_NAME},node-${REAL_NODE_NAME},"system:nodes"`,
  ];
  await writeFile(path.join(p.pki, 'tokens.csv'), tokens.join('\n') + '\n', { mode: 0o600 });
  await writeKubeletClientCert(p.pki);
  await writeFile(p.kubeconfig, kubeconfigYaml(ports.apiserver, token), { mode: 0o600 });
  const state: State = {
    ports,
    token,
    nodeToken,
    binDir,
    ...(audit ? { audit } : {}),
    ...(nodeLifecycle ? { nodeLifecycle } : {}),
    ...raises,
  };
  if (audit) await writeFile(p.auditPolicy, AUDIT_POLICY);
  if (raises.kwokParallelism) await writeFile(p.kwokConfig, kwokConfigYaml(raises.kwokParallelism));
  await writeFile(p.state, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
  step('PKI and kubeconfig written');

  try {
    const specs = componentSpecs(state);
    const byName = (n: ComponentName) => specs.find((s) => s.name === n)!;

    await spawnComponent(byName('etcd'), binDir);
    await waitReady(byName('etcd'), 30_000);
    step('etcd ready');

    await spawnComponent(byName('kube-apiserver'), binDir);
    await waitReady(byName('kube-apiserver'), 120_000);
    step('kube-apiserver ready');

    const rest = (['kube-controller-manager', 'kube-scheduler', 'kwok'] as const).map(byName);
    for (const s of rest) await spawnComponent(s, binDir);
    await Promise.all(
      rest.map(async (s) => {
        await waitReady(s, 60_000);
        step(`${s.name} ready`);
      }),
    );
  } catch (err) {
    // Leave the logs for diagnosis but no half-started processes; the next `up` starts over.
    await stopAll(step);
    throw err;
  }
  return state;
}

interface ComponentSpec {
  name: ProcessName;
  args: string[];
  env?: NodeJS.ProcessEnv;
  ready: () => Promise<boolean>;
}

function componentSpecs(state: State): ComponentSpec[] {
  const p = paths();
  const { ports } = state;
  const saKey = path.join(p.pki, 'sa.key');
  const etcdUrl = `http://127.0.0.1:${ports.etcdClient}`;
  const peerUrl = `http://127.0.0.1:${ports.etcdPeer}`;
  // The controller manager and the scheduler share one client rate (RG_CONTROLLER_QPS).
  const apiQps = state.controllerQps ? [`--kube-api-qps=${state.controllerQps}`, `--kube-api-burst=${state.controllerQps * 2}`] : [];
  return [
    {
      name: 'etcd',
      args: [
        '--name=node0',
        `--data-dir=${p.etcdData}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=node0=${peerUrl}`,
        '--auto-compaction-retention=1',
        '--log-level=warn',
        // Throwaway data: durability buys nothing and fsync dominates on slow CI disks.
        '--unsafe-no-fsync',
      ],
      ready: async () => (await httpGet(`${etcdUrl}/health`)).body.includes('"health":"true"'),
    },
    {
      name: 'kube-apiserver',
      args: [
        `--etcd-servers=${etcdUrl}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        // 1.37 refuses a loopback advertise address while it reconciles the `kubernetes` Service
        // endpoints; nothing here needs in-cluster access to the apiserver, so don't reconcile.
        '--endpoint-reconciler-type=none',
        `--secure-port=${ports.apiserver}`,
        `--cert-dir=${p.pki}`,
        `--token-auth-file=${path.join(p.pki, 'tokens.csv')}`,
        // RBAC rather than the AlwaysAllow default, so the operator's RBAC mistakes show up in tests.
        // Node for the real node's kubelet: it reads only what the pods bound to it reference.
        '--authorization-mode=Node,RBAC',
        // `kubectl logs` on the real node: the API server proves itself to its kubelet with a client
        // certificate of a CA only the kubelet trusts (kwok nodes serve no logs).
        '--kubelet-preferred-address-types=InternalIP',
        `--kubelet-client-certificate=${path.join(p.pki, 'kubelet-client.crt')}`,
        `--kubelet-client-key=${path.join(p.pki, 'kubelet-client.key')}`,
        '--service-account-issuer=https://kubernetes.default.svc',
        `--service-account-key-file=${saKey}`,
        `--service-account-signing-key-file=${saKey}`,
        `--service-cluster-ip-range=${SERVICE_CIDR}`,
        '--allow-privileged=true',
        // Every default admission plugin, as real clusters run them: ServiceAccount (a pod names an account
        // that exists, and gets its token volume) and TaintNodesByCondition (a new node is tainted
        // not-ready until the node-lifecycle controller sees it Ready) among them.
        '--enable-priority-and-fairness=false',
        ...(state.audit ? [`--audit-policy-file=${p.auditPolicy}`, `--audit-log-path=${p.auditLog}`, '--audit-log-format=json'] : []),
      ],
      ready: () => apiServerReady(state),
    },
    {
      name: 'kube-controller-manager',
      args: [
        `--kubeconfig=${p.kubeconfig}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--secure-port=${ports.controllerManager}`,
        // resourcequota: without it a ResourceQuota's status stays empty and admission lets every pod
        // past it, unlike any real cluster.
        // serviceaccount, serviceaccount-token and root-ca-certificate-publisher: what ServiceAccount admission
        // and the token volume it adds need (the account, its token, the kube-root-ca.crt ConfigMap);
        // node-lifecycle always, to lift TaintNodesByCondition's not-ready taint from a new node (upstream
        // timings unless nodeLifecycle shortens them; pod eviction only then).
        `--controllers=daemonset,serviceaccount,serviceaccount-token-controller,root-ca-certificate-publisher-controller,namespace,garbagecollector,deployment,replicaset,resourcequota,node-lifecycle-controller${state.nodeLifecycle ? ',podgc,taint-eviction-controller' : ''}`,
        `--service-account-private-key-file=${saKey}`,
        `--root-ca-file=${path.join(p.pki, 'apiserver.crt')}`,
        `--service-cluster-ip-range=${SERVICE_CIDR}`,
        ...(state.nodeLifecycle ? nodeLifecycleFlags() : []),
        ...apiQps,
      ],
      ready: async () => (await httpGet(`https://127.0.0.1:${ports.controllerManager}/healthz`)).status === 200,
    },
    {
      name: 'kube-scheduler',
      args: [
        `--kubeconfig=${p.kubeconfig}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--secure-port=${ports.scheduler}`,
        ...apiQps,
      ],
      ready: async () => (await httpGet(`https://127.0.0.1:${ports.scheduler}/healthz`)).status === 200,
    },
    kwokSpec(state, 'kwok', 'fake', ports.kwok, p.kwokHome),
  ];
}

/**
 * kwok's configuration file for {@link KWOK_PARALLELISM_ENV}: a second `--config` beside the stages.
 * kwok v0.8.0 applies no defaults to a KwokConfiguration it reads from a file (a worker count left out
 * is 0, and kwok refuses to start), so every option kwok defaults is written out with its default.
 */
function kwokConfigYaml(podWorkers: number): string {
  return toYaml({
    apiVersion: 'config.kwok.x-k8s.io/v1alpha1',
    kind: 'KwokConfiguration',
    options: {
      podPlayStageParallelism: podWorkers,
      nodePlayStageParallelism: 4,
      nodeLeaseParallelism: 4,
      podsOnNodeSyncParallelism: 1,
      manageAllNodes: false,
      enableDebuggingHandlers: true,
      enableContentionProfiling: false,
      enableProfilingHandler: true,
      enablePodsOnNodeSyncListPager: true,
      enablePodsOnNodeSyncStreamWatch: false,
    },
  });
}

/** What {@link RAISES} sets, from the env: only the variables that are set, each checked. */
function raisesFrom(env: NodeJS.ProcessEnv): Raises {
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

/**
 * Controller-manager flags of a cluster with {@link State.nodeLifecycle}. The eviction rate is, since the
 * taint-eviction controller split off, the rate at which the node-lifecycle controller *taints* dead nodes
 * `unreachable:NoExecute` (per zone, burst 1): upstream's 0.1/s would taint the second dead node of a
 * pool 10 s after the first. `--node-startup-grace-period` keeps its default (60 s): it only applies to
 * nodes that never reported Ready, and kwok reports within a second of managing a node.
 */
function nodeLifecycleFlags(): string[] {
  const t = NODE_LIFECYCLE_TIMINGS;
  return [
    `--node-monitor-period=${t.monitorPeriodSeconds}s`,
    `--node-monitor-grace-period=${t.monitorGracePeriodSeconds}s`,
    '--node-eviction-rate=10',
  ];
}

/**
 * A kwok process managing the nodes annotated `kwok.x-k8s.io/node=<selectorValue>`: the main one
 * (`fake`) or a kwok instance. All share the stages file and the pod CIDR/node IP flags, so a pool's
 * pods behave the same whichever kwok drives them.
 */
function kwokSpec(state: State, name: ProcessName, selectorValue: string, port: number, home: string): ComponentSpec {
  const p = paths();
  return {
    name,
    args: [
      `--kubeconfig=${p.kubeconfig}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=${selectorValue}`,
      `--config=${p.stages}`,
      ...(state.kwokParallelism ? [`--config=${p.kwokConfig}`] : []),
      `--cidr=${POD_CIDR}`,
      `--node-ip=${NODE_IP}`,
      `--server-address=127.0.0.1:${port}`,
      // The node-lifecycle controller (always running: it lifts TaintNodesByCondition's taint) counts a
      // node alive while its Lease is renewed. Without the flag kwok keeps no Lease, and its status
      // heartbeat (every 10 minutes) is far past the 50 s grace period: every node would turn Unknown.
      // A kubelet's 40 s lease (renewed every 10 s), or the short one of a nodeLifecycle cluster.
      `--node-lease-duration-seconds=${state.nodeLifecycle ? NODE_LIFECYCLE_TIMINGS.leaseDurationSeconds : KUBELET_LEASE_SECONDS}`,
    ],
    // kwok also loads ~/.kwok/kwok.yaml when it exists; a private HOME keeps a developer's own
    // stages from silently changing pod behaviour in tests.
    env: { ...process.env, HOME: home },
    ready: async () => (await httpGet(`http://127.0.0.1:${port}/healthz`)).status === 200,
  };
}

/**
 * The spec of kwok instance `kwok-<pool>`: its own HOME (under the cluster directory) and a port the
 * kernel picks, since any number of instances may run beside the fixed-port components.
 */
async function kwokInstanceSpec(state: State, name: ProcessName): Promise<ComponentSpec> {
  const pool = name.slice('kwok-'.length);
  const home = path.join(paths().dir, `${name}-home`);
  await mkdir(home, { recursive: true });
  return kwokSpec(state, name, pool, await freePort(), home);
}

async function spawnComponent(spec: ComponentSpec, binDir: string): Promise<void> {
  const p = paths();
  const fd = openSync(logFile(spec.name), 'a');
  try {
    const child = spawn(path.join(binDir, binaryOf(spec.name)), spec.args, {
      cwd: p.dir,
      env: spec.env ?? process.env,
      // Own session and no pipes back to us: the process must survive the npm command that started it.
      detached: true,
      stdio: ['ignore', fd, fd],
    });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('spawn', () => resolve(child.pid!));
      child.once('error', (err) => reject(new Error(`cannot start ${spec.name}: ${err.message}`)));
    });
    child.unref();
    await writeFile(path.join(p.pids, `${spec.name}.pid`), `${pid}\n`);
  } finally {
    closeSync(fd);
  }
}

async function waitReady(spec: ComponentSpec, timeoutMs: number): Promise<void> {
  await waitFor(
    async () => {
      await assertAllAlive();
      return spec.ready();
    },
    { timeoutMs, intervalMs: 200, describe: `${spec.name} to become ready` },
  ).catch(async (err: unknown) => {
    if (err instanceof Error && err.message.startsWith('timed out')) {
      throw new Error(`${err.message}\n--- last lines of ${logFile(spec.name)} ---\n${await logTail(spec.name)}`);
    }
    throw err;
  });
}

/** Fails the current wait as soon as a started component has exited, quoting its log. */
async function assertAllAlive(): Promise<void> {
  for (const c of await readPids()) {
    // Just spawned by this process: alive is enough. Between fork and exec a child's cmdline is still its
    // parent's, so the binary-name check of isOurProcess (meant for pids left by an earlier run) would
    // read a child that has not exec'd yet as one that exited.
    if (!isAlive(c.pid)) {
      throw new FatalWaitError(
        new Error(`${c.name} (pid ${c.pid}) exited\n--- last lines of ${logFile(c.name)} ---\n${await logTail(c.name)}`),
      );
    }
  }
}

type Existing = { kind: 'healthy' } | { kind: 'stale' } | { kind: 'broken'; reason: string };

/**
 * `healthy`: every component (and every recorded kwok instance) alive and the apiserver ready; `stale`:
 * nothing alive; `broken`: anything else.
 */
async function inspect(state: State): Promise<Existing> {
  const pids = await readPids();
  const dead = pids.filter((c) => !isOurProcess(c.pid, c.name));
  if (dead.length === pids.length) return { kind: 'stale' };
  const components = pids.filter((c) => binaryOf(c.name) === c.name).length;
  if (dead.length > 0 || components !== COMPONENTS.length) {
    const parts = await Promise.all(
      dead.map(async (c) => `${c.name} (pid ${c.pid}) is not running\n--- last lines of ${logFile(c.name)} ---\n${await logTail(c.name)}`),
    );
    return { kind: 'broken', reason: parts.join('\n') || `only ${components} of ${COMPONENTS.length} components were started` };
  }
  // A just-restarted machine or an overloaded one can take a moment; don't declare it broken at once.
  try {
    await waitFor(() => apiServerReady(state), { timeoutMs: 10_000, intervalMs: 250, describe: 'apiserver /readyz' });
    return { kind: 'healthy' };
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { kind: 'broken', reason: `${why}\n--- last lines of ${logFile('kube-apiserver')} ---\n${await logTail('kube-apiserver')}` };
  }
}

// ---------------------------------------------------------------------------------------------
// Processes, files, HTTP

/**
 * Stops the recorded processes in reverse dependency order (kwok instances with the API server's
 * clients). Signalled all at once, the apiserver and etcd wait on each other's connections and outlast
 * any sensible grace period; in order, the whole cluster is gone in about 1.5 s.
 */
async function stopAll(log: (line: string) => void): Promise<void> {
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

/** A tracked process: its name (pid and log file) and pid. */
interface Tracked {
  name: ProcessName;
  pid: number;
}

async function stopProcesses(procs: Tracked[], log: (line: string) => void): Promise<void> {
  if (procs.length === 0) return;
  for (const c of procs) {
    try {
      process.kill(c.pid, 'SIGTERM');
      // A test may have frozen it (SIGSTOP) and died before thawing it: a stopped process keeps SIGTERM
      // pending until SIGCONT, and would only go with the SIGKILL 10 s later.
      process.kill(c.pid, 'SIGCONT');
    } catch {
      // already gone
    }
  }
  const stillAlive = () => procs.filter((c) => isOurProcess(c.pid, c.name));
  try {
    await waitFor(() => stillAlive().length === 0, { timeoutMs: 10_000, intervalMs: 100, describe: 'components to exit' });
  } catch {
    for (const c of stillAlive()) {
      log(`${c.name} (pid ${c.pid}) ignored SIGTERM; sending SIGKILL`);
      try {
        process.kill(c.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await waitFor(() => stillAlive().length === 0, { timeoutMs: 5_000, intervalMs: 100, describe: 'components to die' });
  }
  for (const c of procs) log(`stopped ${c.name} (pid ${c.pid})`);
}

/** Every process recorded in `pids/` (components and kwok instances); files of other names are ignored. */
async function readPids(): Promise<Tracked[]> {
  const dir = paths().pids;
  if (!existsSync(dir)) return [];
  const out: Tracked[] = [];
  for (const f of await readdir(dir)) {
    if (!f.endsWith('.pid')) continue;
    const name = parseProcessName(f.slice(0, -'.pid'.length));
    if (!name) continue;
    const pid = Number((await readFile(path.join(dir, f), 'utf8')).trim());
    if (Number.isInteger(pid) && pid > 0) out.push({ name, pid });
  }
  return out;
}

/** True when `pid` is alive and runs the process's binary (a recycled pid must never be signalled). */
function isOurProcess(pid: number, name: ProcessName): boolean {
  return runsBinary(pid, binaryOf(name));
}

function rssMiB(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

function logFile(name: ProcessName): string {
  return path.join(paths().logs, `${name}.log`);
}

async function logTail(name: ProcessName, lines = 30): Promise<string> {
  try {
    const text = await readFile(logFile(name), 'utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

async function readState(): Promise<State | undefined> {
  try {
    return JSON.parse(await readFile(paths().state, 'utf8')) as State;
  } catch {
    return undefined;
  }
}

async function wipeExceptLock(): Promise<void> {
  const p = paths();
  for (const entry of await readdir(p.dir)) {
    if (path.join(p.dir, entry) !== p.lock) await rm(path.join(p.dir, entry), { recursive: true, force: true });
  }
}

function kubeconfigYaml(port: number, token: string): string {
  return toYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'rollout-guard', cluster: { server: `https://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'admin', user: { token } }],
    contexts: [{ name: 'rollout-guard', context: { cluster: 'rollout-guard', user: 'admin' } }],
    'current-context': 'rollout-guard',
  });
}

async function apiServerReady(state: State): Promise<boolean> {
  try {
    const res = await httpGet(`https://127.0.0.1:${state.ports.apiserver}/readyz`, { Authorization: `Bearer ${state.token}` });
    return res.status === 200;
  } catch {
    return false;
  }
}

function httpGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const mod = url.startsWith('https:') ? https : http;
    // Self-signed serving certs everywhere; this only ever talks to 127.0.0.1.
    const req = mod.get(url, { headers, rejectUnauthorized: false, timeout: 2_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
  });
}

async function assertPortsFree(ports: Ports): Promise<void> {
  for (const key of Object.keys(ports) as Array<keyof Ports>) {
    const port = ports[key];
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (!free) throw new Error(`port ${port} (${key}) on 127.0.0.1 is in use; set ${PORT_ENV[key]} to another port`);
  }
}

/**
 * A loopback port that was free a moment ago, picked by the kernel from its ephemeral range. Exported for
 * the suites and bench modes that start their own listeners (Prometheus, kube-state-metrics) beside the
 * control plane, so that there is one way to pick a port.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A CA (`kubelet-ca.crt`) and the API server's client certificate from it (`kubelet-client.crt`): the real
 * node's kubelet accepts only this certificate, so its API is no one else's to call.
 */
async function writeKubeletClientCert(pki: string): Promise<void> {
  const f = (n: string) => path.join(pki, n);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('kubelet-ca.key'),
    '-out',
    f('kubelet-ca.crt'),
    '-days',
    '30',
    '-subj',
    '/CN=rollout-guard-kubelet-ca',
  ]);
  await run('openssl', [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('kubelet-client.key'),
    '-out',
    f('kubelet-client.csr'),
    '-subj',
    '/CN=kube-apiserver-kubelet-client',
  ]);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    f('kubelet-client.csr'),
    '-CA',
    f('kubelet-ca.crt'),
    '-CAkey',
    f('kubelet-ca.key'),
    '-CAcreateserial',
    '-out',
    f('kubelet-client.crt'),
    '-days',
    '30',
  ]);
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${stderr.trim()}`))));
  });
}

/** Runs build.sh, streaming its progress (stderr) line by line; the bin dir is stdout's last line. */
function runBuild(script: string, log: (line: string) => void): Promise<{ binDir: string; built: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let pending = '';
    let built = false;
    const tail: string[] = [];
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      pending += d;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (/: building/.test(line)) built = true;
        tail.push(line);
        if (tail.length > 30) tail.shift();
        log(line);
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (pending) log(pending);
      const binDir = stdout.trim().split('\n').pop() ?? '';
      if (code !== 0 || !binDir) {
        reject(new Error(`${script} exited ${code}\n${tail.join('\n')}`));
      } else {
        resolve({ binDir, built });
      }
    });
  });
}

/**
 * Serialises `up` across processes (test files run in parallel). mkdir is atomic; a lock whose
 * owner died is taken over.
 */
async function acquireLock(lock: string, step: (msg: string) => void): Promise<() => Promise<void>> {
  let announced = false;
  // A cold build holds the lock for its whole duration (tens of minutes on 2 cores).
  await waitFor(
    async () => {
      try {
        await mkdir(lock);
        await writeFile(path.join(lock, 'owner'), `${process.pid}\n`);
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new FatalWaitError(err as Error);
      }
      const owner = Number((await readFile(path.join(lock, 'owner'), 'utf8').catch(() => '')).trim());
      let ownerAlive = false;
      if (owner > 0) {
        try {
          process.kill(owner, 0);
          ownerAlive = true;
        } catch (err) {
          ownerAlive = (err as NodeJS.ErrnoException).code === 'EPERM';
        }
      }
      // No owner file normally means the owner is between mkdir and writeFile; only an old lock
      // without one is abandoned.
      const orphaned = owner === 0 && Date.now() - (await stat(lock).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs > 10_000;
      if ((owner > 0 && !ownerAlive) || orphaned) {
        await rm(lock, { recursive: true, force: true });
        return false;
      }
      if (!announced) {
        step(`waiting for another \`up\` (pid ${owner || '?'}) to finish`);
        announced = true;
      }
      return false;
    },
    { timeoutMs: 60 * 60_000, intervalMs: 500, describe: `lock ${lock}` },
  );
  return () => rm(lock, { recursive: true, force: true });
}
