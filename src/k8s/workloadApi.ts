/**
 * What the writes need to know of each kind of workload a guard targets: where it is served, when its
 * own counters say a rollout is complete, and how its ControllerRevisions and pods name a revision.
 * The rest of an undo (the revision's template put back with `$patch: replace`, as `kubectl rollout
 * undo` does for both kinds) is the same for every kind.
 */
import { HASH_LABEL } from '../api/names.js';
import { mapKinds } from '../api/kinds.js';
import type { TargetKind } from '../api/types.js';
import type { SlimWorkload } from '../api/objects.js';
import { workloadsPath } from './apiPaths.js';
import { slimDaemonSet } from './slim.js';
import { slimStatefulSet } from './slimStatefulSet.js';
import { slimDeployment } from './slimDeployment.js';

// Raw JSON from the API server, read defensively.
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment */

export interface WorkloadApi {
  kind: TargetKind;
  /** Its object as read from the API server, slimmed to what is cached of it. */
  slim: (raw: unknown) => SlimWorkload;
  /** The path of the workload (or of the collection, without a name). */
  path(namespace: string, name?: string): string;
  /** The counters of the observed generation say every unit is updated and available. */
  rolloutComplete(raw: any): boolean;
  /**
   * The `controller-revision-hash` label value of a pod of `revision`: a daemon pod carries the hash, a
   * StatefulSet's pod the ControllerRevision's name.
   */
  podRevisionLabel(revision: any): string;
}

/** The hash a ControllerRevision stands for: its hash label, else the suffix of its name (`<owner>-<hash>`). */
export function revisionHashOf(revision: any): string {
  const name = String(revision?.metadata?.name ?? '');
  const label = revision?.metadata?.labels?.[HASH_LABEL];
  return typeof label === 'string' ? label : name.slice(name.lastIndexOf('-') + 1);
}

const observed = (raw: any): boolean => Number(raw?.status?.observedGeneration ?? 0) >= Number(raw?.metadata?.generation ?? 0);

/** What is each kind's own code here: how its object is slimmed, and when its counters say a rollout is complete. */
const KIND_CODE: Readonly<Record<TargetKind, Pick<WorkloadApi, 'slim' | 'rolloutComplete'>>> = {
  DaemonSet: {
    slim: slimDaemonSet,
    rolloutComplete(ds) {
      const s = ds?.status ?? {};
      const desired = Number(s.desiredNumberScheduled ?? 0);
      return observed(ds) && desired > 0 && Number(s.updatedNumberScheduled ?? 0) >= desired && Number(s.numberAvailable ?? 0) >= desired;
    },
  },
  StatefulSet: {
    slim: slimStatefulSet,
    rolloutComplete(sts) {
      const s = sts?.status ?? {};
      const replicas = Number(sts?.spec?.replicas ?? 1);
      return (
        observed(sts) &&
        replicas > 0 &&
        s.updateRevision !== undefined &&
        s.currentRevision === s.updateRevision &&
        Number(s.updatedReplicas ?? 0) >= replicas &&
        Number(s.availableReplicas ?? 0) >= replicas
      );
    },
  },
  Deployment: {
    slim: slimDeployment,
    // As `kubectl rollout status` reads it: every replica updated and available, and no old pod left.
    rolloutComplete(deploy) {
      const s = deploy?.status ?? {};
      const replicas = Number(deploy?.spec?.replicas ?? 1);
      const updated = Number(s.updatedReplicas ?? 0);
      return (
        observed(deploy) &&
        replicas > 0 &&
        updated >= replicas &&
        Number(s.replicas ?? 0) <= updated &&
        Number(s.availableReplicas ?? 0) >= replicas
      );
    },
  },
};

/** What its pods' revision label holds (KindDescriptor.revisionLabelHolds), read from a ControllerRevision. */
const POD_REVISION_LABEL: Readonly<Record<'hash' | 'revisionName', (revision: any) => string>> = {
  hash: (revision) => revisionHashOf(revision),
  revisionName: (revision) => String(revision?.metadata?.name ?? ''),
};

export const WORKLOAD_API: Readonly<Record<TargetKind, WorkloadApi>> = mapKinds((d) => ({
  kind: d.kind,
  ...KIND_CODE[d.kind],
  path: (namespace: string, name?: string) => workloadsPath(d.kind, namespace, name),
  podRevisionLabel: POD_REVISION_LABEL[d.revisionLabelHolds],
}));
