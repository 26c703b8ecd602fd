/**
 * Phase 4b of decide: the forced rollback of a StatefulSet. After an undo restores the template, the
 * StatefulSet controller under OrderedReady waits for every pod to be Ready before it replaces any, and
 * a pod of the undone revision that never became Ready never will: the rollback stays stuck
 * (kubernetes#67250). The StatefulSet docs' remedy is deleting that pod; this phase plans it as an
 * eviction (the Eviction API honours PodDisruptionBudgets), under every one of these conditions:
 *  - the target's controller waits on unready pods (`waitsOnUnreadyPods`, a StatefulSet under
 *    OrderedReady; under Parallel the controller replaces the pod itself), the guard's action is Undo
 *    and onStall.forcedRollback is on;
 *  - the rollout returns to the previous revision (an undo recorded by a guard, or a person's or GitOps
 *    tool's revert: a person asked for the old revision, and the stuck pod is what stands in the way)
 *    and the controller has observed the restored template: never before the template is back;
 *  - the pod is on the undone revision, not Ready and not being deleted: never a Ready pod, never a pod
 *    of another revision;
 *  - no pod of the undone revision is being deleted (one at a time), highest ordinal first, as the
 *    controller itself proceeds;
 *  - a refused eviction (a budget without room) is retried with backoff, the same pod only; no other
 *    pod is touched meanwhile.
 * Every eviction is recorded in status before it is made (result Requested) and after (reconcile). A
 * guard that does not evict (Report, or forcedRollback off) says which pods stay stuck and the command.
 */
import { EVICTIONS_CAP, type Eviction, type ForcedRollback } from '../../api/forcedRollback.js';
import { fmtDuration, fmtRev } from '../messages.js';
import type { NodeView, PodView } from '../observation.js';
import { nodeFault } from '../nodeAttribution.js';
import { claimFault } from '../claimAttribution.js';
import type { Judged, Plan } from './pass.js';

/** The first retry of a refused eviction, doubled per refusal up to the cap. */
export const EVICTION_BACKOFF_MS = 10_000;
export const EVICTION_BACKOFF_CAP_MS = 5 * 60_000;

/** When a refused eviction may be tried again. */
export function retryAt(e: Eviction): number {
  const wait = Math.min(EVICTION_BACKOFF_CAP_MS, EVICTION_BACKOFF_MS * 2 ** Math.max(0, e.attempts - 1));
  return Date.parse(e.at) + wait;
}

/** A pod of the undone revision with its ordinal. */
interface Stuck {
  pod: PodView;
  ordinal: number;
}

/**
 * The pods left on revision `hash` that are not Ready and not going, highest ordinal first: the ones its
 * controller will not replace. Not one whose node is down, or whose claim keeps it from its node: a pod
 * of the restored revision would wait there the same way, and evicting it helps nothing.
 */
export function stuckOn(units: readonly NodeView[], hash: string): Stuck[] {
  return units
    .filter((u) => !nodeFault(u.health))
    .flatMap((u) =>
      u.pods
        .filter((p) => p.hash === hash && !p.ready && !p.deleting && !claimFault(u, p, p.waitingMessage ?? ''))
        .map((pod) => ({ pod, ordinal: u.ordinal ?? -1 })),
    )
    .sort((a, b) => b.ordinal - a.ordinal);
}

/**
 * The revision left behind by a return to the previous one: our undo, any guard's (rollback) or a person's
 * or a GitOps tool's revert (restored), on a target whose controller waits on unready pods and has observed
 * the restored template. Undefined when there is none, or before the template is back.
 */
function leftBehind({ obs: { target }, tracked: t }: Judged): string | undefined {
  if (!target.waitsOnUnreadyPods) return undefined;
  const r = t.rollout;
  if (!(r?.rollback || r?.restored) || !r.fromRevision || r.fromRevision.hash === r.toRevision.hash) return undefined;
  if (target.observedGeneration < target.generation) return undefined;
  return r.fromRevision.hash;
}

/** Phase 4b: see the top of this file. `plan` is phase 4's; at most one action per pass. */
export function planForcedRollback(pass: Judged, plan: Plan): Plan {
  const out: Plan = { ...plan };
  const kept = pass.prev.forcedRollback;
  const undone = leftBehind(pass);
  if (!undone) {
    if (kept) out.forcedRollback = kept;
    return out;
  }
  const stuck = stuckOn(pass.obs.nodes, undone);
  const rollout = pass.tracked.rollout;
  const from = fmtRev(rollout?.fromRevision);
  const { onStall } = pass.policy.spec;
  if (onStall.action !== 'Undo' || !onStall.forcedRollback) {
    if (kept) out.forcedRollback = kept;
    return saidStuck(pass, out, stuck, from);
  }
  const record: ForcedRollback = kept?.forHash === undone ? kept : { forHash: undone, evictions: [] };
  out.forcedRollback = record;
  if (plan.action) return out;
  const going = pass.obs.nodes.flatMap((u) => u.pods).find((p) => p.hash === undone && p.deleting);
  if (going) {
    out.messageSuffix += ` Forced rollback: ${going.name} of the undone ${from} is going; the next waits for it.`;
    return out;
  }
  const next = stuck.find((s) => s.pod.uid);
  if (!next?.pod.uid) return out;
  return evict(pass, out, record, next, from);
}

/**
 * The guard does not evict (Report, or forcedRollback off): it says which pods the revert left behind,
 * that the controller will not replace them, and the command that would.
 */
function saidStuck(pass: Judged, out: Plan, stuck: readonly Stuck[], from: string): Plan {
  if (stuck.length === 0) return out;
  const names = stuck.map((s) => s.pod.name);
  const who = pass.tracked.rollout?.restored ? 'Reverted by a person or tool' : 'Reverted';
  const be = names.length === 1 ? 'is' : 'are';
  out.messageSuffix += ` ${who} to ${fmtRev(pass.tracked.rollout?.toRevision)}, but ${names.join(', ')} ${be} still on ${from} and not Ready: under OrderedReady the ${pass.obs.target.kind} controller will not replace ${names.length === 1 ? 'it' : 'them'}; kubectl delete pod ${names.join(' ')} -n ${pass.obs.target.namespace} finishes the rollback.`;
  return out;
}

function evict(pass: Judged, out: Plan, record: ForcedRollback, next: Stuck, from: string): Plan {
  const { pod } = next;
  const uid = pod.uid ?? '';
  const last = record.evictions.find((e) => e.uid === uid);
  if (last?.result === 'Evicted' || last?.result === 'Gone') return out; // asked once; the pod is going
  if (last?.result === 'Refused' && pass.now < retryAt(last)) {
    const wait = retryAt(last) - pass.now;
    out.messageSuffix += ` Forced rollback: evicting ${pod.name} was refused (${last.message ?? 'a PodDisruptionBudget'}); trying again in ${fmtDuration(wait)}.`;
    out.requeueAfterMs = out.requeueAfterMs === undefined ? wait : Math.min(out.requeueAfterMs, wait);
    return out;
  }
  const entry: Eviction = { pod: pod.name, uid, at: pass.nowIso, result: 'Requested', attempts: (last?.attempts ?? 0) + 1 };
  const evictions = [...record.evictions.filter((e) => e.uid !== uid), entry].slice(-EVICTIONS_CAP);
  out.forcedRollback = { forHash: record.forHash, evictions };
  out.action = { kind: 'Evict', pod: pod.name, uid, forHash: record.forHash };
  out.messageSuffix += ` Forced rollback: evicting ${pod.name}, not Ready on the undone ${from}: under OrderedReady the ${pass.obs.target.kind} controller does not replace it.`;
  return out;
}
