/**
 * What the writes need to know of each kind of workload a guard targets: where it is served, when its
 * own counters say a rollout is complete, and how its ControllerRevisions and pods name a revision.
 * The rest of an undo (the revision's template put back with `$patch: replace`, as `kubectl rollout
 * undo` does for both kinds) is the same for every kind.
 */
import { HASH_LABEL } from '../api/names.js';
import type { TargetKind } from '../api/types.js';
import { daemonSetsPath, statefulSetsPath } from './apiPaths.js';

// Raw JSON from the API server, read defensively.
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment */

export interface WorkloadApi {
  kind: TargetKind;
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

export const WORKLOAD_API: Readonly<Record<TargetKind, WorkloadApi>> = {
  DaemonSet: {
    kind: 'DaemonSet',
    path: daemonSetsPath,
    rolloutComplete(ds) {
      const s = ds?.status ?? {};
      const desired = Number(s.desiredNumberScheduled ?? 0);
      return observed(ds) && desired > 0 && Number(s.updatedNumberScheduled ?? 0) >= desired && Number(s.numberAvailable ?? 0) >= desired;
    },
    podRevisionLabel: (revision) => revisionHashOf(revision),
  },
  StatefulSet: {
    kind: 'StatefulSet',
    path: statefulSetsPath,
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
    podRevisionLabel: (revision) => String(revision?.metadata?.name ?? ''),
  },
};
