/**
 * When a guard needs the daemon pods of its DaemonSet, and when the DaemonSet's own status says enough.
 *
 * Pods are what name a blocked node and its reason, but a DaemonSet that is not rolling has nothing to
 * explain: its controller counts every node as updated, ready and available. Caching every daemon pod
 * of every guarded DaemonSet made memory grow with the whole fleet, idle or not; with this predicate
 * pods are cached only while something may be wrong or moving, and the
 * rest is judged from the counters and the ControllerRevisions alone (see split.ts, splitFromCounters).
 *
 * Pods are needed when a guard targets the DaemonSet and either:
 * - the controller's counters are not settled: a spec it has not observed, a node not updated, not
 *   ready or not available, a pod on a node it should not be on (a rollout, a crash after readiness,
 *   a new node being populated, a node losing its pod);
 * - a guard of the DaemonSet still follows a rollout (it is rolling or baking, or Stalled on one), so
 *   evidence against the new revision keeps being collected until the bake ends.
 */
import type { TargetView } from './observation.js';
import type { GuardStatus } from '../api/types.js';

/** The status counters the predicate reads (a DaemonSet's, or a StatefulSet's in its terms). */
export type SettledCounters = Pick<
  TargetView,
  'generation' | 'observedGeneration' | 'desired' | 'current' | 'updated' | 'ready' | 'available' | 'misscheduled' | 'partition'
>;

/**
 * Every unit the controller targets runs an updated, ready, available pod of the observed spec, and no
 * other unit runs one. A partition holding ordinals on another revision is never settled: the counters
 * cannot say which ordinal runs which revision, the pods can.
 */
export function countersSettled(c: SettledCounters): boolean {
  return (
    c.partition === undefined &&
    c.observedGeneration >= c.generation &&
    c.current === c.desired &&
    c.updated >= c.desired &&
    c.ready >= c.desired &&
    c.available >= c.desired &&
    c.misscheduled === 0
  );
}

/** The guard follows a rollout that has not completed (rolling, baking, stalled, rolling back). */
export function followsRollout(status: Readonly<GuardStatus> | undefined): boolean {
  const r = status?.rollout;
  return r !== undefined && !r.completedAt;
}

/**
 * Whether the pods of a DaemonSet must be watched, given the statuses of every guard that targets it.
 * Only guards need pods: a DaemonSet no guard targets is never watched, whatever it does.
 */
export function needsPods(c: SettledCounters, guards: ReadonlyArray<Readonly<GuardStatus> | undefined>): boolean {
  return guards.length > 0 && (!countersSettled(c) || guards.some(followsRollout));
}
