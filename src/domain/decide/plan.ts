/**
 * Phase 4 of decide: plan at most one action. Only a Stalled rollout whose stall the evidence blames
 * on the new revision, on at least one Ready node, is undone, and then at most once per broken revision
 * (counting undos recorded on the DaemonSet by any guard), never on a DaemonSet that opted out or that
 * another controller owns. Every refusal is stated: in the message, in `status.undoSkipped` and, once,
 * as an UndoSkipped Event.
 */
import { nodeFault } from '../nodeAttribution.js';
import { UNDO_OPT_OUT_ANNOTATION } from '../../api/names.js';
import { MAX_CLOCK_SKEW_MS } from '../../api/defaults.js';
import { fmtDuration, fmtRev, list } from '../messages.js';
import { previousFailsNow } from '../compare.js';
import { undoneOn } from '../undo.js';
import { event, iso, parseTime } from './kit.js';
import { EventAction, Reason } from '../../api/reasons.js';
import type { RolloutStatus, UndoPlan, UndoRecord, UndoSkip } from '../../api/types.js';
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

/** The first reason not to undo, in the order a careful person would check them. */
function undoBlocker(
  obs: TargetObservation,
  rollout: RolloutStatus,
  lastUndo: UndoRecord | undefined,
  undone: readonly string[],
  plan: UndoPlan | undefined,
  a: Attribution,
  v: Verdict,
): (UndoSkip & { repeated?: boolean }) | undefined {
  const from = rollout.fromRevision;
  const { ds } = obs;
  if (lastUndo && lastUndo.fromHash === rollout.toRevision.hash && lastUndo.result !== 'Pending') {
    // At most one attempt per broken revision. A revision that was undone and is now rolling out again
    // (a rollout that started after the undo) was re-applied, e.g. by a GitOps tool.
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
  }
  if (undone.includes(rollout.toRevision.hash)) {
    // Undone earlier, before a later revision's undo took lastUndo's place, and now applied again.
    return {
      reason: 'AlreadyUndone',
      message: `${fmtRev(rollout.toRevision)} was already undone by this guard (status.undoneRevisions) and has been applied again; never twice for the same revision`,
      repeated: true,
    };
  }
  const rec = ds.undoRecord;
  if (rec && undoneOn(rec).includes(rollout.toRevision.hash)) {
    const when = rec.from === rollout.toRevision.hash ? ` at ${rec.at} by RolloutGuard ${rec.guard}` : '';
    return {
      reason: 'AlreadyUndone',
      message: `${fmtRev(rollout.toRevision)} was already undone${when} (annotation on the DaemonSet); never twice for the same revision`,
      repeated: true,
    };
  }
  if (ds.undoOptOut) return { reason: 'OptedOut', message: `the DaemonSet is annotated ${UNDO_OPT_OUT_ANNOTATION}=disabled` };
  if (ds.owner)
    return {
      reason: 'OwnedByController',
      message: `the DaemonSet is managed by ${ds.owner.kind}/${ds.owner.name}, which would revert an undo: roll back there`,
    };
  if (a.owner !== 'Revision' || (a.revisionEvidence.length === 0 && a.refusal === undefined)) {
    const whose =
      a.owner === 'Node'
        ? 'the nodes'
        : a.owner === 'ControlPlane'
          ? 'the control plane'
          : a.owner === 'ConfiguredWait'
            ? 'a configured wait'
            : a.owner === 'Configuration'
              ? 'the configuration the revision runs under (maxSurge room, a quota, an admission policy)'
              : 'nothing known';
    const names = [...a.blocked, ...a.empty].filter((x) => x.owner === a.owner).map((x) => x.node);
    const where = names.length > 0 ? `: ${list(names)}` : '';
    const cause = v.cause ? ` (${v.cause}${where})` : '';
    return {
      reason: 'NotTheRevision',
      message: `the stall is blamed on ${whose}${cause}, not on the new revision failing on a Ready node: an undo would not help`,
    };
  }
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
  if (from.hash === rollout.toRevision.hash)
    return { reason: 'NoEarlierRevision', message: 'the template did not change: there is no earlier revision to restore' };
  if (!plan)
    return { reason: 'RevisionGone', message: `${fmtRev(from)} is no longer in the DaemonSet's history (ControllerRevision deleted)` };
  if ((rec && undoneOn(rec).includes(plan.toHash)) || undone.includes(plan.toHash)) {
    const when = rec?.from === plan.toHash ? ` at ${rec.at}` : '';
    return {
      reason: 'RestoresUndoneRevision',
      message: `${fmtRev(from)} is a revision undone as broken${when}: restoring it would invert that undo`,
    };
  }
  const failing = previousFailsNow(
    obs.nodes.filter((n) => !nodeFault(n.health)),
    from.hash,
    rollout.toRevision.hash,
    rollout.unavailableAtStart,
  );
  if (failing.length > 0) {
    return {
      reason: 'PreviousRevisionFails',
      message: `${fmtRev(from)} fails too, now, on ${list(failing)}, where it ran when the rollout started: restoring it would not help (something both revisions depend on may be broken)`,
    };
  }
  const skew = obs.clockSkewMs;
  if (skew !== undefined && Math.abs(skew) > MAX_CLOCK_SKEW_MS) {
    const off = `${(Math.abs(skew) / 1000).toFixed(1)} s ${skew > 0 ? 'behind' : 'ahead of'}`;
    return {
      reason: 'ClockSkew',
      message: `the operator's clock is ${off} the API server's (bound ${MAX_CLOCK_SKEW_MS / 1000} s), so the deadline it measured cannot be trusted; fix time sync on the operator's node and the undo proceeds`,
    };
  }
  return undefined;
}

/** Phase 4: see the top of this file. */
export function planAction({ obs, prev, policy, tracked: t, attribution: a, verdict: v, now }: Judged): Plan {
  const { spec } = policy;
  const out: Plan = { lastUndo: v.lastUndo, messageSuffix: '', events: [] };
  if (prev.repeatedRevision) out.repeatedRevision = prev.repeatedRevision;
  const rollout = t.rollout;
  if (v.state === 'Stalled' && v.cause === 'ControllerNotObserving' && (!rollout || !t.active)) {
    // No rollout started at all: the DaemonSet controller never acted on the change.
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
  const { ds } = obs;
  const deadlineMs = spec.progressDeadlineSeconds * 1000;
  const plan = planUndo(obs, rollout, t.split.onTarget, ds.desired);
  // A Failed verdict rests on the crashes it counted, all on Ready nodes: that is the evidence.
  const evidence: Attribution =
    v.state === 'Failed' ? { ...a, owner: 'Revision', revisionEvidence: (rollout.failures?.nodes ?? []).map((f) => f.node) } : a;
  const blocker = undoBlocker(obs, rollout, out.lastUndo, prev.undoneRevisions ?? [], plan, evidence, v);
  const stalledAt = v.state === 'Failed' ? (parseTime(rollout.failedAt) ?? now) : (parseTime(rollout.lastProgressAt) ?? now) + deadlineMs;
  if (blocker?.repeated) {
    out.repeatedRevision = rollout.toRevision.hash;
    if (prev.repeatedRevision !== rollout.toRevision.hash) {
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
  }
  // The plan is shown whenever one exists, so Report mode and a refused undo still say what an undo
  // would restore; it is validated (dry run) once per broken revision.
  if (plan) out.undoPlan = prev.undoPlan && prev.undoPlan.forHash === plan.forHash ? prev.undoPlan : plan;

  if (blocker) {
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
  if (!plan) return out;
  const target =
    fmtRev({ revision: plan.toRevision, hash: plan.toHash }) +
    (rollout.superseded
      ? ` (the last revision that ran on every node: ${rollout.superseded.map((r) => fmtRev(r)).join(', ')} never did)`
      : '');
  if (out.action?.kind === 'CompareAdmission') {
    out.messageSuffix = ` Comparing with ${fmtRev(rollout.fromRevision)} (a server-side dry run of its pod) before any undo.`;
    out.requeueAfterMs = 1000;
    return out;
  }
  if (spec.onStall.action !== 'Undo') {
    out.messageSuffix = ` Would restore ${target} on ${plan.nodes} node(s) (onStall.action is Report).`;
    if (out.undoPlan && out.undoPlan.dryRun === undefined) {
      out.undoPlan = { ...out.undoPlan, dryRun: 'NotRun' };
      out.action = { kind: 'DryRunUndo', toRevisionName: plan.toRevisionName, toHash: plan.toHash, forHash: plan.forHash };
    }
    return out;
  }
  const undoAt = stalledAt + spec.onStall.delaySeconds * 1000;
  if (now < undoAt) {
    out.messageSuffix = ` Undo to ${target} in ${fmtDuration(undoAt - now)} unless the template changes.`;
    out.requeueAfterMs = undoAt - now;
    return out;
  }
  const nowIso = iso(now);
  if (!(out.lastUndo?.result === 'Pending' && out.lastUndo.fromHash === rollout.toRevision.hash)) {
    const lastUndo: UndoRecord = {
      at: nowIso,
      fromHash: rollout.toRevision.hash,
      toHash: plan.toHash,
      toRevisionName: plan.toRevisionName,
      result: 'Pending',
      message: `undo decided: restore ${target} on ${plan.nodes} node(s); ${evidence.revisionEvidence.length > 0 ? `the new revision fails on ${list(evidence.revisionEvidence)}` : 'the API server refuses the new pods'}`,
    };
    if (rollout.toRevision.revision !== undefined) lastUndo.fromRevision = rollout.toRevision.revision;
    if (plan.toRevision !== undefined) lastUndo.toRevision = plan.toRevision;
    out.lastUndo = lastUndo;
  }
  out.action = {
    kind: 'Undo',
    fromHash: rollout.toRevision.hash,
    toHash: plan.toHash,
    toRevisionName: plan.toRevisionName,
    expectedUid: ds.uid,
    record: {
      from: rollout.toRevision.hash,
      to: plan.toHash,
      at: out.lastUndo?.at ?? nowIso,
      guard: `${ds.namespace}/${policy.name ?? ''}`,
    },
    ...(ds.templateGeneration !== undefined ? { expectedTemplateGeneration: ds.templateGeneration } : {}),
  };
  return out;
}
