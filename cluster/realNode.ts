/**
 * The real node: one Node run by a real kubelet (built from the control plane's Kubernetes modules) over
 * Debian's containerd and runc, beside the kwok nodes, so the guard's classifier is proven on what a
 * kubelet really reports (Event reasons and messages, the CrashLoopBackOff back-off, OOM kills, probe
 * failures, mount failures, termination grace).
 *
 * How it stays contained on a machine it shares with the tests:
 * - containerd and the kubelet run in one private mount namespace (`unshare --mount`). Every mount they
 *   make (overlay root file systems, tmpfs volumes, network namespaces, `/run/containerd`) lives there
 *   and goes when its last process exits; the kubelet's kernel tunables (`vm.overcommit_memory`,
 *   `kernel.panic`, `kernel.panic_on_oops`, …) land on files bound over `/proc/sys` in that namespace,
 *   so the machine's own settings never change.
 * - Pods run under the cgroup root {@link RealNodeLayout.cgroupRoot}, named for the cluster directory;
 *   `stop` kills whatever is left in it and removes it.
 * - Pod networking is the CNI bridge plugin on a bridge and /24 of its own; nothing leaves the machine,
 *   and images never come from a registry (see `cluster/ociImage.sh`).
 * - The node registers with the taint {@link REAL_NODE_TAINT}, so only DaemonSets that tolerate it run
 *   there; every other suite's DaemonSets keep to the kwok nodes.
 *
 * This machine's session lacks CAP_SYS_RESOURCE, so no process may lower its OOM score below 0; containerd's
 * `restrict_oom_score_adj` clamps the sandbox's and Guaranteed pods' negative scores to 0, as it does for
 * rootless runs. Nothing the guard reads depends on it.
 *
 * @module
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, readdirSync, readlinkSync, rmdirSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify as toYaml } from 'yaml';
import { isAlive, runsBinary } from './processes.js';
import { gatewayOf, startApiForward, stopApiForward } from './apiForward.js';

/** The real node's name. */
export const REAL_NODE_NAME = 'real-1';
/** The node pool label value (`rollout-guard.dev/pool`) of the real node. */
export const REAL_NODE_POOL = 'real';
/** The taint the real node registers with: a DaemonSet reaches it only by tolerating this. */
export const REAL_NODE_TAINT = { key: 'rollout-guard.test/real-node', value: 'true', effect: 'NoSchedule' } as const;
/** Images imported into the real node's containerd from this machine (`cluster/build.sh` builds them). */
export const LOCAL_IMAGES = { busybox: 'rollout-guard.local/busybox:1', pause: 'rollout-guard.local/pause:1' } as const;

/** The two processes of the real node, with pid files `pids/<name>.pid` and logs `logs/<name>.log`. */
export const REAL_NODE_PROCESSES = ['kubelet', 'containerd'] as const;
export type RealNodeProcess = (typeof REAL_NODE_PROCESSES)[number];

/** Kernel tunables the kubelet sets on start; each gets a file bound over it in the node's namespace. */
const KUBELET_SYSCTLS = [
  'vm/overcommit_memory',
  'vm/panic_on_oom',
  'kernel/panic',
  'kernel/panic_on_oops',
  'kernel/keys/root_maxkeys',
  'kernel/keys/root_maxbytes',
];

/** What the real node needs from the cluster it joins. */
export interface RealNodeOptions {
  /** The cluster directory (`.cluster`, or a private cluster's). */
  clusterDir: string;
  /** build.sh's bin directory; the node's binaries are under `real-node/`. */
  binDir: string;
  apiserverPort: number;
  /** Bearer token of `system:node:<name>` (group `system:nodes`) in the API server's token file. */
  nodeToken: string;
  kubeletPort: number;
  kubeletHealthzPort: number;
  log: (line: string) => void;
}

/** Where the node's files, cgroups and network live; all derived from the cluster directory. */
export interface RealNodeLayout {
  dir: string;
  tools: string;
  pids: string;
  logs: string;
  socket: string;
  cgroupRoot: string;
  bridge: string;
  subnet: string;
}

export function realNodeLayout(clusterDir: string, binDir = ''): RealNodeLayout {
  // Two clusters (the shared one and a private one) may each run a real node: their cgroups, bridges
  // and subnets must not meet.
  const h = createHash('sha256').update(path.resolve(clusterDir)).digest();
  const dir = path.join(clusterDir, 'real-node');
  return {
    dir,
    tools: path.join(binDir, 'real-node'),
    pids: path.join(clusterDir, 'pids'),
    logs: path.join(clusterDir, 'logs'),
    socket: path.join(dir, 'containerd.sock'),
    cgroupRoot: `rollout-guard-node-${h.toString('hex').slice(0, 8)}`,
    bridge: `rgnode${h.toString('hex').slice(0, 8)}`,
    subnet: `10.244.${200 + (h[0]! % 50)}.0/24`,
  };
}

/** Starts containerd and the kubelet unless both run already; the caller waits for the Node to be Ready. */
export async function startRealNode(o: RealNodeOptions): Promise<void> {
  const l = realNodeLayout(o.clusterDir, o.binDir);
  if (REAL_NODE_PROCESSES.every((n) => livePid(l, n) !== undefined)) {
    o.log(`real node ${REAL_NODE_NAME}: running`);
    return;
  }
  if (!existsSync(path.join(l.tools, 'bin', 'kubelet'))) throw new Error(`no real-node binaries in ${l.tools}: run bash cluster/build.sh`);
  if (process.getuid?.() !== 0)
    throw new Error('the real node needs root: its kubelet and containerd make cgroups, mounts and a network bridge');
  if (existsSync('/sys/fs/cgroup/cgroup.controllers')) {
    // Pure cgroup v2 needs the controllers delegated to a subtree the kubelet owns; not built (or tested) yet.
    throw new Error('the real node runs on cgroup v1 hierarchies (this machine mounts only cgroup v2 at /sys/fs/cgroup)');
  }
  await stopRealNode(o.clusterDir, o.log);
  for (const d of ['containerd', 'kubelet', 'pod-logs', 'cni', 'sysctl']) await mkdir(path.join(l.dir, d), { recursive: true });
  await mkdir('/var/lib/cni', { recursive: true });
  await writeConfigs(l, o);
  makeCgroupRoot(l.cgroupRoot);
  // The bridge is made now, not by the first pod's CNI call, so the API forwarder can listen on its address.
  makeBridge(l);
  await startApiForward({ pids: l.pids, logs: l.logs, host: gatewayOf(l.subnet), port: o.apiserverPort, targetPort: o.apiserverPort });

  // unshare and nsenter exec their command, so each recorded pid is the program's own.
  const containerd = await spawnTracked(l, 'containerd', 'unshare', [
    '--mount',
    '--propagation',
    'private',
    '--',
    '/bin/sh',
    path.join(l.dir, 'enter.sh'),
  ]);
  await waitUntil(
    () => ctr(l, ['version']).status === 0,
    30_000,
    'containerd to answer',
    () => tail(l, 'containerd'),
  );
  writeFileSync(path.join(l.dir, 'mntns'), readlinkSync(`/proc/${containerd}/ns/mnt`));
  for (const image of ['busybox', 'pause'] as const) {
    const r = ctr(l, ['images', 'import', path.join(l.tools, 'images', `${image}.tar`)]);
    if (r.status !== 0) throw new Error(`ctr images import ${image}: ${r.stderr}`);
  }
  o.log(`real node ${REAL_NODE_NAME}: containerd up, images ${Object.values(LOCAL_IMAGES).join(', ')} imported`);

  await spawnTracked(l, 'kubelet', 'nsenter', [
    `--mount=/proc/${containerd}/ns/mnt`,
    '--',
    path.join(l.tools, 'bin', 'kubelet'),
    `--config=${path.join(l.dir, 'kubelet.yaml')}`,
    `--kubeconfig=${path.join(l.dir, 'kubelet.kubeconfig')}`,
    `--hostname-override=${REAL_NODE_NAME}`,
    `--root-dir=${path.join(l.dir, 'kubelet')}`,
    `--cert-dir=${path.join(l.dir, 'kubelet', 'pki')}`,
    `--node-labels=rollout-guard.dev/pool=${REAL_NODE_POOL}`,
  ]);
  await waitUntil(
    () => livePid(l, 'kubelet') !== undefined && healthz(o.kubeletHealthzPort),
    60_000,
    'the kubelet /healthz',
    () => tail(l, 'kubelet'),
  );
  o.log(`real node ${REAL_NODE_NAME}: kubelet up`);
}

/**
 * Stops the kubelet, every container left under the node's cgroup root, the shims and containerd, then
 * removes the cgroups and the bridge. Safe when nothing runs.
 */
export async function stopRealNode(clusterDir: string, log: (line: string) => void): Promise<void> {
  const l = realNodeLayout(clusterDir);
  const kubelet = livePid(l, 'kubelet');
  if (kubelet !== undefined) await terminate([kubelet], 10_000);
  // Containers first: their shims would restart nothing once containerd is gone, but they hold mounts.
  await terminate(cgroupPids(l.cgroupRoot), 5_000, 'SIGKILL');
  const containerd = livePid(l, 'containerd');
  const ns = existsSync(path.join(l.dir, 'mntns')) ? readFileSync(path.join(l.dir, 'mntns'), 'utf8') : undefined;
  const inNamespace = ns ? pidsInMountNamespace(ns).filter((p) => p !== containerd) : [];
  if (containerd !== undefined) await terminate([containerd], 10_000);
  await terminate(inNamespace, 5_000, 'SIGKILL');
  await removeCgroupRoot(l.cgroupRoot);
  await stopApiForward(l.pids);
  spawnSync('ip', ['link', 'del', l.bridge], { stdio: 'ignore' });
  await rm(path.join(l.pids, 'kubelet.pid'), { force: true });
  await rm(path.join(l.pids, 'containerd.pid'), { force: true });
  if (kubelet !== undefined || containerd !== undefined)
    log(`stopped real node ${REAL_NODE_NAME} (kubelet ${kubelet ?? '-'}, containerd ${containerd ?? '-'}, ${inNamespace.length} shim(s))`);
}

/** Pids of the node's processes that are alive, by name. */
export function realNodePids(clusterDir: string): Partial<Record<RealNodeProcess, number>> {
  const l = realNodeLayout(clusterDir);
  const out: Partial<Record<RealNodeProcess, number>> = {};
  for (const n of REAL_NODE_PROCESSES) {
    const pid = livePid(l, n);
    if (pid !== undefined) out[n] = pid;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

async function writeConfigs(l: RealNodeLayout, o: RealNodeOptions): Promise<void> {
  const bin = path.join(l.tools, 'bin');
  await writeFile(path.join(l.dir, 'containerd.toml'), containerdToml(l, bin));
  await writeFile(
    path.join(l.dir, 'cni', '10-rollout-guard.conflist'),
    JSON.stringify({
      cniVersion: '0.4.0',
      name: 'rollout-guard',
      plugins: [
        // No masquerade: pods need no way off the machine (images are local), and it needs iptables.
        {
          type: 'bridge',
          bridge: l.bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            dataDir: path.join(l.dir, 'cni', 'ipam'),
            ranges: [[{ subnet: l.subnet }]],
            routes: [{ dst: '0.0.0.0/0' }],
          },
        },
        { type: 'loopback' },
      ],
    }),
  );
  await writeFile(path.join(l.dir, 'kubelet.yaml'), toYaml(kubeletConfig(l, o)));
  await writeFile(
    path.join(l.dir, 'kubelet.kubeconfig'),
    toYaml({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'local', cluster: { server: `https://127.0.0.1:${o.apiserverPort}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: REAL_NODE_NAME, user: { token: o.nodeToken } }],
      contexts: [{ name: 'local', context: { cluster: 'local', user: REAL_NODE_NAME } }],
      'current-context': 'local',
    }),
    { mode: 0o600 },
  );
  // The files the kubelet writes its tunables to start with the machine's values.
  const binds: string[] = [];
  for (const s of KUBELET_SYSCTLS) {
    const file = path.join(l.dir, 'sysctl', s.replaceAll('/', '.'));
    await writeFile(file, await readFile(`/proc/sys/${s}`, 'utf8'));
    binds.push(`mount --bind ${file} /proc/sys/${s}`);
  }
  await writeFile(
    path.join(l.dir, 'enter.sh'),
    [
      "# Run by unshare in the node's private mount namespace; becomes containerd.",
      'set -e',
      'mount -t tmpfs tmpfs /run/containerd 2>/dev/null || { mkdir -p /run/containerd && mount -t tmpfs tmpfs /run/containerd; }',
      'mkdir -p /run/netns && mount -t tmpfs tmpfs /run/netns',
      'mount -t tmpfs tmpfs /var/lib/cni',
      ...binds,
      `export PATH=${bin}:$PATH`,
      `exec ${path.join(bin, 'containerd')} --config ${path.join(l.dir, 'containerd.toml')}`,
      '',
    ].join('\n'),
  );
}

function containerdToml(l: RealNodeLayout, bin: string): string {
  const q = JSON.stringify;
  return `version = 2
root = ${q(path.join(l.dir, 'containerd', 'root'))}
state = ${q(path.join(l.dir, 'containerd', 'state'))}
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.tracing"]
[grpc]
  address = ${q(l.socket)}
[ttrpc]
  address = ${q(`${l.socket}.ttrpc`)}
[plugins."io.containerd.internal.v1.opt"]
  path = ${q(path.join(l.dir, 'containerd', 'opt'))}
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ${q(LOCAL_IMAGES.pause)}
  # This machine grants no CAP_SYS_RESOURCE: negative OOM scores (the sandbox's -998) are clamped to 0.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = ${q(path.join(bin, 'runc'))}
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = ${q(path.join(l.tools, 'cni'))}
    conf_dir = ${q(path.join(l.dir, 'cni'))}
`;
}

function kubeletConfig(l: RealNodeLayout, o: RealNodeOptions): Record<string, unknown> {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    // cgroup v1 here, and no systemd: the cgroupfs driver under a root of the node's own.
    cgroupDriver: 'cgroupfs',
    cgroupRoot: `/${l.cgroupRoot}`,
    failCgroupV1: false,
    failSwapOn: false,
    containerRuntimeEndpoint: `unix://${l.socket}`,
    podLogsDir: path.join(l.dir, 'pod-logs'),
    port: o.kubeletPort,
    healthzPort: o.kubeletHealthzPort,
    healthzBindAddress: '127.0.0.1',
    readOnlyPort: 0,
    // Only the API server's client certificate (its own CA, see pki.ts) may call this kubelet.
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: false },
      x509: { clientCAFile: path.join(o.clusterDir, 'pki', 'kubelet-ca.crt') },
    },
    authorization: { mode: 'AlwaysAllow' },
    registerWithTaints: [REAL_NODE_TAINT],
    // A shared CI disk may be nearly full; the tests are not about eviction.
    evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    enforceNodeAllocatable: [],
    resolvConf: '/etc/resolv.conf',
    // As a real cluster's kubelet is: without it every pod gets a MissingClusterDNS Warning. No DNS server
    // answers there; nothing on this node resolves cluster names.
    clusterDNS: ['10.96.0.10'],
    clusterDomain: 'cluster.local',
    serializeImagePulls: false,
    maxPods: 30,
  };
}

function makeCgroupRoot(root: string): void {
  for (const c of v1Controllers()) {
    const dir = path.join('/sys/fs/cgroup', c, root);
    spawnSync('mkdir', ['-p', dir]);
    if (c === 'cpuset') {
      // A new cpuset cgroup starts with no CPUs and no memory nodes; its children inherit nothing from it.
      for (const f of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(path.join(dir, f), readFileSync(path.join('/sys/fs/cgroup/cpuset', f)));
    }
  }
}

/** The cgroup v1 hierarchies mounted here (cgroup v2's `unified` is left alone: the kubelet uses v1). */
function v1Controllers(): string[] {
  try {
    return readdirSync('/sys/fs/cgroup').filter((c) => c !== 'unified' && existsSync(path.join('/sys/fs/cgroup', c, 'cgroup.procs')));
  } catch {
    return [];
  }
}

function cgroupPids(root: string): number[] {
  const pids = new Set<number>();
  const walk = (dir: string) => {
    try {
      for (const p of readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n')) if (p) pids.add(Number(p));
      for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(path.join(dir, e.name));
    } catch {
      // gone meanwhile
    }
  };
  for (const c of v1Controllers()) walk(path.join('/sys/fs/cgroup', c, root));
  return [...pids];
}

async function removeCgroupRoot(root: string): Promise<void> {
  const rmTree = (dir: string): boolean => {
    let ok = true;
    try {
      for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) ok = rmTree(path.join(dir, e.name)) && ok;
      rmdirSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') ok = false;
    }
    return ok;
  };
  // A cgroup is busy for a moment after its last process is reaped.
  await waitUntil(() => v1Controllers().every((c) => rmTree(path.join('/sys/fs/cgroup', c, root))), 10_000, `cgroup ${root} to be removed`);
}

function pidsInMountNamespace(ns: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readlinkSync(`/proc/${e}/ns/mnt`) === ns) out.push(Number(e));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

async function terminate(pids: readonly number[], timeoutMs: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  for (const p of pids) signalQuietly(p, signal);
  try {
    await waitUntil(() => pids.every((p) => !isAlive(p)), timeoutMs, 'processes to exit');
  } catch {
    for (const p of pids) signalQuietly(p, 'SIGKILL');
    await waitUntil(() => pids.every((p) => !isAlive(p)), 5_000, 'processes to die');
  }
}

function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
    process.kill(pid, 'SIGCONT');
  } catch {
    // already gone
  }
}

/** The recorded pid of `name` when it is alive and runs that program (a recycled pid is never signalled). */
function livePid(l: RealNodeLayout, name: RealNodeProcess): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(l.pids, `${name}.pid`), 'utf8').trim());
    return runsBinary(pid, name) ? pid : undefined;
  } catch {
    return undefined;
  }
}

async function spawnTracked(l: RealNodeLayout, name: RealNodeProcess, cmd: string, args: string[]): Promise<number> {
  await mkdir(l.pids, { recursive: true });
  await mkdir(l.logs, { recursive: true });
  const fd = openSync(path.join(l.logs, `${name}.log`), 'a');
  try {
    const child = spawn(cmd, args, { cwd: l.dir, detached: true, stdio: ['ignore', fd, fd] });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('spawn', () => resolve(child.pid!));
      child.once('error', (err) => reject(new Error(`cannot start ${name}: ${err.message}`)));
    });
    child.unref();
    await writeFile(path.join(l.pids, `${name}.pid`), `${pid}\n`);
    return pid;
  } finally {
    closeSync(fd);
  }
}

/** The pods' bridge with its gateway address, as the CNI bridge plugin (isGateway) would make it. */
function makeBridge(l: RealNodeLayout): void {
  const ip = (args: string[]): void => {
    const r = spawnSync('ip', args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
  };
  ip(['link', 'add', 'name', l.bridge, 'type', 'bridge']);
  ip(['addr', 'add', `${gatewayOf(l.subnet)}/24`, 'dev', l.bridge]);
  ip(['link', 'set', l.bridge, 'up']);
}

/**
 * Imports an OCI image archive into the real node's containerd (namespace k8s.io, where the kubelet's
 * images are), as `ctr -n k8s.io images import` does on a node.
 */
export function importImage(clusterDir: string, archive: string, binDir: string): void {
  const r = ctr(realNodeLayout(clusterDir, binDir), ['images', 'import', archive]);
  if (r.status !== 0) throw new Error(`ctr images import ${archive}: ${r.stderr}`);
}

/** Gives image `from` in the real node's containerd the name `to` as well (`ctr images tag`). */
export function tagImage(clusterDir: string, from: string, to: string, binDir: string): void {
  const r = ctr(realNodeLayout(clusterDir, binDir), ['images', 'tag', '--force', from, to]);
  if (r.status !== 0) throw new Error(`ctr images tag ${from} ${to}: ${r.stderr}`);
}

/** The real node's pod network gateway: the host's address the pods reach it (and the API forwarder) by. */
export function realNodeGateway(clusterDir: string): string {
  return gatewayOf(realNodeLayout(clusterDir).subnet);
}

function ctr(l: RealNodeLayout, args: string[]): { status: number | null; stderr: string } {
  const r = spawnSync(path.join(l.tools, 'bin', 'ctr'), ['--address', l.socket, '--namespace', 'k8s.io', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stderr: r.stderr };
}

function healthz(port: number): boolean {
  const r = spawnSync('curl', ['-sf', '-o', '/dev/null', `http://127.0.0.1:${port}/healthz`], { timeout: 5_000 });
  return r.status === 0;
}

function tail(l: RealNodeLayout, name: RealNodeProcess): string {
  try {
    return readFileSync(path.join(l.logs, `${name}.log`), 'utf8')
      .trimEnd()
      .split('\n')
      .slice(-20)
      .join('\n');
  } catch {
    return '(no log)';
  }
}

async function waitUntil(fn: () => boolean, timeoutMs: number, what: string, context?: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${context ? `\n${context()}` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
