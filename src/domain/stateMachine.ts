/**
 * The RolloutGuard state machine: a pure function of (observation, previous status, policy, now).
 *
 *                         template hash changes / pods missing
 *        +---------+   ------------------------------------->   +-------------+
 *        | Healthy |                                            | Progressing |<------------------+
 *        +---------+   <-------------------------------------   +-------------+                   |
 *             ^             updated = available = desired             |                           |
 *             |             (kubectl's rule) and no shrink            | no progress for           |
 *             |                                                       | suspectAfterSeconds       | progress
 *             |                                                       v                           | (RolloutResumed)
 *             |                                                  +---------+                      |
 *             +--------------------------------------------------| Suspect |----------------------+
 *             |                                                  +---------+                      |
 *             |                                                       | no progress for           |
 *             |                                                       | progressDeadlineSeconds   |
 *             |                                                       v                           |
 *             |                                                  +---------+                      |
 *             +--------------------------------------------------| Stalled |----------------------+
 *                                                                +---------+
 *                                                                     | onStall.action = Undo, after delaySeconds,
 *                                                                     | once per broken revision, not opted out,
 *                                                                     | template unchanged since the stall
 *                                                                     v
 *                       +------------+   one generation again   +-------------+
 *                       | RolledBack |<-------------------------| RollingBack |-- no progress --> Stalled
 *                       +------------+                          +-------------+   (RollbackStalled, never retried)
 *
 *   Any state --spec.suspend--> Suspended;  target missing or OnDelete --> Unknown.
 *
 * "Progress" is any high-water mark going up: the controller's observedGeneration, updated, available or
 * ready pods, or nodes on the target revision. The clock of "time without progress" is
 * `status.rollout.lastProgressAt`, so a restart or a new leader continues it instead of resetting it.
 *
 * decide() does no I/O and never reads the clock. It returns the next status, the Events for the
 * transitions it made, at most one action, and when to look again.
 */
import { dominantCause } from './causes.js';
import { setCondition, type DesiredCondition } from './conditions.js';
import { describeLeft, fmtDuration, fmtRev, stallSentence, truncate } from './messages.js';
import { EventAction, Reason } from './reasons.js';
import { computeSplit, dominantOtherHash, STATUS_LIST_CAP } from './split.js';
import type {
  CauseClass,
  Decision,
  GuardSpec,
  GuardState,
  GuardStatus,
  LeftNode,
  Observation,
  PlannedAction,
  PlannedEvent,
  ProgressMarks,
  RevisionRef,
  RolloutStatus,
  UndoPlan,
} from './types.js';

/** The annotation by which a DaemonSet opts out of undo. */
export const UNDO_OPT_OUT_ANNOTATION = 'rolloutguard.dev/undo';

/** What decide needs from the guard besides its status: its spec and generation. */
export interface GuardPolicy {
  spec: GuardSpec;
  generation: number;
}

/**
 * Timer skew allowance added to every requeue, so we never wake up a hair before a deadline. Node's
 * timers do not fire early by more than a millisecond, so 100 ms is ample and keeps detection within
 * a fraction of a second of the deadline.
 */
const REQUEUE_SKEW_MS = 100;
/** Never requeue sooner than this: a ≤ 0 delay while caches catch up would spin. */
const MIN_REQUEUE_MS = 500;
/** The longest decide sets observations aside while the DaemonSet and revision caches disagree. */
export const CACHE_WAIT_LIMIT_MS = 30_000;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const iso = (ms: number): string => new Date(ms).toISOString();
const parse = (s: string | undefined): number | undefined => (s ? Date.parse(s) : undefined);

function ev(type: PlannedEvent['type'], reason: string, note: string, onTarget = true, action: string = EventAction.Observe): PlannedEvent {
  return { type, reason, note: truncate(note, 1000), action, onTarget };
}

function marksOf(og: number, updated: number, available: number, ready: number, onTarget: number): ProgressMarks {
  return { observedGeneration: og, updated, available, ready, onTarget };
}

/** Returns the raised marks and whether any went up. */
function raise(prev: ProgressMarks, cur: ProgressMarks): { marks: ProgressMarks; progressed: boolean } {
  const marks = { ...prev };
  let progressed = false;
  for (const k of Object.keys(cur) as (keyof ProgressMarks)[]) {
    if (cur[k] > prev[k]) {
      marks[k] = cur[k];
      progressed = true;
    }
  }
  return { marks, progressed };
}

function mergeLeft(a: readonly LeftNode[] | undefined, b: readonly LeftNode[]): LeftNode[] {
  const m = new Map<string, LeftNode>();
  for (const l of [...(a ?? []), ...b]) m.set(l.node, l);
  return [...m.values()].sort((x, y) => x.node.localeCompare(y.node)).slice(0, STATUS_LIST_CAP);
}

/** The states in which a rollout is in flight. */
const IN_FLIGHT: ReadonlySet<GuardState> = new Set(['Progressing', 'Suspect', 'Stalled', 'RollingBack']);

/**
 * Computes the next status of a guard. See the diagram at the top of this file.
 */
export function decide(obs: Observation, prev: Readonly<GuardStatus>, policy: GuardPolicy, now: number): Decision {
  const { spec, generation } = policy;
  const nowIso = iso(now);
  const events: PlannedEvent[] = [];
  let conditions = [...(prev.conditions ?? [])];
  const setCond = (c: DesiredCondition): boolean => {
    const r = setCondition(conditions, c, nowIso, generation);
    conditions = r.conditions;
    return r.changed;
  };
  const prevState: GuardState = prev.state ?? 'Unknown';

  // --- Suspended: observe nothing, act on nothing, and say so. -----------------------------------
  if (spec.suspend) {
    const msg = 'spec.suspend is true: the guard observes nothing and acts on nothing';
    setCond({ type: 'Ready', status: 'False', reason: Reason.Suspended, message: msg });
    setCond({ type: 'Progressing', status: 'Unknown', reason: Reason.Suspended, message: msg });
    setCond({ type: 'Stalled', status: 'Unknown', reason: Reason.Suspended, message: msg });
    ensureRolledBackCondition(setCond, prev);
    return {
      status: { ...prev, observedGeneration: generation, state: 'Suspended', cause: '', message: msg, conditions },
      events,
    };
  }

  // --- Target missing: a condition, never a crash. ---------------------------------------------
  if (obs.kind === 'TargetMissing') {
    const msg = `DaemonSet ${obs.targetName} not found in this namespace; waiting for it to be created`;
    const changed = setCond({ type: 'Ready', status: 'False', reason: Reason.TargetNotFound, message: msg });
    setCond({ type: 'Progressing', status: 'Unknown', reason: Reason.TargetNotFound, message: msg });
    setCond({ type: 'Stalled', status: 'Unknown', reason: Reason.TargetNotFound, message: msg });
    ensureRolledBackCondition(setCond, prev);
    if (changed) events.push(ev('Warning', Reason.TargetNotFound, msg, false));
    // A recreated DaemonSet is a new object: its history starts over, so does ours.
    const status: GuardStatus = {
      observedGeneration: generation,
      state: 'Unknown',
      cause: '',
      message: msg,
      desired: 0,
      current: 0,
      updated: 0,
      ready: 0,
      available: 0,
      generations: [],
      blockedNodes: [],
      blockedNodeCount: 0,
      emptyNodes: [],
      emptyNodeCount: 0,
      conditions,
    };
    if (prev.lastUndo) status.lastUndo = prev.lastUndo;
    return { status, events };
  }

  const ds = obs.ds;
  const cur = obs.currentRevision;
  // The DaemonSet and ControllerRevision caches are fed by two watches, and either may be ahead. The
  // status pairs the current revision with the template generation it belongs to; until both caches
  // show a new pair, deciding would mix two templates. Two ways to be half-way:
  //  - the template generation moved (the controller has observed it, and it creates the revision in
  //    that same sync) but the revision cache still shows the old one as current: deciding now would,
  //    for example, take a DESIRED the new template already shrank as the rollout's starting point;
  //  - a new revision became current (a template change, or our undo renumbering an old revision) but
  //    the DaemonSet cache still shows the old template generation: its counters describe the old
  //    template and would mark the new revision complete at once.
  // Both gaps are normally one watch event long. They are bounded: past CACHE_WAIT_LIMIT_MS the
  // observation is taken as it is, so a disagreement that never resolves cannot freeze the guard.
  const observed = ds.observedGeneration >= ds.generation;
  const templateMoved = ds.templateGeneration !== undefined && prev.templateGeneration !== undefined && ds.templateGeneration !== prev.templateGeneration;
  const revisionMoved = cur !== undefined && prev.currentRevision !== undefined && cur.hash !== prev.currentRevision.hash;
  const dsBehind = revisionMoved && ds.templateGeneration !== undefined && ds.templateGeneration === prev.templateGeneration;
  const revisionsBehind = templateMoved && cur !== undefined && cur.hash === prev.currentRevision?.hash && observed;
  if ((dsBehind || revisionsBehind) && (obs.cacheWaitMs ?? 0) < CACHE_WAIT_LIMIT_MS) {
    return { status: { ...prev }, events: [], requeueAfterMs: MIN_REQUEUE_MS, deferred: true };
  }
  const targetHash = cur?.hash;
  const split = computeSplit(obs.nodes, obs.revisions, targetHash);
  const base: GuardStatus = {
    ...prev,
    observedGeneration: generation,
    desired: ds.desired,
    current: ds.current,
    updated: ds.updated,
    ready: ds.ready,
    available: ds.available,
    generations: split.generations.slice(0, STATUS_LIST_CAP),
    blockedNodes: split.blocked.slice(0, STATUS_LIST_CAP),
    blockedNodeCount: split.blocked.length,
    emptyNodes: split.empty.slice(0, STATUS_LIST_CAP),
    emptyNodeCount: split.empty.length,
  };
  if (cur) base.currentRevision = { revision: cur.revision, hash: cur.hash };
  // The pair moves together. Before the controller observes a new template there is no revision for
  // it yet: keep the old pair, or the revision's arrival would look like a DaemonSet cache behind.
  const pairPending = templateMoved && !revisionMoved && !observed;
  if (pairPending) base.templateGeneration = prev.templateGeneration;
  else if (ds.templateGeneration !== undefined) base.templateGeneration = ds.templateGeneration;
  else delete base.templateGeneration;
  if (prevState === 'Unknown' && prev.conditions?.some((c) => c.type === 'Ready' && c.reason === Reason.TargetNotFound)) {
    events.push(ev('Normal', Reason.TargetFound, `DaemonSet ${ds.name} found; guarding its rollouts`, false));
  }

  // --- OnDelete: there is no rollout to time. ----------------------------------------------------
  if (ds.strategy === 'OnDelete') {
    const msg =
      'DaemonSet uses updateStrategy OnDelete: pods change only when deleted by hand, so there is no rollout to guard by deadline';
    const changed = setCond({ type: 'Ready', status: 'False', reason: Reason.OnDeleteStrategy, message: msg });
    setCond({ type: 'Progressing', status: 'Unknown', reason: Reason.OnDeleteStrategy, message: msg });
    setCond({ type: 'Stalled', status: 'Unknown', reason: Reason.OnDeleteStrategy, message: msg });
    ensureRolledBackCondition(setCond, prev);
    if (changed) events.push(ev('Warning', Reason.OnDeleteStrategy, msg, false));
    const status: GuardStatus = { ...base, state: 'Unknown', cause: '', message: msg, conditions };
    delete status.rollout;
    return { status, events };
  }

  // --- Track the rollout. -------------------------------------------------------------------------
  let rollout: RolloutStatus | undefined = prev.rollout ? structuredClone<RolloutStatus>(prev.rollout) : undefined;
  let lastUndo = prev.lastUndo ? { ...prev.lastUndo } : undefined;
  const prevHash = prev.currentRevision?.hash;
  const complete = observed && ds.updated >= ds.desired && ds.available >= ds.desired;
  const curRef: RevisionRef | undefined = cur ? { revision: cur.revision, hash: cur.hash } : undefined;
  /** A rollout began tracking in this pass: its first marks are a baseline, not progress to announce. */
  let startedNow = false;

  if (curRef && prevHash !== undefined && curRef.hash !== prevHash) {
    // The template changed: a new rollout (or our own undo converging).
    startedNow = true;
    const isRollback =
      lastUndo !== undefined &&
      lastUndo.toHash === curRef.hash &&
      lastUndo.fromHash === prevHash &&
      (lastUndo.result === 'Pending' || lastUndo.result === 'Applied');
    rollout = {
      fromRevision: prev.currentRevision ? { ...prev.currentRevision } : undefined,
      toRevision: curRef,
      startedAt: nowIso,
      lastProgressAt: nowIso,
      desiredAtStart: Math.max(prev.desired ?? ds.desired, 0),
      progress: marksOf(ds.observedGeneration, 0, 0, 0, 0),
    };
    if (!rollout.fromRevision) delete rollout.fromRevision;
    if (isRollback && lastUndo) {
      rollout.rollback = true;
      if (lastUndo.result === 'Pending') {
        // The undo was applied but the outcome never recorded (a crash between patch and status write):
        // the world shows it happened, so record it rather than applying it again.
        lastUndo = { ...lastUndo, result: 'Applied', message: `restored ${fmtRev({ revision: lastUndo.toRevision, hash: lastUndo.toHash })} (confirmed by observation)` };
        events.push(ev('Normal', Reason.UndoStarted, lastUndo.message, true, EventAction.Undo));
      }
    } else {
      if (lastUndo?.result === 'Pending') {
        lastUndo = { ...lastUndo, result: 'Failed', message: 'not applied: the template changed before the undo was made' };
        events.push(ev('Warning', Reason.UndoSkipped, `Undo of ${fmtRev({ hash: lastUndo.fromHash })} not applied: the template changed to ${fmtRev(curRef)} before the undo was made; a person or tool is acting`, true, EventAction.Undo));
      } else if (prevState === 'Stalled' && spec.onStall.action === 'Undo' && prev.undoPlan?.forHash === prevHash && lastUndo?.fromHash !== prevHash) {
        // An undo was scheduled (delaySeconds) and someone changed the template first: theirs wins.
        events.push(ev('Warning', Reason.UndoSkipped, `Scheduled undo of ${fmtRev(prev.currentRevision)} cancelled: the template changed to ${fmtRev(curRef)} after the stall was detected; a person or tool is acting`, true, EventAction.Undo));
      }
      events.push(ev('Normal', Reason.RolloutStarted, `Rollout from ${fmtRev(rollout.fromRevision)} to ${fmtRev(curRef)} started on ${ds.desired} nodes`));
    }
  } else if (curRef && observed && (!rollout || rollout.completedAt || rollout.toRevision.hash !== curRef.hash) && !complete) {
    // Not complete and nothing tracked: first sight mid-rollout, a new node being populated, or pods lost.
    // Only from observed counters: until the controller observes the generation they describe the
    // previous spec, and the guard stays in its current phase (daemonset-mechanics §4).
    startedNow = true;
    const from = prevHash === undefined ? dominantOtherHash(split.generations, curRef.hash) : undefined;
    rollout = {
      toRevision: curRef,
      startedAt: nowIso,
      lastProgressAt: nowIso,
      desiredAtStart: Math.max(prev.desired ?? 0, ds.desired),
      progress: marksOf(ds.observedGeneration, ds.updated, ds.available, ds.ready, split.onTarget),
    };
    if (from) rollout.fromRevision = { revision: from.revision, hash: from.hash };
    else if (prevHash !== undefined) rollout.fromRevision = { ...curRef };
    const note = from
      ? `Rollout from ${fmtRev(rollout.fromRevision)} to ${fmtRev(curRef)} in progress (first observed now): ${ds.updated}/${ds.desired} updated`
      : `${fmtRev(curRef)} is being placed on nodes: ${ds.available}/${ds.desired} available`;
    events.push(ev('Normal', Reason.RolloutStarted, note));
  }

  // Steady-state DESIRED changes are reported even without a rollout: standard alerts never see them.
  // Nodes deleted from the cluster lower DESIRED legitimately (scale-down); they are not a shrink.
  // The set is kept in status, so a deletion reported on several passes counts once.
  if (rollout && !rollout.completedAt && (obs.removedNodes?.length ?? 0) > 0) {
    rollout.removedNodes = [...new Set([...(rollout.removedNodes ?? []), ...(obs.removedNodes ?? [])])].sort().slice(0, 100);
  }
  // A drop with a node that still exists but left the targets (a taint, a label): name it. A drop made
  // only of deleted nodes is a scale-down and says nothing.
  const shrankNow = observed && prev.desired !== undefined && ds.desired < prev.desired && obs.leftNodes.length > 0;
  if (shrankNow && ds.desired > 0) {
    events.push(ev('Warning', Reason.DesiredShrank, `DESIRED dropped from ${prev.desired} to ${ds.desired}: ${describeLeft(obs.leftNodes)} left the targets`));
  }
  if (observed && ds.desired === 0 && (prev.desired === undefined || prev.desired > 0)) {
    events.push(ev('Warning', Reason.NoNodesMatched, `DaemonSet ${ds.name} matches no node (DESIRED 0): check its nodeSelector, affinity and tolerations`));
  }

  const active = rollout !== undefined && !rollout.completedAt;
  let state: GuardState;
  let cause: CauseClass | '' = '';
  let message: string;
  let requeueAfterMs: number | undefined;
  let action: PlannedAction | undefined;
  let undoPlan: UndoPlan | undefined = prev.undoPlan;
  let repeatedRevision = prev.repeatedRevision;

  if (rollout && active) {
    if (prevState === 'Suspended') rollout.lastProgressAt = nowIso; // the clock does not run while suspended
    // Unobserved counters describe the previous template (daemonset-mechanics §4): raising the marks with
    // them would make later real progress look like none. observedGeneration and the pod split are current.
    const r = raise(
      rollout.progress,
      observed
        ? marksOf(ds.observedGeneration, ds.updated, ds.available, ds.ready, split.onTarget)
        : marksOf(ds.observedGeneration, 0, 0, 0, split.onTarget),
    );
    if (r.progressed) {
      rollout.progress = r.marks;
      rollout.lastProgressAt = nowIso;
    }
    if (obs.leftNodes.length > 0) rollout.leftNodes = mergeLeft(rollout.leftNodes, obs.leftNodes);
    const templateChange = rollout.fromRevision !== undefined && rollout.fromRevision.hash !== rollout.toRevision.hash;
    const expectedDesired = rollout.desiredAtStart - (rollout.removedNodes?.length ?? 0);
    const shrank = observed && templateChange && ds.desired < expectedDesired;
    const idle = now - (parse(rollout.lastProgressAt) ?? now);

    if (complete && !shrank) {
      rollout.completedAt = nowIso;
      state = rollout.rollback ? 'RolledBack' : 'Healthy';
      message = `Rollout to ${fmtRev(rollout.toRevision)} complete: ${ds.updated}/${ds.desired} nodes updated and available`;
      if (rollout.rollback && lastUndo) {
        lastUndo = { ...lastUndo, result: 'Complete', message: `every node is back on ${fmtRev(rollout.toRevision)}` };
        message = `Undo complete: all ${ds.desired} nodes back on ${fmtRev(rollout.toRevision)}, one generation again`;
        events.push(ev('Normal', Reason.UndoComplete, message, true, EventAction.Undo));
      } else {
        events.push(ev('Normal', Reason.RolloutComplete, message));
      }
      undoPlan = undefined;
    } else {
      cause = shrank
        ? ds.desired === 0
          ? 'NoNodesMatched'
          : 'TargetShrank'
        : dominantCause(split.blocked, split.empty);
      const suspectMs = spec.suspectAfterSeconds * 1000;
      const deadlineMs = spec.progressDeadlineSeconds * 1000;
      const sentenceArgs = {
        to: rollout.toRevision,
        cause,
        idleMs: idle,
        blocked: split.blocked,
        empty: split.empty,
        left: rollout.leftNodes ?? [],
        gens: split.generations,
        ds,
        desiredAtStart: expectedDesired,
      };
      // Our undo is applied but the controller has not made the restored revision current yet (it
      // renumbers it on its next sync): that is the rollback starting, not a second stall.
      const undoInFlight = !rollout.rollback && lastUndo?.result === 'Applied' && lastUndo.fromHash === rollout.toRevision.hash;
      const sinceUndo = undoInFlight && lastUndo ? now - (parse(lastUndo.at) ?? now) : 0;
      if (undoInFlight && lastUndo && sinceUndo < deadlineMs) {
        state = 'RollingBack';
        message = `Undo applied at ${lastUndo.at}: waiting for the DaemonSet controller to roll ${fmtRev({ revision: lastUndo.toRevision, hash: lastUndo.toHash })} out again`;
        requeueAfterMs = deadlineMs - sinceUndo;
        cause = '';
      } else if (undoInFlight && lastUndo) {
        state = 'Stalled';
        message = `The undo applied at ${lastUndo.at} has not taken effect for ${fmtDuration(sinceUndo)}: the DaemonSet controller still reports ${fmtRev(rollout.toRevision)} as current`;
      } else if (!observed && idle < deadlineMs) {
        state = rollout.rollback ? 'RollingBack' : 'Progressing';
        message = `Waiting for the DaemonSet controller to observe generation ${ds.generation} (observed ${ds.observedGeneration})`;
        requeueAfterMs = deadlineMs - idle;
        // Nothing is known to be wrong yet: no cause until the controller has acted on the new spec.
        cause = '';
      } else if (idle >= deadlineMs) {
        state = 'Stalled';
        // The threshold crossed, not the growing idle time: a pass that observes nothing new writes nothing.
        message = stallSentence({ ...sentenceArgs, idleMs: deadlineMs, verb: 'has made no progress' });
        if (!observed) message = `The DaemonSet controller has not observed generation ${ds.generation} for ${fmtDuration(deadlineMs)}. ${message}`;
      } else if (idle >= suspectMs) {
        state = 'Suspect';
        message = stallSentence({ ...sentenceArgs, idleMs: suspectMs, verb: 'has made no progress' });
        requeueAfterMs = deadlineMs - idle;
      } else {
        state = rollout.rollback ? 'RollingBack' : 'Progressing';
        message = `Rolling out ${fmtRev(rollout.toRevision)}: ${ds.updated}/${ds.desired} updated, ${ds.available}/${ds.desired} available`;
        if (split.blocked.length + split.empty.length > 0) message += `; waiting on ${split.blocked.length + split.empty.length} node(s)`;
        requeueAfterMs = suspectMs - idle;
        // Early explanation: a definitive failure is named before the deadline passes.
        if (cause === 'Unknown' || cause === 'NotReady') cause = '';
      }

      // Transition events.
      if (state === 'Suspect' && prevState !== 'Suspect') {
        events.push(ev('Warning', Reason.RolloutSuspect, message));
      }
      if (state === 'Stalled' && prevState !== 'Stalled') {
        if (rollout.rollback || undoInFlight) {
          const note = `The undo to ${fmtRev(rollout.toRevision)} itself stalled; not retrying. ${message}`;
          events.push(ev('Warning', Reason.RollbackStalled, note, true, EventAction.Undo));
          if (lastUndo) lastUndo = { ...lastUndo, result: 'RollbackStalled', message: truncate(note, 500) };
        } else {
          events.push(ev('Warning', Reason.RolloutStalled, message));
        }
      }
      if ((state === 'Progressing' || state === 'RollingBack') && (prevState === 'Suspect' || prevState === 'Stalled') && r.progressed && !startedNow) {
        events.push(ev('Normal', Reason.RolloutResumed, `Rollout to ${fmtRev(rollout.toRevision)} is moving again: ${ds.updated}/${ds.desired} updated`));
      }

      // --- What to do about a stall. --------------------------------------------------------------
      if (state === 'Stalled' && !rollout.rollback && !undoInFlight) {
        const plan = planUndo(obs, rollout, split.onTarget, ds.desired);
        const blockers = undoBlockers(obs, rollout, lastUndo, plan);
        const stalledAt = (parse(rollout.lastProgressAt) ?? now) + deadlineMs;
        if (blockers.repeated) {
          repeatedRevision = rollout.toRevision.hash;
          if (prev.repeatedRevision !== rollout.toRevision.hash) {
            events.push(ev('Warning', Reason.RepeatedBrokenRevision, `${fmtRev(rollout.toRevision)} was already undone at ${lastUndo?.at ?? '?'} and has been applied again (a GitOps tool re-applying the template?); not undoing twice`, true, EventAction.Undo));
          }
        }
        if (plan) {
          const keep = prev.undoPlan && prev.undoPlan.forHash === plan.forHash ? prev.undoPlan : undefined;
          undoPlan = keep ?? plan;
        } else {
          undoPlan = undefined;
        }
        if (spec.onStall.action === 'Undo') {
          if (blockers.reason) {
            // Once, on entering Stalled. (Keying this on prev.undoPlan re-emitted it on every pass when there
            // is no plan at all, e.g. the revision to restore is gone from history.)
            if (prevState !== 'Stalled') {
              if (!blockers.repeated) events.push(ev('Warning', Reason.UndoSkipped, `Not undoing ${fmtRev(rollout.toRevision)}: ${blockers.reason}`, true, EventAction.Undo));
            }
            message += ` Undo not possible: ${blockers.reason}.`;
          } else if (plan) {
            const undoAt = stalledAt + spec.onStall.delaySeconds * 1000;
            if (now < undoAt) {
              message += ` Undo to ${fmtRev({ revision: plan.toRevision, hash: plan.toHash })} in ${fmtDuration(undoAt - now)} unless the template changes.`;
              requeueAfterMs = undoAt - now;
            } else {
              if (!(lastUndo?.result === 'Pending' && lastUndo.fromHash === rollout.toRevision.hash)) {
                lastUndo = {
                  at: nowIso,
                  fromHash: rollout.toRevision.hash,
                  toHash: plan.toHash,
                  toRevisionName: plan.toRevisionName,
                  result: 'Pending',
                  message: `undo decided: restore ${fmtRev({ revision: plan.toRevision, hash: plan.toHash })} on ${plan.nodes} node(s)`,
                };
                if (rollout.toRevision.revision !== undefined) lastUndo.fromRevision = rollout.toRevision.revision;
                if (plan.toRevision !== undefined) lastUndo.toRevision = plan.toRevision;
              }
              action = {
                kind: 'Undo',
                fromHash: rollout.toRevision.hash,
                toHash: plan.toHash,
                toRevisionName: plan.toRevisionName,
                expectedUid: ds.uid,
                ...(ds.templateGeneration !== undefined ? { expectedTemplateGeneration: ds.templateGeneration } : {}),
              };
            }
          }
        } else if (plan && !blockers.reason) {
          message += ` Would restore ${fmtRev({ revision: plan.toRevision, hash: plan.toHash })} on ${plan.nodes} node(s) (onStall.action is Report).`;
          if (undoPlan && undoPlan.dryRun === undefined) {
            undoPlan = { ...undoPlan, dryRun: 'NotRun' };
            action = { kind: 'DryRunUndo', toRevisionName: plan.toRevisionName, toHash: plan.toHash, forHash: plan.forHash };
          }
        }
      }
    }
  } else {
    // No rollout in flight.
    const wasInFlight = IN_FLIGHT.has(prevState);
    state = prevState === 'RolledBack' && rollout?.rollback ? 'RolledBack' : 'Healthy';
    message = observed
      ? `${ds.available}/${ds.desired} nodes available on ${fmtRev(curRef)}`
      : `Waiting for the DaemonSet controller to observe generation ${ds.generation}`;
    if (state === 'RolledBack' && lastUndo) message = `Rolled back to ${fmtRev(curRef)} at ${lastUndo.at}; ${message}`;
    if (ds.desired === 0 && observed) cause = 'NoNodesMatched';
    if (wasInFlight && !events.some((e) => e.reason === Reason.RolloutComplete)) {
      events.push(ev('Normal', Reason.RolloutComplete, message));
    }
    undoPlan = undefined;
  }

  // --- Conditions. ---------------------------------------------------------------------------------
  const healthy = state === 'Healthy' || state === 'RolledBack';
  if (healthy) {
    setCond({
      type: 'Ready',
      status: cause === 'NoNodesMatched' ? 'False' : 'True',
      reason: cause === 'NoNodesMatched' ? Reason.NoNodesMatched : Reason.TargetHealthy,
      message,
    });
    setCond({ type: 'Progressing', status: 'True', reason: Reason.RolloutCompleteReason, message });
    setCond({ type: 'Stalled', status: 'False', reason: Reason.NotStalled, message: 'no rollout is stalled' });
  } else if (state === 'Stalled') {
    // The full sentence lives in status.message and the Stalled condition; the others stay short so
    // `kubectl describe` reads well.
    const where = active && rollout ? `rollout to ${fmtRev(rollout.toRevision)}` : 'rollout';
    setCond({ type: 'Ready', status: 'False', reason: cause || 'Unknown', message: `${where} stalled (${cause || 'Unknown'}); see the Stalled condition` });
    setCond({ type: 'Progressing', status: 'False', reason: Reason.ProgressDeadlineExceeded, message: `${where} made no progress for ${spec.progressDeadlineSeconds}s (progressDeadlineSeconds)` });
    setCond({ type: 'Stalled', status: 'True', reason: cause || 'Unknown', message });
  } else {
    setCond({ type: 'Ready', status: 'False', reason: Reason.TargetUnhealthy, message: `target is ${state}` });
    setCond({
      type: 'Progressing',
      status: 'True',
      reason: state === 'Suspect' ? Reason.NoProgress : Reason.NewRevisionRolling,
      message,
    });
    setCond({ type: 'Stalled', status: 'False', reason: Reason.NotStalled, message: state === 'Suspect' ? `suspect: ${message}` : 'rollout is moving' });
  }

  const status: Mutable<GuardStatus> = { ...base, state, cause, message: truncate(message, 2000), conditions };
  if (rollout) status.rollout = rollout;
  else delete status.rollout;
  if (lastUndo) status.lastUndo = lastUndo;
  if (undoPlan) status.undoPlan = undoPlan;
  else delete status.undoPlan;
  if (repeatedRevision) status.repeatedRevision = repeatedRevision;
  ensureRolledBackCondition(
    (c) => {
      const r = setCondition(conditions, c, nowIso, generation);
      conditions = r.conditions;
      return r.changed;
    },
    status,
  );
  status.conditions = conditions;

  const decision: Decision = { status, events };
  if (action) decision.action = action;
  if (requeueAfterMs !== undefined) decision.requeueAfterMs = Math.max(MIN_REQUEUE_MS, requeueAfterMs + REQUEUE_SKEW_MS);
  return decision;
}

/** RolledBack condition: True while the DaemonSet runs the revision an undo restored. */
function ensureRolledBackCondition(setCond: (c: DesiredCondition) => boolean, s: Readonly<GuardStatus>): void {
  const u = s.lastUndo;
  if (!u) {
    setCond({ type: 'RolledBack', status: 'False', reason: Reason.NoUndo, message: 'no undo has been made' });
    return;
  }
  const onRestored = s.currentRevision?.hash === u.toHash;
  if ((u.result === 'Applied' || u.result === 'Complete') && onRestored) {
    setCond({ type: 'RolledBack', status: 'True', reason: Reason.UndoApplied, message: `${u.message} (undo of ${u.fromHash} at ${u.at})` });
  } else if (u.result === 'RollbackStalled') {
    setCond({ type: 'RolledBack', status: 'False', reason: Reason.RollbackStalled, message: u.message });
  } else if (u.result === 'Failed') {
    setCond({ type: 'RolledBack', status: 'False', reason: Reason.UndoFailed, message: u.message });
  } else if (u.result === 'Pending') {
    setCond({ type: 'RolledBack', status: 'False', reason: Reason.UndoStarted, message: u.message });
  } else {
    setCond({ type: 'RolledBack', status: 'False', reason: Reason.NoUndo, message: `last undo (${u.at}) no longer applies: the template changed since` });
  }
}

/** What an undo would restore: the revision the rollout started from, by hash, if still in history. */
function planUndo(
  obs: Extract<Observation, { kind: 'Target' }>,
  rollout: RolloutStatus,
  onTarget: number,
  desired: number,
): UndoPlan | undefined {
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

/** Reasons not to undo, in the order a careful human would check them. */
function undoBlockers(
  obs: Extract<Observation, { kind: 'Target' }>,
  rollout: RolloutStatus,
  lastUndo: GuardStatus['lastUndo'],
  plan: UndoPlan | undefined,
): { reason?: string; repeated: boolean } {
  const from = rollout.fromRevision;
  if (lastUndo && lastUndo.fromHash === rollout.toRevision.hash && lastUndo.result !== 'Pending') {
    // At most one attempt per broken revision. A revision that was undone and is now rolling out again
    // (a rollout that started after the undo) was re-applied, e.g. by a GitOps tool.
    const undone = lastUndo.result === 'Applied' || lastUndo.result === 'Complete' || lastUndo.result === 'RollbackStalled';
    const reapplied = (parse(rollout.startedAt) ?? 0) > (parse(lastUndo.at) ?? 0);
    if (undone && reapplied) {
      return { reason: `${fmtRev(rollout.toRevision)} was already undone once (at ${lastUndo.at}) and has been applied again; never twice for the same revision`, repeated: true };
    }
    return { reason: `an undo of ${fmtRev(rollout.toRevision)} was already attempted at ${lastUndo.at} (${lastUndo.result}: ${lastUndo.message}); not retrying for the same revision`, repeated: false };
  }
  if (obs.ds.undoOptOut) return { reason: `the DaemonSet is annotated ${UNDO_OPT_OUT_ANNOTATION}=disabled`, repeated: false };
  if (!from) return { reason: 'the revision this rollout started from is unknown (the guard first saw it mid-rollout with no older pods)', repeated: false };
  if (from.hash === rollout.toRevision.hash) return { reason: 'the template did not change: there is no earlier revision to restore', repeated: false };
  if (!plan) return { reason: `${fmtRev(from)} is no longer in the DaemonSet's history (ControllerRevision deleted)`, repeated: false };
  return { repeated: false };
}
