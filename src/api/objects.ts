/**
 * The objects reconcile reads, in the slim shapes the informers cache (src/k8s/slim.ts produces them
 * from API JSON). Only the fields gather, the event mappers and the policy reconciler read are kept,
 * so the operator's memory grows with the number of DaemonSet pods and nodes, not with the size of
 * their specs.
 *
 * Cached objects are shared by every reader: never mutate them (readers take them Readonly).
 */
import { API_VERSION, GUARD_KIND } from './names.js';
import { KINDS } from './kinds.js';
import type { StallAction, Condition, GuardSpec, GuardStatus, TargetKind, TemplateFacets } from './types.js';
import type { KindNamed, WorkloadRef } from './selected.js';

export interface Meta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  ownerReferences?: OwnerRef[];
}

export interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

export interface SlimGuard {
  metadata: Meta;
  /**
   * targetRef is absent on a guard with a selector (the CRD allows exactly one of the two); such a guard
   * never reaches the guard reconciler (see isSelectorGuard).
   */
  spec: Partial<GuardSpec> & {
    targetRef: { kind: TargetKind; name: string };
    selector?: LabelSelector;
    /** With a selector: the kinds it chooses (DaemonSet alone when left out). */
    targetKinds?: TargetKind[];
  };
  status?: GuardStatus;
}

/** A guard that selects workloads by label and generates one guard per match instead of judging one. */
export function isSelectorGuard(g: Readonly<SlimGuard>): boolean {
  return g.spec?.selector !== undefined && !g.spec?.targetRef;
}

export interface SlimDaemonSet {
  metadata: Meta;
  spec: {
    selector?: LabelSelector;
    updateStrategy: { type: string; rollingUpdate?: { maxUnavailable?: string | number; maxSurge?: string | number } };
    minReadySeconds: number;
    placement: { nodeSelector?: Record<string, string>; nodeSelectorTerms?: NodeSelectorTerm[]; tolerations?: Toleration[] };
    images: string[];
    /** A digest of spec.template, to tell which ControllerRevision stores the live template. */
    templateDigest?: string;
  };
  status: {
    observedGeneration: number;
    desiredNumberScheduled: number;
    currentNumberScheduled: number;
    updatedNumberScheduled: number;
    numberReady: number;
    numberAvailable: number;
    numberMisscheduled: number;
  };
}

/**
 * A StatefulSet as cached: what its rollout is tracked by. Its units are ordinals: pod `<name>-<i>` for
 * each i below spec.replicas.
 */
export interface SlimStatefulSet {
  metadata: Meta;
  spec: {
    replicas: number;
    selector?: LabelSelector;
    podManagementPolicy: 'OrderedReady' | 'Parallel';
    updateStrategy: { type: string; rollingUpdate?: { partition?: number; maxUnavailable?: string | number } };
    minReadySeconds: number;
    images: string[];
    /** A digest of spec.template, to tell which ControllerRevision stores the live template. */
    templateDigest?: string;
    /** The names of its volumeClaimTemplates: ordinal i's claims are `<template>-<name>-<i>`. */
    claimTemplates: string[];
  };
  status: {
    observedGeneration: number;
    replicas: number;
    readyReplicas: number;
    currentReplicas: number;
    updatedReplicas: number;
    availableReplicas: number;
    /** The ControllerRevision names (`<name>-<hash>`) of the ordinals below and at or above the partition. */
    currentRevision?: string;
    updateRevision?: string;
  };
}

/**
 * A Deployment as cached: what its rollout is tracked by. Its units are pods, created by its ReplicaSets
 * (one per pod template: its history, see {@link SlimReplicaSet}).
 */
export interface SlimDeployment {
  metadata: Meta;
  spec: {
    replicas: number;
    selector?: LabelSelector;
    /** RollingUpdate (with maxSurge and maxUnavailable) or Recreate (every old pod gone before a new one). */
    strategy: { type: string; rollingUpdate?: { maxSurge?: string | number; maxUnavailable?: string | number } };
    minReadySeconds: number;
    /** Its own deadline, in seconds: its controller reports ProgressDeadlineExceeded past it (default 600). */
    progressDeadlineSeconds: number;
    /** spec.paused (kubectl rollout pause): a template change creates no ReplicaSet until resumed. */
    paused: boolean;
    images: string[];
    /** A digest of spec.template, comparable with SlimReplicaSet.templateDigest. */
    templateDigest?: string;
  };
  status: {
    observedGeneration: number;
    replicas: number;
    updatedReplicas: number;
    readyReplicas: number;
    availableReplicas: number;
    unavailableReplicas: number;
    /** Its Progressing condition, as its controller last set it (ProgressDeadlineExceeded, DeploymentPaused, …). */
    progressing?: { status: string; reason: string; message: string; since?: string };
  };
}

/**
 * A ReplicaSet as cached: one revision of a Deployment's history and the owner of that revision's pods.
 * Kept only while a guard targets a Deployment (KindDescriptor.cachedOnDemand).
 */
export interface SlimReplicaSet {
  /** Its controller ownerReference is the Deployment's. */
  metadata: Meta;
  /** Its pods' `pod-template-hash`. */
  hash: string;
  /** Its `deployment.kubernetes.io/revision` (0 when absent). */
  revision: number;
  /** spec.replicas, and the pods it has, Ready and available. */
  replicas: number;
  current: number;
  ready: number;
  available: number;
  /** A digest of its pod template without the pod-template-hash label: comparable with the Deployment's. */
  templateDigest?: string;
  /** Pod volume name → digest of its source, as SlimRevision.volumes. */
  volumes?: Record<string, string>;
  facets?: TemplateFacets;
  /** Its ReplicaFailure condition while True: why its controller cannot create pods (FailedCreate). */
  replicaFailure?: { reason: string; message: string; since?: string };
}

/** Holds `T` only where it names every kind a guard can target: tsc refuses a kind without its entry. */
type EveryKind<T extends Record<TargetKind, unknown>> = T;

/** Each kind's workload as cached: one entry per kind of {@link TargetKind}, which tsc holds complete. */
export type SlimWorkloads = EveryKind<{ DaemonSet: SlimDaemonSet; StatefulSet: SlimStatefulSet; Deployment: SlimDeployment }>;

/** A cached workload of any kind. */
export type SlimWorkload = SlimWorkloads[TargetKind];

export interface SlimPod {
  metadata: Meta;
  /** spec.nodeName, or the node a pending daemon pod is pinned to by its node affinity. */
  node?: string;
  scheduled: boolean;
  hash: string;
  images: string[];
  phase: string;
  ready: boolean;
  readySince?: string;
  /** False when the pod is unscheduled and has no PodScheduled condition: no scheduler looked at it. */
  schedulingAttempted?: false;
  waitingReason?: string;
  waitingMessage?: string;
  /**
   * Running with Ready False while ContainersReady is True and no readiness gate waits: no probe said
   * so. The node lifecycle controller marks a node's pods not ready when the node stops reporting.
   */
  markedNotReady?: true;
  restartCount: number;
  /** The most recent container termination (lastState.terminated), if any container restarted. */
  lastTermination?: { container: string; reason: string; exitCode: number; at?: string };
}

export interface SlimRevision {
  metadata: Meta;
  hash: string;
  revision: number;
  /** Pod volume name → digest of its source, from the revision's template (not the template itself). */
  volumes?: Record<string, string>;
  /** A digest of the template the revision stores, comparable with SlimDaemonSet.spec.templateDigest. */
  templateDigest?: string;
  /** What scheduling and admission failures are about in that template (host ports, requests, identity). */
  facets?: TemplateFacets;
}

/** A Warning Event, slimmed to what explains a blocked node. */
export interface SlimEvent {
  metadata: Meta;
  involved: { kind: string; name: string; namespace?: string };
  reason: string;
  /** Cut to 1 kB: enough to quote a refusal, bounded however long the original. */
  message: string;
  /** When it last happened: lastTimestamp, else eventTime, else creation. */
  at: string;
}

export interface SlimNode {
  metadata: Meta;
  taints: Taint[];
  /** Absent when the node has no Ready condition yet (just registered). */
  health?: NodeHealth;
}

/**
 * A PersistentVolumeClaim as cached: whether it can serve the pod that mounts it (its phase, and
 * metadata.deletionTimestamp while it is being deleted).
 */
export interface SlimClaim {
  metadata: Meta;
  /** Pending, Bound or Lost. */
  phase: string;
  storageClassName?: string;
}

/** A RolloutGuardPolicy as cached. */
export interface SlimPolicy {
  metadata: { name: string; uid?: string; generation?: number; resourceVersion?: string };
  spec: { namespaceSelector?: LabelSelector; selector?: LabelSelector; targetKinds?: TargetKind[]; guard?: PolicyView['guard'] };
  status?: PolicyStatus;
}

export interface PolicyStatus {
  observedGeneration?: number;
  /** Workloads of every kind it chooses; matchedByKind splits it. */
  matched?: number;
  /** The workloads among matched, per kind it chooses. */
  matchedByKind?: Array<{ kind: TargetKind; matched: number }>;
  /** matchedByKind's counts as they were reported before it, for their readers. */
  matchedDaemonSets?: number;
  matchedStatefulSets?: number;
  matchedDeployments?: number;
  guards?: number;
  conflictCount?: number;
  /** Each names its workload by kind and name, and by the field of its kind as before (daemonSet, statefulSet). */
  conflicts?: Array<KindNamed & WorkloadRef & { namespace: string; reason: string; winner: string }>;
  conditions?: Condition[];
}

/** A namespace as cached: name and labels only. */
export interface SlimNamespace {
  metadata: {
    name: string;
    labels?: Record<string, string>;
    resourceVersion?: string;
    uid?: string;
    /** Set while the namespace is being terminated (its content is being deleted). */
    deletionTimestamp?: string;
  };
}

/** The controller owner of an object, if it is of `kind`. */
export function controllerOf(m: Meta, kind: string): OwnerRef | undefined {
  return m.ownerReferences?.find((o) => o.controller && o.kind === kind);
}

/** A reference to an object, as Events name what they are about. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  uid?: string;
}

/** The reference to a guard used in Events. */
export function guardRef(namespace: string, name: string, uid?: string): ObjectRef {
  return { apiVersion: API_VERSION, kind: GUARD_KIND, name, namespace, ...(uid ? { uid } : {}) };
}

/** The reference to a guard's target (a DaemonSet or a StatefulSet) used in Events. */
export function workloadRef(kind: TargetKind, namespace: string, name: string, uid?: string): ObjectRef {
  return { apiVersion: KINDS[kind].apiVersion, kind, name, namespace, ...(uid ? { uid } : {}) };
}

// Shapes the slim objects share with the rules that read them.

/** Node taints and pod tolerations, as in core/v1. */
export interface Taint {
  key: string;
  value?: string;
  effect: string;
}
export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}
export interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}
export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

/** metav1.LabelSelector. */
export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** The guard a RolloutGuardPolicy stamps out, and the policy as its plan reads it. */
export interface GuardTemplate {
  suspectAfterSeconds?: number;
  progressDeadlineSeconds?: number;
  onStall?: { action?: StallAction; delaySeconds?: number; forcedRollback?: boolean };
  failedNodesThreshold?: number;
  bakeSeconds?: number;
}

export interface PolicyView {
  name: string;
  uid: string;
  /**
   * Set for a guard with a selector: it claims workloads of this namespace only (namespaceSelector is
   * not read), and its generated guards carry SELECTOR_GUARD_LABEL instead of POLICY_LABEL.
   */
  namespace?: string;
  namespaceSelector?: LabelSelector;
  selector?: LabelSelector;
  /** The kinds it chooses; DaemonSet alone when absent (see kindsOf). */
  targetKinds?: TargetKind[];
  guard?: GuardTemplate;
}

/**
 * What the node's own conditions and taints say about its health. Only the Ready condition and the
 * pressure conditions are kept: their heartbeat timestamps change every few seconds and carry nothing.
 */
export interface NodeHealth {
  /** The Ready condition's status; `Unknown` when the kubelet stopped posting status. */
  ready: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  /** Pressure conditions that are True: MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable. */
  pressure?: string[];
  /** The node carries the `unreachable` or `not-ready` taint the node lifecycle controller sets. */
  unreachable?: boolean;
  /** When the Ready condition last changed, while it is not True. */
  since?: string;
}
