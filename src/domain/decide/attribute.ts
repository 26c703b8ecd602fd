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
import { classifyReason, dominantOf, isVague } from '../causes.js';
import type { Split } from '../split.js';
import type { BlockedNode, CauseClass, EmptyNode, FaultOwner, LeftNode, RolloutStatus } from '../../api/types.js';
import type { NodeView, PodView, WarningView } from '../observation.js';
import type { NodeHealth } from '../../api/objects.js';
import { compareScheduling, comparisonOf, templateDiff, unavailableBefore, type Comparison } from '../compare.js';
import type { Attribution, TargetObservation, Tracking } from './pass.js';
import { explainNoPod, explainPod, probeFailure, type Explained } from '../warnings.js';

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
}

/** The context one node is attributed in. */
export interface NodeContext {
  since?: number;
  volumeChanged?: (name: string) => boolean | undefined;
  warning?: WarningView;
  comparison?: Comparison;
}

/** Failures of a pod that runs: the new pod failing "the same way" as the old one did there. */
const RUNTIME_CLASSES: ReadonlySet<CauseClass> = new Set<CauseClass>(['CrashLoop', 'OOMKilled', 'NotReady']);
const sameWay = (a: CauseClass, b: CauseClass): boolean => a === b || (RUNTIME_CLASSES.has(a) && RUNTIME_CLASSES.has(b));

/** A node the new revision took down, or may have: owner and comparison, or undefined. */
function knockedOut(node: string, c: Comparison | undefined): { owner: FaultOwner; comparison: string } | undefined {
  if (!c?.knockedOut?.includes(node)) return undefined;
  const said =
    'it turned NotReady right after a pod of the new revision started on it, was Ready under the previous revision, and no node still on the previous revision fell';
  return c.enough
    ? { owner: 'Revision', comparison: `${said}: the new revision takes its own node down` }
    : { owner: 'Node', comparison: `${said}; one node is not enough to blame the revision (failedNodesThreshold ${c.threshold})` };
}

/** A refusal by admission, judged by whether a pod of the previous revision is admitted (a server-side dry run). */
function byAdmission(ex: Explained, c: Comparison | undefined): Explained & { comparison?: string } {
  if (ex.owner !== 'Revision' || (ex.cause !== 'AdmissionRefused' && ex.cause !== 'QuotaExceeded')) return ex;
  const a = c?.admission;
  // No previous revision to try (first seen midway, history pruned): the symptom alone, as before.
  if (!a && !c?.previous) return ex;
  if (!a) return { ...ex, comparison: 'not compared yet: a server-side dry run of a pod of the previous revision is pending' };
  if (a.result === 'Accepted') {
    const changed = c?.templates ? templateDiff(c.templates) : [];
    const what = changed.length > 0 ? ` (it changed: ${changed.join('; ')})` : '';
    return {
      ...ex,
      comparison: `a pod of the previous revision (${a.revisionName}) is admitted (server-side dry run): only the new template is refused${what}`,
    };
  }
  if (a.result === 'Refused') {
    return {
      ...ex,
      owner: 'Configuration',
      comparison: `a pod of the previous revision (${a.revisionName}) is refused too (server-side dry run: ${a.message}): the policy, not the revision, blocks the rollout, and an undo cannot help`,
    };
  }
  return { ...ex, owner: 'Unknown', comparison: `not verified whether admission would refuse the previous revision too: ${a.message}` };
}

const REVISION_CLASSES: ReadonlySet<CauseClass> = new Set<CauseClass>([
  'ImagePullFailure',
  'CrashLoop',
  'OOMKilled',
  'InsufficientResources',
  'Unschedulable',
  'NotReady',
]);

/** Owners in the order their evidence decides the rollout's owner. */
const OWNER_ORDER: readonly FaultOwner[] = ['Revision', 'Node', 'Configuration', 'ControlPlane', 'ConfiguredWait', 'Unknown'];

const parse = (s: string | undefined): number | undefined => (s ? Date.parse(s) : undefined);

/** A node whose own state explains anything that happens on it, or undefined when it looks healthy. */
export function nodeFault(h: NodeHealth | undefined): { cause: CauseClass; message: string } | undefined {
  if (!h) return undefined;
  if (h.ready !== 'True' || h.unreachable) {
    const what = h.ready === 'Unknown' ? 'Unknown' : h.ready === 'False' ? 'NotReady' : 'unreachable';
    const why = h.message || h.reason || (h.unreachable ? 'tainted unreachable by the node lifecycle controller' : 'no reason given');
    return { cause: 'NodeNotReady', message: `node is ${what} (${why})` };
  }
  if (h.pressure && h.pressure.length > 0) return { cause: 'NodePressure', message: `node reports ${h.pressure.join(', ')}` };
  return undefined;
}

/** Owner and cause of one node blocked on a pod of the target revision. */
export function attributeBlocked(
  b: BlockedNode,
  node: NodeView | undefined,
  pod: PodView | undefined,
  now: number,
  minReadySeconds: number,
  events: NodeContext = {},
): BlockedNode {
  const nf = nodeFault(node?.health);
  const c = events.comparison;
  if (nf) {
    const k = knockedOut(b.node, c);
    return {
      ...b,
      owner: k?.owner ?? 'Node',
      cause: nf.cause,
      message: `${nf.message}; ${b.message}`,
      ...(k ? { comparison: k.comparison } : {}),
    };
  }
  // A pod that restarted is failing, whatever it reports now: its readiness is not a wait to honour.
  if (pod?.ready && !pod.available && pod.restartCount > 0) {
    return {
      ...b,
      owner: 'Revision',
      cause: 'CrashLoop',
      reason: 'CrashLoopBackOff',
      message: `restarted ${pod.restartCount} time(s); ready again, but not for minReadySeconds ${minReadySeconds}`,
    };
  }
  if (pod?.ready && !pod.available) {
    const since = parse(pod.readySince);
    const left = since !== undefined ? Math.max(0, since + minReadySeconds * 1000 - now) : undefined;
    const msg = `ready, waiting out minReadySeconds ${minReadySeconds}${left !== undefined ? ` (${Math.ceil(left / 1000)}s left)` : ''}`;
    return { ...b, owner: 'ConfiguredWait', cause: 'MinReadySeconds', message: msg };
  }
  if (pod && !pod.scheduled && pod.schedulingAttempted === false && !pod.waitingReason) {
    return {
      ...b,
      owner: 'ControlPlane',
      cause: 'SchedulerNotActing',
      message: 'pod Pending with no PodScheduled condition: no scheduler has looked at it',
    };
  }
  let cls = classifyReason(b.reason, b.message);
  // Killed for memory: the remedy is the limit, not the code.
  if (cls === 'CrashLoop' && pod?.lastTermination?.reason === 'OOMKilled') cls = 'OOMKilled';
  const pre = unavailableBefore(c?.before, b.node);
  if (pre && sameWay(pre.cause, cls)) {
    return {
      ...b,
      owner: 'Node',
      cause: cls,
      comparison: `the previous revision was already failing on this node before the rollout started (${pre.cause}), and the new one fails the same way: the node, not the revision; an undo would not help`,
    };
  }
  if ((cls === 'InsufficientResources' || cls === 'Unschedulable') && pod && !pod.scheduled) {
    // The new pod must fit beside a live pod of another revision when the DaemonSet surges.
    const surge = (node?.pods ?? []).some((p) => p.hash !== pod.hash && !p.deleting);
    const cmp = compareScheduling(b.message, surge, c?.templates);
    if (cmp) return { ...b, owner: cmp.owner, cause: cls, comparison: cmp.comparison };
  }
  if (REVISION_CLASSES.has(cls)) {
    const out: BlockedNode = { ...b, owner: 'Revision', cause: cls };
    const probe = cls === 'NotReady' ? probeFailure(pod?.warning, events.since) : undefined;
    if (probe) out.message = `${b.message}; the kubelet: ${probe}`;
    if (pre)
      out.comparison = `the previous revision failed here before the rollout too, but otherwise (${pre.cause}): the new revision fails its own way`;
    return out;
  }
  // A pod stuck before its containers start: the kubelet said why in an Event.
  const ex = explainPod(pod?.warning, events.since, events.volumeChanged ?? (() => undefined));
  if (ex) return { ...b, owner: ex.owner, cause: ex.cause, reason: ex.reason, message: ex.message };
  return { ...b, owner: 'Unknown', cause: cls };
}

/** Owner and cause of one node that should run the pod and has none. */
export function attributeEmpty(e: EmptyNode, node: NodeView | undefined, now: number, events: NodeContext = {}): EmptyNode {
  const nf = nodeFault(node?.health);
  if (nf) {
    const k = knockedOut(e.node, events.comparison);
    return {
      ...e,
      owner: k?.owner ?? 'Node',
      cause: nf.cause,
      message: `${nf.message}; ${e.message}`,
      ...(k ? { comparison: k.comparison } : {}),
    };
  }
  if (e.reason === 'Terminating') {
    // deletionTimestamp is when the grace period ends: before it the pod is still shutting down as
    // configured; after it the kubelet should have removed it and has not.
    const ends = (node?.pods ?? []).map((p) => parse(p.deletionAt)).filter((t): t is number => t !== undefined);
    const graceEnds = ends.length > 0 ? Math.max(...ends) : undefined;
    if (graceEnds === undefined) return { ...e, owner: 'Unknown', cause: 'Unknown' };
    if (now < graceEnds) {
      return {
        ...e,
        owner: 'ConfiguredWait',
        cause: 'PodTerminating',
        message: `the old pod is in its termination grace period (${Math.ceil((graceEnds - now) / 1000)}s left)`,
      };
    }
    return {
      ...e,
      owner: 'Node',
      cause: 'PodTerminating',
      message: 'the old pod is still Terminating past its grace period: the kubelet has not removed it',
    };
  }
  // No pod at all: the API server refused to create it, and the DaemonSet controller said why.
  const found = explainNoPod(events.warning, events.since);
  if (found) {
    const ex = byAdmission(found, events.comparison);
    return {
      ...e,
      owner: ex.owner,
      cause: ex.cause,
      reason: ex.reason,
      message: ex.message,
      ...(ex.comparison ? { comparison: ex.comparison } : {}),
    };
  }
  return { ...e, owner: 'Unknown', cause: 'Unknown' };
}

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

  // A node that is down and still runs the old revision is part of what the rollout waits for: the
  // controller cannot replace its pod. It is named as the node's fault, not left to look like a
  // controller that does nothing.
  if (input.incomplete && input.split.targetHash !== undefined) {
    const named = new Set([...blocked, ...empty].map((x) => x.node));
    for (const n of input.nodes) {
      if (!n.eligible || named.has(n.node)) continue;
      const nf = nodeFault(n.health);
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
  const all: Array<BlockedNode | EmptyNode> = [...blocked, ...empty];
  // An old pod's termination grace period is a configured wait too: it holds the clock until it ends,
  // and time without progress counts from its end, not from before it.
  for (const e of empty) {
    if (e.cause !== 'PodTerminating') continue;
    const ends = (byName.get(e.node)?.pods ?? []).map((p) => parse(p.deletionAt)).filter((t): t is number => t !== undefined);
    if (ends.length === 0) continue;
    const end = Math.min(now, Math.max(...ends));
    waitEndsAt = waitEndsAt === undefined ? end : Math.max(waitEndsAt, end);
  }
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

  if (input.shrank) {
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
    return result;
  }
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
  result.owner = 'ControlPlane';
  result.cause = 'ControllerNotActing';
  return result;
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
  const { ds, split } = t;
  return attribute(
    {
      split,
      nodes: obs.nodes,
      minReadySeconds: ds.minReadySeconds,
      observed: t.observed,
      incomplete: t.active && !t.complete,
      left: t.rollout?.leftNodes ?? [],
      shrank: t.shrank,
      ...(t.active && t.rollout ? { since: Date.parse(t.rollout.startedAt) } : {}),
      ...(ds.warning ? { warning: ds.warning } : {}),
      volumeChanged: volumeChange(obs, t.rollout),
      ...(t.active ? { comparison: comparisonOf(obs.revisions, t.rollout, spec.failedNodesThreshold) } : {}),
    },
    now,
  );
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
