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
 * `Unknown` and get tainted as in a real cluster (see `NODE_LIFECYCLE_TIMINGS` in controllers.ts).
 *
 * Besides the components, a cluster can run extra kwok instances, `kwok-<pool>`, each managing only
 * the nodes annotated `kwok.x-k8s.io/node=<pool>`: a test can freeze one (SIGSTOP) to make exactly those
 * nodes' "kubelets" die. They are tracked like the components (pid file, log), so `down` stops them too.
 *
 * This module brings a cluster up (or reuses a running one) and down; the pieces are in their own
 * modules: paths.ts and ports.ts (where a cluster lives), state.ts (what it was created with), pki.ts,
 * etcd.ts, apiServer.ts, controllers.ts, kwok.ts (each component's command line), components.ts and
 * processes.ts (starting and stopping them), nodes.ts and namespaces.ts (objects tests create).
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AUDIT_POLICY, apiServerReady } from './apiServer.js';
import { buildBinaries, runBuild } from './binaries.js';
import { startComponents, stopAll } from './components.js';
import { kubectlRunner, type Kubectl } from './kubectl.js';
import { kwokConfigYaml } from './kwok.js';
import { acquireLock } from './lock.js';
import { createNodes, waitForNodesReady } from './nodes.js';
import { paths } from './paths.js';
import { writeCredentials } from './pki.js';
import { assertPortsFree, portsFromEnv, type Ports } from './ports.js';
import { COMPONENTS, assertAllAlive, binaryOf, isOurProcess, logFile, logTail, readPids } from './processes.js';
import { REAL_NODE_NAME, startRealNode } from './realNode.js';
import { AUDIT_LOG_ENV, NODE_LIFECYCLE_ENV, RAISES, raisesFrom, readState, writeState, type Raises, type State } from './state.js';
import { waitFor } from './wait.js';

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
export interface ClusterInfo extends Raises {
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
}

/** Env var that, set to `1`, makes {@link up} add the real node (as `up --real-node` does). */
export const REAL_NODE_ENV = 'RG_REAL_NODE';
/** Env var naming the kubeconfig of an existing cluster to use instead of starting one. */
export const EXTERNAL_KUBECONFIG_ENV = 'RG_TEST_KUBECONFIG';

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
    const { state, mode } = await reuseOrStart(binDir, built, env, step);

    const kubectl = kubectlRunner(state.binDir, p.kubeconfig);
    await addDefaultNodes(kubectl, nodeCount, step);
    if (opts.realNode ?? env[REAL_NODE_ENV] === '1') await addRealNode(state, kubectl, step);

    const totalMs = Date.now() - started;
    log(`export KUBECONFIG=${p.kubeconfig}`);
    log(`cluster up (${mode}) in ${(totalMs / 1000).toFixed(1)}s (build step ${(buildMs / 1000).toFixed(1)}s)`);
    const raised = raisedSettings(state, mode, env, log);
    return { kubeconfig: p.kubeconfig, binDir: state.binDir, mode, buildMs, totalMs, ports: state.ports, ...raised };
  } finally {
    await release();
  }
}

/** A cluster to run against: its admin kubeconfig, the pinned binaries, and the raised settings {@link up} reports. */
export type ClusterConnection = Pick<ClusterInfo, 'kubeconfig' | 'binDir' | keyof Raises>;

/**
 * The cluster {@link EXTERNAL_KUBECONFIG_ENV} names, for which only the binaries are built (it needs a kwok
 * managing the nodes annotated `kwok.x-k8s.io/node=fake` with our stages.yaml); without it, the local
 * cluster {@link up} starts or reuses with `opts`.
 */
export async function ensureCluster(opts: UpOptions = {}): Promise<ClusterConnection> {
  const external = process.env[EXTERNAL_KUBECONFIG_ENV];
  if (external) return { kubeconfig: external, binDir: await buildBinaries({ log: opts.log }) };
  return up(opts);
}

/** The running cluster when it is healthy, else a fresh one; a broken one is refused. */
async function reuseOrStart(
  binDir: string,
  built: boolean,
  env: NodeJS.ProcessEnv,
  step: (msg: string) => void,
): Promise<{ state: State; mode: ClusterInfo['mode'] }> {
  const state = await readState();
  const existing = state ? await inspect(state) : { kind: 'absent' as const };
  if (state && existing.kind === 'healthy') {
    step(`reusing running cluster (apiserver https://127.0.0.1:${state.ports.apiserver})`);
    return { state, mode: 'reused' };
  }
  if (existing.kind === 'broken') {
    // Restarting would hide why a component died or hangs; the logs stay until `down`.
    throw new Error(`${existing.reason}\nThe running cluster is broken; run \`npm run cluster:down\` and try again.`);
  }
  if (existing.kind === 'stale') step('found a stopped cluster (no process alive); starting a fresh one');
  const mode = built ? 'cold' : 'warm';
  const fresh = await startFresh(binDir, portsFromEnv(env), step, {
    audit: env[AUDIT_LOG_ENV] === '1',
    nodeLifecycle: env[NODE_LIFECYCLE_ENV] === '1',
    ...raisesFrom(env),
  });
  return { state: fresh, mode };
}

/** Creates the default nodes `node-1..node-<count>` (existing ones are kept) and waits until they are Ready. */
async function addDefaultNodes(kubectl: Kubectl, count: number, step: (msg: string) => void): Promise<void> {
  const specs = Array.from({ length: count }, (_, i) => ({ name: `node-${i + 1}` }));
  await createNodes(kubectl, specs);
  await waitForNodesReady(
    kubectl,
    specs.map((s) => s.name),
    { timeoutMs: 60_000, whileWaiting: () => assertAllAlive() },
  );
  step(`${count} node(s) Ready`);
}

/** Starts the real node (cluster/realNode.ts) and waits until its kubelet reports it Ready. */
async function addRealNode(state: State, kubectl: Kubectl, step: (msg: string) => void): Promise<void> {
  await startRealNode({
    clusterDir: paths().dir,
    binDir: state.binDir,
    apiserverPort: state.ports.apiserver,
    nodeToken: state.nodeToken,
    kubeletPort: state.ports.kubelet,
    kubeletHealthzPort: state.ports.kubeletHealthz,
    log: step,
  });
  await waitForNodesReady(kubectl, [REAL_NODE_NAME], { timeoutMs: 90_000, whileWaiting: () => assertAllAlive() });
  step(`real node ${REAL_NODE_NAME} Ready (kubelet, containerd)`);
}

/**
 * The raised settings the cluster runs with. They are fixed when a cluster is created, so a caller that
 * asks a reused cluster for others is told that they do not apply.
 */
function raisedSettings(state: State, mode: ClusterInfo['mode'], env: NodeJS.ProcessEnv, log: (line: string) => void): Raises {
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
  return raised;
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

// ---------------------------------------------------------------------------------------------
// Starting and stopping the processes

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

  const { token, nodeToken } = await writeCredentials(p.pki, p.kubeconfig, ports.apiserver);
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
  await writeState(state);
  step('PKI and kubeconfig written');

  try {
    await startComponents(state, step);
  } catch (err) {
    // Leave the logs for diagnosis but no half-started processes; the next `up` starts over.
    await stopAll(step);
    throw err;
  }
  return state;
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

/** Empties the cluster directory, keeping the lock the caller holds. */
async function wipeExceptLock(): Promise<void> {
  const p = paths();
  for (const entry of await readdir(p.dir)) {
    if (path.join(p.dir, entry) !== p.lock) await rm(path.join(p.dir, entry), { recursive: true, force: true });
  }
}
