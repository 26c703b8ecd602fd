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
 *   In RollingBack, a StatefulSet under OrderedReady has the pods left on the undone revision that are not
 *   Ready evicted one at a time (the forced rollback, forcedRollback.ts): its controller never replaces them.
 *   In Stalled, so are the pods a rollout left on a revision it superseded (a fix pushed forward): the new
 *   revision is never tried until they go, and is judged by what it does after (no undo on their account).
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
 * decide() does no I/O and never reads the clock. It is a chain of pure phases over one input and one
 * growing result (pass.ts), each phase in its own file: settle (settle.ts) → track the rollout
 * (track.ts) → open the status (report.ts) → attribute (attribute.ts) → reach a verdict (verdict.ts) →
 * plan at most one action (plan.ts, then a StatefulSet's forced rollback: forcedRollback.ts) → build
 * status and conditions (report.ts).
 */
import { attributePass } from './attribute.js';
import { iso, MIN_REQUEUE_MS, REQUEUE_SKEW_MS, sooner } from './timing.js';
import { planAction } from './plan.js';
import { planForcedRollback } from './forcedRollback.js';
import { settle } from './settle.js';
import { buildStatus, openStatus } from './report.js';
import { trackRollout } from './track.js';
import { reachVerdict } from './verdict.js';
import type { Decision } from '../decision.js';
import type { GuardStatus } from '../../api/types.js';
import type { Observation } from '../observation.js';
import type { Attributed, DecideInput, GuardPolicy, Judged, Planned, Remembered, TargetInput, Tracking } from './pass.js';

/**
 * Computes the next status of a guard. See the diagram at the top of this file. `remembered` is what
 * the caller keeps of earlier passes (reconcile/guardPass.ts): how long they were set aside because the
 * DaemonSet and ControllerRevision caches disagree (past CACHE_WAIT_LIMIT_MS the observation is taken as
 * it is), and every unit the last one found blocked.
 */
export function decide(
  obs: Observation,
  prev: Readonly<GuardStatus>,
  policy: GuardPolicy,
  now: number,
  remembered: Remembered = {},
): Decision {
  const input: DecideInput = { obs, prev, policy, now, nowIso: iso(now), cacheWaitMs: remembered.cacheWaitMs ?? 0 };
  if (remembered.blockedBefore) input.blockedBefore = remembered.blockedBefore;
  const settled = settle(input);
  if (settled || input.obs.kind !== 'Target') return settled!;
  const target: TargetInput = { ...input, obs: input.obs, spec: policy.spec };
  const tracking: Tracking = { ...target, tracked: trackRollout(target) };
  const opened = openStatus(tracking);
  if ('decision' in opened) return opened.decision;
  const attributed: Attributed = { ...tracking, attribution: attributePass(tracking) };
  const judged: Judged = { ...attributed, verdict: reachVerdict(attributed) };
  const planned: Planned = { ...judged, plan: planForcedRollback(judged, planAction(judged)) };
  const report = buildStatus(planned, opened);

  const { tracked, verdict, plan } = planned;
  const events = [...opened.events, ...tracked.events, ...verdict.events, ...plan.events, ...report.events];
  const decision: Decision = { status: report.status, events, blocked: report.blocked };
  if (plan.action) decision.action = plan.action;
  const requeue = sooner(plan.requeueAfterMs, verdict.requeueAfterMs);
  if (requeue !== undefined) decision.requeueAfterMs = Math.max(MIN_REQUEUE_MS, requeue + REQUEUE_SKEW_MS);
  return decision;
}
