/**
 * Failure evidence: Ready nodes where a pod of the rollout's new revision crashed after starting.
 *
 * Time alone misses the most dangerous failure: a node agent that starts, passes readiness and crashes
 * seconds later. Each pod counts as available, the DaemonSet controller moves on, and the broken
 * revision reaches every node before any counter looks wrong. A container restart is what gives it away:
 * pods of a new revision start with restartCount 0, so any restart is a crash of that revision. The
 * kubelet restarts a crashed container, so every crash shows as a restart, whatever readiness says.
 *
 * Only Ready nodes without pressure count (a node fault explains a crash on it), and the evidence is kept
 * in status and only grows: a pod the controller replaces, or a node that dies later, does not erase it.
 */
import { nodeFault } from './nodeAttribution.js';
import { KNOCKED_OUT, knockedOutNodes, unavailableBeforeOn } from './compare.js';
import { STATUS_LIST_CAP, hostOf } from './split.js';
import type { FailedNode, RolloutFailures, UnavailableAtStart } from '../api/types.js';
import type { NodeView } from './observation.js';

/** What collectFailures compares against besides the pods. */
export interface FailureContext {
  /** Nodes whose old pod was not available when the rollout started: a crash there is not evidence. */
  before?: readonly UnavailableAtStart[];
  /** When the rollout started, ms: only a node that fell after it can have been knocked out by it. */
  since?: number;
}

/**
 * Merges what the pods show now into the evidence kept so far: crashes of the new revision on Ready
 * nodes, and nodes the new revision took down (compare.ts, knockedOutNodes), each counted once.
 */
export function collectFailures(
  nodes: readonly NodeView[],
  targetHash: string,
  prev: RolloutFailures | undefined,
  nowIso: string,
  ctx: FailureContext = {},
): RolloutFailures | undefined {
  const byNode = new Map<string, FailedNode>((prev?.nodes ?? []).map((f) => [f.node, { ...f }]));
  /** Nodes failing now: with the nodes kept, distinct nodes the evidence has seen. */
  const now = new Set<string>();
  if (ctx.since !== undefined) {
    for (const k of knockedOutNodes(nodes, targetHash, ctx.since, ctx.before)) {
      now.add(k.node);
      if (byNode.has(k.node)) continue;
      byNode.set(k.node, { node: k.node, ...hostOf(k), pod: k.pod.name, restarts: k.pod.restartCount, reason: KNOCKED_OUT, at: k.since });
    }
  }
  for (const n of nodes) {
    if (nodeFault(n.health) || unavailableBeforeOn(ctx.before, n.node, n.host)) continue;
    for (const p of n.pods) {
      if (p.hash !== targetHash || p.restartCount <= 0) continue;
      now.add(n.node);
      const known = byNode.get(n.node);
      const reason = p.lastTermination?.reason ?? 'Error';
      if (known) {
        known.restarts = Math.max(known.restarts, p.restartCount);
        known.reason = reason;
        if (p.name) known.pod = p.name;
        continue;
      }
      const f: FailedNode = { node: n.node, ...hostOf(n), restarts: p.restartCount, reason, at: p.lastTermination?.at ?? nowIso };
      if (p.name) f.pod = p.name;
      byNode.set(n.node, f);
    }
  }
  if (byNode.size === 0) return prev;
  const all = [...byNode.values()].sort((a, b) => a.at.localeCompare(b.at) || a.node.localeCompare(b.node));
  // Past the cap the names kept are the earliest. The count is of distinct nodes: exact while every
  // failed node fits the list; past it, the most seen at once with the kept ones, never more than
  // failed. (Adding each node not in the list, as once done, counted a node past the cap again on
  // every pass, and the threshold could be reached by one node's restarts.)
  const seen = new Set([...(prev?.nodes ?? []).map((f) => f.node), ...now]);
  const count = Math.max(prev?.count ?? 0, seen.size);
  return { nodes: all.slice(0, STATUS_LIST_CAP), count };
}

/**
 * The failure class the evidence points to: NodeNotReady when most failures were nodes the revision
 * took down, OOMKilled when most were OOM kills, else CrashLoop.
 */
export function failureCause(f: RolloutFailures): 'OOMKilled' | 'CrashLoop' | 'NodeNotReady' {
  const down = f.nodes.filter((n) => n.reason === KNOCKED_OUT).length;
  if (down * 2 > f.nodes.length) return 'NodeNotReady';
  const oom = f.nodes.filter((n) => n.reason === 'OOMKilled').length;
  return oom * 2 > f.nodes.length ? 'OOMKilled' : 'CrashLoop';
}

/**
 * How long a revision judged Failed must run without a crash before its rollout counts as complete
 * again. The kubelet lets a container's crash back-off grow to 5 minutes and resets it only after the
 * container has run 10 minutes, so a crash loop is never quieter than this between two crashes. Without
 * it a revision that crashes after readiness is Failed while its pods are down and Healthy while they
 * are up, and says so (with its Events) at every restart.
 */
export const FAILED_QUIET_MS = 600_000;

/** When a pod of `hash` last crashed, in ms, as its containers' last terminations say. */
export function lastCrashOf(nodes: readonly NodeView[], hash: string): number | undefined {
  let last: number | undefined;
  for (const n of nodes)
    for (const p of n.pods) {
      const at = p.hash === hash && p.restartCount > 0 && p.lastTermination?.at ? Date.parse(p.lastTermination.at) : NaN;
      if (!Number.isNaN(at) && (last === undefined || at > last)) last = at;
    }
  return last;
}
