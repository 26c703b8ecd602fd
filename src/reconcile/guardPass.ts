/**
 * The observe-and-decide half of a reconcile pass for one guard, shared by the operator's reconciler
 * and the `check` command:
 *
 *   caches ──gather──▶ Observation ──decide(…, remembered)──▶ Decision ──▶ { hold? relist? commit() }
 *
 * It reads and updates the guard's {@link GuardMemory} in one order, so that callers cannot call the
 * pieces out of order:
 * - the target memory (which nodes were targets on the last recorded pass, to name the ones that leave);
 * - the cache wait (how long decide has been setting passes aside for disagreeing caches);
 * - the progress hold (when status was last written, to coalesce progress-only writes);
 * - the blocked units (every unit the last recorded pass found blocked, where status names 20), given
 *   to decide while the status is still the one that pass wrote.
 * The caller persists what the decision says and then calls `commit()`, so that a pass that held its
 * write, waited for the caches or failed sees the same departures again.
 */
import { failsOfItsOwn } from '../domain/causes.js';
import { decide } from '../domain/decide/decide.js';
import type { GuardPolicy, Remembered } from '../domain/decide/pass.js';
import type { BlockedNode, GuardStatus } from '../api/types.js';
import type { Decision } from '../domain/decision.js';
import type { Observation } from '../domain/observation.js';
import { mergePatchDiff } from '../api/mergePatch.js';
import { gather } from './gather.js';
import type { PodsPending } from './targets/shared.js';
import { GuardMemory } from './guardMemory.js';
import type { CacheView } from './ports.js';

/**
 * A status change that is only progress (counters, node lists, message, lastProgressAt) is written at
 * most once per this interval per guard; the latest one is flushed by a requeue when the interval ends.
 * A rollout's pods change several times per node (old pod deleted, new one created, scheduled, ready),
 * and writing each of those would cost a guard several status writes per node, more requests than the
 * DaemonSet controller itself makes for the rollout. Transitions — a new state or cause, an Event, an
 * action, a new generation observed, a node newly blocked for a definite reason — are never held, so
 * detection and explanation are not delayed. (The queue's batch period, runtime/workQueue.ts, may put a
 * pass itself off by up to 500 ms after the last one; never a pass for a failed pod or a deadline.)
 * The price: status.rollout.lastProgressAt may be recorded up to this much after the progress was seen.
 */
export const PROGRESS_WRITE_INTERVAL_MS = 1000;

/** What decide needs besides the caches: the guard's previous status and policy, and the time. */
export interface PassInput {
  /** The DaemonSet the guard targets (in the guard's namespace). */
  targetName: string;
  prev: Readonly<GuardStatus>;
  policy: GuardPolicy;
  now: number;
}

export interface DecidedPass {
  kind: 'Decided';
  obs: Observation;
  decision: Decision;
  /**
   * > 0: the decision is a progress-only change within {@link PROGRESS_WRITE_INTERVAL_MS} of this
   * guard's last write. Write nothing, do not commit, and look again after this many ms.
   */
  holdMs: number;
  /** Set every CACHE_RELIST_AFTER_MS of a cache wait: how long it has lasted; time to relist the caches. */
  relistAfterWaitMs?: number;
  /** The status now holds what this observation showed: from here on gather compares with it. */
  commit(): void;
}

/** The target's pods not listed yet (nothing is decided), or the pass decided. */
export type PassResult = PodsPending | DecidedPass;

/** Observes guard `memory`'s target in `cache` and decides on it. */
export function observe(cache: CacheView, memory: GuardMemory, input: PassInput): PassResult {
  const { targetName, prev, policy, now } = input;
  const gathered = gather(cache, memory.targets, memory.namespace, { kind: policy.spec.targetRef.kind, name: targetName }, now, prev);
  if (gathered.kind === 'PodsPending') return gathered;
  const remembered: Remembered = { cacheWaitMs: memory.cacheWait.waitedMs(now) };
  const blockedBefore = memory.blockedBehind(prev.blockedNodes);
  if (blockedBefore) remembered.blockedBefore = blockedBefore;
  const decision = decide(gathered, prev, policy, now, remembered);
  const deferred = decision.deferred === true;
  const result: DecidedPass = {
    kind: 'Decided',
    obs: gathered,
    decision,
    holdMs: progressHold(memory.lastWriteAt, prev, decision, now),
    commit: () => {
      if (deferred) return;
      memory.targets.commit();
      memory.recordBlocked(decision.status.blockedNodes, decision.blocked);
    },
  };
  const waited = memory.cacheWait.record(deferred, now);
  if (waited !== undefined) result.relistAfterWaitMs = waited;
  return result;
}

/** One guard observed pass after pass with a memory of its own, for a caller that follows one guard. */
export class GuardPass {
  readonly memory: GuardMemory;

  /** `key` is the guard's `namespace/name`. */
  constructor(key: string) {
    this.memory = new GuardMemory(key);
  }

  observe(cache: CacheView, input: PassInput): PassResult {
    return observe(cache, this.memory, input);
  }
}

/** How long to hold this decision's status back: > 0 only for a progress-only change inside the interval. */
function progressHold(lastWriteAt: number | undefined, prev: Readonly<GuardStatus>, d: Decision, now: number): number {
  if (lastWriteAt === undefined || d.events.length > 0 || d.action) return 0;
  const next = d.status;
  if (next.state !== prev.state || next.cause !== prev.cause || next.observedGeneration !== prev.observedGeneration) return 0;
  if (newlyFailing(prev.blockedNodes, next.blockedNodes)) return 0;
  const wait = lastWriteAt + PROGRESS_WRITE_INTERVAL_MS - now;
  if (wait <= 0) return 0;
  return mergePatchDiff(prev, next) === undefined ? 0 : wait;
}

/**
 * A node newly blocked for a definite reason (an image that cannot be pulled, a pod that cannot be
 * scheduled, a crash loop) is what a person acts on: it is named at once, not after the write interval.
 */
export function newlyFailing(prev: readonly BlockedNode[] = [], next: readonly BlockedNode[] = []): boolean {
  return newlyFailingNodes(prev, next).length > 0;
}

/** The nodes of `next` newly blocked for a definite reason (see {@link newlyFailing}). */
export function newlyFailingNodes(prev: readonly BlockedNode[] = [], next: readonly BlockedNode[] = []): BlockedNode[] {
  const known = new Set(prev.map((b) => `${b.node}\u0000${b.reason}`));
  // A reason too vague to act on (a pod still pending, not ready yet) can wait for the next write.
  return next.filter((b) => !known.has(`${b.node}\u0000${b.reason}`) && failsOfItsOwn(b));
}
