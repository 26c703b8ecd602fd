/**
 * The kinds of workload a guard can target, each described once: one {@link KindDescriptor} per kind in
 * {@link KINDS}, a `Record<TargetKind, …>` that `tsc` holds complete. Code outside this file and the
 * per-kind files (files named for their kind, or in a folder of kinds, workloads or targets) never
 * compares kind names: it looks the kind up here, so a kind added to {@link TARGET_KINDS} does not compile
 * until its descriptor is written, and no two-way check (`kind === 'DaemonSet' ? … : …`) can quietly treat
 * a third kind as one of the first two (test/api/kinds.test.ts scans src/ for such checks).
 *
 * What a kind needs beyond its descriptor (its gather adapter, its informer, its CRD enum value and its
 * RBAC rules) is listed in docs/design.md, "Where a kind of workload goes".
 */
import {
  APPS_API_VERSION,
  DAEMONSET_KIND,
  DEPLOYMENT_KIND,
  HASH_LABEL,
  POD_TEMPLATE_HASH_LABEL,
  REPLICASET_KIND,
  STATEFULSET_KIND,
} from './names.js';

/** The kinds a guard can target (targetRef.kind; the CRD's enum lists the same, in both copies). */
export const TARGET_KINDS = [DAEMONSET_KIND, STATEFULSET_KIND, DEPLOYMENT_KIND] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

/**
 * The kind a guard targets when its targetRef names none (the CRD's default), a policy chooses when it
 * lists no kinds, and the only kind guards could target before there were others (see
 * {@link KindDescriptor.original}).
 */
export const DEFAULT_KIND: TargetKind = DAEMONSET_KIND;

/** The counters of a target as `kubectl get` shows them (domain's TargetView has them all). */
export interface KindColumns {
  desired: number;
  ready: number;
  updated: number;
  available: number;
}

/**
 * The words a message uses for a kind (domain/kindWords.ts adds kubectl's short name and serves them):
 * what one unit of its rollout is, and where kubectl shows each way its rollout falls short.
 */
export interface KindMessageWords {
  /** One unit of the rollout: a DaemonSet's node, a StatefulSet's pod (one per ordinal), a Deployment's pod. */
  unit: string;
  /** What kubectl calls the number of units the target should run: DESIRED, replicas. */
  desired: string;
  /** Where kubectl shows units not updated yet. */
  notUpdated: string;
  /** Where kubectl shows units not updated or not available. */
  notAvailable: string;
  /** Where kubectl shows pods Ready but not yet available (minReadySeconds). */
  readyNotAvailable: string;
  /** Where kubectl shows fewer units targeted than before. */
  fewerTargeted: string;
  /** Where kubectl shows no unit targeted. */
  noneTargeted: string;
  /** `rollout-guard get`, when there is no unit to show: "No node runs or should run this DaemonSet." */
  noUnits: string;
  /** What `kubectl get` shows of the target's counters now. */
  columns: (t: Readonly<KindColumns>) => string;
}

/** A right an RBAC rule grants: verbs on a resource of an API group (`''`: the core group). */
export interface KindRight {
  group: string;
  resource: string;
  verbs: readonly string[];
}

/**
 * A controller that runs a workload's pods by naming it in its own spec, with no ownerReference on it (an
 * Argo Rollout's `spec.workloadRef`, which may keep the Deployment scaled up): an undo would fight it.
 */
export interface ReferringManager {
  kind: string;
  group: string;
  version: string;
  resource: string;
  /** The field of its spec that names the workload, as `{apiVersion, kind, name}`. */
  refField: string;
}

/** Argo Rollouts' Rollout, when its `spec.workloadRef` names a Deployment. */
const ARGO_ROLLOUT: ReferringManager = {
  kind: 'Rollout',
  group: 'argoproj.io',
  version: 'v1alpha1',
  resource: 'rollouts',
  refField: 'workloadRef',
};

/** Everything the operator knows of one kind of workload that is not code of its own (see the file's head). */
export interface KindDescriptor {
  /** The kind, as targetRef.kind, ownerReferences and Events name it. */
  kind: TargetKind;
  /** Its API group, and the version it is read and written in. */
  group: string;
  apiVersion: string;
  /** Its resource: the plural in API paths and RBAC rules (`daemonsets`). */
  resource: string;
  /** kubectl's short name for the resource (`kubectl get ds`), and `ds/NAME` in the commands. */
  short: string;
  /**
   * The kind guards watched before there were others: what was named before kinds existed keeps its
   * name. Its target keys, guard names and the workloads a status names carry no kind; its status list
   * and count (status.daemonSets, status.matchedDaemonSets) are always reported; the `daemonset` label of
   * the metrics holds its name. Exactly one kind is original: {@link DEFAULT_KIND}.
   */
  original: boolean;
  /**
   * The field that names one of its workloads in a status list and a log line (`daemonSet: name`), and
   * the cache view's accessor of one (reconcile/ports.ts CacheView.daemonSet).
   */
  field: 'daemonSet' | 'statefulSet' | 'deployment';
  /** A selector guard's status list of its workloads (status.daemonSets). */
  statusList: 'daemonSets' | 'statefulSets' | 'deployments';
  /** A policy's count of its workloads (status.matchedDaemonSets). */
  matchedCount: 'matchedDaemonSets' | 'matchedStatefulSets' | 'matchedDeployments';
  /** What ends the name of a guard a policy generates for one of its workloads (`<policy>-<workload><suffix>`). */
  guardNameSuffix: string;
  /** What ends the name of an Event mirrored on one of its workloads (`<target>.<guard>.<id>.<suffix>`). */
  eventSuffix: string;
  /**
   * What one unit of its rollout is: a node (one daemon pod each, judged against its placement), an
   * ordinal (one pod each, named for it, judged on the node it runs on), or a pod (no stable name: each
   * pod is its own unit, named by the pod, whose name begins with its ReplicaSet's, and judged on its node).
   */
  units: 'nodes' | 'ordinals' | 'pods';
  /**
   * Its desired count is the number of nodes its placement matches, so 0 means it matches no node
   * (NoNodesMatched); otherwise the count is asked for, and 0 was asked for on purpose.
   */
  desiredFromPlacement: boolean;
  /** Its units keep PersistentVolumeClaims made from its templates, which explain a pod waiting for one. */
  claims: boolean;
  /**
   * Its workloads (and its controller's Warnings) are cached only once a guard targets one: an install
   * that guards only the other kinds never lists them, and needs no right to.
   */
  cachedOnDemand: boolean;
  /**
   * Where its history lives, each found by controller owner UID: ControllerRevisions it controls, or
   * ReplicaSets it controls (one per pod template, numbered by their `deployment.kubernetes.io/revision`).
   */
  history: 'ControllerRevisions' | 'ReplicaSets';
  /** The pod label that names a pod's revision. */
  revisionLabel: string;
  /**
   * What that label holds: the revision's hash (a daemon pod's `controller-revision-hash`, a Deployment
   * pod's `pod-template-hash`), or the ControllerRevision's name, `<workload>-<hash>` (a StatefulSet's pod).
   */
  revisionLabelHolds: 'hash' | 'revisionName';
  /**
   * How one of its pods finds it: its controller ownerReference, one step; or through a ReplicaSet, two
   * (pod → ReplicaSet → workload: the pod's controller is a ReplicaSet whose controller is the workload).
   */
  podOwner: 'controller' | 'replicaSet';
  /**
   * Selects the Warning Events its controller reports (FailedCreate), by field selector: on its workloads,
   * or, for a kind whose pods a ReplicaSet creates, on its ReplicaSets (read by the ReplicaSet's name).
   */
  controllerWarnings: string;
  /** Its undo: the revision's template put back, as `kubectl rollout undo` does. */
  undo: {
    /** Where the template to restore is kept. */
    from: 'ControllerRevision' | 'ReplicaSet';
    /** Report mode spells out the undo by hand (kubectl rollout undo, then the pods to delete), not a count. */
    reportsHandUndo: boolean;
    /** Who may run it by reference: listed before each undo, refused if one names it or the list is forbidden. */
    referredBy: readonly ReferringManager[];
  };
  /** The rights it needs (config/rbac/role.yaml): to observe it (ClusterRole rollout-guard), and to undo (rollout-guard-undo). */
  rbac: { observe: readonly KindRight[]; undo: readonly KindRight[] };
  /** Its words in messages. */
  words: KindMessageWords;
}

const READ = ['get', 'list', 'watch'] as const;

/** Every kind's descriptor: `tsc` refuses a kind of {@link TARGET_KINDS} without one. */
export const KINDS = {
  DaemonSet: {
    kind: DAEMONSET_KIND,
    group: 'apps',
    apiVersion: APPS_API_VERSION,
    resource: 'daemonsets',
    short: 'ds',
    original: true,
    field: 'daemonSet',
    statusList: 'daemonSets',
    matchedCount: 'matchedDaemonSets',
    guardNameSuffix: '',
    eventSuffix: 'ds',
    units: 'nodes',
    desiredFromPlacement: true,
    claims: false,
    cachedOnDemand: false,
    history: 'ControllerRevisions',
    revisionLabel: HASH_LABEL,
    revisionLabelHolds: 'hash',
    podOwner: 'controller',
    controllerWarnings: 'involvedObject.kind=DaemonSet,type=Warning,source=daemonset-controller',
    undo: { from: 'ControllerRevision', reportsHandUndo: false, referredBy: [] },
    rbac: {
      observe: [
        { group: 'apps', resource: 'daemonsets', verbs: READ },
        { group: 'apps', resource: 'controllerrevisions', verbs: READ },
      ],
      undo: [{ group: 'apps', resource: 'daemonsets', verbs: ['patch'] }],
    },
    words: {
      unit: 'node',
      desired: 'DESIRED',
      notUpdated: 'kubectl get ds: UP-TO-DATE below DESIRED',
      notAvailable: 'kubectl get ds: UP-TO-DATE/AVAILABLE below DESIRED',
      readyNotAvailable: 'kubectl get ds: READY above AVAILABLE',
      fewerTargeted: 'kubectl get ds: DESIRED dropped',
      noneTargeted: 'kubectl get ds: DESIRED 0',
      noUnits: 'node runs or should run this DaemonSet',
      columns: (t) => `kubectl get ds shows DESIRED ${t.desired}, READY ${t.ready}, UP-TO-DATE ${t.updated}, AVAILABLE ${t.available}`,
    },
  },
  StatefulSet: {
    kind: STATEFULSET_KIND,
    group: 'apps',
    apiVersion: APPS_API_VERSION,
    resource: 'statefulsets',
    short: 'sts',
    original: false,
    field: 'statefulSet',
    statusList: 'statefulSets',
    matchedCount: 'matchedStatefulSets',
    guardNameSuffix: '-sts',
    eventSuffix: 'sts',
    units: 'ordinals',
    desiredFromPlacement: false,
    claims: true,
    cachedOnDemand: true,
    history: 'ControllerRevisions',
    revisionLabel: HASH_LABEL,
    revisionLabelHolds: 'revisionName',
    podOwner: 'controller',
    controllerWarnings: 'involvedObject.kind=StatefulSet,type=Warning,source=statefulset-controller',
    undo: { from: 'ControllerRevision', reportsHandUndo: true, referredBy: [] },
    rbac: {
      observe: [
        { group: 'apps', resource: 'statefulsets', verbs: READ },
        { group: 'apps', resource: 'controllerrevisions', verbs: READ },
        { group: '', resource: 'persistentvolumeclaims', verbs: READ },
      ],
      // The forced rollback after an undo under OrderedReady evicts the pods left on the undone revision.
      undo: [
        { group: 'apps', resource: 'statefulsets', verbs: ['patch'] },
        { group: '', resource: 'pods/eviction', verbs: ['create'] },
      ],
    },
    words: {
      unit: 'pod',
      desired: 'replicas',
      notUpdated: 'kubectl get sts -o yaml: status.updatedReplicas below spec.replicas',
      notAvailable: 'kubectl get sts: READY below the replicas; status.updatedReplicas or availableReplicas short of them',
      readyNotAvailable: 'kubectl get sts -o yaml: status.availableReplicas below status.readyReplicas',
      fewerTargeted: 'kubectl get sts: fewer replicas',
      noneTargeted: 'kubectl get sts: 0 replicas',
      noUnits: 'pod runs or should run for this StatefulSet',
      columns: (t) => `kubectl get sts shows READY ${t.ready}/${t.desired}`,
    },
  },
  Deployment: {
    kind: DEPLOYMENT_KIND,
    group: 'apps',
    apiVersion: APPS_API_VERSION,
    resource: 'deployments',
    short: 'deploy',
    original: false,
    field: 'deployment',
    statusList: 'deployments',
    matchedCount: 'matchedDeployments',
    guardNameSuffix: '-deploy',
    eventSuffix: 'deploy',
    units: 'pods',
    desiredFromPlacement: false,
    claims: false,
    cachedOnDemand: true,
    history: 'ReplicaSets',
    revisionLabel: POD_TEMPLATE_HASH_LABEL,
    revisionLabelHolds: 'hash',
    podOwner: 'replicaSet',
    // The ReplicaSet controller creates a Deployment's pods and reports what refuses them on the ReplicaSet.
    controllerWarnings: `involvedObject.kind=${REPLICASET_KIND},type=Warning,source=replicaset-controller`,
    // kubectl rollout undo deployment: the previous ReplicaSet's template; its controller then scales
    // that ReplicaSet back up and the broken one down, so no pod is deleted by hand.
    undo: { from: 'ReplicaSet', reportsHandUndo: true, referredBy: [ARGO_ROLLOUT] },
    rbac: {
      observe: [
        { group: 'apps', resource: 'deployments', verbs: READ },
        { group: 'apps', resource: 'replicasets', verbs: READ },
      ],
      undo: [
        { group: 'apps', resource: 'deployments', verbs: ['patch'] },
        { group: ARGO_ROLLOUT.group, resource: ARGO_ROLLOUT.resource, verbs: ['list'] },
      ],
    },
    words: {
      unit: 'pod',
      desired: 'replicas',
      notUpdated: 'kubectl get deploy: UP-TO-DATE below the replicas',
      notAvailable: 'kubectl get deploy: UP-TO-DATE or AVAILABLE below the replicas',
      readyNotAvailable: 'kubectl get deploy: READY above AVAILABLE',
      fewerTargeted: 'kubectl get deploy: fewer replicas',
      noneTargeted: 'kubectl get deploy: 0 replicas',
      noUnits: 'pod runs or should run for this Deployment',
      columns: (t) => `kubectl get deploy shows READY ${t.ready}/${t.desired}, UP-TO-DATE ${t.updated}, AVAILABLE ${t.available}`,
    },
  },
} as const satisfies Readonly<Record<TargetKind, KindDescriptor>>;

/** Whether `kind` (any kind name: an ownerReference's, an Event's) is a kind a guard can target. */
export function isTargetKind(kind: unknown): kind is TargetKind {
  return (TARGET_KINDS as readonly unknown[]).includes(kind);
}

/** The descriptor of `kind`, or undefined when it is no kind a guard can target (a Pod, a RolloutGuard). */
export function kindDescriptor(kind: string): KindDescriptor | undefined {
  return isTargetKind(kind) ? KINDS[kind] : undefined;
}

/** One value per kind, from each kind's descriptor. */
export function mapKinds<T>(f: (d: KindDescriptor) => T): Record<TargetKind, T> {
  return Object.fromEntries(TARGET_KINDS.map((k) => [k, f(KINDS[k])])) as Record<TargetKind, T>;
}

/**
 * The names kubectl takes for the kind's resource, in `ds/NAME`: the short name, singular and plural,
 * each also with its group (`daemonsets.apps`). Compared without regard to case, as kubectl does.
 */
export function resourceNames(kind: TargetKind): string[] {
  const d = KINDS[kind];
  const singular = d.kind.toLowerCase();
  return [d.short, singular, d.resource, `${singular}.${d.group}`, `${d.resource}.${d.group}`];
}

/** The kind whose resource `name` names (`ds`, `DaemonSet`, `daemonsets.apps`), if any. */
export function kindOfResource(name: string): TargetKind | undefined {
  const lower = name.toLowerCase();
  return TARGET_KINDS.find((k) => resourceNames(k).includes(lower));
}

/** An ownerReference, as the objects the operator reads carry it. */
type OwnerLike = { kind: string; name: string; uid: string; controller?: boolean };

/**
 * The workload controlling an object (a pod, a ControllerRevision, a ReplicaSet), if it is of a kind a
 * guard can target. An object whose controller is a ReplicaSet is a Deployment's pod (KindDescriptor.podOwner
 * 'replicaSet'): `replicaSetOf` reads that ReplicaSet (from a cache) and the workload is its controller.
 * Without it, or with the ReplicaSet not known, such an object has no workload.
 */
export function controllingWorkload(
  m: { ownerReferences?: ReadonlyArray<OwnerLike> },
  replicaSetOf?: (owner: OwnerLike) => { ownerReferences?: ReadonlyArray<OwnerLike> } | undefined,
): { kind: TargetKind; name: string; uid: string } | undefined {
  const owner = m.ownerReferences?.find((o) => o.controller);
  if (!owner) return undefined;
  if (isTargetKind(owner.kind)) return { kind: owner.kind, name: owner.name, uid: owner.uid };
  if (owner.kind !== REPLICASET_KIND || !replicaSetOf) return undefined;
  const rs = replicaSetOf(owner);
  const workload = rs ? controllingWorkload(rs) : undefined;
  return workload && KINDS[workload.kind].podOwner === 'replicaSet' ? workload : undefined;
}

/** The kind of a pod's controller for workloads of `kind`: the kind itself, or a ReplicaSet (KindDescriptor.podOwner). */
export function podControllerKind(kind: TargetKind): string {
  return KINDS[kind].podOwner === 'controller' ? kind : REPLICASET_KIND;
}

/**
 * The kinds a status reports a list or count of, among the `chosen` ones: the original kind always (a
 * reader from before kinds reads status.daemonSets and status.matchedDaemonSets), the others when chosen.
 */
export function reportedKinds(chosen: readonly TargetKind[]): TargetKind[] {
  return TARGET_KINDS.filter((k) => KINDS[k].original || chosen.includes(k));
}

/** How a message names a workload `name` of `kind`: the name alone for the original kind (as before kinds), else kind and name. */
export function namedWorkload(kind: TargetKind, name: string): string {
  return KINDS[kind].original ? name : `${kind} ${name}`;
}

/**
 * Orders kinds: the original kind first, then the others by name (a policy's plan settles which of two
 * workloads keeps a name in this order).
 */
export function compareKinds(a: TargetKind, b: TargetKind): number {
  return a === b ? 0 : KINDS[a].original ? -1 : KINDS[b].original ? 1 : a.localeCompare(b);
}
