/**
 * Where an undo reads the template it restores, per place a kind keeps its history
 * (KindDescriptor.undo.from): a ControllerRevision (DaemonSets, StatefulSets: the template is its
 * `data.spec.template`, its hash its `controller-revision-hash` label) or a ReplicaSet (Deployments: the
 * template is its `spec.template`, which carries the `pod-template-hash` label its controller added, and
 * its hash is that label).
 *
 * What is restored from a ReplicaSet is its template without that label, as `kubectl rollout undo
 * deployment` sends it: the Deployment controller adds it to the pods of the ReplicaSet it matches, and a
 * Deployment template that carried it would select only that ReplicaSet's pods forever after.
 */
import { KINDS } from '../api/kinds.js';
import { POD_TEMPLATE_HASH_LABEL } from '../api/names.js';
import type { TargetKind } from '../api/types.js';
import { controllerRevisionsPath, replicaSetsPath } from './apiPaths.js';
import { revisionHashOf } from './workloadApi.js';

// Raw JSON from the API server, read defensively.
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment */

export interface HistoryApi {
  /** The object's kind, as messages name it. */
  kind: 'ControllerRevision' | 'ReplicaSet';
  /** Its RBAC resource, as a refusal names the right that is missing. */
  resource: string;
  path(namespace: string, name: string): string;
  /** The revision's hash, which pods of it carry (see KindDescriptor.revisionLabel). */
  hash(raw: any): string | undefined;
  /** The pod template the workload is given back, or undefined when the object holds none. */
  template(raw: any): Record<string, unknown> | undefined;
  /**
   * The controller of a pod made from the revision: the workload itself, or the ReplicaSet (a
   * Deployment's pods are its ReplicaSets').
   */
  podOwner(raw: any, workload: any): { kind: string; name: unknown; uid: unknown };
}

const objectOrUndefined = (x: unknown): Record<string, unknown> | undefined =>
  x && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : undefined;

const HISTORY: Readonly<Record<HistoryApi['kind'], HistoryApi>> = {
  ControllerRevision: {
    kind: 'ControllerRevision',
    resource: 'controllerrevisions',
    path: controllerRevisionsPath,
    hash: (raw) => revisionHashOf(raw),
    template: (raw) => objectOrUndefined(raw?.data?.spec?.template),
    podOwner: (_raw, workload) => ({ kind: String(workload?.kind), name: workload?.metadata?.name, uid: workload?.metadata?.uid }),
  },
  ReplicaSet: {
    kind: 'ReplicaSet',
    resource: 'replicasets',
    path: replicaSetsPath,
    hash(raw) {
      const label = raw?.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL];
      return typeof label === 'string' ? label : undefined;
    },
    template(raw) {
      const template = objectOrUndefined(raw?.spec?.template);
      if (!template) return undefined;
      const copy = structuredClone(template) as { metadata?: { labels?: Record<string, string> } };
      if (copy.metadata?.labels) {
        delete copy.metadata.labels[POD_TEMPLATE_HASH_LABEL];
      }
      return copy;
    },
    podOwner: (raw) => ({ kind: 'ReplicaSet', name: raw?.metadata?.name, uid: raw?.metadata?.uid }),
  },
};

/** Where workloads of `kind` keep the templates an undo restores. */
export function historyApi(kind: TargetKind): HistoryApi {
  return HISTORY[KINDS[kind].undo.from];
}

/**
 * Why the history object must not be copied from, or undefined when it may: its controller is this
 * `kind` with this UID, it carries the hash the decision named (when one is given), and it holds a template.
 */
export function checkRevision(revision: any, name: string, kind: TargetKind, workloadUid: string, hash?: string): string | undefined {
  const history = historyApi(kind);
  const owners: any[] = Array.isArray(revision?.metadata?.ownerReferences) ? revision.metadata.ownerReferences : [];
  const owner = owners.find((o) => o?.controller === true);
  if (owner?.kind !== kind || owner?.uid !== workloadUid) {
    return `${history.kind} ${name} is not controlled by this ${kind} (uid ${workloadUid}; its controller is ${owner ? `${String(owner.kind)} ${String(owner.uid)}` : 'none'}): refusing to copy a template from it`;
  }
  const label = history.hash(revision);
  if (hash !== undefined && label !== hash) {
    return `${history.kind} ${name} carries hash ${String(label)}, not the ${hash} the decision named: refusing to copy a template from it`;
  }
  if (!history.template(revision)) return `${history.kind} ${name} holds no pod template`;
  return undefined;
}
