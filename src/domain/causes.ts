/**
 * Cause classes: why a node is not running an available pod of the rollout's target revision.
 *
 * The kubelet and scheduler already say why, in different places (container waiting reasons, the
 * PodScheduled condition); this module maps them onto a few classes with one remedy each.
 */
import type { SlimPod } from '../api/objects.js';
import type { BlockedNode, CauseClass, EmptyNode, TargetKind } from '../api/types.js';
import { wordsOf, type KindWords } from './kindWords.js';
import type { PodView } from './observation.js';

const IMAGE_PULL = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull']);
const CRASH = new Set(['CrashLoopBackOff', 'RunContainerError', 'CreateContainerError', 'CreateContainerConfigError']);

/** Classify one blocked node's reason string (as stored in `blockedNodes[].reason`). */
export function classifyReason(reason: string, message: string): CauseClass {
  if (IMAGE_PULL.has(reason)) return 'ImagePullFailure';
  if (CRASH.has(reason)) return 'CrashLoop';
  if (reason === 'Unschedulable') {
    return /Insufficient (cpu|memory|pods|ephemeral-storage|[a-z0-9.-]+\/[a-z0-9.-]+)|Too many pods/i.test(message)
      ? 'InsufficientResources'
      : 'Unschedulable';
  }
  if (reason === 'NotReady' || reason === 'Running') return 'NotReady';
  return 'Unknown';
}

/**
 * The reason a pod that is not available gives: the first container waiting reason, else the
 * scheduler's verdict, else readiness.
 */
export function podBlockReason(pod: PodView): { reason: string; message: string } {
  if (pod.waitingReason) return { reason: pod.waitingReason, message: pod.waitingMessage ?? '' };
  if (!pod.scheduled) return { reason: 'Pending', message: 'pod is not yet scheduled' };
  if (pod.phase === 'Running' && !pod.ready && pod.markedNotReady)
    return { reason: 'NotReady', message: 'containers ready, but the pod was marked not ready (no probe failed)' };
  if (pod.phase === 'Running' && !pod.ready) return { reason: 'NotReady', message: 'container running but not ready' };
  if (pod.ready && !pod.available) return { reason: 'NotReady', message: 'ready, but not yet for minReadySeconds' };
  return { reason: pod.phase || 'Unknown', message: `pod phase ${pod.phase || 'unknown'}` };
}

/** What of a pod says it failed. */
type PodFailureView = Pick<SlimPod, 'waitingReason' | 'waitingMessage' | 'lastTermination'>;

/**
 * Whether a pod's change brings a definite failure it did not show before: a waiting reason of a cause
 * a person acts on (an image that cannot be pulled, a pod that cannot be scheduled, a crash loop), or a
 * container termination that is not a clean exit. A pod merely starting, or getting Ready, is not one.
 */
export function podNewlyFailing(prev: PodFailureView | undefined, next: PodFailureView): boolean {
  const reason = next.waitingReason;
  if (reason !== undefined && reason !== prev?.waitingReason && !isVague(classifyReason(reason, next.waitingMessage ?? ''))) return true;
  const t = next.lastTermination;
  if (t === undefined || (t.exitCode === 0 && t.reason !== 'OOMKilled')) return false;
  const p = prev?.lastTermination;
  return p === undefined || p.at !== t.at || p.container !== t.container;
}

/** Precedence when nodes disagree: the most specific, most actionable cause first. */
const PRECEDENCE: readonly CauseClass[] = [
  'ImagePullFailure',
  'AdmissionRefused',
  'InsufficientResources',
  'QuotaExceeded',
  'VolumeMountFailure',
  'VolumeClaimUnavailable',
  'OOMKilled',
  'CrashLoop',
  'Unschedulable',
  'NotReady',
  'NodeNotReady',
  'NodePressure',
  'SandboxFailure',
  'PodTerminating',
  'SchedulerNotActing',
  'MinReadySeconds',
  'Unknown',
];

/** Causes that say a node is still on its way (starting, not ready yet), not that it failed. */
const VAGUE: ReadonlySet<CauseClass> = new Set<CauseClass>(['Unknown', 'NotReady']);

/** Whether `cause` only says a node is on its way (or says nothing): not a failure to act on. */
export function isVague(cause: CauseClass | undefined): boolean {
  return cause === undefined || VAGUE.has(cause);
}

/**
 * Whether a listed node's own pod reports a definite failure (an image that cannot be pulled, a pod the
 * scheduler refused, a crash loop), by its reason alone: what a person acts on. It both puts a node
 * first in a status list and makes a node newly failing, which is written at once
 * (reconcile/guardPass.ts), so the two cannot disagree.
 */
export function failsOfItsOwn(x: { reason?: string; message?: string }): boolean {
  return x.reason !== undefined && !isVague(classifyReason(x.reason, x.message ?? ''));
}

/**
 * Where a node goes in a status list: 0 when its pod fails of its own ({@link failsOfItsOwn}), 1 when
 * only attribution found a definite cause (the node is down, no scheduler has looked at the pod yet),
 * 2 when it is on its way or unexplained.
 */
function listRank(x: { reason?: string; message?: string; cause?: CauseClass }): number {
  if (failsOfItsOwn(x)) return 0;
  return isVague(x.cause) ? 2 : 1;
}

/**
 * Nodes whose pods failed for a definite reason first, then the ones attribution found a definite cause
 * for, then the ones still on their way, each group by name. Status lists are capped: during a wide
 * rollout most nodes in flight are merely starting, and a list ordered by name alone hid the failing
 * nodes behind them. So did one where a pod the scheduler has not reached yet (SchedulerNotActing, a
 * wait in a storm of new pods) ranked with a pod the scheduler refused: a hundred of the first
 * pushed the one a person must act on past the cap, and the status named it only seconds later.
 */
export function failuresFirst<T extends { node: string; reason?: string; message?: string; cause?: CauseClass }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => listRank(a) - listRank(b) || a.node.localeCompare(b.node));
}

/** The class shared by most of `items`, ties broken by PRECEDENCE; Unknown when there are none. */
export function dominantOf(items: ReadonlyArray<{ cause?: CauseClass }>): CauseClass {
  const counts = new Map<CauseClass, number>();
  for (const i of items) counts.set(i.cause ?? 'Unknown', (counts.get(i.cause ?? 'Unknown') ?? 0) + 1);
  let best: CauseClass = 'Unknown';
  let bestCount = 0;
  for (const c of PRECEDENCE) {
    const n = counts.get(c) ?? 0;
    if (n > bestCount) {
      best = c;
      bestCount = n;
    }
  }
  return best;
}

/**
 * The guard-level cause from blocked and empty nodes' reason strings, classified first. Empty nodes with
 * no pod at all count as Unknown (the controller has not created one).
 */
export function dominantCause(blocked: readonly BlockedNode[], empty: readonly EmptyNode[]): CauseClass {
  return dominantOf([...blocked, ...empty].map((x) => ({ cause: classifyReason(x.reason, x.message) })));
}

/**
 * Where a user looks to confirm each cause, in the words of the target's kind: named in the status
 * message.
 */
export function causeHint(cause: CauseClass, kind: TargetKind): string {
  return CAUSE_HINTS[cause]({ ...wordsOf(kind), kind });
}

const CAUSE_HINTS: Record<CauseClass, (w: KindWords & { kind: TargetKind }) => string> = {
  ImagePullFailure: () => 'the pod cannot pull its image (kubectl get pods: STATUS ImagePullBackOff)',
  InsufficientResources: () => 'the node cannot supply the requested resources (pod Pending, PodScheduled=False Unschedulable)',
  Unschedulable: () => 'the scheduler cannot place the pod (pod Pending, PodScheduled=False Unschedulable)',
  CrashLoop: () => 'the new container keeps crashing (kubectl get pods: STATUS CrashLoopBackOff, RESTARTS growing)',
  OOMKilled: () =>
    'the new container is killed for exceeding its memory limit (kubectl describe pod: Last State Terminated, Reason OOMKilled): raise the limit or fix the leak',
  NotReady: () => 'the new pod runs but never becomes ready (kubectl get pods: READY 0/1)',
  TargetShrank: (w) => `${w.unit}s left the ${w.kind}'s targets (${w.fewerTargeted})`,
  NoNodesMatched: (w) => `no node matches the ${w.kind} (${w.noneTargeted})`,
  NodeNotReady: () => 'a node is not Ready (kubectl get nodes: STATUS NotReady or Unknown)',
  NodePressure: () => 'a node reports pressure (kubectl describe node: MemoryPressure/DiskPressure/PIDPressure True)',
  PodTerminating: () => 'the old pod has not gone away (kubectl get pods: STATUS Terminating)',
  ControllerNotObserving: (w) =>
    `the ${w.kind} controller has not observed the new spec (kubectl get ${w.short} -o yaml: status.observedGeneration below metadata.generation)`,
  ControllerNotActing: (w) => `${w.unit}s still run the old revision and no ${w.unit} is blocked (${w.notUpdated}, no failing pod)`,
  SchedulerNotActing: () => 'the new pod was never scheduled (kubectl get pods: Pending, no PodScheduled condition)',
  MinReadySeconds: (w) => `the new pod is ready and waits out minReadySeconds (${w.readyNotAvailable})`,
  AdmissionRefused: (w) => `admission refuses the new pod (kubectl describe ${w.warnedOn}: Warning FailedCreate ... is forbidden)`,
  QuotaExceeded: (w) =>
    `a ResourceQuota refuses the new pod (kubectl describe ${w.warnedOn}: Warning FailedCreate ... exceeded quota; kubectl describe quota)`,
  VolumeMountFailure: () => 'a volume of the new pod does not mount (kubectl describe pod: Warning FailedMount, STATUS ContainerCreating)',
  VolumeClaimUnavailable: () =>
    'a PersistentVolumeClaim of the pod is not bound, lost or being deleted (kubectl get pvc; kubectl describe pvc NAME)',
  SandboxFailure: () => 'the node cannot create the pod sandbox or its network (kubectl describe pod: Warning FailedCreatePodSandBox)',
  Unknown: (w) => `the rollout is not moving (${w.notAvailable})`,
};
