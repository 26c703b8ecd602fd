/**
 * The label values of each guard's series (metrics.ts), kept so that they can be replaced and removed
 * with the guard.
 */
import { KINDS } from '../api/kinds.js';
import type { GuardTarget } from '../reconcile/ports.js';

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
