/**
 * The words a message uses for each kind of target: what kubectl calls it, what one unit of its rollout
 * is, and where kubectl shows each way its rollout falls short. A message takes its words from here,
 * never from a comparison of kind names, so a StatefulSet's guard speaks of the StatefulSet, its pods and
 * `kubectl … sts`, and a kind added to TARGET_KINDS does not compile until its words are written.
 */
import type { TargetKind } from '../api/types.js';
import type { TargetView } from './observation.js';

export interface KindWords {
  /** kubectl's short name for the resource: `kubectl get ds`. */
  short: string;
  /** One unit of the rollout: a DaemonSet's node, a StatefulSet's pod (one per ordinal). */
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
  /** What `kubectl get` shows of the target's counters now. */
  columns: (t: TargetView) => string;
}

/** Every kind's words: `tsc` refuses a kind without them. */
export const KIND_WORDS: Readonly<Record<TargetKind, KindWords>> = {
  DaemonSet: {
    short: 'ds',
    unit: 'node',
    desired: 'DESIRED',
    notUpdated: 'kubectl get ds: UP-TO-DATE below DESIRED',
    notAvailable: 'kubectl get ds: UP-TO-DATE/AVAILABLE below DESIRED',
    readyNotAvailable: 'kubectl get ds: READY above AVAILABLE',
    fewerTargeted: 'kubectl get ds: DESIRED dropped',
    noneTargeted: 'kubectl get ds: DESIRED 0',
    columns: (t) => `kubectl get ds shows DESIRED ${t.desired}, READY ${t.ready}, UP-TO-DATE ${t.updated}, AVAILABLE ${t.available}`,
  },
  StatefulSet: {
    short: 'sts',
    unit: 'pod',
    desired: 'replicas',
    notUpdated: 'kubectl get sts -o yaml: status.updatedReplicas below spec.replicas',
    notAvailable: 'kubectl get sts: READY below the replicas; status.updatedReplicas or availableReplicas short of them',
    readyNotAvailable: 'kubectl get sts -o yaml: status.availableReplicas below status.readyReplicas',
    fewerTargeted: 'kubectl get sts: fewer replicas',
    noneTargeted: 'kubectl get sts: 0 replicas',
    columns: (t) => `kubectl get sts shows READY ${t.ready}/${t.desired}`,
  },
};

/** The words for `kind`. */
export const wordsOf = (kind: TargetKind): KindWords => KIND_WORDS[kind];
