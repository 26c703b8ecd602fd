/**
 * Phase 0 of decide: the cases where there is no rollout to judge. Each returns a complete decision, or
 * undefined to go on with the pipeline.
 *
 * - spec.suspend: observe nothing, act on nothing, and say so;
 * - the target is missing: a condition, never a crash;
 * - the target, or its namespace, is being deleted: a condition, no verdict and no action (a dying
 *   DaemonSet stops rolling, and its pods go: judged, that would read as a stall);
 * - another guard is in charge of the same DaemonSet: Conflict, naming it, acting on nothing;
 * - the DaemonSet and ControllerRevision caches are half-way between two templates: wait for them.
 */
import { ConditionSet, rolledBackCondition } from '../conditions.js';
import { event } from './plannedEvents.js';
import { MIN_REQUEUE_MS } from './timing.js';
import { sameRevision } from '../revisions.js';
import { Reason } from '../../api/reasons.js';
import type { GuardStatus, PlannedEvent } from '../../api/types.js';
import type { Decision } from '../decision.js';
import type { GuardPeer } from '../observation.js';
import type { DecideInput } from './pass.js';

/** The longest decide sets observations aside while the DaemonSet and revision caches disagree. */
export const CACHE_WAIT_LIMIT_MS = 30_000;

/** Sets Ready, Progressing and Stalled to one reason, for states in which no rollout is judged. */
function notJudging(conds: ConditionSet, ready: 'False' | 'Unknown', reason: string, message: string): boolean {
  const changed = conds.set({ type: 'Ready', status: ready, reason, message });
  conds.set({ type: 'Progressing', status: 'Unknown', reason, message });
  conds.set({ type: 'Stalled', status: 'Unknown', reason, message });
  return changed;
}

/**
 * The guard in charge of a DaemonSet that several guards target: the oldest by creationTimestamp, then
 * by name. Every guard computes the same answer from the same cache, so exactly one acts.
 */
export function guardInCharge(guards: readonly GuardPeer[]): GuardPeer | undefined {
  return [...guards].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.name.localeCompare(b.name)))[0];
}

/** The early decisions described at the top of this file. */
export function settle(input: DecideInput): Decision | undefined {
  const conds = new ConditionSet(input.prev.conditions, input.nowIso, input.policy.generation);
  const events: PlannedEvent[] = [];
  const finish = (status: GuardStatus): Decision => {
    rolledBackCondition(conds, status);
    return { status: { ...status, conditions: conds.list }, events };
  };
  const status =
    suspended(input, conds) ??
    targetMissing(input, conds, events) ??
    targetDeleting(input, conds, events) ??
    notInCharge(input, conds, events);
  if (status) return finish(status);
  return cachesHalfway(input);
}

function suspended({ prev, policy }: DecideInput, conds: ConditionSet): GuardStatus | undefined {
  if (!policy.spec.suspend) return undefined;
  const msg = 'spec.suspend is true: the guard observes nothing and acts on nothing';
  notJudging(conds, 'False', Reason.Suspended, msg);
  return { ...prev, observedGeneration: policy.generation, state: 'Suspended', cause: '', owner: '', message: msg };
}

function targetMissing({ obs, prev, policy }: DecideInput, conds: ConditionSet, events: PlannedEvent[]): GuardStatus | undefined {
  if (obs.kind !== 'TargetMissing') return undefined;
  const msg = `${policy.spec.targetRef.kind} ${obs.targetName} not found in this namespace; waiting for it to be created`;
  if (notJudging(conds, 'False', Reason.TargetNotFound, msg)) events.push(event('Warning', Reason.TargetNotFound, msg, false));
  // A recreated DaemonSet is a new object: its history starts over, so does ours.
  const status: GuardStatus = {
    observedGeneration: policy.generation,
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
  };
  if (prev.lastUndo) status.lastUndo = prev.lastUndo;
  return status;
}

function targetDeleting({ obs, prev, policy }: DecideInput, conds: ConditionSet, events: PlannedEvent[]): GuardStatus | undefined {
  if (obs.kind !== 'TargetDeleting') return undefined;
  const since = obs.since ? ` since ${obs.since}` : '';
  const msg =
    obs.by === 'Namespace'
      ? `the namespace of ${policy.spec.targetRef.kind} ${obs.targetName} is being terminated${since}: the guard judges nothing and acts on nothing while its content is deleted`
      : `${policy.spec.targetRef.kind} ${obs.targetName} is being deleted${since}: the guard judges nothing and acts on nothing while it goes`;
  // Normal, not Warning: someone asked for the deletion. In a terminating namespace the API server
  // refuses the Event, and the announcer does not offer it again.
  if (notJudging(conds, 'False', Reason.TargetDeleting, msg)) events.push(event('Normal', Reason.TargetDeleting, msg, false));
  return notJudged(prev, { observedGeneration: policy.generation, state: 'Unknown', cause: '', message: msg });
}

/**
 * The status of a guard that judges nothing on this pass: what was judged before stays as a record (the
 * rollout, the last undo), what would lead to an action or names a fault (blocked and empty nodes, the
 * owner, an undo plan or skip) is cleared, and `set` says why.
 */
function notJudged(prev: Readonly<GuardStatus>, set: Partial<GuardStatus>): GuardStatus {
  const status: GuardStatus = { ...prev, ...set, blockedNodes: [], blockedNodeCount: 0, emptyNodes: [], emptyNodeCount: 0 };
  delete status.owner;
  delete status.undoPlan;
  delete status.undoSkipped;
  return status;
}

function notInCharge({ obs, prev, policy }: DecideInput, conds: ConditionSet, events: PlannedEvent[]): GuardStatus | undefined {
  if (obs.kind !== 'Target') return undefined;
  const boss = policy.name !== undefined && obs.guards && obs.guards.length > 1 ? guardInCharge(obs.guards) : undefined;
  if (!boss || boss.name === policy.name) return undefined;
  const others = obs.guards!.length - 1;
  const msg = `RolloutGuard ${boss.name} is in charge of ${obs.target.kind} ${obs.target.name} (the oldest of ${others + 1} guards targeting it): this guard reports nothing and acts on nothing; delete one of them`;
  if (notJudging(conds, 'False', Reason.Conflict, msg)) events.push(event('Warning', Reason.Conflict, msg, true));
  // The rollout record is kept: if this guard takes charge later, it still knows where the rollout
  // started from. What it no longer judges (blocked nodes, undo plans) is cleared.
  return notJudged(prev, { observedGeneration: policy.generation, state: 'Conflict', cause: '', message: msg, inCharge: boss.name });
}

/**
 * The DaemonSet and ControllerRevision caches are fed by two watches, and either may be ahead. The
 * status pairs the current revision with the template generation it belongs to; until both caches
 * show a new pair, deciding would mix two templates. Four ways to be half-way:
 *  - the controller has observed the DaemonSet but no ControllerRevision of it is cached yet (a new
 *    or recreated DaemonSet): the controller writes the revision before it reports the generation
 *    observed, so the revision cache is behind. (A DaemonSet the controller has not synced yet has
 *    no revision either; that is the control plane's wait, not the caches', and the verdict times it.)
 *  - the template generation moved (the controller has observed it, and it creates the revision in
 *    that same sync) but the revision cache still shows the old one as current: deciding now would,
 *    for example, take a DESIRED the new template already shrank as the rollout's starting point;
 *  - a new revision became current (a template change, or our undo renumbering an old revision) but
 *    the DaemonSet cache still shows the old template generation: its counters describe the old
 *    template and would mark the new revision complete at once;
 *  - the DaemonSet is observed but its current revision stores another template than the live one
 *    (their digests differ): the controller matches or writes the live template's revision, and
 *    numbers it the newest, before it reports the generation observed, so one of the caches is behind.
 *    Unlike the second and third case this needs no earlier status: a guard created at that moment
 *    (say, right after an undo) would otherwise take the revision the change replaced for the current one.
 * The gaps are normally one watch event long. They are bounded: past CACHE_WAIT_LIMIT_MS the
 * observation is taken as it is, so a disagreement that never resolves cannot freeze the guard.
 */
function cachesHalfway({ obs, prev, cacheWaitMs }: DecideInput): Decision | undefined {
  if (obs.kind !== 'Target') return undefined;
  const { target, currentRevision: cur } = obs;
  const observed = target.observedGeneration >= target.generation;
  const templateMoved =
    target.templateGeneration !== undefined &&
    prev.templateGeneration !== undefined &&
    target.templateGeneration !== prev.templateGeneration;
  const revisionMoved = cur !== undefined && prev.currentRevision !== undefined && !sameRevision(cur, prev.currentRevision, obs.revisions);
  const dsBehind = revisionMoved && target.templateGeneration !== undefined && target.templateGeneration === prev.templateGeneration;
  const revisionsBehind =
    templateMoved &&
    cur !== undefined &&
    prev.currentRevision !== undefined &&
    sameRevision(cur, prev.currentRevision, obs.revisions) &&
    observed;
  const revisionMissing = observed && cur === undefined;
  const templatesDiffer =
    observed && cur?.templateDigest !== undefined && target.templateDigest !== undefined && cur.templateDigest !== target.templateDigest;
  if ((revisionMissing || dsBehind || revisionsBehind || templatesDiffer) && cacheWaitMs < CACHE_WAIT_LIMIT_MS) {
    return { status: { ...prev }, events: [], requeueAfterMs: MIN_REQUEUE_MS, deferred: true };
  }
  return undefined;
}
