/**
 * metav1.Condition helpers. Conditions are a list-map keyed by `type`; `lastTransitionTime` moves only
 * when `status` flips (a changed reason or message is not a transition, so readers can tell how long a
 * condition has held), and the caller learns whether anything changed, because Events are emitted only
 * on change.
 */
import type { Condition } from '../api/types.js';

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
