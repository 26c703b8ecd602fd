/**
 * What a RolloutGuard's spec means when a field is left out: the same values the CRD defaults to, kept
 * here once, next to {@link withDefaults}, so the API server, the reconciler and the policy controller
 * agree. A test compares them with the CRD.
 */
import type { GuardSpec, GuardSpecInput } from './types.js';

export const GUARD_DEFAULTS = {
  /** Two minutes without progress is already unusual for one node's pod to come up. */
  suspectAfterSeconds: 120,
  /** Ten minutes, the same default as a Deployment's progressDeadlineSeconds. */
  progressDeadlineSeconds: 600,
  /** Report by default: acting on a cluster is an explicit choice. */
  action: 'Report' as const,
  /** No grace period by default: the deadline already is one. */
  delaySeconds: 0,
  /**
   * On: whoever chose Undo asked for the previous revision, and under OrderedReady the template alone
   * never brings it back (the controller waits forever for the broken pod). Only pods that are not Ready,
   * on the undone revision, are evicted, one at a time and through PodDisruptionBudgets: they serve
   * nothing, and the controller recreates each on the restored revision with its claims.
   */
  forcedRollback: true,
  /**
   * Two Ready nodes where the new revision crashed after starting: one crash can be bad luck on one
   * node, the same crash on a second node is the revision. It catches "every updated pod crashes within a
   * minute of starting" by the second node, while a single node that restarts once is tolerated.
   */
  failedNodesThreshold: 2,
  /**
   * Three minutes of watching after the last node is updated and available. A node agent that crashes
   * on a timer, a first scrape or a first heartbeat usually does so within a minute or two of starting;
   * the bake makes that a failure of the rollout, with the revision it started from still the undo target.
   */
  bakeSeconds: 180,
};

/**
 * The largest difference between the operator's clock and the API server's at which an undo is still
 * made. The stall deadline is measured on the operator's clock against times the cluster's clocks
 * wrote; 5 s is under a tenth of the shortest deadline a guard accepts, and far above what time sync
 * leaves (milliseconds) or what the estimate from one-second `Date` headers can get wrong.
 */
export const MAX_CLOCK_SKEW_MS = 5_000;

/** Fills in defaults the API server would have applied, for guards created before a default existed. */
export function withDefaults(spec: GuardSpecInput): GuardSpec {
  return {
    targetRef: spec.targetRef,
    suspectAfterSeconds: spec.suspectAfterSeconds ?? GUARD_DEFAULTS.suspectAfterSeconds,
    progressDeadlineSeconds: spec.progressDeadlineSeconds ?? GUARD_DEFAULTS.progressDeadlineSeconds,
    onStall: {
      action: spec.onStall?.action ?? GUARD_DEFAULTS.action,
      delaySeconds: spec.onStall?.delaySeconds ?? GUARD_DEFAULTS.delaySeconds,
      forcedRollback: spec.onStall?.forcedRollback ?? GUARD_DEFAULTS.forcedRollback,
    },
    failedNodesThreshold: spec.failedNodesThreshold ?? GUARD_DEFAULTS.failedNodesThreshold,
    bakeSeconds: spec.bakeSeconds ?? GUARD_DEFAULTS.bakeSeconds,
    suspend: spec.suspend ?? false,
  };
}
