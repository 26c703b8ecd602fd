/**
 * The cluster's kube-apiserver: loopback only, static bearer tokens, Node and RBAC authorization, every
 * default admission plugin, and optionally an audit log of writes.
 *
 * @module
 */
import path from 'node:path';
import { etcdClientUrl } from './etcd.js';
import { httpGet } from './http.js';
import { paths } from './paths.js';
import type { ComponentSpec } from './processes.js';
import type { State } from './state.js';

/**
 * Audit policy of a cluster created with `RG_AUDIT_LOG=1`: one Metadata-level record (who, verb, object,
 * response code, time) per write; reads and watches are not recorded.
 */
export const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    verbs: [get, list, watch]
  - level: Metadata
`;

/** The Service IP range; the controller manager is given the same. */
export const SERVICE_CIDR = '10.96.0.0/24';

/** The API server's command line and readiness check (`/readyz` as the admin). */
export function apiServerSpec(state: State): ComponentSpec {
  const p = paths();
  const { ports } = state;
  const saKey = path.join(p.pki, 'sa.key');
  const etcdUrl = etcdClientUrl(ports);
  return {
    name: 'kube-apiserver',
    args: [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      // 1.37 refuses a loopback advertise address while it reconciles the `kubernetes` Service
      // endpoints; nothing here needs in-cluster access to the apiserver, so don't reconcile.
      '--endpoint-reconciler-type=none',
      `--secure-port=${ports.apiserver}`,
      `--cert-dir=${p.pki}`,
      `--token-auth-file=${path.join(p.pki, 'tokens.csv')}`,
      // RBAC rather than the AlwaysAllow default, so the operator's RBAC mistakes show up in tests.
      // Node for the real node's kubelet: it reads only what the pods bound to it reference.
      '--authorization-mode=Node,RBAC',
      // `kubectl logs` on the real node: the API server proves itself to its kubelet with a client
      // certificate of a CA only the kubelet trusts (kwok nodes serve no logs).
      '--kubelet-preferred-address-types=InternalIP',
      `--kubelet-client-certificate=${path.join(p.pki, 'kubelet-client.crt')}`,
      `--kubelet-client-key=${path.join(p.pki, 'kubelet-client.key')}`,
      '--service-account-issuer=https://kubernetes.default.svc',
      `--service-account-key-file=${saKey}`,
      `--service-account-signing-key-file=${saKey}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--allow-privileged=true',
      // Every default admission plugin, as real clusters run them: ServiceAccount (a pod names an account
      // that exists, and gets its token volume) and TaintNodesByCondition (a new node is tainted
      // not-ready until the node-lifecycle controller sees it Ready) among them.
      '--enable-priority-and-fairness=false',
      ...(state.audit ? [`--audit-policy-file=${p.auditPolicy}`, `--audit-log-path=${p.auditLog}`, '--audit-log-format=json'] : []),
    ],
    ready: () => apiServerReady(state),
  };
}

/** Whether the API server answers `/readyz` with 200 (false when it does not answer at all). */
export async function apiServerReady(state: State): Promise<boolean> {
  try {
    const res = await httpGet(`https://127.0.0.1:${state.ports.apiserver}/readyz`, { Authorization: `Bearer ${state.token}` });
    return res.status === 200;
  } catch {
    return false;
  }
}
