/**
 * A private local control plane for fault tests: the same components as the shared cluster (see
 * cluster/), started in their own directory (default `.cluster-faults-<pid>/`) on their own ports
 * (the shared cluster's + 100, or + 200, … when those are taken), so a test may stop, restart, pause or
 * compact them without disturbing the suites that run concurrently against the shared cluster, nor
 * another run of the same suite. Directories left by runs that died are stopped and removed on start.
 *
 * Every cluster operation runs `dist/cluster/cli.js` in a child process with `RG_CLUSTER_DIR` and
 * the `RG_*_PORT` variables set, so nothing in this process ever points the shared helpers elsewhere.
 *
 * Two field faults need more than the shared cluster has: a cluster started with `nodeLifecycle` runs the
 * controller manager's node-lifecycle controllers, and {@link PrivateCluster.createKillableNodePool} gives
 * a pool its own kwok, which a test freezes to make those nodes' kubelets die
 * ({@link KillableNodePool.pause}); {@link PrivateCluster.signalComponent} freezes a control-plane process.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import https from 'node:https';
import * as net from 'node:net';
import path from 'node:path';
import { parse as fromYaml, stringify as toYaml } from 'yaml';
import { buildBinaries } from './binaries.js';
import { REAL_NODE_ENV } from './controlPlane.js';
import { kubectlRunner, waitForCrdsEstablished, type Kubectl, type KubectlOptions, type KubectlResult } from './kubectl.js';
import { createNamespace, uniqueName } from './namespaces.js';
import {
  KWOK_NODE_ANNOTATION,
  POOL_LABEL,
  createNodes,
  readyCondition,
  waitForNodesReady,
  type NodeObject,
  type NodeSpec,
} from './nodes.js';
import { CLUSTER_DIR_ENV, ROOT } from './paths.js';
import { DEFAULT_PORTS, PORT_ENV, type Ports } from './ports.js';
import { binaryOf, kwokInstanceName, type ComponentName, type ProcessName } from './processes.js';
import { AUDIT_LOG_ENV, NODE_LIFECYCLE_ENV } from './state.js';
import { waitFor } from './wait.js';

const CLI = path.join(ROOT, 'dist', 'cluster', 'cli.js');

/** Options of {@link PrivateCluster.start}. */
export interface PrivateClusterOptions {
  /**
   * Directory under the repository root; default `.cluster-faults-<pid>` (one per test process). Must be
   * named `.cluster-*` (ignored by git).
   */
  dir?: string;
  /** Added to every default port; default: the first of 100, 200, … 900 whose ports are all free. */
  portOffset?: number;
  /** Write an API server audit log of every write (who, verb, object, code), see {@link PrivateCluster.audit}. */
  audit?: boolean;
  /**
   * Run the controller manager's node-lifecycle, pod-GC and taint-eviction controllers with short timings
   * (`NODE_LIFECYCLE_TIMINGS` in cluster/controllers.ts), so a node whose kwok is frozen turns
   * `Ready=Unknown` and is tainted `unreachable` within seconds; see {@link PrivateCluster.createKillableNodePool}.
   */
  nodeLifecycle?: boolean;
  /**
   * Add the real node (`real-1`, cluster/realNode.ts): a real kubelet over containerd and runc, tainted
   * `rollout-guard.test/real-node:NoSchedule`. One machine runs one at a time per cluster directory.
   */
  realNode?: boolean;
  /** Progress lines; default stderr. */
  log?: (line: string) => void;
}

/** One record of the API server's audit log (Metadata level; only the fields tests read). */
export interface AuditEvent {
  verb: string;
  user: { username: string };
  objectRef?: { resource?: string; namespace?: string; name?: string; subresource?: string; apiGroup?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp: string;
  stage: string;
}

/** A set of kwok nodes labelled with {@link POOL_LABEL}. */
export interface PrivateNodePool {
  name: string;
  nodes: string[];
}

/** How {@link PrivateCluster.createNodePool} and {@link PrivateCluster.createKillableNodePool} name a pool. */
export interface NodePoolNaming {
  /**
   * Name the pool (and so its nodes `<prefix>-1..N`) `prefix` itself rather than `prefix` with a random
   * suffix: for a caller that owns the whole cluster (the demo) and wants names a reader can follow.
   */
  exactName?: boolean;
}

/** Options of {@link PrivateCluster.createKillableNodePool}. */
export interface KillableNodePoolOptions extends NodePoolNaming {
  /**
   * Value of the `topology.kubernetes.io/zone` label; default: the pool's name. The node-lifecycle
   * controller rates and suspends tainting per zone: in a zone where more than 2 nodes and at least 55 %
   * are down it stops tainting (small clusters), and when *every* node of the cluster is down it even
   * removes the taints. A zone of its own keeps a frozen pool's outcome independent of how many other
   * nodes the test created. Keep at least one node outside the frozen pools.
   */
  zone?: string;
  /** Per-node allocatable overrides, e.g. `{ cpu: '4' }`. */
  allocatable?: Record<string, string>;
  /** Extra node labels (the pool and zone labels are always set). */
  labels?: Record<string, string>;
  taints?: NodeSpec['taints'];
}

/**
 * Nodes driven by a kwok process of their own (`kwok-<name>`): freezing that process is a dead kubelet on
 * every node of the pool, while the rest of the cluster carries on.
 */
export interface KillableNodePool extends PrivateNodePool {
  /** The kwok instance's process name; its log is `<cluster dir>/logs/<process>.log`. */
  process: ProcessName;
  /**
   * Freezes the pool's kwok (SIGSTOP; returns once the process is stopped): no more Lease renewals, status
   * or pod updates from these nodes. On a `nodeLifecycle` cluster the nodes turn `Ready=Unknown` (reason
   * `NodeStatusUnknown`) and get `node.kubernetes.io/unreachable:NoExecute` about
   * `monitorGracePeriodSeconds` later, and their pods `Ready=False`.
   */
  pause(): void;
  /** Thaws the pool's kwok (SIGCONT): it renews the Leases and marks the nodes and pods Ready again. */
  resume(): void;
  /** Stops the pool's kwok for good (a frozen one too); the nodes stay. `down` stops it anyway. */
  stop(): Promise<void>;
}

/** A running private cluster. Create with {@link PrivateCluster.start}; {@link PrivateCluster.down} at the end. */
export class PrivateCluster {
  readonly kubectl: Kubectl;

  private constructor(
    readonly dir: string,
    readonly ports: Ports,
    readonly binDir: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly log: (line: string) => void,
    /** Started with {@link PrivateClusterOptions.nodeLifecycle}. */
    readonly nodeLifecycle = false,
  ) {
    this.kubectl = kubectlRunner(binDir, this.kubeconfig);
  }

  /**
   * Starts a fresh private cluster (a leftover one in the same directory, e.g. from an aborted run, is
   * stopped and removed first) with no default nodes.
   */
  static async start(opts: PrivateClusterOptions = {}): Promise<PrivateCluster> {
    const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    const rel = opts.dir ?? `.cluster-faults-${process.pid}`;
    if (rel === '.cluster' || !path.basename(rel).startsWith('.cluster-')) {
      throw new Error(`a private cluster directory must be named .cluster-<something>, not ${rel}`);
    }
    const binDir = await buildBinaries({ log });
    await PrivateCluster.reapAbandoned(binDir, log);
    const offsets = opts.portOffset !== undefined ? [opts.portOffset] : [100, 200, 300, 400, 500, 600, 700, 800, 900];
    let lastError: unknown;
    for (const offset of offsets) {
      const ports = Object.fromEntries(Object.entries(DEFAULT_PORTS).map(([k, v]) => [k, v + offset])) as unknown as Ports;
      if (opts.portOffset === undefined && !(await allFree(ports))) continue;
      const env: NodeJS.ProcessEnv = { ...process.env, [CLUSTER_DIR_ENV]: rel, NODES: '0' };
      for (const key of Object.keys(PORT_ENV) as Array<keyof Ports>) env[PORT_ENV[key]] = String(ports[key]);
      if (opts.audit) env[AUDIT_LOG_ENV] = '1';
      else delete env[AUDIT_LOG_ENV];
      // Read only when the cluster is created; the state file keeps it for later starts of a component.
      if (opts.nodeLifecycle) env[NODE_LIFECYCLE_ENV] = '1';
      else delete env[NODE_LIFECYCLE_ENV];
      if (opts.realNode) env[REAL_NODE_ENV] = '1';
      else delete env[REAL_NODE_ENV];
      const pc = new PrivateCluster(path.resolve(ROOT, rel), ports, binDir, env, log, opts.nodeLifecycle ?? false);
      await pc.cli(['down']);
      try {
        await pc.cli(['up']);
        return pc;
      } catch (err) {
        lastError = err;
        await pc.cli(['down']).catch(() => undefined);
        // Another run took one of these ports between our check and the start: try the next set.
        if (!(err instanceof Error && /is in use/.test(err.message))) throw err;
      }
    }
    throw new Error(`no free set of ports for a private cluster: ${lastError instanceof Error ? lastError.message : 'all taken'}`);
  }

  /** Stops and removes `.cluster-faults-<pid>` and `.cluster-real-<pid>` directories whose test process is gone (a run that crashed). */
  private static async reapAbandoned(binDir: string, log: (line: string) => void): Promise<void> {
    for (const entry of await readdir(ROOT)) {
      const m = /^\.cluster-(?:faults|real)-(\d+)$/.exec(entry);
      if (!m || isAlive(Number(m[1]))) continue;
      log(`[private cluster] removing ${entry}, left by a run that is gone`);
      const env: NodeJS.ProcessEnv = { ...process.env, [CLUSTER_DIR_ENV]: entry };
      const orphan = new PrivateCluster(path.join(ROOT, entry), DEFAULT_PORTS, binDir, env, log);
      await orphan.down();
    }
  }

  /**
   * The environment that points the cluster CLI (and anything built on `up()`, such as the demo) at this
   * cluster: its directory and ports.
   */
  get environment(): NodeJS.ProcessEnv {
    return { ...this.env };
  }

  /** Admin kubeconfig of this cluster. */
  get kubeconfig(): string {
    return path.join(this.dir, 'kubeconfig');
  }

  /** `http://127.0.0.1:<port>` of etcd's client endpoint (and its JSON gateway). */
  get etcdUrl(): string {
    return `http://127.0.0.1:${this.ports.etcdClient}`;
  }

  /** Path of the audit log (clusters started with `audit: true`). */
  get auditLog(): string {
    return path.join(this.dir, 'logs', 'audit.log');
  }

  /** Runs the cluster CLI against this cluster; rejects on a non-zero exit. */
  cli(args: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
      let tail = '';
      const onData = (d: Buffer): void => {
        const text = d.toString();
        tail = (tail + text).slice(-4000);
        for (const line of text.split('\n')) if (line) this.log(`[private cluster] ${line}`);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`cluster ${args.join(' ')} exited ${code}:\n${tail}`))));
    });
  }

  /** Stops one component (SIGTERM, or SIGKILL with `kill`) and forgets its pid. */
  stopComponent(name: ComponentName, opts: { kill?: boolean } = {}): Promise<void> {
    return this.cli(['stop', ...(opts.kill ? ['--kill'] : []), name]);
  }

  /** Starts a stopped component with its original command line and waits until it is ready. */
  startComponent(name: ComponentName): Promise<void> {
    return this.cli(['start', name]);
  }

  /** Stop, then start. */
  restartComponent(name: ComponentName, opts: { kill?: boolean } = {}): Promise<void> {
    return this.cli(['restart', ...(opts.kill ? ['--kill'] : []), name]);
  }

  /**
   * Sends a signal to a running component (or kwok instance). SIGSTOP and SIGCONT return only once the
   * kernel shows the process frozen or running again: signal delivery is asynchronous, and a test that
   * changes the cluster right after "pausing" a controller must not race its last moments.
   */
  signalComponent(name: ComponentName | ProcessName, signal: NodeJS.Signals): void {
    const pid = Number(readFileSync(path.join(this.dir, 'pids', `${name}.pid`), 'utf8').trim());
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    if (path.basename(argv0) !== binaryOf(name)) throw new Error(`pid ${pid} is not ${name}`);
    process.kill(pid, signal);
    if (signal === 'SIGSTOP' || signal === 'SIGCONT') awaitStopState(pid, signal === 'SIGSTOP', name);
  }

  /** Stops every component and removes the directory. */
  async down(): Promise<void> {
    if (existsSync(this.dir)) await this.cli(['down']);
  }

  /** Runs kubectl and parses its `-o json` output. */
  async kubectlJson<T>(args: readonly string[], opts: KubectlOptions = {}): Promise<T> {
    const res: KubectlResult = await this.kubectl([...args, '-o', 'json'], opts);
    return JSON.parse(res.stdout) as T;
  }

  /** `kubectl apply -f -` of an object or list. */
  async apply(obj: unknown, ns?: string): Promise<void> {
    await this.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj), ...(ns ? { ns } : {}) });
  }

  /** Installs config/crd and waits until both CRDs are served. */
  async installCrds(): Promise<void> {
    await this.kubectl(['apply', '--server-side', '--force-conflicts', '-k', path.join(ROOT, 'config', 'crd')]);
    await waitForCrdsEstablished(this.kubectl, ['rolloutguards.rolloutguard.dev', 'rolloutguardpolicies.rolloutguard.dev']);
  }

  /** Creates a uniquely named namespace. */
  async createNamespace(prefix: string): Promise<string> {
    const name = uniqueName(prefix);
    await createNamespace(this.kubectl, name);
    return name;
  }

  /** Creates kwok nodes `<name>-1..N` labelled `rollout-guard.dev/pool=<name>` and waits until they are Ready. */
  async createNodePool(prefix: string, count: number, opts: NodePoolNaming = {}): Promise<PrivateNodePool> {
    const name = opts.exactName ? prefix : uniqueName(prefix);
    const nodes = Array.from({ length: count }, (_, i) => `${name}-${i + 1}`);
    const specs: NodeSpec[] = nodes.map((n) => ({ name: n, labels: { [POOL_LABEL]: name } }));
    await createNodes(this.kubectl, specs);
    await waitForNodesReady(this.kubectl, nodes, { timeoutMs: 90_000 });
    return { name, nodes };
  }

  /**
   * Creates nodes `<name>-1..N` labelled `rollout-guard.dev/pool=<name>` (and a zone, see
   * {@link KillableNodePoolOptions.zone}) but annotated `kwok.x-k8s.io/node=<name>`, so the main kwok
   * ignores them, starts kwok instance `kwok-<name>` to drive them (with the main kwok's stages), and
   * waits until they are Ready. Meant for clusters started with `nodeLifecycle`: without it, freezing the
   * pool only stops its pods' and nodes' updates, and nothing marks the nodes down.
   */
  async createKillableNodePool(prefix: string, count: number, opts: KillableNodePoolOptions = {}): Promise<KillableNodePool> {
    const name = opts.exactName ? prefix : uniqueName(prefix);
    const proc = kwokInstanceName(name);
    const nodes = Array.from({ length: count }, (_, i) => `${name}-${i + 1}`);
    const specs: NodeSpec[] = nodes.map((n) => ({
      name: n,
      labels: { ...opts.labels, [POOL_LABEL]: name, 'topology.kubernetes.io/zone': opts.zone ?? name },
      annotations: { [KWOK_NODE_ANNOTATION]: name },
      ...(opts.taints ? { taints: opts.taints } : {}),
      ...(opts.allocatable ? { allocatable: opts.allocatable } : {}),
    }));
    await createNodes(this.kubectl, specs);
    await this.cli(['start', proc]);
    await waitForNodesReady(this.kubectl, nodes, { timeoutMs: 90_000 });
    return {
      name,
      nodes,
      process: proc,
      pause: () => this.signalComponent(proc, 'SIGSTOP'),
      resume: () => this.signalComponent(proc, 'SIGCONT'),
      stop: () => this.cli(['stop', proc]),
    };
  }

  /** The named nodes (in the order given). */
  async getNodes(names: readonly string[]): Promise<NodeObject[]> {
    // One name gets the Node itself, several a List.
    const got = await this.kubectlJson<NodeObject | { items: NodeObject[] }>(['get', 'nodes', ...names]);
    const items = 'items' in got ? got.items : [got];
    return names.map((n) => {
      const node = items.find((x) => x.metadata.name === n);
      if (!node) throw new Error(`node ${n} not found`);
      return node;
    });
  }

  /**
   * Polls until every named node satisfies `pred` (e.g. {@link isUnreachable}, {@link nodeUsable}) and
   * returns them; the timeout message shows each node's Ready condition and taints.
   */
  async waitForNodes(
    names: readonly string[],
    pred: (node: NodeObject) => boolean,
    opts: { timeoutMs: number; describe: string; intervalMs?: number },
  ): Promise<NodeObject[]> {
    let last: NodeObject[] = [];
    try {
      return await waitFor(
        async () => {
          last = await this.getNodes(names);
          return last.every(pred) && last;
        },
        { timeoutMs: opts.timeoutMs, intervalMs: opts.intervalMs ?? 250, describe: opts.describe },
      );
    } catch (err) {
      const seen = last.map(
        (n) => `${n.metadata.name}: Ready=${JSON.stringify(readyCondition(n))} taints=${JSON.stringify(n.spec.taints ?? [])}`,
      );
      throw new Error(`${err instanceof Error ? err.message : String(err)}\n${seen.join('\n')}`);
    }
  }

  /**
   * Writes a kubeconfig that authenticates as ServiceAccount `ns/sa` with a freshly minted token
   * (`kubectl create token`), and returns its path.
   */
  async serviceAccountKubeconfig(ns: string, sa: string): Promise<string> {
    const { stdout } = await this.kubectl(['create', 'token', sa, '--duration=2h'], { ns });
    const file = path.join(this.dir, `kubeconfig-${ns}-${sa}`);
    const yaml = toYaml({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'private', cluster: { server: `https://127.0.0.1:${this.ports.apiserver}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: sa, user: { token: stdout.trim() } }],
      contexts: [{ name: 'private', context: { cluster: 'private', user: sa, namespace: ns } }],
      'current-context': 'private',
    });
    await writeFile(file, yaml, { mode: 0o600 });
    return file;
  }

  /**
   * One GET as the admin (e.g. a watch with `timeoutSeconds` to probe what the API server answers for
   * an old resourceVersion). Resolves with the status and the body, whatever the status.
   */
  async rawGet(apiPath: string, timeoutMs = 15_000): Promise<{ status: number; body: string }> {
    const kc = fromYaml(await readFile(this.kubeconfig, 'utf8')) as { users: Array<{ user: { token: string } }> };
    const token = kc.users[0]?.user.token ?? '';
    return new Promise((resolve, reject) => {
      const req = https.get(
        `https://127.0.0.1:${this.ports.apiserver}${apiPath}`,
        // Self-signed serving certificate on loopback.
        { headers: { Authorization: `Bearer ${token}` }, rejectUnauthorized: false, timeout: timeoutMs },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`GET ${apiPath} timed out`)));
      req.on('error', reject);
    });
  }

  /** etcd's current revision, read through its JSON gateway. */
  async etcdRevision(): Promise<string> {
    const res = await fetch(`${this.etcdUrl}/v3/kv/range`, {
      method: 'POST',
      body: JSON.stringify({ key: Buffer.from('/').toString('base64') }),
    });
    if (!res.ok) throw new Error(`etcd range: HTTP ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { header?: { revision?: string } };
    if (!body.header?.revision) throw new Error(`etcd range: no header revision in ${JSON.stringify(body)}`);
    return body.header.revision;
  }

  /** Compacts etcd's history up to `revision` (physically), through the JSON gateway. */
  async etcdCompact(revision: string): Promise<void> {
    const res = await fetch(`${this.etcdUrl}/v3/kv/compaction`, {
      method: 'POST',
      body: JSON.stringify({ revision, physical: true }),
    });
    if (!res.ok) throw new Error(`etcd compaction to ${revision}: HTTP ${res.status} ${await res.text()}`);
  }

  /** Completed audit records (clusters started with `audit: true`). */
  async audit(): Promise<AuditEvent[]> {
    const text = await readFile(this.auditLog, 'utf8').catch(() => '');
    const out: AuditEvent[] = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        const ev = JSON.parse(line) as AuditEvent;
        if (ev.stage === 'ResponseComplete' || ev.stage === 'Panic') out.push(ev);
      } catch {
        // a line being written right now
      }
    }
    return out;
  }
}

/**
 * Blocks until `pid` is frozen (state `T`) or, with `stopped` false, running again, or gone. It takes
 * microseconds to a few milliseconds; blocking keeps {@link PrivateCluster.signalComponent} synchronous.
 */
function awaitStopState(pid: number, stopped: boolean, name: string): void {
  const nap = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + 5_000;
  for (;;) {
    let state: string;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    } catch {
      return; // gone: nothing left to wait for
    }
    if ((state === 'T') === stopped) return;
    if (Date.now() > deadline)
      throw new Error(`${name} (pid ${pid}) is still in state ${state} 5 s after ${stopped ? 'SIGSTOP' : 'SIGCONT'}`);
    Atomics.wait(nap, 0, 0, 2); // a 2 ms synchronous pause between reads of /proc
  }
}

/** True when every port is free on 127.0.0.1. */
async function allFree(ports: Ports): Promise<boolean> {
  for (const port of Object.values(ports)) {
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (!free) return false;
  }
  return true;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
