/**
 * Report mode, for the plan phase: what an undo would restore, said in the message (with the commands
 * that would do it by hand for a StatefulSet, including the forced rollback an Undo guard makes), and
 * validated once by a server-side dry run.
 */
import { undoCommands, units } from '../messages.js';
import { KINDS } from '../../api/kinds.js';
import type { BlockedNode, RolloutStatus, UndoPlan } from '../../api/types.js';
import type { TargetView } from '../observation.js';
import type { Judged, Plan } from './pass.js';

/** Report mode: say what an undo would restore, and validate it by a dry run once. */
export function reportOnly(plan: UndoPlan, restore: string, out: Plan): Plan {
  out.messageSuffix = ` ${restore} (onStall.action is Report).`;
  if (out.undoPlan && out.undoPlan.dryRun === undefined) {
    out.undoPlan = { ...out.undoPlan, dryRun: 'NotRun' };
    out.action = { kind: 'DryRunUndo', toRevisionName: plan.toRevisionName, toHash: plan.toHash, forHash: plan.forHash };
  }
  return out;
}

/**
 * What Report mode says an undo would do. For a StatefulSet or a Deployment: the commands, and under
 * OrderedReady the pods of the broken revision its controller would never replace after the template is
 * restored. Once the dry run of that undo was refused (`checked`: the stored plan's), no command: the
 * refusal instead, such as a manager that runs the workload by naming it and would revert the undo.
 */
export function reportedRestore(
  { obs: { target }, attribution: a }: Judged,
  rollout: RolloutStatus,
  plan: UndoPlan,
  what: string,
  checked?: Pick<UndoPlan, 'dryRun' | 'dryRunMessage'>,
): string {
  if (checked?.dryRun === 'Rejected')
    return `Would restore ${what} on ${units(target.kind, plan.nodes)}, but the dry run of that undo was refused, so there is no command to run by hand: ${checked.dryRunMessage ?? 'no reason given'}`;
  if (!KINDS[target.kind].undo.reportsHandUndo) return `Would restore ${what} on ${plan.nodes} node(s)`;
  return `Would restore ${what} on ${units(target.kind, plan.nodes)}: ${handUndo(target, a.blocked, rollout, plan)}`;
}

/**
 * The commands that undo a StatefulSet's rollout by hand: `kubectl rollout undo`, then, under
 * OrderedReady, deleting the pods of the broken revision (`rollout.toRevision`) among `blocked`, which its
 * controller never replaces after the template is restored.
 */
export function handUndo(target: TargetView, blocked: readonly BlockedNode[], rollout: RolloutStatus, plan: UndoPlan): string {
  const stuck = target.waitsOnUnreadyPods ? blocked.filter((b) => b.hash === rollout.toRevision.hash) : [];
  return undoCommands(target, plan, stuck);
}
