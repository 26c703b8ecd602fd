/**
 * The cluster's kube-controller-manager and kube-scheduler: loopback only, no leader election, the
 * controllers a real cluster's pods and nodes depend on, optionally the node-lifecycle controllers with
 * short timings and a raised API QPS.
 *
 * @module
 */
import path from 'node:path';
import { SERVICE_CIDR } from './apiServer.js';
import { httpGet } from './http.js';
import { paths } from './paths.js';
import type { ComponentSpec } from './processes.js';
import { KUBELET_LEASE_SECONDS, monitorGraceFor, type State } from './state.js';

/**
 * Node-health timings of a cluster created with {@link NODE_LIFECYCLE_ENV}. Upstream defaults (kubelet
 * lease 40 s renewed every 10 s, grace period 50 s) scaled down five-fold so a dead node is noticed in
 * seconds, keeping upstream's ratio: five lease renewals fit in the grace period, so a kwok delayed by a
 * busy machine for a few seconds does not make a healthy node flap to Unknown.
 */
export const NODE_LIFECYCLE_TIMINGS = {
  /** kwok's `--node-lease-duration-seconds`; kwok renews the node Lease every quarter of it (2 s). */
  leaseDurationSeconds: 8,
  /** KCM `--node-monitor-grace-period`: no Lease renewal (or status heartbeat) seen for this long → Unknown. */
  monitorGracePeriodSeconds: 10,
  /** KCM `--node-monitor-period`: how often the controller checks every node. */
  monitorPeriodSeconds: 1,
} as const;

/** The controllers the controller manager runs on every cluster (the node-lifecycle timings add two). */
export const CONTROLLERS = [
  'daemonset',
  'statefulset-controller',
  'serviceaccount',
  'serviceaccount-token-controller',
  'root-ca-certificate-publisher-controller',
  'namespace',
  'garbagecollector',
  'deployment',
  'replicaset',
  'resourcequota',
  'node-lifecycle-controller',
  'persistentvolume-binder-controller',
  'persistentvolumeclaim-protection-controller',
  'persistentvolume-protection-controller',
  'disruption-controller',
] as const;

/** Client rate flags; the controller manager and the scheduler share one rate (RG_CONTROLLER_QPS). */
function apiQpsFlags(state: State): string[] {
  return state.controllerQps ? [`--kube-api-qps=${state.controllerQps}`, `--kube-api-burst=${state.controllerQps * 2}`] : [];
}

/** The controller manager's command line and readiness check. */
export function controllerManagerSpec(state: State): ComponentSpec {
  const p = paths();
  const { ports } = state;
  const saKey = path.join(p.pki, 'sa.key');
  const apiQps = apiQpsFlags(state);
  return {
    name: 'kube-controller-manager',
    args: [
      `--kubeconfig=${p.kubeconfig}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${ports.controllerManager}`,
      // resourcequota: without it a ResourceQuota's status stays empty and admission lets every pod
      // past it, unlike any real cluster.
      // serviceaccount, serviceaccount-token and root-ca-certificate-publisher: what ServiceAccount admission
      // and the token volume it adds need (the account, its token, the kube-root-ca.crt ConfigMap);
      // node-lifecycle always, to lift TaintNodesByCondition's not-ready taint from a new node (upstream
      // timings unless nodeLifecycle shortens them; pod eviction only then).
      // statefulset, and the volume controllers a StatefulSet's claims need as in a real cluster: the
      // persistent volume binder (a WaitForFirstConsumer claim binds to a static PV once the scheduler
      // picks a node) and the PVC and PV protection finalizers (a claim in use is not removed under its
      // pod). disruption: a PodDisruptionBudget's status, without which every eviction is refused.
      `--controllers=${[...CONTROLLERS, ...(state.nodeLifecycle ? ['podgc', 'taint-eviction-controller'] : [])].join(',')}`,
      `--service-account-private-key-file=${saKey}`,
      `--root-ca-file=${path.join(p.pki, 'apiserver.crt')}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      ...nodeLeaseFlags(state),
      ...(state.nodeLifecycle ? nodeLifecycleFlags() : []),
      ...apiQps,
    ],
    ready: async () => (await httpGet(`https://127.0.0.1:${ports.controllerManager}/healthz`)).status === 200,
  };
}

/** The scheduler's command line and readiness check. */
export function schedulerSpec(state: State): ComponentSpec {
  const p = paths();
  const { ports } = state;
  const apiQps = apiQpsFlags(state);
  return {
    name: 'kube-scheduler',
    args: [
      `--kubeconfig=${p.kubeconfig}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${ports.scheduler}`,
      ...apiQps,
    ],
    ready: async () => (await httpGet(`https://127.0.0.1:${ports.scheduler}/healthz`)).status === 200,
  };
}

/**
 * The node Lease kwok keeps and the grace period the controller manager allows it: the short timings of
 * a nodeLifecycle cluster first (its tests time node deaths), else a raised Lease with a grace period in
 * upstream's ratio to it, else a kubelet's 40 s and the controller manager's default grace period.
 */
export function nodeLeaseTimings(state: Pick<State, 'nodeLifecycle' | 'nodeLeaseSeconds'>): {
  leaseSeconds: number;
  graceSeconds?: number;
} {
  if (state.nodeLifecycle)
    return { leaseSeconds: NODE_LIFECYCLE_TIMINGS.leaseDurationSeconds, graceSeconds: NODE_LIFECYCLE_TIMINGS.monitorGracePeriodSeconds };
  if (state.nodeLeaseSeconds) return { leaseSeconds: state.nodeLeaseSeconds, graceSeconds: monitorGraceFor(state.nodeLeaseSeconds) };
  return { leaseSeconds: KUBELET_LEASE_SECONDS };
}

/** The controller manager's grace period for {@link nodeLeaseTimings}' Lease; none where its default fits. */
export function nodeLeaseFlags(state: Pick<State, 'nodeLifecycle' | 'nodeLeaseSeconds'>): string[] {
  const { graceSeconds } = nodeLeaseTimings(state);
  return graceSeconds === undefined ? [] : [`--node-monitor-grace-period=${graceSeconds}s`];
}

/**
 * Controller-manager flags of a cluster with {@link State.nodeLifecycle}. The eviction rate is, since the
 * taint-eviction controller split off, the rate at which the node-lifecycle controller *taints* dead nodes
 * `unreachable:NoExecute` (per zone, burst 1): upstream's 0.1/s would taint the second dead node of a
 * pool 10 s after the first. `--node-startup-grace-period` keeps its default (60 s): it only applies to
 * nodes that never reported Ready, and kwok reports within a second of managing a node.
 */
export function nodeLifecycleFlags(): string[] {
  const t = NODE_LIFECYCLE_TIMINGS;
  return [`--node-monitor-period=${t.monitorPeriodSeconds}s`, '--node-eviction-rate=10'];
}
