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
import { fmtRev, truncate, unitWord } from '../messages.js';
import { event } from './plannedEvents.js';
import { sameRevision } from '../revisions.js';
import { ConditionSet, rolledBackCondition } from '../conditions.js';
import { Reason } from '../../api/reasons.js';
import { failuresFirst } from '../causes.js';
import { STATUS_LIST_CAP } from '../split.js';
import type { BlockedNode, GuardStatus, PlannedEvent, TargetKind } from '../../api/types.js';
import type { Decision } from '../decision.js';
import type { Plan, Planned, Tracking } from './pass.js';

/** The condition type that exists only while the guard's deadline cannot outlast minReadySeconds. */
export const DEADLINE_TOO_SHORT = 'DeadlineTooShort';

/** The status a pass starts from, with the conditions being rebuilt and the Events of opening it. */
export interface Opened {
  base: GuardStatus;
  conds: ConditionSet;
  events: PlannedEvent[];
}

/**
 * Opens the pass's status from the tracked rollout: the counters and the per-node split, the current
 * revision with its template generation, and the TargetFound Event. A DaemonSet on OnDelete ends the
 * pass here: there is no rollout to guard by deadline.
 */
export function openStatus(pass: Tracking): Opened | { decision: Decision } {
  const { prev, policy, tracked: t, nowIso } = pass;
  const conds = new ConditionSet(prev.conditions, nowIso, policy.generation);
  const base = countersStatus(pass);
  keepRevisionPair(pass, base);
  const events: PlannedEvent[] = [];
  if (prev.state === 'Unknown' && prev.conditions?.some((c) => c.type === 'Ready' && c.reason === Reason.TargetNotFound)) {
    events.push(event('Normal', Reason.TargetFound, `${t.target.kind} ${t.target.name} found; guarding its rollouts`, false));
  }
  if (t.target.strategy === 'OnDelete') return { decision: onDelete(t.target.kind, base, conds, events) };
  return { base, conds, events };
}

function countersStatus({ prev, policy, tracked: t }: Tracking): GuardStatus {
  const { target, split } = t;
  const base: GuardStatus = {
    ...prev,
    observedGeneration: policy.generation,
    desired: target.desired,
    current: target.current,
    updated: target.updated,
    ready: target.ready,
    available: target.available,
    generations: split.generations.slice(0, STATUS_LIST_CAP),
    blockedNodes: split.blocked.slice(0, STATUS_LIST_CAP),
    blockedNodeCount: split.blocked.length,
    emptyNodes: split.empty.slice(0, STATUS_LIST_CAP),
    emptyNodeCount: split.empty.length,
  };
  delete base.inCharge;
  if (t.curRef) base.currentRevision = { ...t.curRef };
  return base;
}

/**
 * The pair (revision, template generation) moves together. Before the controller observes a new
 * template there is no revision for it yet: keep the old pair, or the revision's arrival would look
 * like a DaemonSet cache behind. A guard with no pair yet does not know which template generation an
 * unobserved DaemonSet's current revision belongs to (a guard created right after a template change
 * or an undo), so it records none until the controller observes one.
 */
function keepRevisionPair({ obs, prev, tracked: t }: Tracking, base: GuardStatus): void {
  const { target } = t;
  const templateMoved =
    target.templateGeneration !== undefined &&
    prev.templateGeneration !== undefined &&
    target.templateGeneration !== prev.templateGeneration;
  const revisionMoved =
    t.curRef !== undefined && prev.currentRevision !== undefined && !sameRevision(t.curRef, prev.currentRevision, obs.revisions);
  // Kept, `base` has the previous pair already (or none).
  const keepPair = !t.observed && !revisionMoved && (templateMoved || prev.templateGeneration === undefined);
  if (keepPair) return;
  if (target.templateGeneration !== undefined) base.templateGeneration = target.templateGeneration;
  else delete base.templateGeneration;
}

function onDelete(kind: TargetKind, base: GuardStatus, conds: ConditionSet, events: PlannedEvent[]): Decision {
  const msg = `${kind} uses updateStrategy OnDelete: pods change only when deleted by hand, so there is no rollout to guard by deadline`;
  const changed = conds.set({ type: 'Ready', status: 'False', reason: Reason.OnDeleteStrategy, message: msg });
  conds.set({ type: 'Progressing', status: 'Unknown', reason: Reason.OnDeleteStrategy, message: msg });
  conds.set({ type: 'Stalled', status: 'Unknown', reason: Reason.OnDeleteStrategy, message: msg });
  if (changed) events.push(event('Warning', Reason.OnDeleteStrategy, msg, false));
  const status: GuardStatus = { ...base, state: 'Unknown', cause: '', message: msg };
  delete status.rollout;
  rolledBackCondition(conds, status);
  return { status: { ...status, conditions: conds.list }, events };
}

/** Phase 5: see the top of this file. Returns the status and any condition-driven Events. */
export function buildStatus(
  pass: Planned,
  { base, conds }: Opened,
): { status: GuardStatus; events: PlannedEvent[]; blocked: BlockedNode[] } {
  const { tracked: t, verdict: v, plan: p } = pass;
  const events: PlannedEvent[] = [];
  const message = v.message + p.messageSuffix;
  stateConditions(pass, conds, message);
  deadlineCondition(pass, conds, events);

  const status: GuardStatus = { ...base, state: v.state, cause: v.cause, owner: v.owner, message: truncate(message, 2000) };
  const blocked = nodeLists(pass, base, status);
  if (t.rollout) status.rollout = t.rollout;
  else delete status.rollout;
  if (t.unobserved) status.unobserved = t.unobserved;
  else delete status.unobserved;
  planFields(p, status);
  delete status.inCharge;
  if (!status.owner) delete status.owner;
  rolledBackCondition(conds, status);
  status.conditions = conds.list;
  return { status, events, blocked };
}

/** Ready, Progressing and Stalled, from the state. */
function stateConditions(pass: Planned, conds: ConditionSet, message: string): void {
  const { state, cause } = pass.verdict;
  if (state === 'Healthy' || state === 'RolledBack') {
    conds.set({
      type: 'Ready',
      status: cause === 'NoNodesMatched' ? 'False' : 'True',
      reason: cause === 'NoNodesMatched' ? Reason.NoNodesMatched : Reason.TargetHealthy,
      message,
    });
    conds.set({ type: 'Progressing', status: 'True', reason: Reason.RolloutCompleteReason, message });
    conds.set({ type: 'Stalled', status: 'False', reason: Reason.NotStalled, message: 'no rollout is stalled' });
  } else if (state === 'Failed') {
    failedConditions(pass, conds, message);
  } else if (state === 'Stalled') {
    stalledConditions(pass, conds, message);
  } else {
    conds.set({ type: 'Ready', status: 'False', reason: Reason.TargetUnhealthy, message: `target is ${state}` });
    conds.set({
      type: 'Progressing',
      status: 'True',
      reason: state === 'Suspect' ? Reason.NoProgress : pass.verdict.baking ? Reason.Baking : Reason.NewRevisionRolling,
      message,
    });
    conds.set({
      type: 'Stalled',
      status: 'False',
      reason: Reason.NotStalled,
      message: state === 'Suspect' ? `suspect: ${message}` : 'rollout is moving',
    });
  }
}

function failedConditions({ spec, tracked: t, verdict: { cause } }: Planned, conds: ConditionSet, message: string): void {
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
}

function stalledConditions({ spec, tracked: t, verdict: v }: Planned, conds: ConditionSet, message: string): void {
  const { cause } = v;
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
}

/** DeadlineTooShort while progressDeadlineSeconds does not outlast minReadySeconds, announced when it appears. */
function deadlineCondition({ spec, tracked: t }: Planned, conds: ConditionSet, events: PlannedEvent[]): void {
  const minReady = t.target.minReadySeconds;
  if (minReady <= 0 || spec.progressDeadlineSeconds > minReady) {
    conds.drop(DEADLINE_TOO_SHORT);
    return;
  }
  const msg = `progressDeadlineSeconds ${spec.progressDeadlineSeconds} is not longer than the ${t.target.kind}'s minReadySeconds ${minReady}: every ${unitWord(t.target.kind, false)} waits ${minReady}s by design. The guard never counts that wait as a stall; set progressDeadlineSeconds above ${minReady}, as Deployments require.`;
  if (conds.set({ type: DEADLINE_TOO_SHORT, status: 'True', reason: Reason.DeadlineNotAboveMinReadySeconds, message: msg })) {
    events.push(event('Warning', Reason.DeadlineNotAboveMinReadySeconds, msg, false));
  }
}

/** The blocked and empty nodes, failures first; returns every blocked node in that order, uncapped. */
function nodeLists({ attribution: a }: Planned, base: GuardStatus, status: GuardStatus): BlockedNode[] {
  // Attribution may name more nodes than the split did (nodes that are down): the counts follow it.
  const blocked = failuresFirst(a.blocked);
  status.blockedNodes = blocked.slice(0, STATUS_LIST_CAP);
  status.blockedNodeCount = Math.max(a.blocked.length, base.blockedNodeCount ?? 0);
  status.emptyNodes = failuresFirst(a.empty).slice(0, STATUS_LIST_CAP);
  status.emptyNodeCount = Math.max(a.empty.length, base.emptyNodeCount ?? 0);
  return blocked;
}

/** What the plan records: the last undo, the undo plan, why an undo is skipped, a repeated revision. */
function planFields(p: Plan, status: GuardStatus): void {
  if (p.lastUndo) status.lastUndo = p.lastUndo;
  if (p.undoPlan) status.undoPlan = p.undoPlan;
  else delete status.undoPlan;
  if (p.undoSkipped) status.undoSkipped = p.undoSkipped;
  else delete status.undoSkipped;
  if (p.repeatedRevision) status.repeatedRevision = p.repeatedRevision;
  if (p.forcedRollback) status.forcedRollback = p.forcedRollback;
}
