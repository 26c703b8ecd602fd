/**
 * Test helpers for suites that run against the real local control plane (see cluster/).
 *
 * Test files run in parallel processes against one shared cluster, so every suite works in its own
 * namespace and on its own node pool: DaemonSets select their pool through {@link POOL_LABEL}, and
 * nothing a suite does to its nodes (taints, deletion) can change another suite's DESIRED count.
 *
 * Set `RG_TEST_KUBECONFIG` to run against an existing cluster instead of starting one; that cluster
 * needs a kwok managing nodes annotated `kwok.x-k8s.io/node=fake` with our stages.yaml.
 *
 * @module
 */
import { ensureCluster as connect } from '../../cluster/controlPlane.js';
import { kubectlRunner, type Kubectl, type KubectlOptions, type KubectlResult } from '../../cluster/kubectl.js';
import { daemonSetManifest } from '../../cluster/manifests.js';
import { createNamespace as createNamespaceIn, uniqueName } from '../../cluster/namespaces.js';
import { POOL_LABEL, createNodes, waitForNodesReady, type NodeSpec } from '../../cluster/nodes.js';

export { type KubectlResult, type KubectlOptions } from '../../cluster/kubectl.js';
export { createNamespace as createNamespaceIn, uniqueName } from '../../cluster/namespaces.js';
export { POOL_LABEL } from '../../cluster/nodes.js';
export { waitFor, FatalWaitError, type WaitOptions } from '../../cluster/wait.js';

interface Context {
  kubeconfig: string;
  binDir: string;
  kubectl: Kubectl;
}

let context: Promise<Context> | undefined;
let resolved: Context | undefined;

/**
 * Starts the local cluster or reuses a running one (or uses `RG_TEST_KUBECONFIG`). Memoised per
 * process; concurrent test processes are serialised by `up`'s own lock. Call from a top-level `before`.
 */
export function ensureCluster(): Promise<{ kubeconfig: string; binDir: string }> {
  context ??= (async () => {
    const { kubeconfig, binDir } = await connect({ log: (line: string) => process.stderr.write(`${line}\n`) });
    resolved = { kubeconfig, binDir, kubectl: kubectlRunner(binDir, kubeconfig) };
    return resolved;
  })();
  return context;
}

function ctx(): Context {
  if (!resolved) throw new Error('ensureCluster() has not completed; call it from a before() hook');
  return resolved;
}

/** Absolute path of the kubeconfig the helpers use. */
export function kubeconfigPath(): string {
  return ctx().kubeconfig;
}

/** Directory of the pinned binaries (kubectl, kube-apiserver, …). */
export function binDir(): string {
  return ctx().binDir;
}

/** Runs the pinned kubectl against the test cluster; throws on a non-zero exit unless `allowFail`. */
export function kubectl(args: readonly string[], opts: KubectlOptions = {}): Promise<KubectlResult> {
  return ctx().kubectl(args, opts);
}

/** Runs kubectl and parses its `-o json` output as `T` (unchecked: describe only the fields you read). */
export async function kubectlJson<T>(args: readonly string[], opts: KubectlOptions = {}): Promise<T> {
  const res = await kubectl([...args, '-o', 'json'], opts);
  return JSON.parse(res.stdout) as T;
}

/** Creates a uniquely named namespace; `cleanup` deletes it and waits until it is gone. */
export async function createNamespace(prefix: string): Promise<{ name: string; cleanup: () => Promise<void> }> {
  const name = uniqueName(prefix);
  await createNamespaceIn(kubectl, name);
  return {
    name,
    cleanup: async () => {
      await kubectl(['delete', 'namespace', name, '--ignore-not-found', '--wait=true', '--timeout=60s']);
    },
  };
}

/** Options for {@link createNodePool}. */
export interface NodePoolOptions {
  /** Per-node allocatable overrides, e.g. `{ cpu: '4' }` or `{ 'nvidia.com/gpu': '8' }`. */
  allocatable?: Record<string, string>;
  labels?: Record<string, string>;
  taints?: NodeSpec['taints'];
  /**
   * The name of node `i` (1-based) of pool `pool`; default `<pool>-<i>`. A name ending in "-1" is a node
   * where a "sickon1" image crash-loops (cluster/stages.yaml), so a pool can have many such nodes.
   */
  nameOf?: (pool: string, i: number) => string;
}

/** A set of kwok nodes created for one test. */
export interface NodePool {
  name: string;
  nodes: string[];
  /** Deletes the nodes, then force-deletes pods still bound to them (no kubelet or podgc would). */
  cleanup: () => Promise<void>;
}

/**
 * Creates kwok nodes `<name>-1..<name>-<count>` (or as `opts.nameOf` names them) labelled
 * `rollout-guard.dev/pool=<name>` and waits until they are Ready. Pass a unique `name` (see
 * {@link uniqueName}) when tests run in parallel.
 */
export async function createNodePool(name: string, count: number, opts: NodePoolOptions = {}): Promise<NodePool> {
  const nameOf = opts.nameOf ?? ((pool: string, i: number) => `${pool}-${i}`);
  const nodes = Array.from({ length: count }, (_, i) => nameOf(name, i + 1));
  const specs: NodeSpec[] = nodes.map((n) => ({
    name: n,
    labels: { ...opts.labels, [POOL_LABEL]: name },
    ...(opts.taints ? { taints: opts.taints } : {}),
    ...(opts.allocatable ? { allocatable: opts.allocatable } : {}),
  }));
  await createNodes(ctx().kubectl, specs);
  await waitForNodesReady(ctx().kubectl, nodes, { timeoutMs: 60_000 });
  return {
    name,
    nodes,
    cleanup: async () => {
      await kubectl(['delete', 'nodes', ...nodes, '--ignore-not-found', '--wait=true']);
      for (const n of nodes) {
        await kubectl([
          'delete',
          'pods',
          '--all-namespaces',
          `--field-selector=spec.nodeName=${n}`,
          '--grace-period=0',
          '--force',
          '--ignore-not-found',
          '--wait=false',
        ]);
      }
    },
  };
}

/**
 * Asserts that `fn` stays truthy for `durationMs`, polling every `intervalMs`: the way to check that a
 * stalled state is stable rather than a moment in a transition. Fails on the first falsy poll.
 */
export async function holdsFor(
  fn: () => Promise<unknown>,
  opts: { durationMs: number; intervalMs?: number; describe?: string },
): Promise<void> {
  const end = Date.now() + opts.durationMs;
  for (;;) {
    const value = await fn();
    if (!value) throw new Error(`${opts.describe ?? 'condition'} stopped holding (got ${JSON.stringify(value)})`);
    if (Date.now() >= end) return;
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 500));
  }
}

/** The counters `kubectl get daemonset` prints, read from its table output exactly as a user sees them. */
export interface DaemonSetRow {
  desired: number;
  current: number;
  ready: number;
  upToDate: number;
  available: number;
}

/** Reads DESIRED/CURRENT/READY/UP-TO-DATE/AVAILABLE from `kubectl get ds <name>`. */
export async function daemonSetRow(ns: string, name: string): Promise<DaemonSetRow> {
  const { stdout } = await kubectl(['get', 'daemonset', name, '--no-headers'], { ns });
  const cols = stdout.trim().split(/\s+/);
  const num = (i: number) => {
    const n = Number(cols[i]);
    if (!Number.isInteger(n)) throw new Error(`unexpected kubectl get ds output: ${stdout}`);
    return n;
  };
  return { desired: num(1), current: num(2), ready: num(3), upToDate: num(4), available: num(5) };
}

/** Options for {@link decoderDaemonSet}. */
export interface DecoderDaemonSetOptions {
  name: string;
  ns: string;
  /** Node pool (value of {@link POOL_LABEL}) the DaemonSet is confined to. */
  pool: string;
  image: string;
  maxUnavailable?: number | string;
  maxSurge?: number | string;
  cpuRequest?: string;
  tolerations?: Array<Record<string, unknown>>;
  /** Extra nodeSelector terms, ANDed with the pool label. */
  nodeSelector?: Record<string, string>;
  /** spec.minReadySeconds: a Ready pod counts as available only after this long. */
  minReadySeconds?: number;
  /** metadata.ownerReferences, e.g. a controller owner like an operator's custom resource. */
  ownerReferences?: Array<Record<string, unknown>>;
  /** Image of an init container named `init` that runs before `decoder` (none when absent). */
  initImage?: string;
  /**
   * Mounts configMap volume {@link SETTINGS_VOLUME} (ConfigMap {@link SETTINGS_CONFIGMAP}) into `decoder` at
   * `/etc/decoder`. No test creates that ConfigMap: kwok ignores volumes, and the "mountfail" image marker is what
   * makes kwok report the kubelet's FailedMount for this volume (see cluster/stages.yaml).
   */
  settingsVolume?: boolean;
}

/** Name of the volume {@link DecoderDaemonSetOptions.settingsVolume} adds; kwok's FailedMount Event names it. */
export const SETTINGS_VOLUME = 'settings';
/** The ConfigMap that volume refers to; kwok's FailedMount Event reports it as not found. */
export const SETTINGS_CONFIGMAP = 'decoder-settings';

/**
 * A RollingUpdate DaemonSet manifest (one container named `decoder`, optionally an init container named `init`
 * and the settings volume) confined to one node pool.
 */
export function decoderDaemonSet(o: DecoderDaemonSetOptions): Record<string, unknown> {
  return daemonSetManifest({
    name: o.name,
    namespace: o.ns,
    ...(o.ownerReferences ? { ownerReferences: o.ownerReferences } : {}),
    ...(o.minReadySeconds !== undefined ? { minReadySeconds: o.minReadySeconds } : {}),
    maxUnavailable: o.maxUnavailable ?? 1,
    maxSurge: o.maxSurge ?? 0,
    nodeSelector: { [POOL_LABEL]: o.pool, ...o.nodeSelector },
    ...(o.tolerations ? { tolerations: o.tolerations } : {}),
    ...(o.initImage !== undefined ? { initContainers: [{ name: 'init', image: o.initImage }] } : {}),
    container: {
      name: 'decoder',
      image: o.image,
      requests: { cpu: o.cpuRequest ?? '100m', memory: '64Mi' },
      ...(o.settingsVolume ? { volumeMounts: [{ name: SETTINGS_VOLUME, mountPath: '/etc/decoder', readOnly: true }] } : {}),
    },
    ...(o.settingsVolume ? { volumes: [{ name: SETTINGS_VOLUME, configMap: { name: SETTINGS_CONFIGMAP } }] } : {}),
  });
}
