/**
 * Phase 1 of decide: track the rollout. From the previous status and the observation it works out
 * which rollout is in flight (a template change, our own undo converging, or one first seen midway),
 * whether it progressed (a high-water mark rose), whether it is complete, and whether DESIRED shrank.
 *
 * "Progress" is any high-water mark going up: the controller's observedGeneration, updated, available or
 * ready pods, nodes on the target revision, or nodes whose old pod the kubelet has removed. A flapping
 * pod is not progress. The clock of "time without progress" is `status.rollout.lastProgressAt`, so a
 * restart or a new leader continues it.
 *
 * It also times a spec change the DaemonSet controller has not observed (`status.unobserved`): with the
 * controller down there is no new revision, so no rollout, yet the user's change is going nowhere.
 */
import { describeLeft, fmtRev, units, unitWord } from '../messages.js';
import { wordsOf } from '../kindWords.js';
import { collectFailures, FAILED_QUIET_MS, lastCrashOf } from '../evidence.js';
import { countersSettled, followsRollout } from '../podInterest.js';
import { event } from './plannedEvents.js';
import { parseTime } from './timing.js';
import { sameRevision } from '../revisions.js';
import { EventAction, Reason } from '../../api/reasons.js';
import { KINDS } from '../../api/kinds.js';
import { computeSplit, dominantOtherHash, splitFromCounters, STATUS_LIST_CAP, UNAVAILABLE_AT_START_CAP, type Split } from '../split.js';
import { hostOf } from '../split.js';
import { classifyReason, podBlockReason } from '../causes.js';
import type { TargetInput, TargetObservation, Tracked } from './pass.js';
import { marksOf, mergeLeft, raise } from '../progressMarks.js';
import type { GuardSpec, GuardStatus, RevisionRef, RolloutStatus, UnavailableAtStart, UndoRecord } from '../../api/types.js';

/** Starts a new rollout on a template change, recognising our own undo converging. */
function startOnChange(input: TargetInput, curRef: RevisionRef, t: Tracked): void {
  const { obs, prev, spec, nowIso } = input;
  const { target } = obs;
  const prevHash = prev.currentRevision?.hash;
  let lastUndo = t.lastUndo;
  const recorded = target.undoRecord;
  // Our own undo (recorded in status), or any guard's (recorded on the DaemonSet): a rollback, which is
  // never undone in turn.
  const isRollback =
    (lastUndo !== undefined &&
      lastUndo.toHash === curRef.hash &&
      lastUndo.fromHash === prevHash &&
      (lastUndo.result === 'Pending' || lastUndo.result === 'Applied')) ||
    (recorded !== undefined && recorded.to === curRef.hash && recorded.from === prevHash);
  const rollout: RolloutStatus = {
    toRevision: curRef,
    startedAt: nowIso,
    lastProgressAt: nowIso,
    desiredAtStart: Math.max(prev.desired ?? target.desired, 0),
    progress: marksOf(target.observedGeneration, 0, 0, 0, 0, 0),
  };
  if (prev.currentRevision) rollout.fromRevision = { ...prev.currentRevision };
  if (!isRollback) continueFrom(rollout, prev.rollout, curRef);
  const unavailable = unavailableAtStart(input, rollout.fromRevision?.hash, curRef.hash);
  if (unavailable.listed.length > 0) rollout.unavailableAtStart = unavailable.listed;
  if (unavailable.unlisted > 0) rollout.unavailableAtStartUnlisted = unavailable.unlisted;
  if (isRollback) {
    rollout.rollback = true;
    lastUndo = confirmUndo(t, lastUndo, curRef);
  } else {
    lastUndo = noteOthersChange(t, prev, spec, curRef, lastUndo);
    t.events.push(
      event(
        'Normal',
        Reason.RolloutStarted,
        startNote(rollout, prev, curRef, units(target.kind, target.desired), unitWord(target.kind, false)),
      ),
    );
  }
  t.lastUndo = lastUndo;
  t.rollout = rollout;
  t.startedNow = true;
}

/**
 * A rollout pushed while the one before it was still rolling out: where the new one starts from.
 */
function continueFrom(rollout: RolloutStatus, before: RolloutStatus | undefined, curRef: RevisionRef): void {
  const lastWhole = before ? lastOnEveryNode(before) : undefined;
  if (before && !before.completedAt && lastWhole) {
    if (lastWhole.hash === curRef.hash) {
      // Back to the revision that ran on every node before the rollout, and not by us: a person or a
      // tool undid it (kubectl rollout undo). Followed, never undone in turn.
      rollout.restored = true;
    } else if (lastWhole.hash !== before.toRevision.hash) {
      // A second template pushed while the first was still rolling out: an undo goes straight back to
      // the last revision that ran on every node, not to the one in between (which never got there).
      rollout.fromRevision = { ...lastWhole };
      rollout.superseded = [...(before.superseded ?? []), { ...before.toRevision }].slice(-STATUS_LIST_CAP);
    }
  }
}

/** Our undo converging: an undo still Pending in status was applied, as the template shows. */
function confirmUndo(t: Tracked, lastUndo: UndoRecord | undefined, curRef: RevisionRef): UndoRecord | undefined {
  if (lastUndo?.result === 'Pending' && lastUndo.toHash === curRef.hash) {
    // The undo was applied but the outcome never recorded (a crash between patch and status write):
    // the world shows it happened, so record it rather than applying it again.
    lastUndo = {
      ...lastUndo,
      result: 'Applied',
      message: `restored ${fmtRev({ revision: lastUndo.toRevision, hash: lastUndo.toHash })} (confirmed by observation)`,
    };
    t.events.push(event('Normal', Reason.UndoStarted, lastUndo.message, true, EventAction.Undo));
  }
  return lastUndo;
}

/** A template change that is not an undo: an undo this guard had pending or scheduled yields to it. */
function noteOthersChange(
  t: Tracked,
  prev: Readonly<GuardStatus>,
  spec: GuardSpec,
  curRef: RevisionRef,
  lastUndo: UndoRecord | undefined,
): UndoRecord | undefined {
  const prevHash = prev.currentRevision?.hash;
  if (lastUndo?.result === 'Pending') {
    lastUndo = { ...lastUndo, result: 'Failed', message: 'not applied: the template changed before the undo was made' };
    t.events.push(
      event(
        'Warning',
        Reason.UndoSkipped,
        `Undo of ${fmtRev({ hash: lastUndo.fromHash })} not applied: the template changed to ${fmtRev(curRef)} before the undo was made; a person or tool is acting`,
        true,
        EventAction.Undo,
      ),
    );
  } else if (
    prev.state === 'Stalled' &&
    spec.onStall.action === 'Undo' &&
    prev.undoPlan?.forHash === prevHash &&
    lastUndo?.fromHash !== prevHash
  ) {
    // An undo was scheduled (delaySeconds) and someone changed the template first: theirs wins.
    t.events.push(
      event(
        'Warning',
        Reason.UndoSkipped,
        `Scheduled undo of ${fmtRev(prev.currentRevision)} cancelled: the template changed to ${fmtRev(curRef)} after the stall was detected; a person or tool is acting`,
        true,
        EventAction.Undo,
      ),
    );
  }
  return lastUndo;
}

function startNote(rollout: RolloutStatus, prev: Readonly<GuardStatus>, curRef: RevisionRef, desired: string, unit: string): string {
  return rollout.restored
    ? `${fmtRev(curRef)} restores the revision that ran on every ${unit} before ${fmtRev(prev.currentRevision)}: a person or tool undid the rollout; following it, with no action of the guard's own`
    : `Rollout from ${fmtRev(rollout.fromRevision)} to ${fmtRev(curRef)} started on ${desired}` +
        (rollout.superseded
          ? ` (it supersedes ${rollout.superseded.map((r) => fmtRev(r)).join(', ')}, which never reached every ${unit}: an undo would restore ${fmtRev(rollout.fromRevision)})`
          : '');
}

/**
 * The last revision that ran on every node, as far as a rollout knows: its own target once it reached
 * every node (or it was a return to a known revision, ours or a person's); else the revision it started from.
 */
function lastOnEveryNode(r: Readonly<RolloutStatus>): RevisionRef | undefined {
  if (r.completedAt || r.updatedAt || r.rollback || r.restored) return r.toRevision;
  return r.fromRevision;
}

/**
 * Nodes whose pod of the revision the rollout starts from was not available as it starts: what the
 * previous pass found blocked on it, what the pods show now, and what an earlier rollout this one
 * supersedes had found. The DaemonSet controller replaces unavailable old pods first, so these nodes
 * are updated first, and a new pod failing there the same way says nothing against the new revision.
 *
 * This is the evidence that keeps a node's fault from being blamed on the revision, so it is read from
 * every node the last pass found blocked (`blockedBefore`), not from the status's capped display list.
 * Only when this process has not seen that pass does the capped list stand in, and then the blocked nodes
 * it counted without naming are `unlisted`, as are the nodes past the cap: the guard cannot clear the
 * new revision on those nodes, so it will not undo (plan.ts).
 */
function unavailableAtStart(
  { obs, prev, blockedBefore }: TargetInput,
  fromHash: string | undefined,
  toHash: string,
): { listed: UnavailableAtStart[]; unlisted: number } {
  if (fromHash === undefined) return { listed: [], unlisted: 0 };
  const out = new Map<string, UnavailableAtStart>();
  const superseded = prev.rollout?.completedAt ? undefined : prev.rollout;
  for (const u of superseded?.unavailableAtStart ?? []) out.set(u.node, u);
  let unlisted = superseded?.unavailableAtStartUnlisted ?? 0;
  const named = prev.blockedNodes ?? [];
  if (blockedBefore === undefined) unlisted += Math.max(0, (prev.blockedNodeCount ?? 0) - named.length);
  for (const b of blockedBefore ?? named)
    if (b.hash === fromHash && b.cause && !out.has(b.node)) out.set(b.node, { node: b.node, ...hostOf(b), cause: b.cause });
  for (const n of obs.nodes) {
    if (out.has(n.node) || !n.eligible) continue;
    const old = n.pods.find((p) => !p.deleting && p.hash === fromHash && p.hash !== toHash && !p.available && p.scheduled);
    if (!old || !(old.restartCount > 0 || old.waitingReason)) continue;
    const r = podBlockReason(old);
    out.set(n.node, { node: n.node, ...hostOf(n), cause: classifyReason(r.reason, r.message) });
  }
  const all = [...out.values()].sort((a, b) => a.node.localeCompare(b.node));
  return { listed: all.slice(0, UNAVAILABLE_AT_START_CAP), unlisted: unlisted + Math.max(0, all.length - UNAVAILABLE_AT_START_CAP) };
}

/** Not complete and nothing tracked: first sight mid-rollout, a new node being populated, or pods lost. */
function startMidway(obs: TargetObservation, prev: Readonly<GuardStatus>, curRef: RevisionRef, nowIso: string, t: Tracked): void {
  const { target } = obs;
  const prevHash = prev.currentRevision?.hash;
  const from = prevHash === undefined ? dominantOtherHash(t.split.generations, curRef.hash) : undefined;
  const rollout: RolloutStatus = {
    toRevision: curRef,
    startedAt: nowIso,
    lastProgressAt: nowIso,
    desiredAtStart: Math.max(prev.desired ?? 0, target.desired),
    progress: marksOf(target.observedGeneration, target.updated, target.available, target.ready, t.split.onTarget, t.split.oldGone),
  };
  // A generation whose ControllerRevision is gone (history pruned) has no number: leave the key out, as
  // JSON would, so the status decided is the status read back.
  if (from) rollout.fromRevision = from.revision !== undefined ? { revision: from.revision, hash: from.hash } : { hash: from.hash };
  else if (prevHash !== undefined) rollout.fromRevision = { ...curRef };
  // A guard that first sees a DaemonSet midway through an undo (it was recreated, or another guard
  // made it) must not take the broken revision for the one to return to. A guard that already followed
  // the restored revision is not midway through anything: pods lost later (a node gone, the namespace
  // being deleted) are not the undo still converging.
  const recorded = target.undoRecord;
  if (prevHash === undefined && recorded && recorded.to === curRef.hash && (from === undefined || from.hash === recorded.from))
    rollout.rollback = true;
  const note = from
    ? `Rollout from ${fmtRev(rollout.fromRevision)} to ${fmtRev(curRef)} in progress (first observed now): ${target.updated}/${target.desired} updated`
    : `${fmtRev(curRef)} is being placed on ${unitWord(target.kind)}: ${target.available}/${target.desired} available`;
  t.events.push(event('Normal', Reason.RolloutStarted, note));
  t.rollout = rollout;
  t.startedNow = true;
}

/** Phase 1: see the top of this file. */
export function trackRollout(input: TargetInput): Tracked {
  const { t, fromCounters, countersSplit } = openTracking(input);
  const { obs, prev, nowIso } = input;
  const { target, curRef, observed } = t;
  const countersComplete = observed && target.updated >= target.desired && target.available >= target.desired && !target.outdated;
  // A spec change the controller has not observed: timed from when it was first seen, across passes.
  if (!observed) {
    const u = prev.unobserved;
    t.unobserved =
      u && u.generation <= target.generation
        ? { generation: target.generation, since: u.since }
        : { generation: target.generation, since: nowIso };
  }
  // A new hash, or the same hash renumbered: the template changed (and, renumbered, came back).
  if (curRef && prev.currentRevision !== undefined && !sameRevision(curRef, prev.currentRevision, obs.revisions)) {
    startOnChange(input, curRef, t);
  } else if (
    curRef &&
    observed &&
    (!t.rollout || t.rollout.completedAt || t.rollout.toRevision.hash !== curRef.hash) &&
    !countersComplete
  ) {
    // Only from observed counters: until the controller observes the generation they describe the
    // previous spec, and the guard stays in its current phase.
    startMidway(obs, prev, curRef, nowIso, t);
  }
  noteDesired(input, t);
  t.active = t.rollout !== undefined && !t.rollout.completedAt;
  if (!t.rollout || !t.active) return t;
  followProgress(input, t, t.rollout);
  if (!(countersComplete && !t.shrank)) {
    delete t.rollout.updatedAt;
    return t;
  }
  bakeOrComplete(input, t, t.rollout);
  // The verdict "all nodes updated and available" is the counters'; so is the split it reports, or a
  // pod one event behind them would be listed as blocked under it. Not at a partition: the counters
  // cannot say which ordinals it holds on which revision.
  if (t.complete && !fromCounters && obs.target.partition === undefined) t.split = countersSplit();
  return t;
}

/** The tracking of one pass before anything is compared: the split and the previous rollout record. */
function openTracking({ obs, prev }: TargetInput): { t: Tracked; fromCounters: boolean; countersSplit: () => Split } {
  const { target } = obs;
  const cur = obs.currentRevision;
  const observed = target.observedGeneration >= target.generation;
  const curRef: RevisionRef | undefined = cur ? { revision: cur.revision, hash: cur.hash } : undefined;
  // With no rollout followed, settled counters are the DaemonSet controller's word that every node it
  // targets runs an updated, ready, available pod. Pod and DaemonSet updates arrive on two watches, so
  // cached pods that say otherwise are one event behind the count (a new pod's Ready update not seen
  // yet): the split is then the counters', as when the pods are not cached at all (podInterest.ts), and
  // a DaemonSet is never shown healthy with its nodes not ready. While a rollout is followed, or on the
  // pass that sees a new revision (one may start here), the pods stay the word: counters can still
  // describe the previous template for a moment.
  const sameTemplate = cur !== undefined && (prev.currentRevision === undefined || sameRevision(cur, prev.currentRevision, obs.revisions));
  const fromCounters = obs.podsFromCounters === true || (sameTemplate && countersSettled(target) && !followsRollout(prev));
  const countersSplit = (): Split => splitFromCounters(target, obs.nodes.filter((n) => n.eligible).length, cur);
  const split = fromCounters ? countersSplit() : computeSplit(obs.nodes, obs.revisions, cur?.hash);
  const t: Tracked = {
    target,
    split,
    observed,
    curRef,
    rollout: prev.rollout ? structuredClone<RolloutStatus>(prev.rollout) : undefined,
    active: false,
    startedNow: false,
    progressed: false,
    complete: false,
    baking: false,
    shrank: false,
    expectedDesired: target.desired,
    lastUndo: prev.lastUndo ? { ...prev.lastUndo } : undefined,
    unobserved: undefined,
    events: [],
  };
  return { t, fromCounters, countersSplit };
}

/** DESIRED changes, reported with or without a rollout. */
function noteDesired({ obs, prev }: TargetInput, t: Tracked): void {
  const { target, observed } = t;
  // Steady-state DESIRED changes are reported even without a rollout: standard alerts never see them.
  // Nodes deleted from the cluster lower DESIRED legitimately (scale-down); they are not a shrink.
  // The set is kept in status, so a deletion reported on several passes counts once.
  const rollout = t.rollout;
  if (rollout && !rollout.completedAt && (obs.removedNodes?.length ?? 0) > 0) {
    rollout.removedNodes = [...new Set([...(rollout.removedNodes ?? []), ...(obs.removedNodes ?? [])])].sort().slice(0, 100);
  }
  // A drop with a node that still exists but left the targets (a taint, a label): name it. A drop made
  // only of deleted nodes is a scale-down and says nothing.
  const shrankNow = observed && prev.desired !== undefined && target.desired < prev.desired && obs.leftNodes.length > 0;
  if (shrankNow && target.desired > 0) {
    t.events.push(
      event(
        'Warning',
        Reason.DesiredShrank,
        `${wordsOf(target.kind).desired} dropped from ${prev.desired} to ${target.desired}: ${describeLeft(obs.leftNodes)} left the targets`,
      ),
    );
  }
  // A StatefulSet scaled to zero was scaled there on purpose; a DaemonSet that matches no node was not.
  if (observed && KINDS[target.kind].desiredFromPlacement && target.desired === 0 && (prev.desired === undefined || prev.desired > 0)) {
    t.events.push(
      event(
        'Warning',
        Reason.NoNodesMatched,
        `DaemonSet ${target.name} matches no node (DESIRED 0): check its nodeSelector, affinity and tolerations`,
      ),
    );
  }
}

/** A rollout in flight: its high-water marks, the nodes that left, the shrink and the evidence. */
function followProgress({ obs, prev, nowIso }: TargetInput, t: Tracked, rollout: RolloutStatus): void {
  const { target, observed, split } = t;
  // The clock does not run while not judging, nor while the workload's own spec pauses the rollout.
  if (prev.state === 'Suspended' || prev.state === 'Conflict' || target.pausedBySpec) rollout.lastProgressAt = nowIso;
  // Unobserved counters describe the previous template: raising the marks with them would make later
  // real progress look like none. observedGeneration and the pod split are current.
  const r = raise(
    rollout.progress,
    observed
      ? marksOf(target.observedGeneration, target.updated, target.available, target.ready, split.onTarget, split.oldGone)
      : marksOf(target.observedGeneration, 0, 0, 0, split.onTarget, split.oldGone),
  );
  rollout.progress = r.marks; // a baseline set for a missing mark is kept, progress or not
  if (r.progressed) {
    rollout.lastProgressAt = nowIso;
    t.progressed = true;
  }
  if (obs.leftNodes.length > 0) rollout.leftNodes = mergeLeft(rollout.leftNodes, obs.leftNodes);
  const templateChange = rollout.fromRevision !== undefined && rollout.fromRevision.hash !== rollout.toRevision.hash;
  t.expectedDesired = rollout.desiredAtStart - (rollout.removedNodes?.length ?? 0);
  t.shrank = observed && templateChange && target.desired < t.expectedDesired;
  // Evidence against the new revision counts while it rolls out and while it bakes. For our own undo
  // converging it is evidence that the undo did not help (a rollback is never undone in turn).
  {
    const failures = collectFailures(obs.nodes, rollout.toRevision.hash, rollout.failures, nowIso, {
      ...(rollout.unavailableAtStart ? { before: rollout.unavailableAtStart } : {}),
      ...(parseTime(rollout.startedAt) !== undefined ? { since: parseTime(rollout.startedAt)! } : {}),
    });
    if (failures) rollout.failures = failures;
  }
}

/** Every node updated and available: the bake window, then complete. */
function bakeOrComplete({ obs, spec, now, nowIso }: TargetInput, t: Tracked, rollout: RolloutStatus): void {
  // A rollout is not done when the counters first look done: it stays watched for the bake window,
  // against the revision it started from, so a crash after readiness is still this rollout's failure.
  rollout.updatedAt ??= nowIso;
  let bakeEndsAt = (parseTime(rollout.updatedAt) ?? now) + (rollout.rollback ? 0 : spec.bakeSeconds * 1000);
  // A revision judged Failed stays Failed until it has run quiet (see FAILED_QUIET_MS), however its
  // counters look between two crashes.
  const failedAt = parseTime(rollout.failedAt);
  if (failedAt !== undefined && !rollout.rollback)
    bakeEndsAt = Math.max(bakeEndsAt, Math.max(failedAt, lastCrashOf(obs.nodes, rollout.toRevision.hash) ?? 0) + FAILED_QUIET_MS);
  if (now < bakeEndsAt) {
    t.baking = true;
    t.bakeEndsAt = bakeEndsAt;
    return;
  }
  t.complete = true;
}
