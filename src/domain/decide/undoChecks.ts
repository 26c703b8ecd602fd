/**
 * The checks against an undo, for phase 4 (plan.ts): each names one reason not to undo, in the order a
 * careful person would check them. First whether the guard may undo at all (once per broken revision,
 * not opted out, not owned by another controller, the stall blamed on the new revision), then whether
 * restoring the earlier revision would help and can be trusted.
 */
import { nodeFault } from '../nodeAttribution.js';
import { KINDS } from '../../api/kinds.js';
import { UNDO_OPT_OUT_ANNOTATION } from '../../api/names.js';
import { MAX_CLOCK_SKEW_MS } from '../../api/defaults.js';
import { fmtRev, list, units, unitWord } from '../messages.js';
import { previousFailsNow } from '../compare.js';
import { undoneOn } from '../undo.js';
import { parseTime } from './timing.js';
import type { RevisionRef, RolloutStatus, UndoPlan, UndoRecord, UndoSkip } from '../../api/types.js';
import type { Attribution, TargetObservation, Verdict } from './pass.js';

/** A reason not to undo; `repeated` when the revision was undone before and has been applied again. */
export type Blocker = UndoSkip & { repeated?: boolean };

/** What the checks against an undo read. */
export interface UndoCase {
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

/**
 * The rollout waits on pods left on a revision it superseded (a fix pushed forward, or a second push):
 * the new revision has not been tried, and an undo would leave them stuck the same way. The forced
 * rollback, or a person deleting them, lets the rollout go on; what the new revision does then decides.
 */
const leftoversHoldIt: Check<UndoCase> = ({ obs: { target }, rollout, a }) => {
  if (a.held?.on !== 'superseded') return undefined;
  const pods = a.held.pods.map((p) => p.pod ?? p.node);
  const one = pods.length === 1;
  return {
    reason: 'NotTheRevision',
    message: `${fmtRev(rollout.toRevision)} has not been tried: ${list(pods)} ${one ? 'is' : 'are'} left not Ready on a revision it superseded, and under OrderedReady the ${target.kind} controller waits for ${one ? 'it' : 'them'} before it rolls anything out; an undo would leave ${one ? 'it' : 'them'} stuck the same way (kubectl delete pod ${pods.join(' ')} -n ${target.namespace} lets the rollout go on)`,
  };
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
  const unit = unitWord(obs.target.kind, false);
  if (rollout.restored)
    return {
      reason: 'NoEarlierRevision',
      message: `${fmtRev(rollout.toRevision)} is the revision that ran on every ${unit} before, restored by a person or tool: the guard follows it and does not undo it`,
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
      message: `the template did not change: there is no earlier revision to restore (${fmtRev(rollout.toRevision)} already ran on every ${unit}; a revision failing after its rollout completed is not undone by the guard: kubectl rollout undo restores the one before it, and bakeSeconds keeps a rollout watched after its counters complete)`,
    };
  const gone = `${fmtRev(from)} is no longer in the ${obs.target.kind}'s history (${KINDS[obs.target.kind].undo.from} deleted)`;
  return plan ? undefined : { reason: 'RevisionGone', message: gone };
};

/** Whether the undo is allowed at all: once per revision, not opted out, not owned, blamed on the revision. */
const MAY_UNDO: readonly Check<UndoCase>[] = [
  attemptedBefore,
  undoneByThisGuard,
  undoneOnDaemonSet,
  optedOut,
  ownedByController,
  leftoversHoldIt,
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
const unlistedAtStart: Check<RestoreCase> = ({ obs: { target }, rollout, from }) => {
  const unlisted = rollout.unavailableAtStartUnlisted ?? 0;
  if (unlisted <= 0) return undefined;
  const listed = rollout.unavailableAtStart?.length ?? 0;
  return {
    reason: 'UnavailableAtStartUnlisted',
    message: `${fmtRev(from)} was unavailable on ${units(target.kind, listed + unlisted)} when the rollout started, ${unlisted} more than the guard recorded: it cannot tell which failures are the new revision's and which those ${unitWord(target.kind)}', so it does not undo; the platform team should look at those ${unitWord(target.kind)} and undo by hand if the revision is at fault`,
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
export function undoBlocker(c: UndoCase): Blocker | undefined {
  const refused = firstRefusal(MAY_UNDO, c);
  const from = c.rollout.fromRevision;
  // noEarlierRevision refuses without an earlier revision or a plan.
  if (refused || !from || !c.plan) return refused;
  return firstRefusal(RESTORE_HELPS, { ...c, from, plan: c.plan });
}
