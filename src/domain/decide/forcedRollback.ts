/**
 * Phase 4b of decide: the forced rollback of a StatefulSet. After an undo restores the template, the
 * StatefulSet controller under OrderedReady waits for every pod to be Ready before it replaces any, and
 * a pod of the undone revision that never became Ready never will: the rollback stays stuck
 * (kubernetes#67250). The StatefulSet docs' remedy is deleting that pod; this phase plans it as an
 * eviction (the Eviction API honours PodDisruptionBudgets), under every one of these conditions:
 *  - the target is a StatefulSet under OrderedReady (under Parallel the controller replaces the pod
 *    itself), the guard's action is Undo and onStall.forcedRollback is on;
 *  - the rollout is a rollback (an undo recorded by a guard) and the controller has observed the
 *    restored template: never before the template is back;
 *  - the pod is on the undone revision, not Ready and not being deleted: never a Ready pod, never a pod
 *    of another revision;
 *  - no pod of the undone revision is being deleted (one at a time), highest ordinal first, as the
 *    controller itself proceeds;
 *  - a refused eviction (a budget without room) is retried with backoff, the same pod only; no other
 *    pod is touched meanwhile.
 * Every eviction is recorded in status before it is made (result Requested) and after (reconcile).
 */
import { EVICTIONS_CAP, type Eviction, type ForcedRollback } from '../../api/forcedRollback.js';
import { fmtDuration, fmtRev } from '../messages.js';
import type { PodView } from '../observation.js';
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

/** Whether this pass may force the rollback at all (see the conditions at the top of this file). */
function applies({ obs: { target }, policy: { spec }, tracked: t }: Judged): string | undefined {
  if (target.kind !== 'StatefulSet' || target.podManagement !== 'OrderedReady') return undefined;
  if (spec.onStall.action !== 'Undo' || !spec.onStall.forcedRollback) return undefined;
  const r = t.rollout;
  if (!r?.rollback || !r.fromRevision || r.fromRevision.hash === r.toRevision.hash) return undefined;
  if (target.observedGeneration < target.generation) return undefined;
  return r.fromRevision.hash;
}

/** Phase 4b: see the top of this file. `plan` is phase 4's; at most one action per pass. */
export function planForcedRollback(pass: Judged, plan: Plan): Plan {
  const out: Plan = { ...plan };
  const kept = pass.prev.forcedRollback;
  const undone = applies(pass);
  if (!undone) {
    if (kept) out.forcedRollback = kept;
    return out;
  }
  const record: ForcedRollback = kept?.forHash === undone ? kept : { forHash: undone, evictions: [] };
  out.forcedRollback = record;
  if (plan.action) return out;
  const onUndone: Stuck[] = pass.obs.nodes.flatMap((u) =>
    u.pods.filter((p) => p.hash === undone).map((pod) => ({ pod, ordinal: u.ordinal ?? -1 })),
  );
  const from = fmtRev(pass.tracked.rollout?.fromRevision);
  const going = onUndone.find((s) => s.pod.deleting);
  if (going) {
    out.messageSuffix += ` Forced rollback: ${going.pod.name} of the undone ${from} is going; the next waits for it.`;
    return out;
  }
  const next = onUndone.filter((s) => !s.pod.ready && s.pod.uid).sort((a, b) => b.ordinal - a.ordinal)[0];
  if (!next?.pod.uid) return out;
  return evict(pass, out, record, next, from);
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
  out.messageSuffix += ` Forced rollback: evicting ${pod.name}, not Ready on the undone ${from}: under OrderedReady the StatefulSet controller does not replace it.`;
  return out;
}
