/**
 * Phase 4b of decide: the forced rollback of a StatefulSet. After an undo restores the template, the
 * StatefulSet controller under OrderedReady waits for every pod to be Ready before it replaces any, and
 * a pod of the undone revision that never became Ready never will: the rollback stays stuck
 * (kubernetes#67250). The StatefulSet docs' remedy is deleting that pod; this phase plans it as an
 * eviction (the Eviction API honours PodDisruptionBudgets), under every one of these conditions:
 *  - the target's controller waits on unready pods (`waitsOnUnreadyPods`, a StatefulSet under
 *    OrderedReady; under Parallel the controller replaces the pod itself), the guard's action is Undo
 *    and onStall.forcedRollback is on;
 *  - the controller has observed the template the rollout is going to, and either
 *    - the rollout returns to the previous revision (an undo recorded by a guard, or a person's or
 *      GitOps tool's revert: a person asked for the old revision, and the stuck pod is what stands in
 *      the way): the pods left on the undone revision, as soon as the template is back; or
 *    - the rollout superseded a revision before it reached every pod (a fix pushed forward, or a second
 *      push): the pods left on the superseded revision, only once the rollout is Stalled on them (the
 *      controller had the whole deadline to replace them itself, and the new revision was never tried);
 *  - the pod is on such a revision, not Ready and not being deleted: never a Ready pod, never a pod of
 *    the revision the rollout goes to or of the one it started from;
 *  - no pod of those revisions is being deleted (one at a time), highest ordinal first, as the
 *    controller itself proceeds;
 *  - a refused eviction (a budget without room) is retried with backoff, the same pod only; no other
 *    pod is touched meanwhile.
 * Every eviction is recorded in status before it is made (result Requested) and after (reconcile). A
 * guard that does not evict (Report, or forcedRollback off) says which pods stay stuck and the command.
 */
import { EVICTIONS_CAP, type Eviction, type ForcedRollback } from '../../api/forcedRollback.js';
import { fmtDuration, fmtRev, list } from '../messages.js';
import type { RevisionRef } from '../../api/types.js';
import type { NodeView, PodView } from '../observation.js';
import { nodeFault } from '../nodeAttribution.js';
import { claimFault } from '../claimAttribution.js';
import type { HeldOn, Judged, Plan } from './pass.js';

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
 * The pods left on the revisions `hashes` that are not Ready and not going, highest ordinal first: the ones
 * their controller will not replace. Not one whose node is down, or whose claim keeps it from its node: a
 * pod of the revision the rollout goes to would wait there the same way, and evicting it helps nothing.
 */
export function stuckOn(units: readonly NodeView[], hashes: readonly string[]): Stuck[] {
  return units
    .filter((u) => !nodeFault(u.health))
    .flatMap((u) =>
      u.pods
        .filter((p) => hashes.includes(p.hash) && !p.ready && !p.deleting && !claimFault(u, p, p.waitingMessage ?? ''))
        .map((pod) => ({ pod, ordinal: u.ordinal ?? -1 })),
    )
    .sort((a, b) => b.ordinal - a.ordinal);
}

/** The revisions whose pods the controller leaves stuck, and how the rollout left them. */
interface LeftBehind {
  /** The undone revision after a return, or the superseded ones. */
  revisions: RevisionRef[];
  /** `undone`: a return to the previous revision; `superseded`: a rollout past revisions that never reached every pod. */
  on: Exclude<HeldOn, 'before'>;
}

/**
 * The revisions a rollout left pods behind on, on a target whose controller waits on unready pods and has
 * observed the template the rollout goes to: the one a return to the previous revision left behind (our
 * undo, any guard's, or a person's or GitOps tool's revert), or, once the rollout is Stalled on their
 * pods, the revisions it superseded. Undefined when there are none, or before the template is observed.
 */
function leftBehind({ obs: { target }, tracked: t, attribution: a, verdict: v }: Judged): LeftBehind | undefined {
  const r = t.rollout;
  if (!target.waitsOnUnreadyPods || !r || target.observedGeneration < target.generation) return undefined;
  if ((r.rollback || r.restored) && r.fromRevision && r.fromRevision.hash !== r.toRevision.hash)
    return { revisions: [r.fromRevision], on: 'undone' };
  if (!t.active || v.state !== 'Stalled' || a.held?.on !== 'superseded') return undefined;
  const revisions = (r.superseded ?? []).filter((x) => x.hash !== r.toRevision.hash && x.hash !== r.fromRevision?.hash);
  return revisions.length > 0 ? { revisions, on: 'superseded' } : undefined;
}

/** "the undone revision 2 (hash)", "superseded revision 2 (hash)": where a stuck pod was left. */
function whereLeft(left: LeftBehind, hash: string): string {
  const rev = fmtRev(left.revisions.find((r) => r.hash === hash) ?? { hash });
  return left.on === 'undone' ? `the undone ${rev}` : `superseded ${rev}`;
}

/** Phase 4b: see the top of this file. `plan` is phase 4's; at most one action per pass. */
export function planForcedRollback(pass: Judged, plan: Plan): Plan {
  const out: Plan = { ...plan };
  const kept = pass.prev.forcedRollback;
  const left = leftBehind(pass);
  if (!left) {
    if (kept) out.forcedRollback = kept;
    return out;
  }
  const hashes = left.revisions.map((r) => r.hash);
  const stuck = stuckOn(pass.obs.nodes, hashes);
  const { onStall } = pass.policy.spec;
  if (onStall.action !== 'Undo' || !onStall.forcedRollback) {
    if (kept) out.forcedRollback = kept;
    return saidStuck(pass, out, stuck, left);
  }
  const going = pass.obs.nodes.flatMap((u) => u.pods).find((p) => hashes.includes(p.hash) && p.deleting);
  // The record follows the revision whose pods are evicted: a new one when the rollout left pods on another.
  const forHash = (going ?? stuck[0]?.pod)?.hash;
  const record: ForcedRollback =
    kept && hashes.includes(kept.forHash) && (forHash === undefined || kept.forHash === forHash)
      ? kept
      : { forHash: forHash ?? hashes[0]!, evictions: [] };
  out.forcedRollback = record;
  if (plan.action) return out;
  if (going) {
    out.messageSuffix += ` Forced rollback: ${going.name} of ${whereLeft(left, going.hash)} is going; the next waits for it.`;
    return out;
  }
  const next = stuck.find((s) => s.pod.uid);
  if (!next?.pod.uid) return out;
  return evict(pass, out, record, next, whereLeft(left, next.pod.hash));
}

/**
 * The guard does not evict (Report, or forcedRollback off): it says which pods the rollout left behind,
 * that the controller will not replace them, and the command that would.
 */
function saidStuck(pass: Judged, out: Plan, stuck: readonly Stuck[], left: LeftBehind): Plan {
  if (stuck.length === 0) return out;
  const names = stuck.map((s) => s.pod.name);
  const { kind, namespace } = pass.obs.target;
  const to = fmtRev(pass.tracked.rollout?.toRevision);
  const be = names.length === 1 ? 'is' : 'are';
  const them = names.length === 1 ? 'it' : 'them';
  const where = list([...new Set(stuck.map((s) => whereLeft(left, s.pod.hash)))]);
  const command = `kubectl delete pod ${names.join(' ')} -n ${namespace}`;
  if (left.on === 'superseded') {
    out.messageSuffix += ` ${names.join(', ')} ${be} still on ${where} and not Ready: under OrderedReady the ${kind} controller will not replace ${them}, so ${to} is never tried; ${command} lets the rollout go on.`;
    return out;
  }
  const who = pass.tracked.rollout?.restored ? 'Reverted by a person or tool' : 'Reverted';
  out.messageSuffix += ` ${who} to ${to}, but ${names.join(', ')} ${be} still on ${where.replace(/^the undone /, '')} and not Ready: under OrderedReady the ${kind} controller will not replace ${them}; ${command} finishes the rollback.`;
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
  out.messageSuffix += ` Forced rollback: evicting ${pod.name}, not Ready on ${from}: under OrderedReady the ${pass.obs.target.kind} controller does not replace it.`;
  return out;
}
