/**
 * Attribution: whose fault each blocked or empty node is, and so whose fault the rollout's stall is.
 *
 * Every stall has an owner, and only one of them is fixed by an undo:
 *
 *   owner           examples                                                   an undo...
 *   Revision        image pull, crash loop, config error, requests beyond       helps: restore the old template
 *                   the node, readiness failing on a healthy node
 *   Node            Ready Unknown/False, unreachable taint, node pressure,      would not help: the old revision
 *                   the kubelet not removing the old pod                        cannot run there either
 *   ControlPlane    generation not observed, nodes waiting their turn with      would not help: nothing would
 *                   nothing blocked, pods no scheduler has looked at            carry it out
 *   ConfiguredWait  minReadySeconds, a termination grace period                 is not a stall at all
 *   Unknown         nothing the API states explains it                          is not justified
 *
 * A node whose own Ready condition is not True is blamed before anything its pods say: a dead kubelet
 * reports nothing, and the node lifecycle controller marks its pods not ready, which would otherwise
 * read as the new revision failing. The revision is blamed only with evidence from a Ready node.
 */
import { dominantOf, isVague, podBlockReason } from '../causes.js';
import type { Split } from '../split.js';
import type { BlockedNode, CauseClass, EmptyNode, FaultOwner, LeftNode, RolloutStatus } from '../../api/types.js';
import type { NodeView, WarningView } from '../observation.js';
import { comparisonOf, type Comparison } from '../compare.js';
import type { Attribution, Held, TargetObservation, Tracking } from './pass.js';
import { parseTime as parse } from './timing.js';
import { attributeBlocked, attributeEmpty, byAdmission, knockedOut, nodeFault, type NodeContext } from '../nodeAttribution.js';
import { explainNoPod } from '../warnings.js';

/** What attribution needs besides the split: the nodes, the DaemonSet's wait and the controller's state. */
export interface AttributionInput {
  split: Split;
  nodes: readonly NodeView[];
  minReadySeconds: number;
  /** The controller has observed the DaemonSet's current generation. */
  observed: boolean;
  /** The rollout still has work to do (a rollout is tracked and not complete). */
  incomplete: boolean;
  /** Nodes that left the targets during the rollout (a shrink); see {@link attributeShrink}. */
  left: readonly LeftNode[];
  shrank: boolean;
  /** When the rollout started (ms): only Warning Events from then on explain it. */
  since?: number;
  /** The DaemonSet controller's latest Warning Event (FailedCreate). */
  warning?: WarningView;
  /** Whether the new revision added or changed the named volume; undefined when not known. */
  volumeChanged?: (name: string) => boolean | undefined;
  /** What is compared with the previous revision (compare.ts); absent when nothing is known of it. */
  comparison?: Comparison;
  /** The controller waits on unready pods (see Attribution.held): the revisions that says apart. */
  heldBy?: HeldBy;
}

/** Owners in the order their evidence decides the rollout's owner. */
const OWNER_ORDER: readonly FaultOwner[] = ['Revision', 'Node', 'Configuration', 'ControlPlane', 'ConfiguredWait', 'Unknown'];

/**
 * Attributes every blocked and empty node, then the rollout. The rollout's owner is the first owner,
 * in {@link OWNER_ORDER}, that any node has, except that the revision needs a Ready node to blame it.
 */
export function attribute(input: AttributionInput, now: number): Attribution {
  const byName = new Map(input.nodes.map((n) => [n.node, n]));
  const ctx: NodeContext = {
    ...(input.since !== undefined ? { since: input.since } : {}),
    ...(input.volumeChanged ? { volumeChanged: input.volumeChanged } : {}),
    ...(input.warning ? { warning: input.warning } : {}),
    ...(input.comparison ? { comparison: input.comparison } : {}),
  };
  const blocked = input.split.blocked.map((b) => {
    const n = byName.get(b.node);
    const p = n?.pods.find((x) => x.name === b.pod);
    return attributeBlocked(b, n, p, now, input.minReadySeconds, ctx);
  });
  const empty = input.split.empty.map((e) => attributeEmpty(e, byName.get(e.node), now, ctx));

  let waitEndsAt = readyWaitEnd(input, now);
  if (input.incomplete && input.split.targetHash !== undefined) downWithOldPods(input, blocked, empty);
  const all: Array<BlockedNode | EmptyNode> = [...blocked, ...empty];
  const graceEnd = graceWaitEnd(empty, byName, now);
  if (graceEnd !== undefined) waitEndsAt = waitEndsAt === undefined ? graceEnd : Math.max(waitEndsAt, graceEnd);
  // A wait still in progress whose end is not known (a pod ready, readySince unknown) holds it too.
  if (blocked.some((x) => x.owner === 'ConfiguredWait')) waitEndsAt = Math.max(waitEndsAt ?? now, now);
  // Nodes here passed the node check: a Ready node where the revision itself fails or is refused.
  const revisionEvidence = [...blocked, ...empty].filter((b) => b.owner === 'Revision').map((b) => b.node);
  const result: Attribution = { blocked, empty, owner: '', cause: '', revisionEvidence };
  if (waitEndsAt !== undefined) result.waitEndsAt = waitEndsAt;
  const uncompared =
    input.comparison?.previous && !input.comparison.admission
      ? empty.find((e) => e.owner === 'Revision' && (e.cause === 'AdmissionRefused' || e.cause === 'QuotaExceeded'))
      : undefined;
  if (uncompared) Object.assign(result, { compareAdmission: uncompared.node, compareWith: input.comparison!.previous! });
  if (input.shrank) return attributeShrinkage(input, result, byName);
  return rolloutOwner(input, result, all, now);
}

/** The latest end of a minReadySeconds wait on any node: time spent in it is not time without progress. */
function readyWaitEnd(input: AttributionInput, now: number): number | undefined {
  let waitEndsAt: number | undefined;
  if (input.minReadySeconds > 0) {
    for (const n of input.nodes) {
      for (const p of n.pods) {
        // A pod that restarted is failing: its short spells of readiness do not hold the clock.
        if (p.hash !== input.split.targetHash || !p.ready || p.deleting || p.restartCount > 0) continue;
        const since = parse(p.readySince);
        if (since === undefined) continue;
        const end = Math.min(now, since + input.minReadySeconds * 1000);
        waitEndsAt = waitEndsAt === undefined ? end : Math.max(waitEndsAt, end);
      }
    }
  }
  return waitEndsAt;
}

/**
 * Adds to `blocked` the nodes that are down and still run the old revision.
 */
function downWithOldPods(input: AttributionInput, blocked: BlockedNode[], empty: readonly EmptyNode[]): void {
  // A node that is down and still runs the old revision is part of what the rollout waits for: the
  // controller cannot replace its pod. It is named as the node's fault, not left to look like a
  // controller that does nothing.
  {
    const named = new Set([...blocked, ...empty].map((x) => x.node));
    for (const n of input.nodes) {
      if (named.has(n.node)) continue;
      const nf = nodeFault(n.health);
      // A node that is down leaves the targets (the unreachable taint) a moment before the controller's
      // DESIRED says so: until then it is still a node the rollout waits for, and it is the node's fault.
      if (!n.eligible && (!nf || input.shrank)) continue;
      const old = n.pods.find((p) => !p.deleting && p.hash !== input.split.targetHash);
      if (!nf || !old) continue;
      blocked.push({
        node: n.node,
        pod: old.name,
        hash: old.hash,
        reason: nf.cause,
        message: `${nf.message}; it still runs the previous revision`,
        owner: 'Node',
        cause: nf.cause,
      });
    }
    blocked.sort((x, y) => x.node.localeCompare(y.node));
  }
}

function graceWaitEnd(empty: readonly EmptyNode[], byName: ReadonlyMap<string, NodeView>, now: number): number | undefined {
  let waitEndsAt: number | undefined;
  // An old pod's termination grace period is a configured wait too: it holds the clock until it ends,
  // and time without progress counts from its end, not from before it.
  for (const e of empty) {
    if (e.cause !== 'PodTerminating') continue;
    const ends = (byName.get(e.node)?.pods ?? []).map((p) => parse(p.deletionAt)).filter((t): t is number => t !== undefined);
    if (ends.length === 0) continue;
    const end = Math.min(now, Math.max(...ends));
    waitEndsAt = waitEndsAt === undefined ? end : Math.max(waitEndsAt, end);
  }
  return waitEndsAt;
}

/** DESIRED shrank during the rollout: whose fault the nodes that left are. */
function attributeShrinkage(input: AttributionInput, result: Attribution, byName: ReadonlyMap<string, NodeView>): Attribution {
  const { empty, revisionEvidence } = result;
  {
    // A dead node leaves the targets too: the node lifecycle controller taints it unreachable:NoSchedule,
    // which daemon pods do not tolerate. It is named as what it is, a node that is down.
    const deadLeft: EmptyNode[] = [];
    for (const l of input.left) {
      const nf = nodeFault(byName.get(l.node)?.health);
      if (nf?.cause !== 'NodeNotReady') continue;
      const message = `${nf.message}; it left the targets (${l.reason})`;
      const k = knockedOut(l.node, input.comparison);
      deadLeft.push({
        node: l.node,
        reason: 'NodeNotReady',
        message,
        owner: k?.owner ?? 'Node',
        cause: 'NodeNotReady',
        ...(k ? { comparison: k.comparison } : {}),
      });
    }
    if (deadLeft.length > 0) {
      result.empty = [...empty, ...deadLeft.filter((d) => !empty.some((e) => e.node === d.node))].sort((x, y) =>
        x.node.localeCompare(y.node),
      );
    }
    // The new revision failing on a Ready node is evidence enough, whatever made DESIRED drop; so are
    // nodes it took down itself.
    const downByRevision = deadLeft.filter((d) => d.owner === 'Revision').map((d) => d.node);
    if (downByRevision.length > 0) result.revisionEvidence = [...new Set([...revisionEvidence, ...downByRevision])];
    const shrink = deadLeft.length > downByRevision.length ? 'Node' : deadLeft.length > 0 ? 'Revision' : attributeShrink(input.left);
    result.owner = result.revisionEvidence.length > 0 ? 'Revision' : shrink;
    if (result.owner === 'Node' && deadLeft.length > 0) result.cause = 'NodeNotReady';
    if (shrink === 'Revision' && deadLeft.length === 0)
      result.revisionEvidence = [...revisionEvidence, ...input.left.filter((l) => l.nodeChanged === false).map((l) => l.node)];
    if (result.owner === 'Revision' && downByRevision.length > 0) result.cause = 'NodeNotReady';
    // Blamed by its own pods on Ready nodes while the nodes that left are down or were changed: the
    // cause is what those pods say. "TargetShrank" would read as the revision having shrunk the targets.
    if (result.owner === 'Revision' && shrink !== 'Revision' && downByRevision.length === 0) {
      const own = [...result.blocked, ...result.empty].filter((x) => x.owner === 'Revision');
      if (own.length > 0) result.cause = dominantOf(own);
    }
    return result;
  }
}

/** The rollout's owner and cause when DESIRED did not shrink. */
function rolloutOwner(input: AttributionInput, result: Attribution, all: ReadonlyArray<BlockedNode | EmptyNode>, now: number): Attribution {
  if (!input.observed) {
    result.owner = 'ControlPlane';
    result.cause = 'ControllerNotObserving';
    return result;
  }
  if (!input.incomplete) return result;
  for (const owner of OWNER_ORDER) {
    const mine = all.filter((x) => x.owner === owner);
    if (mine.length === 0) continue;
    result.owner = owner;
    result.cause = dominantOf(mine);
    return result;
  }
  // Incomplete, observed, and no node blocked or empty: either the API server refuses the new pods
  // (a surge pod, while the old ones run on), or the remaining nodes still run the old revision and wait
  // for the DaemonSet controller to replace their pods.
  const found = explainNoPod(input.warning, input.since);
  if (found) {
    const refused = byAdmission(found, input.comparison);
    result.owner = refused.owner;
    result.cause = refused.cause;
    result.refusal = refused.comparison ? `${refused.message}; ${refused.comparison}` : refused.message;
    if (refused.owner === 'Revision' && input.comparison?.previous && !input.comparison.admission)
      Object.assign(result, { compareAdmission: '', compareWith: input.comparison.previous });
    return result;
  }
  const held = input.heldBy ? heldPods(input, input.heldBy, now) : undefined;
  if (held) {
    // Not the control plane: the controller does what it is built to do, wait for the pod to be Ready.
    const owner = OWNER_ORDER.find((o) => held.pods.some((h) => h.owner === o)) ?? 'Unknown';
    result.held = held;
    result.owner = owner;
    result.cause = dominantOf(held.pods.filter((h) => h.owner === owner));
    return result;
  }
  result.owner = 'ControlPlane';
  result.cause = 'ControllerNotActing';
  return result;
}

/**
 * The revisions a controller that waits on unready pods tells apart: the rollout's target, the revision
 * a return to the previous one left behind (after an undo or a revert), and those the rollout superseded
 * before they reached every unit.
 */
export interface HeldBy {
  target: string;
  undone?: string;
  superseded?: readonly string[];
}

/**
 * The pods not on the rollout's target that are not Ready and not going, each attributed as a blocked pod
 * is, and where they were left; undefined when there are none. The rollout's own leftovers come first:
 * those of the undone revision after a return, else those of a superseded revision. A leftover is judged
 * by what it shows, as any pod the rollout created: its node only when the node itself is at fault. A
 * pod failing on the revision it ran before the rollout reached it does not blame the new revision: its
 * own node, as a DaemonSet's node where the old pod already failed.
 */
function heldPods(input: AttributionInput, by: HeldBy, now: number): Held | undefined {
  const waiting = (keep: (hash: string) => boolean): BlockedNode[] =>
    input.nodes.flatMap((n) =>
      n.pods
        .filter((p) => p.hash !== by.target && keep(p.hash) && !p.ready && !p.deleting)
        .map((p) => {
          const b: BlockedNode = { node: n.node, pod: p.name, hash: p.hash, ...podBlockReason(p) };
          if (n.host !== undefined) b.host = n.host;
          if (p.restartCount > 0) b.restarts = p.restartCount;
          return attributeBlocked(b, n, p, now, input.minReadySeconds);
        }),
    );
  if (by.undone !== undefined) {
    const pods = waiting((h) => h === by.undone);
    return pods.length > 0 ? { pods, on: 'undone' } : undefined;
  }
  const superseded = new Set(by.superseded ?? []);
  const leftovers = waiting((h) => superseded.has(h));
  if (leftovers.length > 0) return { pods: leftovers, on: 'superseded' };
  const before = waiting(() => true).map((b) => (b.owner === 'Revision' ? { ...b, owner: 'Node' as const } : b));
  return before.length > 0 ? { pods: before, on: 'before' } : undefined;
}

/**
 * The first definite failure among the blocked and empty nodes, while most nodes in flight are still
 * starting: the cause shared by most nodes that failed for a definite reason, of the first owner in
 * {@link OWNER_ORDER} that has one. Undefined when every waiting node is merely on its way.
 *
 * Why: during a rollout, pods of one batch fail at different moments (the controller creates them a few
 * per second). Naming the cause only once it is the most common state among the nodes in flight held the
 * first explanation back by seconds at fleet scale, though the first ImagePullBackOff already said it.
 */
export function firstDefinite(a: Pick<Attribution, 'blocked' | 'empty'>): { owner: FaultOwner; cause: CauseClass } | undefined {
  const definite = [...a.blocked, ...a.empty].filter((x) => !isVague(x.cause));
  for (const owner of OWNER_ORDER) {
    const mine = definite.filter((x) => x.owner === owner);
    if (mine.length > 0) return { owner, cause: dominantOf(mine) };
  }
  return undefined;
}

/**
 * Whose fault a shrink is. A node whose labels or taints changed during the rollout left because of the
 * node (someone tainted or relabelled it); one that did not change left because the new template no
 * longer tolerates or selects it.
 */
export function attributeShrink(left: readonly LeftNode[]): FaultOwner {
  if (left.length === 0) return 'Unknown';
  return left.every((l) => l.nodeChanged) ? 'Node' : left.some((l) => l.nodeChanged === false) ? 'Revision' : 'Unknown';
}

/** Attribution as a phase of decide: its input from the tracked rollout. */
export function attributePass({ obs, spec, now, tracked: t }: Tracking): Attribution {
  const { target, split } = t;
  return attribute(
    {
      split,
      nodes: obs.nodes,
      minReadySeconds: target.minReadySeconds,
      observed: t.observed,
      incomplete: t.active && !t.complete,
      left: t.rollout?.leftNodes ?? [],
      shrank: t.shrank,
      ...(t.active && t.rollout ? { since: Date.parse(t.rollout.startedAt) } : {}),
      ...(target.warning ? { warning: target.warning } : {}),
      volumeChanged: volumeChange(obs, t.rollout),
      ...(t.active ? { comparison: comparisonOf(obs.revisions, t.rollout, spec.failedNodesThreshold) } : {}),
      ...heldBy(target.waitsOnUnreadyPods === true, t.rollout),
    },
    now,
  );
}

/**
 * For a controller that waits on unready pods: the rollout's target, the revision a return to the
 * previous one (an undo, or a person's revert) left behind, and the revisions the rollout superseded.
 */
function heldBy(waitsOnUnreadyPods: boolean, r: RolloutStatus | undefined): { heldBy?: HeldBy } {
  if (!waitsOnUnreadyPods || !r) return {};
  const back = (r.rollback || r.restored) && r.fromRevision && r.fromRevision.hash !== r.toRevision.hash;
  const superseded = (r.superseded ?? []).map((x) => x.hash).filter((h) => h !== r.toRevision.hash);
  return {
    heldBy: {
      target: r.toRevision.hash,
      ...(back && r.fromRevision ? { undone: r.fromRevision.hash } : {}),
      ...(superseded.length > 0 ? { superseded } : {}),
    },
  };
}

/**
 * Whether the rollout's new revision added or changed a volume, compared with the revision it started
 * from (undefined when either revision's volumes are not known).
 */
function volumeChange(obs: TargetObservation, rollout: RolloutStatus | undefined): (name: string) => boolean | undefined {
  const to = rollout ? obs.revisions.find((r) => r.hash === rollout.toRevision.hash)?.volumes : undefined;
  const from = rollout?.fromRevision ? obs.revisions.find((r) => r.hash === rollout.fromRevision?.hash)?.volumes : undefined;
  return (name) => {
    if (!to || !from || to[name] === undefined) return undefined;
    return from[name] !== to[name];
  };
}
