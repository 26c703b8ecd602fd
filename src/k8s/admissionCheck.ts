/**
 * Admission by comparison: would the API server refuse a pod of the previous revision too?
 *
 * When admission (Pod Security, a ValidatingAdmissionPolicy, a webhook, a LimitRange or a quota)
 * refuses the new pods, an undo helps only if the previous revision's pods are admitted. The question is
 * answered exactly by a server-side dry run (`dryRun=All`) of a pod built as the DaemonSet controller
 * would build it from the previous ControllerRevision: the same template, labels and owner, pinned to
 * the node. Nothing is persisted; every admission plugin and webhook runs (webhooks that declare
 * side effects refuse dry runs, which reads as not verified).
 *
 * It needs `create` on pods in the DaemonSet's namespace. The install grants it beside `patch
 * daemonsets`, which already lets the operator put any template on every node; without it the answer is
 * NotVerified, said in status, and no undo is made on the strength of the refusal alone.
 */
import { KINDS } from '../api/kinds.js';
import type { TargetKind } from '../api/types.js';
import { errorMessage } from '../reconcile/portErrors.js';
import { truncate } from '../domain/messages.js';
import type { AdmissionOutcome } from '../domain/compare.js';
import { type ApiClient } from './apiClient.js';
import { ApiError, isConflict, isForbidden, isNotFound } from './apiErrors.js';
import { podsPath } from './apiPaths.js';
import { checkRevision, historyApi } from './historyApi.js';
import { WORKLOAD_API } from './workloadApi.js';

// Raw JSON from the API server, read defensively.
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment */

/** RBAC's refusal, as opposed to an admission plugin's: the operator may not create pods at all. */
const RBAC_DENIED = /cannot create resource "pods"/;

export class AdmissionCheck {
  constructor(private readonly client: ApiClient) {}

  /** Dry-runs a pod of ControllerRevision `revisionName` of target `kind` `namespace/name` on `node`. */
  async compare(
    kind: TargetKind,
    namespace: string,
    name: string,
    revisionName: string,
    node: string | undefined,
  ): Promise<AdmissionOutcome> {
    let revision: any;
    let ds: any;
    try {
      revision = await this.client.request('GET', historyApi(kind).path(namespace, revisionName));
      ds = await this.client.request('GET', WORKLOAD_API[kind].path(namespace, name));
    } catch (e) {
      if (isNotFound(e) || isForbidden(e))
        return { result: 'NotVerified', message: `could not read ${revisionName} or the ${kind}: ${errorMessage(e)}` };
      throw e;
    }
    const refused = checkRevision(revision, revisionName, kind, String(ds?.metadata?.uid));
    if (refused) return { result: 'NotVerified', message: refused };
    try {
      await this.client.request('POST', podsPath(namespace), { body: podOf(kind, ds, revision, node), query: { dryRun: 'All' } });
      return { result: 'Accepted', message: 'admitted' };
    } catch (e) {
      if (isForbidden(e) && RBAC_DENIED.test(errorMessage(e))) {
        return {
          result: 'NotVerified',
          message: `the operator may not create pods (even as a dry run) in namespace ${namespace}: grant it create on pods to compare (${truncate(errorMessage(e), 200)})`,
        };
      }
      // Admission refusals come as 403 (Pod Security, quota, policies), 400 (webhooks) or 422 (LimitRange).
      if (e instanceof ApiError && e.statusCode >= 400 && e.statusCode < 500 && !isConflict(e) && e.statusCode !== 429) {
        return { result: 'Refused', message: `"${truncate(errorMessage(e), 300)}"` };
      }
      throw e;
    }
  }
}

/**
 * The pod the workload's controller would create from the revision on `node`: the revision's template,
 * its revision label, a controller reference to the pod's controller (the workload, or a Deployment's
 * ReplicaSet), and node affinity to the node (as the DaemonSet controller pins daemon pods).
 * blockOwnerDeletion is left out: it needs the right to set finalizers on the owner, which the operator
 * does not hold.
 */
export function podOf(kind: TargetKind, workload: any, revision: any, node: string | undefined): Record<string, unknown> {
  const history = historyApi(kind);
  const template: any = history.template(revision) ?? {};
  const meta = template.metadata ?? {};
  const spec = structuredClone(template.spec ?? {});
  if (node) {
    spec.affinity = {
      ...(spec.affinity ?? {}),
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }],
        },
      },
    };
  }
  const owner = history.podOwner(revision, { ...workload, kind });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${String(workload?.metadata?.name ?? 'daemon')}-`,
      namespace: workload?.metadata?.namespace,
      labels: { ...(meta.labels ?? {}), [KINDS[kind].revisionLabel]: WORKLOAD_API[kind].podRevisionLabel(revision) },
      ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
      ownerReferences: [{ apiVersion: 'apps/v1', kind: owner.kind, name: owner.name, uid: owner.uid, controller: true }],
    },
    spec,
  };
}
