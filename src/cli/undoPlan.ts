/**
 * The pure half of `rollout-guard undo`: which guard judges the DaemonSet, the spec it is judged by,
 * and what decide's plan says: undo now, or why not. The rules are decide's (domain/decide/plan.ts), not
 * this file's: the guard's own spec with `onStall.action: Undo` and no delay, over the guard's status, so
 * the command refuses exactly where the operator in Undo mode would, with the operator's reason.
 */
import type { SlimGuard } from '../api/objects.js';
import type { GuardSpec, GuardStatus, TargetKind } from '../api/types.js';
import { DEFAULT_KIND } from '../api/kinds.js';
import type { Decision, PlannedAction } from '../domain/decision.js';
import { fmtRev, units } from '../domain/messages.js';
import { stuckOn } from '../domain/decide/forcedRollback.js';
import type { Observation } from '../domain/observation.js';
import { undoRequest, type UndoOutcome, type UndoRequest } from '../domain/undo.js';
import { ExitCode } from './command.js';

export type UndoAction = Extract<PlannedAction, { kind: 'Undo' }>;

/** What the plan says: undo (with the request the operator would send), or refused and why. */
export type UndoVerdict =
  | {
      kind: 'Undo';
      request: UndoRequest;
      summary: string;
      /** What follows the template undo (a StatefulSet's stuck pods). */ then?: string;
    }
  | { kind: 'Refused'; code: number; message: string };

/** The spec the undo is judged by: the guard's, asking for the undo now (the person running undo is the delay). */
export function undoSpec(spec: GuardSpec): GuardSpec {
  return { ...spec, onStall: { ...spec.onStall, action: 'Undo', delaySeconds: 0 } };
}

/**
 * The guard in charge of workload `kind` `name` among `guards`: the oldest by creationTimestamp, then by
 * name, as the operator picks it. A guard of another kind's workload of the same name is not its guard.
 */
export function guardOf(guards: ReadonlyArray<Readonly<SlimGuard>>, kind: TargetKind, name: string): Readonly<SlimGuard> | undefined {
  const key = (g: Readonly<SlimGuard>): string => g.metadata.creationTimestamp ?? '';
  const targets = (g: Readonly<SlimGuard>): boolean => g.spec.targetRef?.name === name && (g.spec.targetRef.kind ?? DEFAULT_KIND) === kind;
  return guards
    .filter((g) => targets(g) && !g.metadata.deletionTimestamp)
    .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.metadata.name.localeCompare(b.metadata.name)))[0];
}

const refused = (message: string): UndoVerdict => ({ kind: 'Refused', code: ExitCode.Refused, message });

/**
 * decide's answer for DaemonSet `namespace/name`, as an undo verdict: an Undo action is the undo; a
 * stall whose undo the plan refuses is refused with the plan's reason and message; anything but Stalled
 * or Failed has nothing to undo.
 *
 * The command judges on this machine's clock and without the Warning Events the operator watches, so an
 * Undo it plans is made only on the operator's own verdict too (`operator`, the guard's stored status):
 * Stalled or Failed, blamed on the revision, for the very revision the plan would undo. A clock ahead of
 * the operator's cannot turn a rollout still within its deadline into an undo, and an Event that
 * exonerates the revision, which the command does not read, has already been read by the operator.
 */
export function judgeUndo(
  obs: Observation,
  d: Decision,
  target: { namespace: string; name: string; kind?: string },
  operator: Readonly<GuardStatus>,
  spec?: Readonly<GuardSpec>,
): UndoVerdict {
  if (obs.kind === 'TargetMissing')
    return {
      kind: 'Refused',
      code: ExitCode.NotFound,
      message: `${target.kind ?? DEFAULT_KIND} ${target.name} not found in namespace ${target.namespace}`,
    };
  if (obs.kind === 'TargetDeleting') return { kind: 'Refused', code: ExitCode.NotFound, message: d.status.message ?? 'being deleted' };
  const s = d.status;
  const state = s.state ?? 'Unknown';
  if (d.action?.kind === 'Undo') {
    const a = d.action;
    const nodes = s.undoPlan?.nodes;
    const to = fmtRev({ revision: s.lastUndo?.toRevision ?? s.undoPlan?.toRevision, hash: a.toHash });
    const from = fmtRev({ revision: s.lastUndo?.fromRevision, hash: a.fromHash });
    const summary = `restore ${to} in place of ${state.toLowerCase()} ${from}${nodes !== undefined ? ` on ${units(obs.target.kind, nodes)}` : ''}`;
    const withoutVerdict = withoutOperatorVerdict(operator, a.fromHash);
    if (withoutVerdict) return refused(withoutVerdict);
    const kind = obs.target.kind;
    // Pods left on a revision the rollout superseded stay stuck after the undo as the undone revision's do.
    const superseded = (s.rollout?.superseded ?? []).map((r) => r.hash);
    const then = spec ? afterUndo(obs, a.fromHash, spec, superseded) : undefined;
    return { kind: 'Undo', request: undoRequest(kind, target.namespace, target.name, a), summary, ...(then ? { then } : {}) };
  }
  // Another guard in charge of the DaemonSet, or this one suspended: the operator acts on nothing.
  if (state === 'Conflict') return refused(`undo refused (Conflict): ${s.message ?? 'another guard is in charge of the DaemonSet'}`);
  if (state === 'Suspended') return refused('nothing to undo: the guard is suspended (spec.suspend), so it acts on nothing');
  const verdict = state === 'Stalled' || state === 'Failed';
  if (verdict && s.undoSkipped) return refused(`undo refused (${s.undoSkipped.reason}): ${s.undoSkipped.message}`);
  if (!verdict) return refused(`nothing to undo: the rollout is ${state}`);
  // Stalled with no undo and no refusal: an undo already in flight, a rollback, or admission being compared first.
  return refused(`undo not possible now: ${s.message ?? `the rollout is ${state}`}`);
}

/** Why the operator's stored status does not back an undo of `fromHash`, or undefined when it does. */
function withoutOperatorVerdict(operator: Readonly<GuardStatus>, fromHash: string): string | undefined {
  const judged = operator.state === 'Stalled' || operator.state === 'Failed';
  if (judged && operator.owner === 'Revision' && operator.rollout?.toRevision.hash === fromHash) return undefined;
  const said = `${operator.state ?? 'no state'}${operator.owner ? `, owner ${operator.owner}` : ''}`;
  return (
    `undo refused (NoOperatorVerdict): the operator has not judged ${fmtRev({ hash: fromHash })} stalled by the revision's own fault ` +
    `(the guard's status says ${said}); the command acts only on the operator's verdict, timed on its clock and read with the Events it watches`
  );
}

/** What the command says and exits with for the undo port's outcome. */
export function outcomeVerdict(o: UndoOutcome, summary: string): { code: number; message: string } {
  switch (o.kind) {
    case 'Applied':
      return { code: ExitCode.Ok, message: `undone: ${summary}` };
    case 'AlreadyAtTarget':
      return { code: ExitCode.Ok, message: `already undone: the DaemonSet's template is that of the revision to restore` };
    case 'OptedOut':
      return { code: ExitCode.Refused, message: 'undo refused (OptedOut): the DaemonSet is now annotated rolloutguard.dev/undo=disabled' };
    case 'NotUndone':
      return { code: ExitCode.Refused, message: `undo refused: ${o.detail}` };
    case 'TemplateChanged':
      return {
        code: ExitCode.Refused,
        message: `undo refused: the template changed since the stall was judged (${o.detail}); a person or tool is acting`,
      };
    case 'Failed':
      return { code: ExitCode.Failure, message: `undo failed: ${o.detail}` };
  }
}

/**
 * After a StatefulSet's template undo under OrderedReady: the pods of the undone revision (and of the
 * revisions the rollout superseded on the way to it, `superseded`) that are not Ready, which its
 * controller will not replace, and who evicts them (the operator, for a guard whose onStall.action is
 * Undo with forcedRollback on; else a person, with the command).
 */
export function afterUndo(
  obs: Extract<Observation, { kind: 'Target' }>,
  fromHash: string,
  spec: Readonly<GuardSpec>,
  superseded: readonly string[] = [],
): string | undefined {
  if (!obs.target.waitsOnUnreadyPods) return undefined;
  const left = stuckOn(obs.nodes, [fromHash, ...superseded]);
  if (left.length === 0) return undefined;
  const stuck = left.map((s) => s.pod.name);
  const pods = stuck.join(', ');
  const on = left.every((s) => s.pod.hash === fromHash) ? 'the undone revision' : 'the undone revision or one the rollout superseded';
  if (spec.onStall.action === 'Undo' && spec.onStall.forcedRollback)
    return `then the operator evicts ${pods}, one at a time (not Ready on ${on}: under OrderedReady the ${obs.target.kind} controller does not replace ${stuck.length === 1 ? 'it' : 'them'})`;
  return `then ${pods} must go by hand: kubectl delete pod ${stuck.join(' ')} -n ${obs.target.namespace} (under OrderedReady the ${obs.target.kind} controller does not replace ${stuck.length === 1 ? 'it' : 'them'}, and this guard does not evict: its onStall.action is not Undo, or forcedRollback is off)`;
}
