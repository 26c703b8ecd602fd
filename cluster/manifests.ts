/**
 * The DaemonSet, StatefulSet, Deployment and RolloutGuard manifests the tests, the bench and the demo
 * apply: one builder each, so that every workload a guard is tried on has the same shape and differs only
 * where a caller says.
 *
 * A DaemonSet here has the labels `app: <name>` (its own, its selector's and its pods'), a RollingUpdate
 * strategy (maxUnavailable 1, maxSurge 0 unless given), pods that stop within a second unless told
 * (terminationGracePeriodSeconds 1, so a rollout is not paced by a grace period no test means) and one
 * container, with resource requests (which the scheduler counts against the node's allocatable) wherever
 * a caller gives them.
 *
 * @module
 */
import { API_VERSION, APPS_API_VERSION, DAEMONSET_KIND, DEPLOYMENT_KIND, GUARD_KIND, STATEFULSET_KIND } from '../src/api/names.js';

/** A manifest as kubectl applies it. */
export type Manifest = Record<string, unknown>;

/** The container every pod of the DaemonSet runs. */
export interface ContainerOptions {
  name: string;
  image: string;
  /** Replaces the image's entrypoint (kwok ignores it; a real node's runtime runs it). */
  command?: string[];
  /**
   * `resources.requests`; left out, the container requests nothing, as on a real node, whose allocatable is
   * the machine's own and where a request sized for a kwok pool would decide where a pod fits.
   */
  requests?: { cpu: string; memory: string };
  /** `resources.limits`, e.g. a memory limit that the kernel's OOM killer enforces on a real node. */
  limits?: Record<string, string>;
  /** The container's readinessProbe (kwok ignores it; a real node's kubelet runs it). */
  readinessProbe?: Record<string, unknown>;
  volumeMounts?: Array<Record<string, unknown>>;
}

/** Options for {@link daemonSetManifest}; what is left out is left out of the manifest too. */
export interface DaemonSetOptions {
  name: string;
  namespace: string;
  container: ContainerOptions;
  /** Run in order before {@link container}. */
  initContainers?: Array<{ name: string; image: string }>;
  /** `rollingUpdate.maxUnavailable`; default 1. */
  maxUnavailable?: number | string;
  /** `rollingUpdate.maxSurge`; default 0. */
  maxSurge?: number | string;
  /** A Ready pod counts as available only after this long. */
  minReadySeconds?: number;
  /** The pods' terminationGracePeriodSeconds; default 1, so that an old pod is gone within a second. */
  terminationGracePeriodSeconds?: number;
  /** The pods' nodeSelector. */
  nodeSelector?: Record<string, string>;
  /** Confines the pods, by required node affinity, to the nodes whose label `key` has one of `values`. */
  nodeAffinity?: { key: string; values: readonly string[] };
  tolerations?: Array<Record<string, unknown>>;
  volumes?: Array<Record<string, unknown>>;
  ownerReferences?: Array<Record<string, unknown>>;
}

/** A toleration of every taint with `key` and `effect`, whatever its value. */
export function toleration(key: string, effect = 'NoSchedule'): Record<string, unknown> {
  return { key, operator: 'Exists', effect };
}

/** A RollingUpdate DaemonSet manifest (see the module comment for what every one of them has). */
export function daemonSetManifest(o: DaemonSetOptions): Manifest {
  const labels = { app: o.name };
  return {
    apiVersion: APPS_API_VERSION,
    kind: DAEMONSET_KIND,
    metadata: {
      name: o.name,
      namespace: o.namespace,
      labels,
      ...(o.ownerReferences !== undefined ? { ownerReferences: o.ownerReferences } : {}),
    },
    spec: {
      selector: { matchLabels: labels },
      ...(o.minReadySeconds !== undefined ? { minReadySeconds: o.minReadySeconds } : {}),
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: o.maxUnavailable ?? 1, maxSurge: o.maxSurge ?? 0 } },
      template: { metadata: { labels }, spec: podSpec(o) },
    },
  };
}

/** Options for {@link statefulSetManifest}: the pod as a DaemonSet's, and the StatefulSet's own fields. */
export interface StatefulSetOptions extends Omit<DaemonSetOptions, 'maxUnavailable' | 'maxSurge'> {
  replicas: number;
  /** Default OrderedReady, as the API server defaults it. */
  podManagementPolicy?: 'OrderedReady' | 'Parallel';
}

/**
 * A RollingUpdate StatefulSet manifest whose pods are shaped as {@link daemonSetManifest}'s are, with a
 * headless Service name of its own name (the Service itself is not needed for the controller to run it).
 */
export function statefulSetManifest(o: StatefulSetOptions): Manifest {
  const labels = { app: o.name };
  return {
    apiVersion: APPS_API_VERSION,
    kind: STATEFULSET_KIND,
    metadata: { name: o.name, namespace: o.namespace, labels },
    spec: {
      serviceName: o.name,
      replicas: o.replicas,
      podManagementPolicy: o.podManagementPolicy ?? 'OrderedReady',
      selector: { matchLabels: labels },
      ...(o.minReadySeconds !== undefined ? { minReadySeconds: o.minReadySeconds } : {}),
      updateStrategy: { type: 'RollingUpdate' },
      template: { metadata: { labels }, spec: podSpec(o) },
    },
  };
}

/** Options for {@link deploymentManifest}: the pod as a DaemonSet's, and the Deployment's own fields. */
export interface DeploymentOptions extends Omit<DaemonSetOptions, 'maxUnavailable' | 'maxSurge'> {
  replicas: number;
  /** Default RollingUpdate, as the API server defaults it. */
  strategy?: 'RollingUpdate' | 'Recreate';
  /** `rollingUpdate.maxSurge` (RollingUpdate only); left out, the API server's default (25 %). */
  maxSurge?: number | string;
  /** `rollingUpdate.maxUnavailable` (RollingUpdate only); left out, the API server's default (25 %). */
  maxUnavailable?: number | string;
  /** The Deployment's own `progressDeadlineSeconds`; left out, the API server's default (600). */
  progressDeadlineSeconds?: number;
  /** `spec.paused`: template changes wait for the resume. */
  paused?: boolean;
  /** Old ReplicaSets kept; left out, the API server's default (10). */
  revisionHistoryLimit?: number;
}

/**
 * A Deployment manifest whose pods are shaped as {@link daemonSetManifest}'s are. Its strategy is
 * RollingUpdate unless told, with `rollingUpdate` written only when a caller gives maxSurge or
 * maxUnavailable (otherwise the API server's 25 % each).
 */
export function deploymentManifest(o: DeploymentOptions): Manifest {
  const labels = { app: o.name };
  const rolling = {
    ...(o.maxSurge !== undefined ? { maxSurge: o.maxSurge } : {}),
    ...(o.maxUnavailable !== undefined ? { maxUnavailable: o.maxUnavailable } : {}),
  };
  const strategy =
    o.strategy === 'Recreate'
      ? { type: 'Recreate' }
      : { type: 'RollingUpdate', ...(Object.keys(rolling).length > 0 ? { rollingUpdate: rolling } : {}) };
  return {
    apiVersion: APPS_API_VERSION,
    kind: DEPLOYMENT_KIND,
    metadata: {
      name: o.name,
      namespace: o.namespace,
      labels,
      ...(o.ownerReferences !== undefined ? { ownerReferences: o.ownerReferences } : {}),
    },
    spec: {
      replicas: o.replicas,
      selector: { matchLabels: labels },
      strategy,
      ...(o.minReadySeconds !== undefined ? { minReadySeconds: o.minReadySeconds } : {}),
      ...(o.progressDeadlineSeconds !== undefined ? { progressDeadlineSeconds: o.progressDeadlineSeconds } : {}),
      ...(o.revisionHistoryLimit !== undefined ? { revisionHistoryLimit: o.revisionHistoryLimit } : {}),
      ...(o.paused !== undefined ? { paused: o.paused } : {}),
      template: { metadata: { labels }, spec: podSpec(o) },
    },
  };
}

function podSpec(o: DaemonSetOptions): Manifest {
  const c = o.container;
  const resources = {
    ...(c.requests !== undefined ? { requests: { ...c.requests } } : {}),
    ...(c.limits !== undefined ? { limits: { ...c.limits } } : {}),
  };
  const container = {
    name: c.name,
    image: c.image,
    ...(c.command !== undefined ? { command: c.command } : {}),
    ...(c.readinessProbe !== undefined ? { readinessProbe: c.readinessProbe } : {}),
    ...(Object.keys(resources).length > 0 ? { resources } : {}),
    ...(c.volumeMounts !== undefined ? { volumeMounts: c.volumeMounts } : {}),
  };
  return {
    ...(o.nodeAffinity !== undefined ? { affinity: requiredNodeAffinity(o.nodeAffinity.key, o.nodeAffinity.values) } : {}),
    ...(o.nodeSelector !== undefined ? { nodeSelector: o.nodeSelector } : {}),
    ...(o.tolerations !== undefined ? { tolerations: o.tolerations } : {}),
    terminationGracePeriodSeconds: o.terminationGracePeriodSeconds ?? 1,
    ...(o.initContainers !== undefined ? { initContainers: o.initContainers } : {}),
    containers: [container],
    ...(o.volumes !== undefined ? { volumes: o.volumes } : {}),
  };
}

function requiredNodeAffinity(key: string, values: readonly string[]): Manifest {
  return {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key, operator: 'In', values: [...values] }] }],
      },
    },
  };
}

/** Options for {@link rolloutGuardManifest}. */
export interface GuardOptions {
  name: string;
  namespace: string;
  /** The workload guarded; default {@link name}. */
  target?: string;
  /** The workload's kind; default DaemonSet. */
  kind?: typeof DAEMONSET_KIND | typeof STATEFULSET_KIND | typeof DEPLOYMENT_KIND;
  /** Spec fields besides `targetRef` (a `targetRef` here replaces it). */
  spec?: Record<string, unknown>;
}

/** A RolloutGuard manifest targeting a DaemonSet (or, with `kind`, a StatefulSet or Deployment) of the same namespace. */
export function rolloutGuardManifest(o: GuardOptions): Manifest {
  return {
    apiVersion: API_VERSION,
    kind: GUARD_KIND,
    metadata: { name: o.name, namespace: o.namespace },
    spec: { targetRef: { kind: o.kind ?? DAEMONSET_KIND, name: o.target ?? o.name }, ...o.spec },
  };
}
