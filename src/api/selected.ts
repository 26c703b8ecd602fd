/**
 * The status records a guard with a selector keeps per workload it selects: one list of every kind
 * (status.workloads), each record naming its workload by kind and name; and, for readers written before
 * that list, one list per kind (status.daemonSets, status.statefulSets), each record naming its workload
 * by a field of its kind.
 */
import { DEFAULT_KIND, KINDS, kindDescriptor, type KindDescriptor, type TargetKind } from './kinds.js';

/** The guard that guards a selected workload, and that guard's verdict. */
export interface SelectedRecord {
  guard: string;
  state: string;
  cause?: string;
  owner?: string;
  /** Set when another guard guards it instead: HandWrittenGuard or OverlappingSelector. */
  conflict?: string;
}

/** A workload named by its kind and name, in the lists that hold every kind (status.workloads, a policy's conflicts). */
export interface WorkloadRef {
  kind: TargetKind;
  name: string;
}

/** A selected workload of any kind, as status.workloads holds it. */
export type SelectedWorkload = SelectedRecord & WorkloadRef;

export type SelectedDaemonSet = SelectedRecord & { daemonSet: string };
export type SelectedStatefulSet = SelectedRecord & { statefulSet: string };
export type SelectedDeployment = SelectedRecord & { deployment: string };

/** The same records per kind, as before status.workloads (kept for their readers; a kind's list only when chosen). */
export interface SelectedLists {
  daemonSets?: SelectedDaemonSet[];
  statefulSets?: SelectedStatefulSet[];
  deployments?: SelectedDeployment[];
}

/**
 * A workload named in a status list: by a field named for its kind (`daemonSet` or `statefulSet`), so a
 * reader written when only DaemonSets were chosen reads the same field it always did.
 */
export type KindNamed =
  | { daemonSet: string; statefulSet?: never; deployment?: never }
  | { statefulSet: string; daemonSet?: never; deployment?: never }
  | { deployment: string; daemonSet?: never; statefulSet?: never };

/** Workload `name` of `kind`, named in a status list by the field of its kind (an unknown kind: the default kind's). */
export function kindNamed(kind: string, name: string): KindNamed {
  const { field } = kindDescriptor(kind) ?? KINDS[DEFAULT_KIND];
  const named: Partial<Record<KindDescriptor['field'], string>> = { [field]: name };
  return named as KindNamed;
}
