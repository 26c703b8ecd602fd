/**
 * What reconcile needs from the outside, declared here in reconcile's own terms: the caches it reads,
 * the writes it asks for and what it reports. src/k8s implements the writes and src/runtime the caches
 * and the observer; neither is imported here, so the reconcilers run the same against the API server
 * and against the in-memory fakes of the unit tests.
 *
 * Errors: a port that fails marks the error with a kind (src/reconcile/portErrors.ts) and reconcile reads
 * only that.
 */
import type {
  Meta,
  ObjectRef,
  SlimClaim,
  SlimEvent,
  SlimGuard,
  SlimNamespace,
  SlimNode,
  SlimPod,
  SlimPolicy,
  SlimReplicaSet,
  SlimRevision,
  SlimWorkloads,
  PolicyStatus,
} from '../api/objects.js';
import type { Announcement, GuardSpecInput, GuardStatus, TargetKind } from '../api/types.js';
import type { AdmissionOutcome } from '../domain/compare.js';
import type { DryRunOutcome, UndoOutcome, UndoRequest } from '../domain/undo.js';
import type { EvictionOutcome } from '../domain/eviction.js';

/** Read access to the caches gather needs; the controller passes its informers, tests pass arrays. */
export interface CacheView {
  /** The cached workload `kind` `namespace/name` (undefined: not there, or its kind is not cached here). */
  workload<K extends TargetKind>(kind: K, namespace: string, name: string): Readonly<SlimWorkloads[K]> | undefined;
  /**
   * Whether the cache of `kind`'s workloads has listed; asking starts it where it is started on demand
   * (KindDescriptor.cachedOnDemand), and until it has listed a missing workload is not known to be
   * missing. Optional: without it every cache is listed (tests, the one-shot commands).
   */
  workloadsListed?(kind: TargetKind): boolean;
  /**
   * The PersistentVolumeClaim `namespace/name`, cached with the StatefulSets. Optional: without it no
   * claim is read, and a pod waiting for one is explained by the scheduler's words alone.
   */
  claim?(namespace: string, name: string): Readonly<SlimClaim> | undefined;
  /**
   * Pods whose controller owner has this UID. `within`: the UID of the target whose pods they are, when
   * their controller is not the target itself (a Deployment's pods are its ReplicaSets').
   */
  podsOwnedBy(uid: string, within?: string): ReadonlyArray<Readonly<SlimPod>>;
  /** ControllerRevisions whose controller owner has this UID. */
  revisionsOwnedBy(uid: string): ReadonlyArray<Readonly<SlimRevision>>;
  /**
   * ReplicaSets whose controller owner has this UID: the history of a kind kept in ReplicaSets
   * (KindDescriptor.history). Optional: without it such a target has no history cached.
   */
  replicaSetsOwnedBy?(uid: string): ReadonlyArray<Readonly<SlimReplicaSet>>;
  nodes(): ReadonlyArray<Readonly<SlimNode>>;
  /**
   * Warning Events about `kind` `namespace/name` (FailedCreate on a DaemonSet; FailedMount, sandbox
   * failures on a pod); for a kind whose controller Warnings are about its ReplicaSets, `name` is the
   * ReplicaSet's. Optional: without it no cause is read from Events.
   */
  warningsFor?(kind: TargetKind | 'Pod', namespace: string, name: string): ReadonlyArray<Readonly<SlimEvent>>;
  /** Guards whose targetRef names `kind` `namespace/name` (optional: tests of one guard omit it). */
  guardsTargeting?(kind: TargetKind, namespace: string, name: string): ReadonlyArray<Readonly<SlimGuard>>;
  /** API server time − local time, ms, estimated from responses already received (no request of its own). */
  clockSkewMs?(): number | undefined;
  /**
   * Whether the pods of target `kind` `namespace/name` (this UID) are cached: `synced` (listed and
   * watched), `syncing` (the watch is starting) or `off`. Optional: without it pods are always cached
   * (tests, the check command, which lists them).
   */
  podCache?(kind: TargetKind, namespace: string, name: string, uid: string): 'synced' | 'syncing' | 'off';
  /** Asks for the pods of target `kind` `namespace/name` to be watched: gather needs them and they are not cached. */
  wantPods?(kind: TargetKind, namespace: string, name: string): void;
  /**
   * When the pod `namespace/name` was first seen failing by its watch: where the operator's part of an
   * explanation begins. Optional: without it the explanation's log line omits that moment.
   */
  podFailureSighting?(namespace: string, pod: string): FailureSighting | undefined;
  /**
   * When `namespace` began terminating, if it is: from the namespace cache where the operator has one,
   * else from the API server refusing to create an Event there for that reason. Optional: without it no
   * namespace is known to terminate.
   */
  namespaceTerminatingSince?(namespace: string): string | undefined;
}

/** The API operations a reconcile pass may perform; the controller wires the real ones. */
export interface ReconcilerPorts {
  guard(namespace: string, name: string): Readonly<SlimGuard> | undefined;
  readGuard(namespace: string, name: string): Promise<SlimGuard>;
  writeStatus(guard: Readonly<SlimGuard>, status: GuardStatus): Promise<SlimGuard | undefined>;
  /** Announces Events; returns the ids now known to exist (see announcements.ts). Never throws for an Event. */
  emit(guard: ObjectRef, target: ObjectRef | undefined, events: readonly Announcement[]): Promise<string[]>;
  undo(req: UndoRequest): Promise<UndoOutcome>;
  dryRun(kind: TargetKind, namespace: string, name: string, toRevisionName: string): Promise<DryRunOutcome>;
  /**
   * Evicts pod `namespace/pod` through the Eviction API, only while its UID is `uid` (a StatefulSet's
   * forced rollback). Optional: without it the forced rollback is planned and reported, never made.
   */
  evict?(namespace: string, pod: string, uid: string): Promise<EvictionOutcome>;
  /**
   * A server-side dry run of a pod of ControllerRevision `revisionName` of target `kind` `namespace/name`
   * on `node`: would admission refuse the previous revision too? Optional: without it, NotVerified.
   */
  compareAdmission?(
    kind: TargetKind,
    namespace: string,
    name: string,
    revisionName: string,
    node: string | undefined,
  ): Promise<AdmissionOutcome>;
  /**
   * The caches of `kind`'s workloads and of ControllerRevisions in `namespace` have disagreed for too
   * long: list them again. Optional (tests without informers have nothing to relist).
   */
  relistTargetCaches?(kind: TargetKind, namespace: string, reason: string): void;
}

/** The parts of a first explanation's time in the operator (rollout_guard_explanation_seconds). */
export type ExplanationPart = 'fromEvent' | 'queue' | 'pass' | 'write' | 'total';

/** The workload a guard watches (its spec.targetRef), as the guard's series name it. */
export interface GuardTarget {
  kind: TargetKind;
  name: string;
}

/**
 * What the guard reconciler reports, and nothing more: the counters and gauges it moves. The metrics
 * registry implements it; tests may pass anything of this shape.
 */
export interface ReconcileObserver {
  reconcileDuration: { observe(seconds: number): void };
  statusWrites: { inc(): void };
  /** Status writes the API server refused for a reason a person must fix (`SchemaOutdated`: the CRD is older). */
  statusWritesRefused: { inc(labels: { reason: string }): void };
  undos: { inc(labels: { outcome: string }): void };
  evictions: { inc(labels: { outcome: string }): void };
  undosSkipped: { inc(labels: { reason: string }): void };
  detectionLatency: { observe(seconds: number): void };
  /** A status write that newly names a failing node: its parts, in seconds (queue, pass, write, total). */
  explanation: { observe(labels: { part: ExplanationPart }, seconds: number): void };
  /** The guard's state, and the cause and whose fault it is ('' while none). */
  setState(namespace: string, guard: string, target: Readonly<GuardTarget>, state: string, cause: string, owner: string): void;
  setUndoResult(namespace: string, guard: string, target: Readonly<GuardTarget>, result: string | undefined): void;
  countStall(namespace: string, guard: string, target: Readonly<GuardTarget>, cause: string, owner: string): void;
  countFailure(namespace: string, guard: string, target: Readonly<GuardTarget>, cause: string): void;
  /** The guard is gone: drop its series. */
  forgetGuard(namespace: string, guard: string): void;
}

/**
 * The cached workloads of a kind, for planning. Undefined while a kind's cache has not listed yet (a
 * cache started on demand): the pass then plans nothing, since a plan without them would delete their
 * guards, and the cache's first list enqueues every policy and guard again.
 */
export interface WorkloadSource {
  workloads(kind: TargetKind): ReadonlyArray<Readonly<{ metadata: Meta }>> | undefined;
}

/** Read access to what the policy reconciler plans from; the controller passes its informers. */
export interface PolicyCache extends WorkloadSource {
  policy(name: string): Readonly<SlimPolicy> | undefined;
  policies(): ReadonlyArray<Readonly<SlimPolicy>>;
  namespaces(): ReadonlyArray<Readonly<SlimNamespace>>;
  guards(): ReadonlyArray<Readonly<SlimGuard>>;
}

/**
 * The policy reconciler's API operations. Its writes follow the guard's discipline: spec and status
 * patches carry the resourceVersion they were computed from and fail with a Conflict if the object
 * changed since.
 */
export interface PolicyPorts {
  createGuard(body: unknown): Promise<void>;
  /** Patches the spec of `guard` (as cached) to `spec`, on condition that it did not change since. */
  patchGuardSpec(guard: Readonly<SlimGuard>, spec: GuardSpecInput): Promise<void>;
  deleteGuard(namespace: string, name: string, uid: string | undefined): Promise<void>;
  writeStatus(policy: Readonly<SlimPolicy>, status: PolicyStatus): Promise<void>;
  /** The policy read fresh (after a Conflict on its status); undefined once it is deleted. */
  readPolicy(name: string): Promise<SlimPolicy | undefined>;
}

/** A pod watch's first sight of a pod failing. */
export interface FailureSighting {
  /** When its event arrived (wall ms). */
  at: number;
  /** The API server's write stamp of that event (k8s/writtenAt.ts; whole seconds), where it had one. */
  writtenAt?: number;
}

// Time, injected wherever behaviour depends on it so tests drive it with a fake clock (never a
// module-global clock that tests would have to patch).

/** A source of "now" in milliseconds. Whether it is wall or monotonic time depends on the instance. */
export interface Clock {
  /** Current time in milliseconds. */
  now(): number;
}

/** Timer functions, injectable so tests can fire timers with fake time instead of sleeping. */
export interface Timers {
  /** Schedules `fn` after `ms` milliseconds; returns an opaque handle for {@link Timers.clearTimeout}. */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancels a timer; a handle that already fired or was cleared is ignored. */
  clearTimeout(handle: unknown): void;
}
