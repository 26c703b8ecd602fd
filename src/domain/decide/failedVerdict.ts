/**
 * The verdicts of decide's phase 3 (verdict.ts) given on evidence rather than time: the new revision
 * crashed after starting on failedNodesThreshold Ready units, so it is Failed at once, however the
 * counters look; or the revision our own undo restored crashes too, and the undo did not help. Both
 * speak of the kind's units (a DaemonSet's nodes, the pods of the other kinds).
 */
import { causeHint } from '../causes.js';
import { KNOCKED_OUT } from '../compare.js';
import { failureCause } from '../evidence.js';
import { fmtRev, list, truncate, unitWord } from '../messages.js';
import { event } from './plannedEvents.js';
import { EventAction, Reason } from '../../api/reasons.js';
import type { Tracked, Verdict } from './pass.js';
import type { GuardSpec, GuardStatus, RolloutFailures, RolloutStatus } from '../../api/types.js';

/** The revision our undo restored crashes on failedNodesThreshold nodes. */
export function rollbackFailedVerdict(
  t: Tracked,
  rollout: RolloutStatus,
  f: RolloutFailures,
  prev: Readonly<GuardStatus>,
  v: Verdict,
): Verdict {
  // Failed, as any verdict on evidence rather than time; announced as the rollback's own failure.
  v.state = 'Failed';
  v.cause = failureCause(f);
  v.owner = 'Revision';
  v.message =
    `The undo did not help: the restored ${fmtRev(rollout.toRevision)} fails too on ${f.count} ${unitWord(t.target.kind, f.count !== 1)} (${list(f.nodes.map((n) => n.node))}). ` +
    `The fault is not the undone revision's alone (something both depend on, or the nodes); the guard never undoes its own undo: fix forward.`;
  if (prev.state !== 'Failed') {
    const note = `${v.message} Not retrying.`;
    v.events.push(event('Warning', Reason.RollbackStalled, note, true, EventAction.Undo));
    if (v.lastUndo) v.lastUndo = { ...v.lastUndo, result: 'RollbackStalled', message: truncate(note, 500) };
  }
  return v;
}

/** Evidence against the revision reached failedNodesThreshold: the verdict Failed, whatever the counters. */
export function failedVerdict(t: Tracked, rollout: RolloutStatus, f: RolloutFailures, v: Verdict, spec: GuardSpec, nowIso: string): void {
  const { target } = t;
  // Evidence, not time: the new revision crashed after starting on enough Ready nodes. The verdict is
  // given at once, however the counters look, so an undo contains it to the nodes already reached.
  rollout.failedAt ??= nowIso;
  v.state = 'Failed';
  v.cause = failureCause(f);
  v.owner = 'Revision';
  const crashed = f.nodes.map((n) =>
    n.reason !== KNOCKED_OUT
      ? `${n.node} (${n.restarts} restart${n.restarts === 1 ? '' : 's'}, ${n.reason}, first at ${n.at})`
      : n.host
        ? `${n.node} (its node ${n.host} NotReady since ${n.at}, right after the pod started)`
        : `${n.node} (NotReady since ${n.at}, right after the new pod started)`,
  );
  const reached = t.split.generations.find((g) => g.hash === rollout.toRevision.hash)?.nodes ?? target.updated;
  const what =
    v.cause === 'NodeNotReady'
      ? `takes its own node down: ${nodesDown(f)} turned NotReady right after its pod started there, Ready under the previous revision, while no node still on it fell`
      : `crashes after starting on ${f.count} Ready ${unitWord(target.kind, f.count !== 1)}`;
  v.message =
    `${fmtRev(rollout.toRevision)} ${what} ` +
    `(failedNodesThreshold ${spec.failedNodesThreshold}): ${list(crashed)}. It runs on ${reached} of ${target.desired} ${unitWord(target.kind)}. ` +
    `Cause ${v.cause}: ${causeHint(v.cause, target.kind)}. The revision is at fault: an undo would restore ${fmtRev(rollout.fromRevision)}.`;
}

/**
 * The nodes a revision took down, in nodes whatever the kind's unit, and only those (not the units that
 * crashed beside them): the distinct nodes of the units listed as taken down, so that two pods of a
 * StatefulSet or a Deployment on one node are one node down. The evidence's count is exact past the
 * list's cap, so it stands when every failure is a node of a DaemonSet taken down.
 */
function nodesDown(f: RolloutFailures): string {
  const down = f.nodes.filter((n) => n.reason === KNOCKED_OUT);
  const listed = new Set(down.map((n) => n.host ?? n.node)).size;
  const onlyNodesDown = down.length === f.nodes.length && down.every((n) => n.host === undefined);
  const count = onlyNodesDown ? Math.max(listed, f.count) : listed;
  return `${count} node${count === 1 ? '' : 's'}`;
}
