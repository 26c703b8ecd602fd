/**
 * The forced rollback of a StatefulSet after an undo (decide/forcedRollback.ts): under OrderedReady the
 * controller never replaces a pod of the undone revision that never became Ready, so the guard evicts
 * each, one at a time (status.forcedRollback). Every eviction is recorded before it is made (`result` Requested) and after.
 */
export interface ForcedRollback {
  /** The undone revision's hash: the pods on it are the ones evicted. */
  forHash: string;
  evictions: Eviction[];
}

export interface Eviction {
  pod: string;
  uid: string;
  at: string;
  /** Requested (recorded, not answered yet), Evicted, Refused (a PodDisruptionBudget, 429) or Gone. */
  result: 'Requested' | 'Evicted' | 'Refused' | 'Gone';
  /** The API server's words on a refusal. */
  message?: string;
  /** Attempts on this pod so far (refusals are retried with backoff). */
  attempts: number;
}

/** Evictions kept in status: the latest; a StatefulSet rarely has more stuck pods than this. */
export const EVICTIONS_CAP = 20;
