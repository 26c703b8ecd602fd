/**
 * Phase 5 of decide: build the status and its conditions from the verdict and the plan.
 *
 * Conditions (metav1.Condition; lastTransitionTime moves only when status flips):
 * - Ready, Progressing, Stalled: set on every pass, from the state;
 * - RolledBack: from the last undo, or why a stall is not undone;
 * - DeadlineTooShort: present only while progressDeadlineSeconds is not longer than the DaemonSet's
 *   minReadySeconds (Deployments refuse that pairing; a guard cannot refuse another object's spec, so it
 *   says so and never counts the wait as a stall).
 */
import type { Attribution } from './attribute.js';
import { fmtRev, truncate } from '../messages.js';
import { event } from './kit.js';
import type { ConditionSet } from './settle.js';
import { Reason } from '../../api/reasons.js';
import { failuresFirst } from '../causes.js';
import { STATUS_LIST_CAP } from '../split.js';
import type { Plan } from './plan.js';
import type { Tracked } from './track.js';
import type { GuardSpec, GuardStatus, PlannedEvent } from '../../api/types.js';
import type { Verdict } from './verdict.js';

/** The condition type that exists only while the guard's deadline cannot outlast minReadySeconds. */
export const DEADLINE_TOO_SHORT = 'DeadlineTooShort';

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

/** Phase 5: see the top of this file. Returns the status and any condition-driven Events. */
export function buildStatus(
  base: GuardStatus,
  conds: ConditionSet,
  spec: GuardSpec,
  t: Tracked,
  a: Attribution,
  v: Verdict,
  p: Plan,
): { status: GuardStatus; events: PlannedEvent[] } {
  const events: PlannedEvent[] = [];
  const { state, cause } = v;
  const message = v.message + p.messageSuffix;
  const healthy = state === 'Healthy' || state === 'RolledBack';
  if (healthy) {
    conds.set({
      type: 'Ready',
      status: cause === 'NoNodesMatched' ? 'False' : 'True',
      reason: cause === 'NoNodesMatched' ? Reason.NoNodesMatched : Reason.TargetHealthy,
      message,
    });
    conds.set({ type: 'Progressing', status: 'True', reason: Reason.RolloutCompleteReason, message });
    conds.set({ type: 'Stalled', status: 'False', reason: Reason.NotStalled, message: 'no rollout is stalled' });
  } else if (state === 'Failed') {
    const where = t.rollout ? `rollout to ${fmtRev(t.rollout.toRevision)}` : 'rollout';
    conds.set({
      type: 'Ready',
      status: 'False',
      reason: cause || 'Unknown',
      message: `${where} failed (${cause || 'Unknown'}, Revision at fault); see the Stalled condition`,
    });
    conds.set({
      type: 'Progressing',
      status: 'False',
      reason: Reason.RevisionFailedReason,
      message: `${where}: the new revision crashed after starting on ${t.rollout?.failures?.count ?? 0} Ready node(s) (failedNodesThreshold ${spec.failedNodesThreshold})`,
    });
    conds.set({ type: 'Stalled', status: 'True', reason: cause || 'Unknown', message: truncate(message, 2000) });
  } else if (state === 'Stalled') {
    // The full sentence lives in status.message and the Stalled condition; the others stay short so
    // `kubectl describe` reads well.
    const where = t.active && t.rollout ? `rollout to ${fmtRev(t.rollout.toRevision)}` : 'rollout';
    const whose = v.owner ? `, ${v.owner} at fault` : '';
    conds.set({
      type: 'Ready',
      status: 'False',
      reason: cause || 'Unknown',
      message: `${where} stalled (${cause || 'Unknown'}${whose}); see the Stalled condition`,
    });
    conds.set({
      type: 'Progressing',
      status: 'False',
      reason: Reason.ProgressDeadlineExceeded,
      message: `${where} made no progress for ${spec.progressDeadlineSeconds}s (progressDeadlineSeconds)`,
    });
    conds.set({ type: 'Stalled', status: 'True', reason: cause || 'Unknown', message: truncate(message, 2000) });
  } else {
    conds.set({ type: 'Ready', status: 'False', reason: Reason.TargetUnhealthy, message: `target is ${state}` });
    conds.set({
      type: 'Progressing',
      status: 'True',
      reason: state === 'Suspect' ? Reason.NoProgress : v.baking ? Reason.Baking : Reason.NewRevisionRolling,
      message,
    });
    conds.set({
      type: 'Stalled',
      status: 'False',
      reason: Reason.NotStalled,
      message: state === 'Suspect' ? `suspect: ${message}` : 'rollout is moving',
    });
  }

  const minReady = t.ds.minReadySeconds;
  if (minReady > 0 && spec.progressDeadlineSeconds <= minReady) {
    const msg = `progressDeadlineSeconds ${spec.progressDeadlineSeconds} is not longer than the DaemonSet's minReadySeconds ${minReady}: every node waits ${minReady}s by design. The guard never counts that wait as a stall; set progressDeadlineSeconds above ${minReady}, as Deployments require.`;
    if (conds.set({ type: DEADLINE_TOO_SHORT, status: 'True', reason: Reason.DeadlineNotAboveMinReadySeconds, message: msg })) {
      events.push(event('Warning', Reason.DeadlineNotAboveMinReadySeconds, msg, false));
    }
  } else {
    conds.drop(DEADLINE_TOO_SHORT);
  }

  const status: GuardStatus = { ...base, state, cause, owner: v.owner, message: truncate(message, 2000) };
  // Attribution may name more nodes than the split did (nodes that are down): the counts follow it.
  status.blockedNodes = failuresFirst(a.blocked).slice(0, STATUS_LIST_CAP);
  status.blockedNodeCount = Math.max(a.blocked.length, base.blockedNodeCount ?? 0);
  status.emptyNodes = failuresFirst(a.empty).slice(0, STATUS_LIST_CAP);
  status.emptyNodeCount = Math.max(a.empty.length, base.emptyNodeCount ?? 0);
  if (t.rollout) status.rollout = t.rollout;
  else delete status.rollout;
  if (t.unobserved) status.unobserved = t.unobserved;
  else delete status.unobserved;
  if (p.lastUndo) status.lastUndo = p.lastUndo;
  if (p.undoPlan) status.undoPlan = p.undoPlan;
  else delete status.undoPlan;
  if (p.undoSkipped) status.undoSkipped = p.undoSkipped;
  else delete status.undoSkipped;
  if (p.repeatedRevision) status.repeatedRevision = p.repeatedRevision;
  delete status.inCharge;
  if (!status.owner) delete status.owner;
  rolledBackCondition(conds, status);
  status.conditions = conds.list;
  return { status, events };
}
