/**
 * The RolloutGuard state machine: a pure function of (observation, previous status, policy, now).
 *
 *                         template hash changes / pods missing
 *        +---------+   ------------------------------------->   +-------------+
 *        | Healthy |                                            | Progressing |<------------------+
 *        +---------+   <-------------------------------------   +-------------+                   |
 *           ^  |            updated = available = desired             |                           |
 *           |  |            (kubectl's rule) and no shrink            | no progress for           |
 *           |  | spec not observed by the controller                  | suspectAfterSeconds       | progress
 *           |  | for suspectAfterSeconds (ControllerNotObserving)     | (a configured wait such   | (RolloutResumed)
 *           |  +----------------------------------------------+       |  as minReadySeconds is    |
 *           |                                                 v       v  not "no progress")       |
 *           |                                                  +---------+                        |
 *           +--------------------------------------------------| Suspect |------------------------+
 *           |                                                  +---------+                        |
 *           |                                                       | no progress for             |
 *           |                                                       | progressDeadlineSeconds     |
 *           |                                                       v                             |
 *           |                                                  +---------+                        |
 *           +--------------------------------------------------| Stalled |------------------------+
 *           |      (controller observed; rollout completes)    +---------+
 *           |                                                       | onStall.action = Undo, the stall blamed on the
 *           |                                                       | revision on a Ready node, after delaySeconds,
 *           |                                                       | once per broken revision (status and the
 *           |                                                       | DaemonSet's record), not opted out, not owned
 *           |                                                       | by a controller, template unchanged
 *           |                                                       v
 *           |    +------------+   one generation again   +-------------+  no progress for suspectAfterSeconds
 *           |    | RolledBack |<-------------------------| RollingBack |-----------------------> Suspect
 *           |    +------------+                          +-------------+  ... for progressDeadlineSeconds
 *           |          |                                                  -----------------------> Stalled
 *           +----------+ a new template rolls out:                       (RollbackStalled, never retried)
 *                        Progressing (from RolledBack as from Healthy)   the restored revision crashes on
 *                                                                        failedNodesThreshold nodes --> Failed
 *                                                                        ("the undo did not help", never retried)
 *
 *   Any state --spec.suspend--> Suspended;  target missing or OnDelete --> Unknown;
 *   another guard in charge of the same DaemonSet --> Conflict (reports nothing, acts on nothing).
 *
 * A stall is Stalled whoever's fault it is; only a stall the attribution blames on the new revision is
 * undone, and attribution judges by comparison with the previous revision (compare.ts): a failure the
 * previous revision would meet the same way, on the same node, is not the new revision's. The others
 * say whose it is (status.owner, status.undoSkipped, an UndoSkipped Event). A rollout pushed before the
 * one it replaces reached every node starts from the last revision that did; a return to that revision
 * that the guard did not make is followed (status.rollout.restored), never undone.
 *
 * decide() does no I/O and never reads the clock. It is a short chain of pure phases, each in its own
 * file: settle (preconditions.ts) → track the rollout (track.ts) → attribute (attribute.ts) → reach a
 * verdict (verdict.ts) → plan at most one action (plan.ts) → build status and conditions (report.ts).
 */
import { attribute } from './attribute.js';
import { comparisonOf } from '../compare.js';
import { event, iso, MIN_REQUEUE_MS, REQUEUE_SKEW_MS, sameRevision, sooner } from './kit.js';
import { planAction } from './plan.js';
import { ConditionSet, settle } from './settle.js';
import { Reason } from '../../api/reasons.js';
import { buildStatus, rolledBackCondition } from './report.js';
import { STATUS_LIST_CAP } from '../split.js';
import { trackRollout } from './track.js';
import type { Decision } from '../decision.js';
import type { GuardSpec, GuardStatus, PlannedEvent, RolloutStatus } from '../../api/types.js';
import type { Observation } from '../observation.js';
import { reachVerdict } from './verdict.js';

export { UNDO_OPT_OUT_ANNOTATION } from '../../api/names.js';
export { CACHE_WAIT_LIMIT_MS } from './settle.js';

/** What decide needs from the guard besides its status. */
export interface GuardPolicy {
  spec: GuardSpec;
  generation: number;
  /** The guard's name and creationTimestamp: with several guards on one DaemonSet, the oldest is in charge. */
  name?: string;
  createdAt?: string;
}

/**
 * Computes the next status of a guard. See the diagram at the top of this file. `cacheWaitMs` is how
 * long earlier passes have been set aside because the DaemonSet and ControllerRevision caches disagree
 * (the caller keeps it, see reconcile/guardPass.ts): past CACHE_WAIT_LIMIT_MS the observation is taken
 * as it is.
 */
export function decide(obs: Observation, prev: Readonly<GuardStatus>, policy: GuardPolicy, now: number, cacheWaitMs = 0): Decision {
  const early = settle(obs, prev, policy, iso(now), cacheWaitMs);
  if (early || obs.kind !== 'Target') return early!;
  const { spec, generation } = policy;
  const conds = new ConditionSet(prev.conditions, iso(now), generation);

  const t = trackRollout(obs, prev, spec, now);
  const { ds, split } = t;
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
  delete base.inCharge;
  if (t.curRef) base.currentRevision = { ...t.curRef };
  // The pair (revision, template generation) moves together. Before the controller observes a new
  // template there is no revision for it yet: keep the old pair, or the revision's arrival would look
  // like a DaemonSet cache behind. A guard with no pair yet does not know which template generation an
  // unobserved DaemonSet's current revision belongs to (a guard created right after a template change
  // or an undo), so it records none until the controller observes one.
  const templateMoved =
    ds.templateGeneration !== undefined && prev.templateGeneration !== undefined && ds.templateGeneration !== prev.templateGeneration;
  const revisionMoved =
    t.curRef !== undefined && prev.currentRevision !== undefined && !sameRevision(t.curRef, prev.currentRevision, obs.revisions);
  // Kept, `base` has the previous pair already (or none).
  const keepPair = !t.observed && !revisionMoved && (templateMoved || prev.templateGeneration === undefined);
  if (!keepPair) {
    if (ds.templateGeneration !== undefined) base.templateGeneration = ds.templateGeneration;
    else delete base.templateGeneration;
  }
  const events: PlannedEvent[] = [];
  if (prev.state === 'Unknown' && prev.conditions?.some((c) => c.type === 'Ready' && c.reason === Reason.TargetNotFound)) {
    events.push(event('Normal', Reason.TargetFound, `DaemonSet ${ds.name} found; guarding its rollouts`, false));
  }

  if (ds.strategy === 'OnDelete') {
    const msg =
      'DaemonSet uses updateStrategy OnDelete: pods change only when deleted by hand, so there is no rollout to guard by deadline';
    const changed = conds.set({ type: 'Ready', status: 'False', reason: Reason.OnDeleteStrategy, message: msg });
    conds.set({ type: 'Progressing', status: 'Unknown', reason: Reason.OnDeleteStrategy, message: msg });
    conds.set({ type: 'Stalled', status: 'Unknown', reason: Reason.OnDeleteStrategy, message: msg });
    if (changed) events.push(event('Warning', Reason.OnDeleteStrategy, msg, false));
    const status: GuardStatus = { ...base, state: 'Unknown', cause: '', message: msg };
    delete status.rollout;
    rolledBackCondition(conds, status);
    return { status: { ...status, conditions: conds.list }, events };
  }

  const a = attribute(
    {
      split,
      nodes: obs.nodes,
      minReadySeconds: ds.minReadySeconds,
      observed: t.observed,
      incomplete: t.active && !t.complete,
      left: t.rollout?.leftNodes ?? [],
      shrank: t.shrank,
      ...(t.active && t.rollout ? { since: Date.parse(t.rollout.startedAt) } : {}),
      ...(ds.warning ? { warning: ds.warning } : {}),
      volumeChanged: volumeChange(obs, t.rollout),
      ...(t.active ? { comparison: comparisonOf(obs.revisions, t.rollout, spec.failedNodesThreshold) } : {}),
    },
    now,
  );
  const v = reachVerdict(t, a, prev, spec, now);
  const p = planAction(obs, prev, policy, t, a, v, now);
  const r = buildStatus(base, conds, spec, t, a, v, p);

  const decision: Decision = { status: r.status, events: [...events, ...t.events, ...v.events, ...p.events, ...r.events] };
  if (p.action) decision.action = p.action;
  const requeue = sooner(p.requeueAfterMs, v.requeueAfterMs);
  if (requeue !== undefined) decision.requeueAfterMs = Math.max(MIN_REQUEUE_MS, requeue + REQUEUE_SKEW_MS);
  return decision;
}

/**
 * Whether the rollout's new revision added or changed a volume, compared with the revision it started
 * from (undefined when either revision's volumes are not known).
 */
function volumeChange(
  obs: Extract<Observation, { kind: 'Target' }>,
  rollout: RolloutStatus | undefined,
): (name: string) => boolean | undefined {
  const to = rollout ? obs.revisions.find((r) => r.hash === rollout.toRevision.hash)?.volumes : undefined;
  const from = rollout?.fromRevision ? obs.revisions.find((r) => r.hash === rollout.fromRevision?.hash)?.volumes : undefined;
  return (name) => {
    if (!to || !from || to[name] === undefined) return undefined;
    return from[name] !== to[name];
  };
}
