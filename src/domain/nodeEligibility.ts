/**
 * Which nodes should run the daemon pod: a pure port of the parts of the DaemonSet controller's
 * `NodeShouldRunDaemonPod` (kubernetes/kubernetes pkg/controller/daemon/daemon_controller.go) that decide
 * the target set: nodeSelector, required node affinity and taints against tolerations.
 *
 * We need our own evaluation because the DaemonSet status only says *how many* nodes are targets; to
 * name the empty node, or the node that left when DESIRED shrank and why, we need *which*.
 */
import type { NodeSelectorRequirement, NodeSelectorTerm, Taint, Toleration } from '../api/objects.js';
import { NOT_READY_TAINT, UNREACHABLE_TAINT } from '../api/names.js';

/** The scheduling-relevant part of a pod template. */
export interface PlacementSpec {
  nodeSelector?: Record<string, string>;
  nodeSelectorTerms?: NodeSelectorTerm[];
  tolerations?: Toleration[];
}

/** The scheduling-relevant part of a node. */
export interface NodePlacement {
  name: string;
  labels: Record<string, string>;
  taints: Taint[];
}

/**
 * Tolerations the DaemonSet controller adds to every daemon pod (pkg/controller/daemon/util
 * AddOrUpdateDaemonPodTolerations), so these taints never remove a node from the targets.
 */
const DAEMON_TOLERATIONS: Toleration[] = [
  { key: NOT_READY_TAINT, operator: 'Exists', effect: 'NoExecute' },
  { key: UNREACHABLE_TAINT, operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' },
];

function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (!t.key) return t.operator === 'Exists';
  if (t.key !== taint.key) return false;
  if (t.operator === 'Exists') return true;
  return (t.value ?? '') === (taint.value ?? '');
}

function requirementMatches(r: NodeSelectorRequirement, get: (key: string) => string | undefined): boolean {
  const v = get(r.key);
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return v !== undefined && values.includes(v);
    case 'NotIn':
      return v === undefined || !values.includes(v);
    case 'Exists':
      return v !== undefined;
    case 'DoesNotExist':
      return v === undefined;
    case 'Gt':
    case 'Lt': {
      if (v === undefined || values.length !== 1) return false;
      const a = Number.parseInt(v, 10);
      const b = Number.parseInt(values[0] ?? '', 10);
      if (Number.isNaN(a) || Number.isNaN(b)) return false;
      return r.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

function termMatches(term: NodeSelectorTerm, node: NodePlacement): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  // An empty term matches nothing (k8s.io/component-helpers nodeaffinity).
  if (exprs.length === 0 && fields.length === 0) return false;
  return (
    exprs.every((r) => requirementMatches(r, (k) => node.labels[k])) &&
    fields.every((r) => requirementMatches(r, (k) => (k === 'metadata.name' ? node.name : undefined)))
  );
}

function fmtTaint(t: Taint): string {
  return `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`;
}

/**
 * Whether the node should run the daemon pod, and if not, a reason a person can act on
 * ("untolerated taint gpu=broken:NoExecute", "nodeSelector pool=a not matched").
 */
export function evaluateNode(spec: PlacementSpec, node: NodePlacement): { eligible: boolean; reason?: string } {
  for (const [k, v] of Object.entries(spec.nodeSelector ?? {})) {
    if (node.labels[k] !== v) return { eligible: false, reason: `nodeSelector ${k}=${v} not matched` };
  }
  const terms = spec.nodeSelectorTerms ?? [];
  if (terms.length > 0 && !terms.some((t) => termMatches(t, node))) {
    return { eligible: false, reason: 'required node affinity not matched' };
  }
  const tolerations = [...(spec.tolerations ?? []), ...DAEMON_TOLERATIONS];
  for (const taint of node.taints) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    if (!tolerations.some((t) => tolerates(t, taint))) {
      return { eligible: false, reason: `untolerated taint ${fmtTaint(taint)}` };
    }
  }
  return { eligible: true };
}
