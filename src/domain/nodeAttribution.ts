/**
 * Attribution of one node: whose fault it is that the node does not run an available pod of the new
 * revision (the revision's, the node's, a configured wait's, the control plane's), and why, judged by
 * comparison with the previous revision where that decides it. The rollout's attribution
 * (decide/attribute.ts) combines these.
 */
import { classifyReason } from './causes.js';
import { claimFault } from './claimAttribution.js';
import type { BlockedNode, CauseClass, EmptyNode, FaultOwner } from '../api/types.js';
import type { NodeView, PodView, WarningView } from './observation.js';
import type { NodeHealth } from '../api/objects.js';
import { compareScheduling, templateDiff, unavailableBeforeOn, type Comparison } from './compare.js';
import { explainNoPod, explainPod, probeFailure, type Explained } from './warnings.js';

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
export function knockedOut(node: string, c: Comparison | undefined): { owner: FaultOwner; comparison: string } | undefined {
  if (!c?.knockedOut?.includes(node)) return undefined;
  const said =
    'it turned NotReady right after a pod of the new revision started on it, was Ready under the previous revision, and no node still on the previous revision fell';
  return c.enough
    ? { owner: 'Revision', comparison: `${said}: the new revision takes its own node down` }
    : { owner: 'Node', comparison: `${said}; one node is not enough to blame the revision (failedNodesThreshold ${c.threshold})` };
}

/** A refusal by admission, judged by whether a pod of the previous revision is admitted (a server-side dry run). */
export function byAdmission(ex: Explained, c: Comparison | undefined): Explained & { comparison?: string } {
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

/**
 * No probe of the revision said not ready: the node lifecycle controller marked the pod while its node
 * was unreachable, and the kubelet, back, has not re-reported it. The previous revision's pod on this
 * node was marked the same way: the node's outage, not the revision, and an undo would not help.
 */
function markedByNodeLifecycle(b: BlockedNode, pod: PodView | undefined): BlockedNode | undefined {
  if (!pod?.markedNotReady || pod.ready) return undefined;
  return {
    ...b,
    owner: 'Node',
    cause: 'NodeNotReady',
    message: `${b.message}: as the node lifecycle controller marks the pods of a node that stopped reporting; the kubelet has not reported it ready again`,
  };
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
  const marked = markedByNodeLifecycle(b, pod);
  if (marked) return marked;
  const claim = claimFault(node, pod, b.message);
  if (claim) return { ...b, ...claim };
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
  const pre = unavailableBeforeOn(c?.before, b.node, b.host ?? node?.host);
  if (pre && sameWay(pre.cause, cls)) {
    return {
      ...b,
      owner: 'Node',
      cause: cls,
      comparison: `the previous revision was already failing on this node before the rollout started (${pre.cause}), and the new one fails the same way: the node, not the revision`,
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
  // Before the controller's FailedCreate: it refuses to create a pod whose claim is being deleted.
  const claim = claimFault(node, undefined, '');
  if (claim) return { ...e, ...claim };
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
