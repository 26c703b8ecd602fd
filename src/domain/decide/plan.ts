/**
 * Phase 4 of decide: plan at most one action. Only a Stalled rollout whose stall the evidence blames
 * on the new revision, on at least one Ready node, is undone, and then at most once per broken revision
 * (counting undos recorded on the target by any guard), never on a target that opted out or that another
 * controller owns. Every refusal is stated: in the message, in `status.undoSkipped`
 * and, once, as an UndoSkipped Event.
 */
import { nodeFault } from '../nodeAttribution.js';
import { UNDO_OPT_OUT_ANNOTATION } from '../../api/names.js';
import { MAX_CLOCK_SKEW_MS } from '../../api/defaults.js';
import { fmtDuration, fmtRev, list } from '../messages.js';
import { reportedRestore, reportOnly } from './reportOnly.js';
import { previousFailsNow } from '../compare.js';
import { undoneOn } from '../undo.js';
import { event } from './plannedEvents.js';
import { iso, parseTime } from './timing.js';
import { EventAction, Reason } from '../../api/reasons.js';
import type { PlannedAction } from '../decision.js';
import type { RevisionRef, RolloutStatus, UndoPlan, UndoRecord, UndoSkip } from '../../api/types.js';
import type { Attribution, Judged, Plan, TargetObservation, Verdict } from './pass.js';

/** What an undo would restore: the revision the rollout started from, by hash, if still in history. */
function planUndo(obs: TargetObservation, rollout: RolloutStatus, onTarget: number, desired: number): UndoPlan | undefined {
  const from = rollout.fromRevision;
  if (!from || from.hash === rollout.toRevision.hash) return undefined;
  const cr = obs.revisions.find((r) => r.hash === from.hash);
  if (!cr) return undefined;
  // Nodes that would change: every node not already running the old revision.
  const onOld = obs.nodes.filter((n) => n.eligible && n.pods.some((p) => !p.deleting && p.hash === from.hash && p.ready)).length;
  return {
    toRevision: cr.revision,
    toHash: cr.hash,
    toRevisionName: cr.name,
    nodes: Math.max(desired - onOld, onTarget, 0),
    forHash: rollout.toRevision.hash,
  };
}

/** A reason not to undo; `repeated` when the revision was undone before and has been applied again. */
type Blocker = UndoSkip & { repeated?: boolean };

/** What the checks against an undo read. */
interface UndoCase {
  obs: TargetObservation;
  rollout: RolloutStatus;
  lastUndo: UndoRecord | undefined;
  /** status.undoneRevisions. */
  undone: readonly string[];
  plan: UndoPlan | undefined;
  a: Attribution;
  v: Verdict;
}

/** An undo case once an earlier revision to restore is known and still in history. */
interface RestoreCase extends UndoCase {
  from: RevisionRef;
  plan: UndoPlan;
}

type Check<C> = (c: C) => Blocker | undefined;

/** The first check of `checks` that refuses. */
function firstRefusal<C>(checks: readonly Check<C>[], c: C): Blocker | undefined {
  for (const check of checks) {
    const blocker = check(c);
    if (blocker) return blocker;
  }
  return undefined;
}

/** At most one attempt per broken revision, as this guard's last undo records it. */
const attemptedBefore: Check<UndoCase> = ({ rollout, lastUndo }) => {
  if (!lastUndo || lastUndo.fromHash !== rollout.toRevision.hash || lastUndo.result === 'Pending') return undefined;
  // A revision that was undone and is now rolling out again (a rollout that started after the undo) was
  // re-applied, e.g. by a GitOps tool.
  const undone = lastUndo.result === 'Applied' || lastUndo.result === 'Complete' || lastUndo.result === 'RollbackStalled';
  const reapplied = (parseTime(rollout.startedAt) ?? 0) > (parseTime(lastUndo.at) ?? 0);
  if (undone && reapplied) {
    return {
      reason: 'AlreadyUndone',
      message: `${fmtRev(rollout.toRevision)} was already undone once (at ${lastUndo.at}) and has been applied again; never twice for the same revision`,
      repeated: true,
    };
  }
  return {
    reason: 'AlreadyUndone',
    message: `an undo of ${fmtRev(rollout.toRevision)} was already attempted at ${lastUndo.at} (${lastUndo.result}: ${lastUndo.message}); not retrying for the same revision`,
  };
};

/** Undone earlier, before a later revision's undo took lastUndo's place, and now applied again. */
const undoneByThisGuard: Check<UndoCase> = ({ rollout, undone }) =>
  undone.includes(rollout.toRevision.hash)
    ? {
        reason: 'AlreadyUndone',
        message: `${fmtRev(rollout.toRevision)} was already undone by this guard (status.undoneRevisions) and has been applied again; never twice for the same revision`,
        repeated: true,
      }
    : undefined;

/** Undone by any guard, as the record on the DaemonSet says. */
const undoneOnDaemonSet: Check<UndoCase> = ({ obs, rollout }) => {
  const rec = obs.target.undoRecord;
  if (!rec || !undoneOn(rec).includes(rollout.toRevision.hash)) return undefined;
  const when = rec.from === rollout.toRevision.hash ? ` at ${rec.at} by RolloutGuard ${rec.guard}` : '';
  return {
    reason: 'AlreadyUndone',
    message: `${fmtRev(rollout.toRevision)} was already undone${when} (annotation on the ${obs.target.kind}); never twice for the same revision`,
    repeated: true,
  };
};

const optedOut: Check<UndoCase> = ({ obs: { target: t } }) =>
  t.undoOptOut ? { reason: 'OptedOut', message: `the ${t.kind} is annotated ${UNDO_OPT_OUT_ANNOTATION}=disabled` } : undefined;

const ownedByController: Check<UndoCase> = ({ obs: { target } }) =>
  target.owner
    ? {
        reason: 'OwnedByController',
        message: `the ${target.kind} is managed by ${target.owner.kind}/${target.owner.name}, which would revert an undo: roll back there`,
      }
    : undefined;

const OWNER_WORDS: Record<string, string> = {
  Node: 'the nodes',
  ControlPlane: 'the control plane',
  ConfiguredWait: 'a configured wait',
  Configuration: "the configuration the revision runs under (maxSurge room, a quota, an admission policy, a claim's storage)",
};

/** The evidence must blame the new revision: failing on a Ready node, or refused by the API server. */
const notTheRevision: Check<UndoCase> = ({ a, v }) => {
  if (a.owner === 'Revision' && (a.revisionEvidence.length > 0 || a.refusal !== undefined)) return undefined;
  const whose = OWNER_WORDS[a.owner] ?? 'nothing known';
  const names = [...a.blocked, ...a.empty].filter((x) => x.owner === a.owner).map((x) => x.node);
  const where = names.length > 0 ? `: ${list(names)}` : '';
  const cause = v.cause ? ` (${v.cause}${where})` : '';
  return {
    reason: 'NotTheRevision',
    message: `the stall is blamed on ${whose}${cause}, not on the new revision failing on a Ready node: an undo would not help`,
  };
};

/** There must be an earlier revision, different from the new one and still in the DaemonSet's history. */
const noEarlierRevision: Check<UndoCase> = ({ obs, rollout, plan }) => {
  const from = rollout.fromRevision;
  if (rollout.restored)
    return {
      reason: 'NoEarlierRevision',
      message: `${fmtRev(rollout.toRevision)} is the revision that ran on every node before, restored by a person or tool: the guard follows it and does not undo it`,
    };
  if (!from)
    return {
      reason: 'NoEarlierRevision',
      message: 'the revision this rollout started from is unknown (the guard first saw it mid-rollout with no older pods)',
    };
  // The template is the one the guard last saw on every node: pods lost, a node added, or a revision
  // failing after its rollout completed and baked. Undo restores a template that changed, nothing older.
  if (from.hash === rollout.toRevision.hash)
    return {
      reason: 'NoEarlierRevision',
      message: `the template did not change: there is no earlier revision to restore (${fmtRev(rollout.toRevision)} already ran on every node; a revision failing after its rollout completed is not undone by the guard: kubectl rollout undo restores the one before it, and bakeSeconds keeps a rollout watched after its counters complete)`,
    };
  const gone = `${fmtRev(from)} is no longer in the ${obs.target.kind}'s history (ControllerRevision deleted)`;
  return plan ? undefined : { reason: 'RevisionGone', message: gone };
};

/** Whether the undo is allowed at all: once per revision, not opted out, not owned, blamed on the revision. */
const MAY_UNDO: readonly Check<UndoCase>[] = [
  attemptedBefore,
  undoneByThisGuard,
  undoneOnDaemonSet,
  optedOut,
  ownedByController,
  notTheRevision,
  noEarlierRevision,
];

/** Restoring a revision undone as broken would invert that undo. */
const restoresUndone: Check<RestoreCase> = ({ obs, undone, from, plan }) => {
  const rec = obs.target.undoRecord;
  if (!(rec && undoneOn(rec).includes(plan.toHash)) && !undone.includes(plan.toHash)) return undefined;
  const when = rec?.from === plan.toHash ? ` at ${rec.at}` : '';
  return {
    reason: 'RestoresUndoneRevision',
    message: `${fmtRev(from)} is a revision undone as broken${when}: restoring it would invert that undo`,
  };
};

/** The previous revision failing now, where it ran at the start, would fail again once restored. */
const previousFails: Check<RestoreCase> = ({ obs, rollout, from }) => {
  const failing = previousFailsNow(
    obs.nodes.filter((n) => !nodeFault(n.health)),
    from.hash,
    rollout.toRevision.hash,
    rollout.unavailableAtStart,
  );
  if (failing.length === 0) return undefined;
  return {
    reason: 'PreviousRevisionFails',
    message: `${fmtRev(from)} fails too, now, on ${list(failing)}, where it ran when the rollout started: restoring it would not help (something both revisions depend on may be broken)`,
  };
};

/** Nodes failing before the rollout went unrecorded (track.ts): a failure there may be the node's. */
const unlistedAtStart: Check<RestoreCase> = ({ rollout, from }) => {
  const unlisted = rollout.unavailableAtStartUnlisted ?? 0;
  if (unlisted <= 0) return undefined;
  const listed = rollout.unavailableAtStart?.length ?? 0;
  return {
    reason: 'UnavailableAtStartUnlisted',
    message: `${fmtRev(from)} was unavailable on ${listed + unlisted} nodes when the rollout started, ${unlisted} more than the guard recorded: it cannot tell which failures are the new revision's and which those nodes', so it does not undo; the platform team should look at those nodes and undo by hand if the revision is at fault`,
  };
};

/** The deadline was measured on the operator's clock: it must agree with the API server's. */
const clockSkewed: Check<RestoreCase> = ({ obs }) => {
  const skew = obs.clockSkewMs;
  if (skew === undefined || Math.abs(skew) <= MAX_CLOCK_SKEW_MS) return undefined;
  const off = `${(Math.abs(skew) / 1000).toFixed(1)} s ${skew > 0 ? 'behind' : 'ahead of'}`;
  return {
    reason: 'ClockSkew',
    message: `the operator's clock is ${off} the API server's (bound ${MAX_CLOCK_SKEW_MS / 1000} s), so the deadline it measured cannot be trusted; fix time sync on the operator's node and the undo proceeds`,
  };
};

/** Whether restoring the earlier revision would help and can be trusted, and whether the guard may do it. */
const RESTORE_HELPS: readonly Check<RestoreCase>[] = [restoresUndone, previousFails, unlistedAtStart, clockSkewed];

/** The first reason not to undo, in the order a careful person would check them. */
function undoBlocker(c: UndoCase): Blocker | undefined {
  const refused = firstRefusal(MAY_UNDO, c);
  const from = c.rollout.fromRevision;
  // noEarlierRevision refuses without an earlier revision or a plan.
  if (refused || !from || !c.plan) return refused;
  return firstRefusal(RESTORE_HELPS, { ...c, from, plan: c.plan });
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

/** No rollout started at all: the DaemonSet controller never acted on the change. */
function neverObserved({ prev, policy: { spec } }: Judged, out: Plan): Plan {
  const skip: UndoSkip = {
    reason: 'NotTheRevision',
    message:
      'the DaemonSet controller has not observed the new spec: there is no failing revision to undo, and nothing would carry an undo out',
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
function restoreTarget(rollout: RolloutStatus, plan: UndoPlan): string {
  return (
    fmtRev({ revision: plan.toRevision, hash: plan.toHash }) +
    (rollout.superseded
      ? ` (the last revision that ran on every node: ${rollout.superseded.map((r) => fmtRev(r)).join(', ')} never did)`
      : '')
  );
}

/** Nothing refuses the undo: compare admission first, dry-run it in Report mode, wait out the delay, or undo. */
function scheduleUndo(pass: Judged, rollout: RolloutStatus, plan: UndoPlan, evidence: Attribution, out: Plan): Plan {
  const { policy, verdict: v, now } = pass;
  const { spec } = policy;
  const target = restoreTarget(rollout, plan);
  if (out.action?.kind === 'CompareAdmission') {
    out.messageSuffix = ` Comparing with ${fmtRev(rollout.fromRevision)} (a server-side dry run of its pod) before any undo.`;
    out.requeueAfterMs = 1000;
    return out;
  }
  if (spec.onStall.action !== 'Undo') return reportOnly(plan, reportedRestore(pass, rollout, plan, target), out);
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
    out.lastUndo = pendingUndo(rollout, plan, target, evidence, nowIso);
  }
  out.action = undoAction(pass, rollout, plan, out.lastUndo?.at ?? nowIso);
  return out;
}

/** The record of an undo decided in this pass, Pending until the patch is applied. */
function pendingUndo(rollout: RolloutStatus, plan: UndoPlan, target: string, evidence: Attribution, nowIso: string): UndoRecord {
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
    message: `undo decided: restore ${target} on ${plan.nodes} node(s); ${why}`,
  };
  if (rollout.toRevision.revision !== undefined) lastUndo.fromRevision = rollout.toRevision.revision;
  if (plan.toRevision !== undefined) lastUndo.toRevision = plan.toRevision;
  return lastUndo;
}

/** The undo patch, guarded by the DaemonSet's uid and template generation, with its record for the DaemonSet. */
function undoAction({ obs: { target }, policy }: Judged, rollout: RolloutStatus, plan: UndoPlan, at: string): PlannedAction {
  return {
    kind: 'Undo',
    fromHash: rollout.toRevision.hash,
    toHash: plan.toHash,
    toRevisionName: plan.toRevisionName,
    expectedUid: target.uid,
    record: { from: rollout.toRevision.hash, to: plan.toHash, at, guard: `${target.namespace}/${policy.name ?? ''}` },
    ...(target.templateGeneration !== undefined ? { expectedTemplateGeneration: target.templateGeneration } : {}),
  };
}
