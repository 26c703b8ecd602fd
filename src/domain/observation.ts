/**
 * What `decide` knows about the world: the observation that `gather` builds from the informer caches.
 */
import type { NodeHealth } from '../api/objects.js';
import type { DaemonSetUndoRecord, LeftNode, TargetKind, TemplateFacets } from '../api/types.js';

/** A pod as `decide` needs it: revision, readiness and why it is not ready. */
export interface PodView {
  name: string;
  /** Its UID: an eviction is made on condition that the pod is still this one. */
  uid?: string;
  hash: string;
  ready: boolean;
  available: boolean;
  deleting: boolean;
  /**
   * metadata.deletionTimestamp of a deleting pod: the API server sets it to the moment the grace period
   * ends, so a pod still there after it is one the kubelet has not finished removing.
   */
  deletionAt?: string;
  /** When the pod last became Ready (the Ready condition's lastTransitionTime), while it is Ready. */
  readySince?: string;
  phase: string;
  /** Scheduled on a node (spec.nodeName set). */
  scheduled: boolean;
  /**
   * False when an unscheduled pod has no PodScheduled condition at all: no scheduler has looked at it.
   * Absent means unknown, read as true.
   */
  schedulingAttempted?: boolean;
  /** Set when the pod is not ready: a kubelet-level reason (ImagePullBackOff, Unschedulable, …). */
  waitingReason?: string;
  waitingMessage?: string;
  /** Not ready by someone else's word, not a probe's (api/objects.ts SlimPod.markedNotReady). */
  markedNotReady?: true;
  restartCount: number;
  /** The latest Warning Event about this pod that explains a pod that does not start (FailedMount, …). */
  warning?: WarningView;
  /** Why and when a container of this pod last terminated (OOMKilled, Error, …), if one restarted. */
  lastTermination?: { container: string; reason: string; exitCode: number; at?: string };
  images: string[];
  createdAt: string;
}

/**
 * One unit of the target: what runs, or should run, one pod of it. A DaemonSet's units are nodes; a
 * StatefulSet's are ordinals, named by their pod (`web-2`), the name every ordinal's pod keeps; a
 * Deployment's are its pods, named by the pod (`web-5d8f9c7b4-x2x9z`: its ReplicaSet's name, then its own).
 */
export interface NodeView {
  /** The unit's name: the node's for a DaemonSet, the ordinal's pod's for a StatefulSet. */
  node: string;
  /** A StatefulSet's unit: its ordinal. A StatefulSet's or a Deployment's: the node its pod runs on (absent while unscheduled). */
  ordinal?: number;
  host?: string;
  /**
   * The health of the node the unit's pod runs on (for a DaemonSet, of the unit itself). Absent when the
   * node is not known (deleted, or no pod scheduled yet) or in tests that do not care.
   */
  health?: NodeHealth;
  /** Whether the node is eligible for the current template (NodeShouldRunDaemonPod, as far as we evaluate it). */
  eligible: boolean;
  /** Why it is not eligible (untolerated taint, selector mismatch); empty when eligible. */
  ineligibleReason?: string;
  pods: PodView[];
  /** A StatefulSet ordinal's claims that cannot serve its pod now (see ClaimView); absent when all can. */
  claims?: ClaimView[];
}

/**
 * A PersistentVolumeClaim of a StatefulSet ordinal that cannot serve the pod: not Bound (`Pending`,
 * `Lost`), `Missing` from the cache, or being deleted (`deletingSince`).
 */
export interface ClaimView {
  name: string;
  phase: 'Pending' | 'Lost' | 'Missing' | 'Bound';
  deletingSince?: string;
  storageClass?: string;
}

/** A revision of the target (a ControllerRevision it owns, or a Deployment's ReplicaSet), without its template. */
export interface RevisionView {
  name: string;
  hash: string;
  revision: number;
  /** Each pod volume's name with a digest of its source, to tell a volume the revision added or changed. */
  volumes?: Record<string, string>;
  /** A digest of the template the revision stores (see TargetView.templateDigest). */
  templateDigest?: string;
  /** What scheduling and admission failures are about in that template. */
  facets?: TemplateFacets;
}

/** The latest Warning Event about an object, as the controller or the kubelet stated it. */
export interface WarningView {
  reason: string;
  message: string;
  /** When it last happened (lastTimestamp, eventTime or creation). */
  at: string;
}

/**
 * The target as observed through the cache, in the counters of a DaemonSet's status: `desired` units,
 * `current` with a pod, `updated` to the live template, `ready` and `available`. A StatefulSet's
 * adapter counts the same of its ordinals (targets/statefulSet.ts).
 */
export interface TargetView {
  /** The kind of workload: what its units are (a DaemonSet's are nodes) and which adapter observed it. */
  kind: TargetKind;
  name: string;
  namespace: string;
  uid: string;
  generation: number;
  observedGeneration: number;
  /**
   * How the controller replaces pods: RollingUpdate, OnDelete (never by itself), or Recreate (every old
   * pod is gone before a new one starts: a stall there is an outage, and is said to be one).
   */
  strategy: 'RollingUpdate' | 'OnDelete' | 'Recreate';
  minReadySeconds: number;
  desired: number;
  current: number;
  updated: number;
  ready: number;
  available: number;
  misscheduled: number;
  /** Template generation annotation; changes exactly when the pod template changes. */
  templateGeneration?: string;
  /**
   * A digest of the live pod template. Once the controller has observed the DaemonSet, the newest
   * ControllerRevision stores this template (it matches or writes that revision before it reports the
   * generation observed); a newest cached revision with another digest is the revision cache behind.
   */
  templateDigest?: string;
  undoOptOut: boolean;
  images: string[];
  /**
   * A StatefulSet's rollingUpdate.partition while it holds ordinals on another revision (its status's
   * currentRevision is not its updateRevision): the ordinals below it keep their revision, and a rollout
   * that updated every ordinal from it up is done for now (they count as updated).
   */
  partition?: number;
  /**
   * The controller replaces a pod only once every pod before it is Ready (a StatefulSet under
   * OrderedReady, set by its adapter): a pod that never became Ready after a revert stays in place, and
   * only its deletion (the forced rollback) lets the rollback go on.
   */
  waitsOnUnreadyPods?: boolean;
  /**
   * Pods of earlier revisions the controller still runs beside the updated ones (a Deployment's old
   * ReplicaSets during a surge): its `updated` counts pods, not units whose old pod is gone, so the
   * rollout is complete only once none is left, as `kubectl rollout status` waits for them.
   */
  outdated?: number;
  /**
   * The rollout is paused by the workload's own spec (a Deployment's spec.paused, `kubectl rollout
   * pause`): a configured wait, so no progress is expected and it is never a stall. Holds the sentence that
   * says so and how to resume.
   */
  pausedBySpec?: string;
  /**
   * Paused, its template changed and no revision stores it yet (a Deployment makes no ReplicaSet for it
   * until the resume): the pods all run revisions from before the change, and none is the rollout's goal.
   */
  templateAwaitsResume?: boolean;
  /**
   * The workload's own controller reports its own progress deadline passed (a Deployment's Progressing
   * False, reason ProgressDeadlineExceeded): the guard's verdict on a rollout in flight never contradicts
   * it, and says that this deadline fired, not the guard's.
   */
  ownDeadlineExceeded?: { seconds: number; message: string; since?: string };
  /** The controller ownerReference (e.g. a GPU Operator ClusterPolicy): the owner reverts any undo. */
  owner?: { kind: string; name: string };
  /** The last undo any guard made of this DaemonSet, from the annotation written with the undo patch. */
  undoRecord?: DaemonSetUndoRecord;
  /** The DaemonSet controller's latest Warning Event about it (FailedCreate: admission or quota refusals). */
  warning?: WarningView;
}
/** A guard that targets the same DaemonSet (the guard being decided included). */
export interface GuardPeer {
  name: string;
  createdAt: string;
}

/** Everything `decide` knows about the world, built by `gather` from the caches. */
export type Observation =
  | { kind: 'TargetMissing'; targetName: string }
  | {
      kind: 'TargetDeleting';
      targetName: string;
      /**
       * What is being deleted: the DaemonSet itself (its deletionTimestamp is set) or its namespace (the
       * namespace is terminating, and the namespace controller is deleting what it holds).
       */
      by: 'Target' | 'Namespace';
      /** When the deletion began, as far as it is known. */
      since?: string;
    }
  | {
      kind: 'Target';
      target: TargetView;
      /** The revision matching the live template (the highest one), when the controller has recorded it. */
      currentRevision?: RevisionView;
      revisions: RevisionView[];
      nodes: NodeView[];
      /** Nodes that were targets before and are not now, though they still exist (from gather's memory). */
      leftNodes: LeftNode[];
      /**
       * Nodes that were targets before and no longer exist (deleted, scaled down): they lower the
       * expected DESIRED instead of counting as a shrink.
       */
      removedNodes?: string[];
      /** Every guard that targets this DaemonSet, this one included: exactly one of them is in charge. */
      guards?: GuardPeer[];
      /** API server time − operator time, ms, as estimated from the API server's responses (absent before any). */
      clockSkewMs?: number;
      /**
       * The pods are not cached: the DaemonSet's counters are settled and no guard follows a rollout
       * (podInterest.ts), so `nodes` carry no pods and the split comes from the counters.
       */
      podsFromCounters?: true;
    };
