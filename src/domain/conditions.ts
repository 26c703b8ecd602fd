/**
 * metav1.Condition helpers. Conditions are a list-map keyed by `type`; `lastTransitionTime` moves only
 * when `status` flips (a changed reason or message is not a transition, so readers can tell how long a
 * condition has held), and the caller learns whether anything changed, because Events are emitted only
 * on change.
 */
import { Reason } from '../api/reasons.js';
import type { Condition, GuardStatus } from '../api/types.js';

/** Condition types this controller owns. Set on every pass, Unknown until known. */
export const CONDITION_TYPES = ['Ready', 'Progressing', 'Stalled', 'RolledBack'] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];

/** A condition without its transition time: what `decide` wants the condition to say. */
export interface DesiredCondition {
  /** One of CONDITION_TYPES for guards; policies have their own. */
  type: ConditionType | (string & {});
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/**
 * Returns a new list with `want` set, preserving order and other conditions. `changed` is true when
 * status, reason or message differ from what was there.
 */
export function setCondition(
  conditions: readonly Condition[],
  want: DesiredCondition,
  now: string,
  observedGeneration: number | undefined,
): { conditions: Condition[]; changed: boolean; flipped: boolean } {
  const prev = conditions.find((c) => c.type === want.type);
  const flipped = !prev || prev.status !== want.status;
  const changed = flipped || prev.reason !== want.reason || prev.message !== want.message;
  const next: Condition = {
    type: want.type,
    status: want.status,
    reason: want.reason,
    message: want.message,
    lastTransitionTime: flipped ? now : prev.lastTransitionTime,
    ...(observedGeneration !== undefined ? { observedGeneration } : {}),
  };
  const out = prev ? conditions.map((c) => (c.type === want.type ? next : c)) : [...conditions, next];
  return { conditions: out, changed, flipped };
}

/** Looks up a condition by type. */
export function getCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** A conditions list being rebuilt for one pass; `set` reports whether anything changed. */
export class ConditionSet {
  list: Condition[];
  constructor(
    prev: readonly Condition[] | undefined,
    private readonly nowIso: string,
    private readonly generation: number,
  ) {
    this.list = [...(prev ?? [])];
  }

  set(c: DesiredCondition): boolean {
    const r = setCondition(this.list, c, this.nowIso, this.generation);
    this.list = r.conditions;
    return r.changed;
  }

  /** Removes a condition that only exists while it applies. */
  drop(type: string): void {
    this.list = this.list.filter((c) => c.type !== type);
  }
}

/** RolledBack condition: True while the DaemonSet runs the revision an undo restored. */
export function rolledBackCondition(conds: Pick<ConditionSet, 'set'>, s: Readonly<GuardStatus>): void {
  const u = s.lastUndo;
  const skip = s.state === 'Stalled' || s.state === 'Failed' ? s.undoSkipped : undefined;
  if (!u || (skip && u.fromHash !== s.rollout?.toRevision.hash)) {
    if (skip) conds.set({ type: 'RolledBack', status: 'False', reason: Reason.UndoSkipped, message: `${skip.reason}: ${skip.message}` });
    else conds.set({ type: 'RolledBack', status: 'False', reason: Reason.NoUndo, message: 'no undo has been made' });
    return;
  }
  const onRestored = s.currentRevision?.hash === u.toHash;
  if ((u.result === 'Applied' || u.result === 'Complete') && onRestored) {
    conds.set({
      type: 'RolledBack',
      status: 'True',
      reason: Reason.UndoApplied,
      message: `${u.message} (undo of ${u.fromHash} at ${u.at})`,
    });
  } else if (u.result === 'RollbackStalled') {
    conds.set({ type: 'RolledBack', status: 'False', reason: Reason.RollbackStalled, message: u.message });
  } else if (u.result === 'Failed') {
    conds.set({ type: 'RolledBack', status: 'False', reason: Reason.UndoFailed, message: u.message });
  } else if (u.result === 'Pending') {
    conds.set({ type: 'RolledBack', status: 'False', reason: Reason.UndoStarted, message: u.message });
  } else {
    conds.set({
      type: 'RolledBack',
      status: 'False',
      reason: Reason.NoUndo,
      message: `last undo (${u.at}) no longer applies: the template changed since`,
    });
  }
}
