/**
 * Phase 4 of decide: plan at most one action. Only a Stalled rollout whose stall the evidence blames
 * on the new revision, on at least one Ready node, is undone, and then at most once per broken revision
 * (counting undos recorded on the target by any guard), never on a target that opted out or that another
 * controller owns. Every refusal is stated: in the message, in `status.undoSkipped`
 * and, once, as an UndoSkipped Event. The checks themselves are in undoChecks.ts.
 */
import { fmtDuration, fmtRev, list, unitWord } from '../messages.js';
import { reportedRestore, reportOnly } from './reportOnly.js';
import { event } from './plannedEvents.js';
import { iso, parseTime } from './timing.js';
import { undoBlocker, type Blocker } from './undoChecks.js';
import { EventAction, Reason } from '../../api/reasons.js';
import type { PlannedAction } from '../decision.js';
import type { RolloutStatus, TargetKind, UndoPlan, UndoRecord, UndoSkip } from '../../api/types.js';
import type { Attribution, Judged, Plan, TargetObservation } from './pass.js';

/** What an undo would restore: the revision the rollout started from, by hash, if still in history. */
function planUndo(obs: TargetObservation, rollout: RolloutStatus, onTarget: number, desired: number): UndoPlan | undefined {
  const from = rollout.fromRevision;
  if (!from || from.hash === rollout.toRevision.hash) return undefined;
  const cr = obs.revisions.find((r) => r.hash === from.hash);
  if (!cr) return undefined;
  // Units that would change: every unit not already running the old revision. Counted from the desired
  // count, and from the units themselves: a Deployment's surge pod is a unit of its own beside the old
  // pods, which already make up the desired count.
  const onOld = obs.nodes.filter((n) => n.eligible && n.pods.some((p) => !p.deleting && p.hash === from.hash && p.ready)).length;
  const offOld = obs.nodes.filter((n) => n.eligible && n.pods.length > 0).length - onOld;
  return {
    toRevision: cr.revision,
    toHash: cr.hash,
    toRevisionName: cr.name,
    nodes: Math.max(desired - onOld, onTarget, offOld, 0),
    forHash: rollout.toRevision.hash,
  };
}

/** Phase 4: see the top of this file. */
export function planAction(pass: Judged): Plan {
  const { prev, tracked: t, attribution: a, verdict: v } = pass;
  const out: Plan = { lastUndo: v.lastUndo, messageSuffix: '', events: [] };
  if (prev.repeatedRevision) out.repeatedRevision = prev.repeatedRevision;
  const rollout = t.rollout;
  if (v.state === 'Stalled' && v.cause === 'ControllerNotObserving' && (!rollout || !t.active)) return neverObserved(pass, out);
  // Admission refuses the new pods: ask whether it would refuse the previous revision's too, as early
  // as the refusal is seen, so the answer is there by the deadline. Until it is, nothing is undone.
  if (rollout && t.active && !rollout.rollback && a.compareWith !== undefined) {
    out.action = {
      kind: 'CompareAdmission',
      revisionName: a.compareWith,
      forHash: rollout.toRevision.hash,
      ...(a.compareAdmission ? { node: a.compareAdmission } : {}),
    };
  }
  const verdict = v.state === 'Stalled' || v.state === 'Failed';
  if (!rollout || !t.active || !verdict) {
    if (prev.undoPlan && v.state !== 'Healthy' && v.state !== 'RolledBack') out.undoPlan = prev.undoPlan;
    return out;
  }
  if (rollout.rollback || v.undoInFlight) {
    if (prev.undoPlan) out.undoPlan = prev.undoPlan;
    return out;
  }
  return planStalled(pass, rollout, out);
}

/** No rollout started at all: the target's controller never acted on the change. */
function neverObserved({ obs: { target }, prev, policy: { spec } }: Judged, out: Plan): Plan {
  const skip: UndoSkip = {
    reason: 'NotTheRevision',
    message: `the ${target.kind} controller has not observed the new spec: there is no failing revision to undo, and nothing would carry an undo out`,
  };
  out.undoSkipped = skip;
  if (spec.onStall.action === 'Undo' && prev.state !== 'Stalled') {
    out.events.push(event('Warning', Reason.UndoSkipped, `Not undoing: ${skip.message}`, true, EventAction.Undo));
  }
  return out;
}

/** A stalled or failed rollout of a new revision: the undo, or why not. */
function planStalled(pass: Judged, rollout: RolloutStatus, out: Plan): Plan {
  const { obs, prev, tracked: t, attribution: a, verdict: v } = pass;
  const plan = planUndo(obs, rollout, t.split.onTarget, obs.target.desired);
  // A Failed verdict rests on the crashes it counted, all on Ready nodes: that is the evidence.
  const evidence: Attribution =
    v.state === 'Failed' ? { ...a, owner: 'Revision', revisionEvidence: (rollout.failures?.nodes ?? []).map((f) => f.node) } : a;
  const blocker = undoBlocker({ obs, rollout, lastUndo: out.lastUndo, undone: prev.undoneRevisions ?? [], plan, a: evidence, v });
  if (blocker?.repeated) markRepeated(prev, rollout, blocker, out);
  // The plan is shown whenever one exists, so Report mode and a refused undo still say what an undo
  // would restore; it is validated (dry run) once per broken revision.
  if (plan) out.undoPlan = prev.undoPlan && prev.undoPlan.forHash === plan.forHash ? prev.undoPlan : plan;
  if (blocker) return refuseUndo(pass, rollout, blocker, out);
  if (!plan) return out;
  return scheduleUndo(pass, rollout, plan, evidence, out);
}

/** A revision undone before and applied again: recorded, and announced once. */
function markRepeated(prev: Judged['prev'], rollout: RolloutStatus, blocker: Blocker, out: Plan): void {
  out.repeatedRevision = rollout.toRevision.hash;
  if (prev.repeatedRevision === rollout.toRevision.hash) return;
  out.events.push(
    event(
      'Warning',
      Reason.RepeatedBrokenRevision,
      `${fmtRev(rollout.toRevision)} was already undone (${blocker.message}); not undoing twice`,
      true,
      EventAction.Undo,
    ),
  );
}

/** The undo is refused: said in status.undoSkipped and, in Undo mode, in the message and an Event. */
function refuseUndo({ prev, policy: { spec }, verdict: v }: Judged, rollout: RolloutStatus, blocker: Blocker, out: Plan): Plan {
  out.undoSkipped = { reason: blocker.reason, message: blocker.message };
  // Report mode never undoes: the stall sentence already says whose fault it is.
  if (spec.onStall.action !== 'Undo') return out;
  const verb = blocker.reason === 'NotTheRevision' || blocker.reason === 'OwnedByController' ? 'Not undoing' : 'Undo not possible';
  out.messageSuffix = ` ${verb}: ${blocker.message}.`;
  // Once per refusal: on entering Stalled, or when the reason changes (a node died after the stall).
  const changed = prev.state !== v.state || (prev.undoSkipped !== undefined && prev.undoSkipped.reason !== blocker.reason);
  if (changed && !blocker.repeated) {
    out.events.push(
      event('Warning', Reason.UndoSkipped, `Not undoing ${fmtRev(rollout.toRevision)}: ${blocker.message}`, true, EventAction.Undo),
    );
  }
  return out;
}

/** The revision an undo restores, as the message names it. */
function restoreTarget(rollout: RolloutStatus, plan: UndoPlan, kind: TargetKind): string {
  return (
    fmtRev({ revision: plan.toRevision, hash: plan.toHash }) +
    (rollout.superseded
      ? ` (the last revision that ran on every ${unitWord(kind, false)}: ${rollout.superseded.map((r) => fmtRev(r)).join(', ')} never did)`
      : '')
  );
}

/** Nothing refuses the undo: compare admission first, dry-run it in Report mode, wait out the delay, or undo. */
function scheduleUndo(pass: Judged, rollout: RolloutStatus, plan: UndoPlan, evidence: Attribution, out: Plan): Plan {
  const { policy, verdict: v, now } = pass;
  const { spec } = policy;
  const target = restoreTarget(rollout, plan, pass.obs.target.kind);
  if (out.action?.kind === 'CompareAdmission') {
    out.messageSuffix = ` Comparing with ${fmtRev(rollout.fromRevision)} (a server-side dry run of its pod) before any undo.`;
    out.requeueAfterMs = 1000;
    return out;
  }
  if (spec.onStall.action !== 'Undo') return reportOnly(plan, reportedRestore(pass, rollout, plan, target, out.undoPlan), out);
  const deadlineMs = spec.progressDeadlineSeconds * 1000;
  const stalledAt = v.state === 'Failed' ? (parseTime(rollout.failedAt) ?? now) : (parseTime(rollout.lastProgressAt) ?? now) + deadlineMs;
  const undoAt = stalledAt + spec.onStall.delaySeconds * 1000;
  if (now < undoAt) {
    out.messageSuffix = ` Undo to ${target} in ${fmtDuration(undoAt - now)} unless the template changes.`;
    out.requeueAfterMs = undoAt - now;
    return out;
  }
  const nowIso = iso(now);
  if (!(out.lastUndo?.result === 'Pending' && out.lastUndo.fromHash === rollout.toRevision.hash)) {
    out.lastUndo = pendingUndo(rollout, plan, target, evidence, nowIso, pass.obs.target.kind);
  }
  out.action = undoAction(pass, rollout, plan, out.lastUndo?.at ?? nowIso);
  return out;
}

/** The record of an undo decided in this pass, Pending until the patch is applied. */
function pendingUndo(
  rollout: RolloutStatus,
  plan: UndoPlan,
  target: string,
  evidence: Attribution,
  nowIso: string,
  kind: TargetKind,
): UndoRecord {
  const why =
    evidence.revisionEvidence.length > 0
      ? `the new revision fails on ${list(evidence.revisionEvidence)}`
      : 'the API server refuses the new pods';
  const lastUndo: UndoRecord = {
    at: nowIso,
    fromHash: rollout.toRevision.hash,
    toHash: plan.toHash,
    toRevisionName: plan.toRevisionName,
    result: 'Pending',
    message: `undo decided: restore ${target} on ${plan.nodes} ${unitWord(kind, false)}(s); ${why}`,
  };
  if (rollout.toRevision.revision !== undefined) lastUndo.fromRevision = rollout.toRevision.revision;
  if (plan.toRevision !== undefined) lastUndo.toRevision = plan.toRevision;
  return lastUndo;
}

/** The undo patch, guarded by the workload's uid and its template's generation (or digest), with its record for the workload. */
function undoAction({ obs: { target }, policy }: Judged, rollout: RolloutStatus, plan: UndoPlan, at: string): PlannedAction {
  return {
    kind: 'Undo',
    fromHash: rollout.toRevision.hash,
    toHash: plan.toHash,
    toRevisionName: plan.toRevisionName,
    expectedUid: target.uid,
    record: { from: rollout.toRevision.hash, to: plan.toHash, at, guard: `${target.namespace}/${policy.name ?? ''}` },
    ...(target.templateGeneration !== undefined ? { expectedTemplateGeneration: target.templateGeneration } : {}),
    // A kind without a template generation is held to the template the decision read.
    ...(target.templateGeneration === undefined && target.templateDigest !== undefined
      ? { expectedTemplateDigest: target.templateDigest }
      : {}),
  };
}
