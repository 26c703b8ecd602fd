/**
 * kwok-managed fake nodes: their Node objects, creating them, and waiting until kwok reports them Ready.
 *
 * @module
 */
import { NOT_READY_TAINT, UNREACHABLE_TAINT } from '../src/api/names.js';
import type { Kubectl } from './kubectl.js';
import { waitFor } from './wait.js';

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

/** Up to this many nodes are read by name; more are picked out of one list of all nodes. */
const NAMED_GET_MAX = 50;

/** The parts of a Node the node-health helpers read. */
export interface NodeObject {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { taints?: Array<{ key: string; value?: string; effect: string; timeAdded?: string }> };
  status?: {
    conditions?: Array<{
      type: string;
      status: string;
      reason?: string;
      message?: string;
      lastTransitionTime?: string;
      lastHeartbeatTime?: string;
    }>;
  };
}

/** A node's Ready condition, if it has one. */
export function readyCondition(
  node: Pick<NodeObject, 'status'>,
): NonNullable<NonNullable<NodeObject['status']>['conditions']>[number] | undefined {
  return node.status?.conditions?.find((c) => c.type === 'Ready');
}

/**
 * What the node-lifecycle controller does to a node that stopped reporting: `Ready=Unknown`, reason
 * `NodeStatusUnknown`, and the `unreachable:NoExecute` taint.
 */
export function isUnreachable(node: NodeObject): boolean {
  const ready = readyCondition(node);
  return (
    ready?.status === 'Unknown' &&
    ready.reason === 'NodeStatusUnknown' &&
    (node.spec.taints ?? []).some((t) => t.key === UNREACHABLE_TAINT && t.effect === 'NoExecute')
  );
}

/**
 * A node the workloads can use: `Ready=True`, and neither the not-ready taint (put on by the API server at
 * creation) nor the unreachable one (put on by the node-lifecycle controller) left, whatever its effect.
 * kwok reports Ready first and the controller manager lifts the taint after it sees that, a moment later
 * (seconds on a busy machine). DaemonSet pods tolerate these taints only as NoExecute: a DaemonSet created
 * in between counts the node out of DESIRED, `kubectl rollout status` succeeds without its pod, and the
 * pod then arrives as if a rollout were under way.
 */
export function nodeUsable(node: Pick<NodeObject, 'status'> & { spec?: NodeObject['spec'] }): boolean {
  return (
    readyCondition(node)?.status === 'True' &&
    !(node.spec?.taints ?? []).some((t) => t.key === NOT_READY_TAINT || t.key === UNREACHABLE_TAINT)
  );
}

/** Polls until every named node is usable ({@link nodeUsable}): Ready, its not-ready taint lifted. */
export async function waitForNodesReady(
  kubectl: Kubectl,
  names: readonly string[],
  opts: { timeoutMs: number; whileWaiting?: () => void | Promise<void> },
): Promise<void> {
  if (names.length === 0) return;
  await waitFor(
    async () => {
      await opts.whileWaiting?.();
      // kubectl GETs each name it is given, one request after another: a pool of thousands is read in one
      // list instead, and its nodes picked out by name.
      const many = names.length > NAMED_GET_MAX;
      const res = await kubectl(['get', 'nodes', ...(many ? [] : names), '-o', 'json'], { allowFail: true });
      if (res.code !== 0) return false;
      // One name gets the Node itself, several a List.
      const parsed = JSON.parse(res.stdout) as NodeObject | { items: NodeObject[] };
      const wanted = new Set(names);
      const all = 'items' in parsed ? parsed.items : [parsed];
      const items = many ? all.filter((n) => wanted.has(n.metadata?.name ?? '')) : all;
      return items.length === names.length && items.every(nodeUsable);
    },
    {
      timeoutMs: opts.timeoutMs,
      intervalMs: 250,
      describe: `${names.length > 5 ? `${names.length} nodes (${names.slice(0, 3).join(', ')}, …)` : `nodes ${names.join(', ')}`} Ready`,
    },
  );
}
