/**
 * What `decide` returns: the next status, the Events to announce and at most one action.
 */
import type { BlockedNode, DaemonSetUndoRecord, GuardStatus, PlannedEvent } from '../api/types.js';

/** The at-most-one write a pass may perform besides status. */
export type PlannedAction =
  | {
      kind: 'Undo';
      fromHash: string;
      toHash: string;
      toRevisionName: string;
      /** The workload as it was when decided; act re-reads and refuses if the template moved since. */
      expectedTemplateGeneration?: string;
      /** The same, for a kind without a template generation: the digest of the template decided from. */
      expectedTemplateDigest?: string;
      expectedUid: string;
      /** Written on the DaemonSet in the same patch, so no guard repeats or inverts this undo. */
      record: DaemonSetUndoRecord;
    }
  | { kind: 'DryRunUndo'; toRevisionName: string; toHash: string; forHash: string }
  /** A server-side dry run of a pod of the previous revision on `node`: would admission refuse it too? */
  | { kind: 'CompareAdmission'; revisionName: string; forHash: string; node?: string }
  /** The forced rollback: evict StatefulSet pod `pod` (only while its UID is `uid`), stuck on revision `forHash`. */
  | { kind: 'Evict'; pod: string; uid: string; forHash: string };

/** The output of `decide`. */
export interface Decision {
  status: GuardStatus;
  events: PlannedEvent[];
  action?: PlannedAction;
  /**
   * Every unit found blocked, uncapped and in the status list's order (status.blockedNodes names the
   * first STATUS_LIST_CAP): the next pass's evidence of what was failing before a rollout started.
   * Absent when the pass attributed nothing (no target, suspended, OnDelete).
   */
  blocked?: readonly BlockedNode[];
  /** When to look again even if nothing changes (the next deadline); undefined = only on change. */
  requeueAfterMs?: number;
  /**
   * The observation was set aside until the caches agree (see decide): what it showed, such as nodes
   * that left the targets, is not recorded yet and must be offered again on the next pass.
   */
  deferred?: true;
}
