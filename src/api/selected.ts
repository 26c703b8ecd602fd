/**
 * The status records a guard with a selector keeps per workload it selects, one list per kind
 * (status.daemonSets, status.statefulSets), each record naming its workload by a field of its kind.
 */
import { DEFAULT_KIND, KINDS, kindDescriptor, type KindDescriptor } from './kinds.js';

/** The guard that guards a selected workload, and that guard's verdict. */
export interface SelectedRecord {
  guard: string;
  state: string;
  cause?: string;
  owner?: string;
  /** Set when another guard guards it instead: HandWrittenGuard or OverlappingSelector. */
  conflict?: string;
}

export type SelectedDaemonSet = SelectedRecord & { daemonSet: string };
export type SelectedStatefulSet = SelectedRecord & { statefulSet: string };

/**
 * A workload named in a status list: by a field named for its kind (`daemonSet` or `statefulSet`), so a
 * reader written when only DaemonSets were chosen reads the same field it always did.
 */
export type KindNamed = { daemonSet: string; statefulSet?: never } | { statefulSet: string; daemonSet?: never };

/** Workload `name` of `kind`, named in a status list by the field of its kind (an unknown kind: the default kind's). */
export function kindNamed(kind: string, name: string): KindNamed {
  const { field } = kindDescriptor(kind) ?? KINDS[DEFAULT_KIND];
  const named: Partial<Record<KindDescriptor['field'], string>> = { [field]: name };
  return named as KindNamed;
}
