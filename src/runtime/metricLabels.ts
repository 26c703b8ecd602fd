/**
 * The label values of the metrics (metrics.ts): the closed lists exported at 0 from the start, and the
 * labels of each guard's series, kept so that they can be replaced and removed with the guard.
 */
import { KINDS } from '../api/kinds.js';
import type { GuardTarget } from '../reconcile/ports.js';
import type { UndoSkip } from '../api/types.js';
import type { EvictionOutcome } from '../domain/eviction.js';
import type { UndoOutcome } from '../domain/undo.js';

/**
 * Every value of the counters' closed label lists, exported at 0 from the start: a dashboard's panel
 * shows "none yet" rather than "no data", and `increase()` sees the first one. A Record, so that `tsc`
 * names a value added to the API and missing here.
 */
export const UNDO_OUTCOMES = Object.keys({
  Applied: 1,
  AlreadyAtTarget: 1,
  TemplateChanged: 1,
  OptedOut: 1,
  NotUndone: 1,
  Failed: 1,
} satisfies Record<UndoOutcome['kind'], 1>);
export const EVICTION_OUTCOMES = Object.keys({ Evicted: 1, Refused: 1, Gone: 1 } satisfies Record<EvictionOutcome['kind'], 1>);
export const UNDO_SKIP_REASONS = Object.keys({
  NotTheRevision: 1,
  PreviousRevisionFails: 1,
  OwnedByController: 1,
  OptedOut: 1,
  AlreadyUndone: 1,
  NoEarlierRevision: 1,
  RevisionGone: 1,
  RestoresUndoneRevision: 1,
  ClockSkew: 1,
  UnavailableAtStartUnlisted: 1,
} satisfies Record<UndoSkip['reason'], 1>);

/** The label values a guard's series were given, so that they can be removed with the guard. */
export interface GuardSeries {
  /** The target its state gauge is labelled with. */
  target?: GuardTarget;
  /** The target its undo result gauge is labelled with, while it has one. */
  undoTarget?: GuardTarget;
  /** The labels of its one verdict series. */
  verdict?: VerdictLabels;
  /** JSON [kind, target, cause, owner] of each stall counter series. */
  stalls: Set<string>;
  /** JSON [kind, target, cause] of each failure counter series. */
  failures: Set<string>;
}

/** The labels that name a guard's target on each of its series. */
export interface TargetLabels {
  kind: string;
  target: string;
  daemonset: string;
}

/** The labels of a guard's verdict series: its target's, and its state, cause and owner. */
export type VerdictLabels = TargetLabels & { namespace: string; guard: string; state: string; cause: string; owner: string };

/**
 * `kind` and `target` name the workload of any kind. `daemonset` is the label these series had when a
 * guard could watch only a DaemonSet: it keeps that name for a DaemonSet, so existing dashboards and
 * alerts keep their series, and is empty for another kind, so that a query by DaemonSet name never
 * matches a StatefulSet that happens to share it.
 */
export function targetLabels(t: Readonly<GuardTarget>): TargetLabels {
  return { kind: t.kind, target: t.name, daemonset: KINDS[t.kind].original ? t.name : '' };
}

export function sameTarget(a: Readonly<GuardTarget>, b: Readonly<GuardTarget>): boolean {
  return a.kind === b.kind && a.name === b.name;
}
