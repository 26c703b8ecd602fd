/**
 * For the verdict (verdict.ts): what the workload's own spec and controller say of its rollout, and how
 * the verdict honours it. Each is a kind-neutral fact of the TargetView, set by the kind's adapter:
 * - a pause its spec asks for (`pausedBySpec`): a configured wait, Healthy with a line saying so, and
 *   never Suspect or Stalled (the clock of time without progress does not run meanwhile: track.ts);
 * - its own progress deadline, which its controller reports exceeded (`ownDeadlineExceeded`): the
 *   verdict on a rollout in flight is then Stalled, never less, and says that this deadline fired;
 * - the Recreate strategy: every old pod was gone before a new one started, so a stall is an outage.
 */
import { fmtDuration, fmtRev, truncate, units } from '../messages.js';
import type { RolloutStatus } from '../../api/types.js';
import type { TargetView } from '../observation.js';
import type { Verdict } from './pass.js';

/** A rollout in flight while the workload's spec pauses it: Healthy, with the pause said, and no cause. */
export function pausedVerdict(target: TargetView, rollout: RolloutStatus, v: Verdict): void {
  v.state = 'Healthy';
  v.cause = '';
  v.owner = '';
  // A changed template with no revision yet: the revision tracked is the one the pods already run.
  const to = target.templateAwaitsResume
    ? `before its changed template rolls out (no revision for it yet; the pods run ${fmtRev(rollout.toRevision)})`
    : `on the way to ${fmtRev(rollout.toRevision)}`;
  v.message = `Paused ${to}: ${target.updated}/${units(target.kind, target.desired)} updated, ${target.available}/${target.desired} available; ${target.pausedBySpec ?? 'paused by its spec'}. A configured wait, not a stall`;
}

/** The line a Healthy target adds while its spec pauses it; empty when it is not paused. */
export function pausedLine(target: TargetView): string {
  return target.pausedBySpec ? `; paused: ${target.pausedBySpec}` : '';
}

/**
 * The sentence that opens the verdict when the workload's controller reports its own deadline passed:
 * which deadline fired, in the controller's words, and whether the guard's has passed too.
 */
export function ownDeadlineSentence(target: TargetView, guardDeadlineMs: number, guardDeadlinePassed: boolean): string {
  const own = target.ownDeadlineExceeded;
  if (!own) return '';
  const since = own.since ? ` since ${own.since}` : '';
  const words = own.message ? `: "${truncate(own.message, 200)}"` : '';
  const guard = guardDeadlinePassed
    ? `the guard's progressDeadlineSeconds (${fmtDuration(guardDeadlineMs)}) has passed too`
    : `before the guard's progressDeadlineSeconds (${fmtDuration(guardDeadlineMs)})`;
  return `The ${target.kind}'s own progressDeadlineSeconds (${fmtDuration(own.seconds * 1000)}) fired: its controller reports Progressing=False, ProgressDeadlineExceeded${since}${words}; ${guard}. `;
}

/**
 * What a stall or a suspicion means under the Recreate strategy: the old pods were all removed before
 * the new ones started, so the workload is down, not partly rolled out. Empty for other strategies.
 */
export function outageNote(target: TargetView, state: Verdict['state']): string {
  if (target.strategy !== 'Recreate' || (state !== 'Stalled' && state !== 'Suspect')) return '';
  if (target.available >= target.desired) return '';
  return ` The ${target.kind} uses the Recreate strategy: every old pod was removed before any new one started, so this is an outage, not a partial rollout (${target.available}/${target.desired} available).`;
}
