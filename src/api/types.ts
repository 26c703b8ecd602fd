/**
 * The RolloutGuard API as stored: spec and status, the record an undo leaves on the DaemonSet, and the
 * Events a guard keeps in status until they are announced.
 *
 * Everything here is plain data (JSON-serialisable), so the status written is exactly what is read back.
 */
import type { SelectedLists, SelectedWorkload } from './selected.js';
import type { ForcedRollback } from './forcedRollback.js';
import type { TargetKind } from './kinds.js';

/** States shown in `status.state` and the STATE printer column (the CRD's enum lists the same). */
export const GUARD_STATES = [
  'Unknown',
  'Healthy',
  'Progressing',
  'Suspect',
  'Stalled',
  'Failed',
  'RollingBack',
  'RolledBack',
  'Suspended',
  'Conflict',
] as const;
/** What became of a guard's latest undo (status.lastUndo.result). */
export const UNDO_RESULTS = ['Pending', 'Applied', 'Complete', 'Failed', 'RollbackStalled'] as const;
export type UndoResult = (typeof UNDO_RESULTS)[number];
export type GuardState = (typeof GUARD_STATES)[number];

/**
 * Why a rollout is not moving. One class per remedy: an operator reading the cause knows which column,
 * pod field or node property to look at next.
 */
export type CauseClass =
  | 'ImagePullFailure'
  | 'InsufficientResources'
  | 'Unschedulable'
  | 'CrashLoop'
  | 'OOMKilled'
  | 'NotReady'
  | 'TargetShrank'
  | 'NoNodesMatched'
  | 'NodeNotReady'
  | 'NodePressure'
  | 'PodTerminating'
  | 'ControllerNotObserving'
  | 'ControllerNotActing'
  | 'SchedulerNotActing'
  | 'MinReadySeconds'
  | 'AdmissionRefused'
  | 'QuotaExceeded'
  | 'VolumeMountFailure'
  | 'VolumeClaimUnavailable'
  | 'SandboxFailure'
  | 'Unknown';

/**
 * Whose fault a blocked node is, and so whether an undo can help. Only `Revision` is undone: a node
 * that died, a controller that does not act, a wait the user configured or a limit the namespace sets
 * (`Configuration`: a ResourceQuota on the pod count, a claim whose storage is not there) is not fixed by restoring the old template, and
 * undoing a good release for them makes an outage worse.
 */
export type FaultOwner = 'Revision' | 'Node' | 'ControlPlane' | 'ConfiguredWait' | 'Configuration' | 'Unknown';

/** What the guard does once a rollout is Stalled. */
export type StallAction = 'Report' | 'Undo';

/** `spec` of a RolloutGuard, after API-server defaulting. */
export interface GuardSpec {
  targetRef: { apiVersion?: 'apps/v1'; kind: TargetKind; name: string };
  suspectAfterSeconds: number;
  progressDeadlineSeconds: number;
  onStall: {
    action: StallAction;
    /** Grace period between Stalled and the undo, for a human or GitOps tool to act first. */
    delaySeconds: number;
    /** After a StatefulSet's undo under OrderedReady: evict the pods left on the undone revision that are not Ready. */
    forcedRollback: boolean;
  };
  /** Ready nodes on which the new revision crashed after starting before the verdict is Failed. */
  failedNodesThreshold: number;
  /** How long a rollout stays watched after every node is updated and available. */
  bakeSeconds: number;
  suspend: boolean;
}

/** The kinds a guard can target, kept with their descriptors in the kind registry (api/kinds.ts). */
export { TARGET_KINDS, type TargetKind } from './kinds.js';

/** A guard spec as stored or generated: only targetRef is required (the CRD and api/defaults.ts fill in the rest). */
export type GuardSpecInput = Omit<Partial<GuardSpec>, 'targetRef' | 'onStall'> & {
  targetRef: GuardSpec['targetRef'];
  onStall?: Partial<GuardSpec['onStall']>;
};

/** A revision as users see it in `kubectl rollout history` (number) and on pods (hash). */
export interface RevisionRef {
  revision?: number;
  hash: string;
}

/** metav1.Condition. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** One generation of the pod spec present on nodes: the split the guard explains. */
export interface GenerationStatus {
  revision?: number;
  hash: string;
  images: string[];
  nodes: number;
  ready: number;
}

/** A unit (a node; a StatefulSet's ordinal) where the pod of the rollout's target revision is not available. */
export interface BlockedNode {
  /** The unit: a node, or a StatefulSet's ordinal named by its pod (`host` is then the pod's node). */
  node: string;
  host?: string;
  pod?: string;
  revision?: number;
  hash?: string;
  reason: string;
  message: string;
  /** Whose fault it is (see attribute.ts); absent in statuses written before attribution existed. */
  owner?: FaultOwner;
  cause?: CauseClass;
  /** Container restarts of the pod of the target revision on this node. */
  restarts?: number;
  /** The comparison with the previous revision that decided the owner (compare.ts), when one did. */
  comparison?: string;
}

/** A unit that should run a pod but has none running. */
export interface EmptyNode {
  node: string;
  host?: string;
  reason: string;
  message: string;
  owner?: FaultOwner;
  cause?: CauseClass;
  /** The comparison with the previous revision that decided the owner, when one did. */
  comparison?: string;
}

/** A unit whose pod of the previous revision was not available as the rollout started, and why. */
export interface UnavailableAtStart {
  node: string;
  /** The node its old pod ran on, when the unit is not a node (an ordinal, a Deployment's pod): see split.ts hostOf. */
  host?: string;
  cause: CauseClass;
}

/**
 * Whether the API server admits a pod of the previous revision where it refuses the new one: a
 * server-side dry run (dryRun=All) of a pod built from the previous ControllerRevision, made once per
 * broken revision.
 */
export interface AdmissionComparison {
  /** The broken hash the comparison was made for. */
  forHash: string;
  /** The revision whose pod was tried. */
  revisionName: string;
  /** Accepted: only the new template is refused. Refused: the old one is too. NotVerified: the dry run could not be made. */
  result: 'Accepted' | 'Refused' | 'NotVerified';
  message: string;
  at: string;
}

export type { TemplateFacets } from './templateFacets.js';

/** A node that left the DaemonSet's targets during a rollout, and why. */
export interface LeftNode {
  node: string;
  reason: string;
  /**
   * The node's own labels or taints changed since it was a target (someone tainted or relabelled it),
   * as opposed to the template no longer selecting or tolerating it. Absent when not known.
   */
  nodeChanged?: boolean;
}

/** High-water marks of rollout progress; any increase is progress. */
export interface ProgressMarks {
  observedGeneration: number;
  updated: number;
  available: number;
  ready: number;
  onTarget: number;
  /**
   * Nodes with no old pod left, terminating or not (see Split.oldGone). The kubelet removing an old pod
   * is progress: otherwise the time an old pod spent Terminating would count until the new pod came up,
   * and the verdict would turn Suspect in the moment between the removal and the new pod. Absent in a
   * status written by an operator without it: the first pass then sets it without counting progress.
   */
  oldGone?: number;
}

/** The rollout being tracked (or the last one, with `completedAt`). */
export interface RolloutStatus {
  fromRevision?: RevisionRef;
  toRevision: RevisionRef;
  startedAt: string;
  lastProgressAt: string;
  completedAt?: string;
  desiredAtStart: number;
  /** True when this rollout is the guard's own undo converging. */
  rollback?: boolean;
  progress: ProgressMarks;
  leftNodes?: LeftNode[];
  /** Nodes deleted from the cluster during the rollout: they lower the DESIRED expected at the end. */
  removedNodes?: string[];
  /** When every node was first seen updated and available: spec.bakeSeconds run from here. Cleared if the counters fall back. */
  updatedAt?: string;
  /** Evidence against the new revision: Ready nodes where it crashed after starting. */
  failures?: RolloutFailures;
  /** When the failures first reached spec.failedNodesThreshold: the verdict Failed, and the undo clock. */
  failedAt?: string;
  /**
   * Nodes whose pod of the previous revision was not available when the rollout started: the new
   * revision failing there the same way says nothing against it. At most the status list cap.
   */
  unavailableAtStart?: UnavailableAtStart[];
  /** Nodes like those, more than it names (track.ts): while > 0 no undo (UnavailableAtStartUnlisted). */
  unavailableAtStartUnlisted?: number;
  /**
   * Revisions this rollout superseded before they reached every node (a second template pushed while
   * the first was still rolling out): fromRevision stays the last revision that ran on every node.
   */
  superseded?: RevisionRef[];
  /** The template is a revision a person or tool restored (as `kubectl rollout undo` does), not ours. */
  restored?: boolean;
  /** The admission comparison made for this rollout's new revision, if the API server refused its pods. */
  admission?: AdmissionComparison;
}

/** A Ready node (a unit: a node, or a pod and its `host`) where a pod of the new revision restarted. */
export interface FailedNode {
  node: string;
  host?: string;
  pod?: string;
  restarts: number;
  /** The last termination's reason: OOMKilled, Error, … */
  reason: string;
  /** When the crash was first seen (the container's finishedAt when known). */
  at: string;
}

/** The failures of a rollout's new revision, kept across passes so the evidence only grows. */
export interface RolloutFailures {
  /** Capped at the status list cap, the earliest kept. */
  nodes: FailedNode[];
  /** Distinct nodes failed: exact while they fit the list, past it a lower bound (evidence.ts). */
  count: number;
}

/** The record of an undo, written before acting (result Pending) and after. */
export interface UndoRecord {
  at: string;
  fromRevision?: number;
  fromHash: string;
  toRevision?: number;
  toHash: string;
  toRevisionName: string;
  result: UndoResult;
  message: string;
}

/** Why the guard does not undo a stall: a CamelCase reason for alerts and a sentence for people. */
/** Why a guard will not undo (status.undoSkipped.reason; docs/undo.md explains each). */
export const UNDO_SKIP_REASONS = [
  'NotTheRevision',
  'PreviousRevisionFails',
  'OwnedByController',
  'OptedOut',
  'AlreadyUndone',
  'NoEarlierRevision',
  'RevisionGone',
  'RestoresUndoneRevision',
  'ClockSkew',
  'UnavailableAtStartUnlisted',
] as const;
export type UndoSkipReason = (typeof UNDO_SKIP_REASONS)[number];

export type UndoSkip = { reason: UndoSkipReason; message: string };

/** What an undo would do, shown in Report mode and before acting. */
export interface UndoPlan {
  toRevision?: number;
  toHash: string;
  toRevisionName: string;
  nodes: number;
  dryRun?: 'Accepted' | 'Rejected' | 'NotRun';
  dryRunMessage?: string;
  /** The broken hash this plan was validated for, so the dry run runs once per broken revision. */
  forHash: string;
}

/** `status` of a RolloutGuard; a guard with a selector also keeps its records per kind (SelectedLists). */
export interface GuardStatus extends SelectedLists {
  observedGeneration?: number;
  state?: GuardState;
  cause?: CauseClass | '';
  message?: string;
  desired?: number;
  current?: number;
  updated?: number;
  ready?: number;
  available?: number;
  currentRevision?: RevisionRef;
  /**
   * The template generation `currentRevision` belongs to: a newer one shown while the current revision
   * has not changed means the ControllerRevision cache is behind.
   */
  templateGeneration?: string;
  generations?: GenerationStatus[];
  blockedNodes?: BlockedNode[];
  blockedNodeCount?: number;
  emptyNodes?: EmptyNode[];
  emptyNodeCount?: number;
  rollout?: RolloutStatus;
  lastUndo?: UndoRecord;
  undoPlan?: UndoPlan;
  /** Set when a stalled revision equals one the guard already undid (e.g. GitOps re-applied it). */
  repeatedRevision?: string;
  /** Whose fault the current stall (or suspicion) is: the owner behind `cause`. */
  owner?: FaultOwner | '';
  /**
   * The DaemonSet generation the controller has not observed yet, and since when. A controller that
   * never observes a spec change is a stall with no revision to time it against, so it is timed here.
   */
  unobserved?: { generation: number; since: string };
  /** The guard in charge of the target when this one is not (state Conflict). */
  inCharge?: string;
  /**
   * Every broken hash this guard has attempted to undo, newest last (at most {@link UNDONE_HISTORY_CAP}):
   * `lastUndo` holds only the latest, and no hash is ever undone twice.
   */
  undoneRevisions?: string[];
  /**
   * The Events of the latest transitions, written with the transition and kept until the operator knows
   * they were announced, so that a crash between the status write and the Events loses none of them.
   */
  announcements?: Announcement[];
  /** Why a Stalled rollout is not undone (or would not be, in Report mode). */
  undoSkipped?: UndoSkip;
  /** A StatefulSet's forced rollback after an undo: the pods evicted from the undone revision. */
  forcedRollback?: ForcedRollback;
  /** A guard with a selector: one record per workload it selects, of every kind it chooses (see selected.ts). */
  workloads?: SelectedWorkload[];
  conditions?: Condition[];
}

/**
 * The record of an undo kept on the DaemonSet itself, written in the same patch as the template, so a
 * guard that is recreated, or a second guard, never repeats or inverts an undo it did not make.
 */
export interface DaemonSetUndoRecord {
  /** The broken hash that was undone. */
  from: string;
  /** The hash restored. */
  to: string;
  at: string;
  /** `namespace/name` of the guard that made it. */
  guard: string;
  /**
   * Every broken hash undone on this DaemonSet, by any guard, newest last (at most
   * {@link UNDONE_HISTORY_CAP}). `from` alone would forget B once C is undone, and B re-applied
   * would then be undone a second time.
   */
  undone?: string[];
}

/** How many undone hashes the DaemonSet's record and a guard's status remember. */
export const UNDONE_HISTORY_CAP = 20;

/** An Event to emit; `onTarget` mirrors it on the DaemonSet so `kubectl describe ds` shows it too. */
export interface PlannedEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  action: string;
  note: string;
  onTarget: boolean;
}

/**
 * A planned Event as kept in status: `id` names the Event (so announcing it twice is refused by the API
 * server as AlreadyExists), `at` is the transition's time and the Event's eventTime.
 */
export interface Announcement extends PlannedEvent {
  id: string;
  at: string;
}
