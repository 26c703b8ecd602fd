/**
 * Phase 3 of decide: the verdict. From the tracked rollout and its attribution it picks the state, the
 * cause and the sentence that explains them, the transition Events, and when to look again.
 *
 * Time without progress is measured from the later of the last progress and the end of any wait the
 * user configured (minReadySeconds): a rollout that only waits is progressing, never Suspect or
 * Stalled. A stall of any owner is reported; whether it may be undone is the plan's business.
 */
import { firstDefinite } from './attribute.js';
import { FAILED_QUIET_MS } from '../evidence.js';
import {
  attributionSentence,
  fmtDuration,
  fmtRev,
  heldAtPartition,
  renumbered,
  stallSentence,
  truncate,
  units,
  unitWord,
} from '../messages.js';
import { event } from './plannedEvents.js';
import { failedVerdict, rollbackFailedVerdict } from './failedVerdict.js';
import { outageNote, ownDeadlineSentence, pausedLine, pausedVerdict } from './workloadWord.js';
import { parseTime } from './timing.js';
import { EventAction, Reason } from '../../api/reasons.js';
import { KINDS } from '../../api/kinds.js';
import type { Attributed, Attribution, Tracked, Verdict } from './pass.js';
import type { CauseClass, FaultOwner, GuardSpec, GuardState, GuardStatus, RolloutStatus, UndoRecord } from '../../api/types.js';

/** The guard's view when no rollout is in flight: Healthy (or RolledBack), unless the controller idles. */
function idleVerdict(t: Tracked, prev: Readonly<GuardStatus>, spec: GuardSpec, now: number): Verdict {
  const { target, curRef } = t;
  const v: Verdict = {
    state: prev.state === 'RolledBack' && t.rollout?.rollback ? 'RolledBack' : 'Healthy',
    cause: '',
    owner: '',
    message: t.observed
      ? (heldAtPartition(target, t.split.generations) ??
        `${target.available}/${units(target.kind, target.desired)} available on ${fmtRev(curRef)}${pausedLine(target)}`)
      : `Waiting for the ${target.kind} controller to observe generation ${target.generation}`,
    undoInFlight: false,
    lastUndo: t.lastUndo,
    events: [],
  };
  if (!t.observed) awaitController(t, v);
  if (v.state === 'RolledBack' && t.lastUndo) v.message = `Rolled back to ${fmtRev(curRef)} at ${t.lastUndo.at}; ${v.message}`;
  if (target.desired === 0 && t.observed && KINDS[target.kind].desiredFromPlacement) v.cause = 'NoNodesMatched';

  // A spec change the controller never observes is a rollout that never starts: time it like one.
  if (!t.observed && t.unobserved && unobservedTooLong(t, t.unobserved.since, prev, spec, now, v)) return v;
  const wasInFlight =
    prev.state === 'Progressing' ||
    prev.state === 'Suspect' ||
    prev.state === 'Stalled' ||
    prev.state === 'Failed' ||
    prev.state === 'RollingBack';
  if (wasInFlight && !t.events.some((e) => e.reason === Reason.RolloutComplete)) {
    const reason = prev.state === 'Stalled' && prev.cause === 'ControllerNotObserving' ? Reason.RolloutResumed : Reason.RolloutComplete;
    v.events.push(event('Normal', reason, v.message));
  }
  return v;
}

/** Before the controller observes the DaemonSet's generation: Progressing while it has work left to place. */
function awaitController({ target, curRef }: Tracked, v: Verdict): void {
  if (!curRef || target.observedGeneration === 0) {
    // A DaemonSet its controller has never synced (just created, or created while the controller is
    // down) has no pod and counters that mean nothing: it is being placed, not healthy. Its revision
    // may already be cached: the controller writes it before it creates pods and reports the
    // generation observed.
    v.state = 'Progressing';
    v.message = `Waiting for the ${target.kind} controller to sync ${target.kind} ${target.name} (generation ${target.generation}): ${curRef ? 'no pod yet' : 'no revision and no pod yet'}`;
  } else if (target.updated < target.desired || target.available < target.desired) {
    // A spec change the controller has not observed yet, while the generation it last observed is not
    // on every node (a guard created, or recreated, right after a template change or an undo of a stuck
    // rollout). The counters describe that generation and say some node lacks an updated, available
    // pod. No rollout is tracked yet (one starts only from observed counters), so the guard shows the
    // wait for the controller rather than health, and names the revision it last saw rolling.
    v.state = 'Progressing';
    v.message = `Waiting for the ${target.kind} controller to observe generation ${target.generation} (observed ${target.observedGeneration}); at generation ${target.observedGeneration}, ${target.updated}/${units(target.kind, target.desired)} were updated to ${fmtRev(curRef)} and ${target.available}/${target.desired} available`;
  }
}

/**
 * Times a spec change the controller has not observed since `since`, as a rollout's lack of progress:
 * true when that makes the verdict Suspect or Stalled, otherwise sets when to look again.
 */
function unobservedTooLong(t: Tracked, since: string, prev: Readonly<GuardStatus>, spec: GuardSpec, now: number, v: Verdict): boolean {
  const { target } = t;
  const idle = now - (parseTime(since) ?? now);
  const suspectMs = spec.suspectAfterSeconds * 1000;
  const deadlineMs = spec.progressDeadlineSeconds * 1000;
  const what = `The ${target.kind} controller has not observed generation ${target.generation} (observed ${target.observedGeneration}) since ${since}`;
  const why = attributionSentence({ owner: 'ControlPlane', cause: 'ControllerNotObserving', blocked: [], empty: [], target });
  if (idle >= deadlineMs) {
    Object.assign(v, {
      state: 'Stalled',
      cause: 'ControllerNotObserving',
      owner: 'ControlPlane',
      message: `${what}, over ${fmtDuration(deadlineMs)} (progressDeadlineSeconds). ${why}`,
    });
    if (prev.state !== 'Stalled') v.events.push(event('Warning', Reason.RolloutStalled, v.message));
    return true;
  }
  if (idle >= suspectMs) {
    Object.assign(v, {
      state: 'Suspect',
      cause: 'ControllerNotObserving',
      owner: 'ControlPlane',
      message: `${what}, over ${fmtDuration(suspectMs)}. ${why}`,
    });
    v.requeueAfterMs = deadlineMs - idle;
    if (prev.state !== 'Suspect') v.events.push(event('Warning', Reason.RolloutSuspect, v.message));
    return true;
  }
  v.requeueAfterMs = suspectMs - idle;
  return false;
}

/** Phase 3: see the top of this file. */
export function reachVerdict({ tracked: t, attribution: a, prev, spec, now }: Attributed): Verdict {
  const rollout = t.rollout;
  if (!rollout || !t.active) return idleVerdict(t, prev, spec, now);
  const v: Verdict = { state: 'Progressing', cause: '', owner: '', message: '', undoInFlight: false, lastUndo: t.lastUndo, events: [] };
  const nowIso = new Date(now).toISOString();

  // Our undo restored a revision that crashes too: the undo did not help. It is said, never retried,
  // and never called RolledBack, even if the counters later look complete.
  const f = rollout.failures;
  if (rollout.rollback && f && f.count >= spec.failedNodesThreshold) return rollbackFailedVerdict(t, rollout, f, prev, v);
  if (t.complete) return completedVerdict(t, rollout, v, nowIso);

  // A shrink made of dead nodes is named for them, one beside a revision failing on Ready nodes for
  // what its pods say; any other shrink for the drop in DESIRED.
  const cause: CauseClass = t.shrank && !a.cause ? (t.target.desired === 0 ? 'NoNodesMatched' : 'TargetShrank') : a.cause || 'Unknown';
  v.cause = cause;
  v.owner = a.owner;
  // Our undo is applied but the controller has not made the restored revision current yet (it
  // renumbers it on its next sync): that is the rollback starting, not a second stall. Only for the
  // rollout that was undone: one that started after the undo is the broken revision applied again.
  const lastUndo = v.lastUndo;
  v.undoInFlight =
    !rollout.rollback &&
    lastUndo?.result === 'Applied' &&
    lastUndo.fromHash === rollout.toRevision.hash &&
    (parseTime(rollout.startedAt) ?? 0) <= (parseTime(lastUndo.at) ?? 0);
  const clock = rolloutClock(t, a, rollout, prev, spec, now);
  if (v.undoInFlight && lastUndo) undoInFlightVerdict(t, rollout, lastUndo, clock, v);
  else if (!rollout.rollback && rollout.failures && rollout.failures.count >= spec.failedNodesThreshold) {
    failedVerdict(t, rollout, rollout.failures, v, spec, nowIso);
    // Up again between two crashes: still Failed until the revision has run quiet (track.ts
    // FAILED_QUIET_MS); looked at again when that ends.
    if (t.baking && t.bakeEndsAt !== undefined) {
      v.requeueAfterMs = t.bakeEndsAt - now;
      v.message += ` Its pods are up again; it stays Failed until ${new Date(t.bakeEndsAt).toISOString()}, ${fmtDuration(FAILED_QUIET_MS)} without a crash.`;
    }
  } else if (t.baking && t.bakeEndsAt !== undefined) bakingVerdict(t, rollout, spec, t.bakeEndsAt, now, v);
  else if (t.target.pausedBySpec) pausedVerdict(t.target, rollout, v);
  else timedVerdict(t, a, rollout, cause, clock, v);

  announceVerdict(t, rollout, prev, v);
  return v;
}

/** How long an active rollout has gone without progress, and the thresholds it is measured against. */
interface RolloutClock {
  now: number;
  idle: number;
  suspectMs: number;
  deadlineMs: number;
}

function rolloutClock(
  t: Tracked,
  a: Attribution,
  rollout: RolloutStatus,
  prev: Readonly<GuardStatus>,
  spec: GuardSpec,
  now: number,
): RolloutClock {
  // A generation the controller has not observed yet is timed from when it was first seen: the last
  // progress of the rollout before it (one that was baking, say) says nothing about this wait. A rollout
  // already Stalled stays so until the controller acts on the change: nothing has moved yet, and a
  // scheduled undo the change cancels is announced as it is (track.ts).
  const unobservedSince = t.observed || prev.state === 'Stalled' ? undefined : parseTime(t.unobserved?.since);
  const lastProgress = Math.max(parseTime(rollout.lastProgressAt) ?? now, a.waitEndsAt ?? 0, unobservedSince ?? 0);
  return { now, idle: now - lastProgress, suspectMs: spec.suspectAfterSeconds * 1000, deadlineMs: spec.progressDeadlineSeconds * 1000 };
}

/** Our undo is applied and the restored revision not current yet: RollingBack, Stalled after the deadline. */
function undoInFlightVerdict(
  t: Tracked,
  rollout: RolloutStatus,
  lastUndo: UndoRecord,
  { now, deadlineMs }: RolloutClock,
  v: Verdict,
): void {
  const sinceUndo = now - (parseTime(lastUndo.at) ?? now);
  if (sinceUndo < deadlineMs) {
    v.state = 'RollingBack';
    v.message = `Undo applied at ${lastUndo.at}: waiting for the ${t.target.kind} controller to roll ${fmtRev({ revision: lastUndo.toRevision, hash: lastUndo.toHash })} out again`;
    v.requeueAfterMs = deadlineMs - sinceUndo;
    v.cause = '';
    v.owner = '';
    return;
  }
  v.state = 'Stalled';
  v.cause = 'ControllerNotActing';
  v.owner = 'ControlPlane';
  v.message = `The undo applied at ${lastUndo.at} has not taken effect for ${fmtDuration(sinceUndo)}: the ${t.target.kind} controller still reports ${fmtRev(rollout.toRevision)} as current`;
}

/** Every node updated and available, in the bake window: Progressing until the bake ends. */
function bakingVerdict(t: Tracked, rollout: RolloutStatus, spec: GuardSpec, bakeEndsAt: number, now: number, v: Verdict): void {
  v.state = 'Progressing';
  const held = heldAtPartition(t.target, t.split.generations);
  v.message = `${held ? `Updated as far as the partition: ${held}` : `All ${units(t.target.kind, t.target.desired)} updated and available on ${fmtRev(rollout.toRevision)}`}; baking until ${new Date(bakeEndsAt).toISOString()} (bakeSeconds ${spec.bakeSeconds}): a crash now is a failure of this rollout`;
  if (rollout.failures)
    v.message += `; ${rollout.failures.count} ${unitWord(t.target.kind, false)}(s) crashed so far, below failedNodesThreshold ${spec.failedNodesThreshold}`;
  v.requeueAfterMs = bakeEndsAt - now;
  v.cause = '';
  v.owner = '';
  v.baking = true;
}

/** The verdict by time without progress: waiting for the controller, Stalled, Suspect, or Progressing. */
function timedVerdict(t: Tracked, a: Attribution, rollout: RolloutStatus, cause: CauseClass, clock: RolloutClock, v: Verdict): void {
  const { target } = t;
  const { idle, suspectMs, deadlineMs } = clock;
  if (!t.observed && idle < deadlineMs) {
    v.state = rollout.rollback ? 'RollingBack' : 'Progressing';
    v.message = `Waiting for the ${target.kind} controller to observe generation ${target.generation} (observed ${target.observedGeneration})`;
    v.requeueAfterMs = deadlineMs - idle;
    // No cause until the controller has acted on the new spec, unless pods of the live template's
    // revision already fail for a definite reason: then it has acted, and only its status, or our cache
    // of it, is behind (a Deployment's, at scale, by a second or more). Named early, as while
    // Progressing; never a verdict. Pods of another revision (a person's undo the controller has not
    // acted on yet) name nothing.
    const live = a.blocked.filter((b) => t.curRef !== undefined && b.hash === t.curRef.hash);
    const early = earlyCause(t, { blocked: live, empty: [] });
    v.cause = early?.cause ?? '';
    v.owner = early?.owner ?? '';
  } else if (idle >= deadlineMs || (t.observed && target.ownDeadlineExceeded)) {
    v.state = 'Stalled';
    // The workload's own deadline fired first: its controller's word, never contradicted (workloadWord.ts).
    const own = t.observed ? ownDeadlineSentence(target, deadlineMs, idle >= deadlineMs) : '';
    // The threshold crossed, not the growing idle time: a pass that observes nothing new writes nothing.
    const idleMs = idle >= deadlineMs ? deadlineMs : (target.ownDeadlineExceeded?.seconds ?? 0) * 1000;
    v.message = own + stallSentence({ ...sentenceArgs(t, a, rollout, cause, v), idleMs, verb: 'has made no progress' });
    if (!t.observed) {
      const since = parseTime(t.unobserved?.since);
      const unobservedMs = since === undefined ? deadlineMs : clock.now - since;
      const how = unobservedMs >= deadlineMs ? `for ${fmtDuration(deadlineMs)}` : 'yet';
      v.message = `The ${target.kind} controller has not observed generation ${target.generation} ${how}. ${v.message}`;
    }
  } else if (idle >= suspectMs) {
    v.state = 'Suspect';
    v.message = stallSentence({ ...sentenceArgs(t, a, rollout, cause, v), idleMs: suspectMs, verb: 'has made no progress' });
    v.requeueAfterMs = deadlineMs - idle;
  } else {
    progressingVerdict(t, a, rollout, v, suspectMs - idle);
  }
  v.message += outageNote(target, v.state);
}

/** What the stall sentence says about the rollout, besides how long and which verb. */
function sentenceArgs(t: Tracked, a: Attribution, rollout: RolloutStatus, cause: CauseClass, v: Verdict) {
  return {
    to: rollout.toRevision,
    cause,
    owner: v.owner,
    blocked: a.blocked,
    empty: a.empty,
    left: rollout.leftNodes ?? [],
    gens: t.split.generations,
    target: t.target,
    desiredAtStart: t.expectedDesired,
    rollback: rollout.rollback === true,
    ...(a.refusal !== undefined ? { refusal: a.refusal } : {}),
    ...(a.held !== undefined ? { held: a.held } : {}),
  };
}

/** The rollout reached every node: Healthy, or RolledBack when it was our undo converging. */
function completedVerdict(t: Tracked, rollout: RolloutStatus, v: Verdict, nowIso: string): Verdict {
  const { target } = t;
  rollout.completedAt = nowIso;
  v.state = rollout.rollback ? 'RolledBack' : 'Healthy';
  const held = heldAtPartition(target, t.split.generations);
  v.message = held
    ? `Rollout to ${fmtRev(rollout.toRevision)} complete as far as the partition: ${held}`
    : `Rollout to ${fmtRev(rollout.toRevision)} complete: ${target.updated}/${units(target.kind, target.desired)} updated and available${pausedLine(target)}`;
  if (rollout.rollback && v.lastUndo) {
    v.lastUndo = {
      ...v.lastUndo,
      result: 'Complete',
      message: `every ${unitWord(target.kind, false)} is back on ${fmtRev(rollout.toRevision)}${renumbered(v.lastUndo, rollout.toRevision)}`,
    };
    v.message = `Undo complete: all ${units(target.kind, target.desired)} back on ${fmtRev(rollout.toRevision)}${renumbered(v.lastUndo, rollout.toRevision)}, one generation again`;
    v.events.push(event('Normal', Reason.UndoComplete, v.message, true, EventAction.Undo));
  } else {
    v.events.push(event('Normal', Reason.RolloutComplete, v.message));
  }
  return v;
}

/**
 * The cause named before any deadline: a definite failure of the revision or of a node, as soon as one
 * unit shows it. Never while the workload shrank (its units left; whose fault that is is a verdict of
 * its own), and never a wait on the control plane or a configured delay.
 */
function earlyCause(t: Tracked, a: Pick<Attribution, 'blocked' | 'empty'>): { cause: CauseClass; owner: FaultOwner } | undefined {
  if (t.shrank) return undefined;
  const first = firstDefinite(a);
  return first && (first.owner === 'Revision' || first.owner === 'Node') ? first : undefined;
}

/** Moving, or not stuck for long enough yet: Progressing, with a cause only once one is definite. */
function progressingVerdict(t: Tracked, a: Attribution, rollout: RolloutStatus, v: Verdict, untilSuspectMs: number): void {
  const { target } = t;
  v.state = rollout.rollback ? 'RollingBack' : 'Progressing';
  v.message = `Rolling out ${fmtRev(rollout.toRevision)}: ${target.updated}/${target.desired} updated, ${target.available}/${target.desired} available`;
  const waiting = a.blocked.length + a.empty.length;
  if (waiting > 0) v.message += `; waiting on ${units(target.kind, waiting)}`;
  if (a.owner === 'ConfiguredWait')
    v.message += ` (${a.cause === 'MinReadySeconds' ? `minReadySeconds ${target.minReadySeconds}` : 'a termination grace period'}: a configured wait, not a stall)`;
  v.requeueAfterMs = untilSuspectMs;
  // Early explanation: a definitive failure of the revision or a node is named before the deadline, as
  // soon as one node shows it, even while more nodes of the batch are still starting.
  if (v.cause === 'Unknown' || v.cause === 'NotReady') {
    const early = earlyCause(t, a);
    if (early) {
      v.cause = early.cause;
      v.owner = early.owner;
    }
  }
  // Waits on the control plane or a configured delay are not failures: nothing to name yet.
  if (v.cause === 'Unknown' || v.cause === 'NotReady' || (!t.shrank && (v.owner === 'ControlPlane' || v.owner === 'ConfiguredWait'))) {
    v.cause = '';
    v.owner = '';
  }
}

/** The Events of the verdict's transition, if it is one. */
function announceVerdict(t: Tracked, rollout: RolloutStatus, prev: Readonly<GuardStatus>, v: Verdict): void {
  const { target } = t;
  const prevState: GuardState = prev.state ?? 'Unknown';
  if (v.state === 'Failed' && prevState !== 'Failed') v.events.push(event('Warning', Reason.RevisionFailed, v.message));
  if (v.baking && !prev.rollout?.updatedAt) v.events.push(event('Normal', Reason.RolloutBaking, v.message));
  if (v.state === 'Suspect' && prevState !== 'Suspect') v.events.push(event('Warning', Reason.RolloutSuspect, v.message));
  if (v.state === 'Stalled' && prevState !== 'Stalled') {
    if (rollout.rollback || v.undoInFlight) {
      const note = `The undo to ${fmtRev(rollout.toRevision)} itself stalled: it did not help; not retrying. ${v.message}`;
      v.events.push(event('Warning', Reason.RollbackStalled, note, true, EventAction.Undo));
      if (v.lastUndo) v.lastUndo = { ...v.lastUndo, result: 'RollbackStalled', message: truncate(note, 500) };
    } else {
      v.events.push(event('Warning', Reason.RolloutStalled, v.message));
    }
  }
  if (
    (v.state === 'Progressing' || v.state === 'RollingBack') &&
    (prevState === 'Suspect' || prevState === 'Stalled') &&
    t.progressed &&
    !t.startedNow
  ) {
    v.events.push(
      event(
        'Normal',
        Reason.RolloutResumed,
        `Rollout to ${fmtRev(rollout.toRevision)} is moving again: ${target.updated}/${target.desired} updated`,
      ),
    );
  }
}
