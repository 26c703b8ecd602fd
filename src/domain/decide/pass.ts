/**
 * The pass decide makes, as one input and one growing result: each phase reads what the phases before
 * it found and adds its own named result (settle → track → attribute → verdict → plan → report).
 * Declaring every stage here, and nothing else, keeps the phases a chain: a phase imports the stages,
 * never another phase.
 */
import type { Split } from '../split.js';
import type { TargetView, Observation } from '../observation.js';
import type { PlannedAction } from '../decision.js';
import type {
  BlockedNode,
  CauseClass,
  EmptyNode,
  FaultOwner,
  GuardSpec,
  GuardState,
  GuardStatus,
  PlannedEvent,
  RevisionRef,
  RolloutStatus,
  UndoPlan,
  UndoRecord,
  UndoSkip,
} from '../../api/types.js';
import type { ForcedRollback } from '../../api/forcedRollback.js';

/** What decide needs from the guard besides its status. */
export interface GuardPolicy {
  spec: GuardSpec;
  generation: number;
  /** The guard's name and creationTimestamp: with several guards on one DaemonSet, the oldest is in charge. */
  name?: string;
  createdAt?: string;
}

export type TargetObservation = Extract<Observation, { kind: 'Target' }>;

/** What decide is given: the observation, the status it last wrote, the guard, and the time. */
export interface DecideInput {
  obs: Observation;
  prev: Readonly<GuardStatus>;
  policy: GuardPolicy;
  now: number;
  nowIso: string;
  /** How long earlier passes were set aside while the DaemonSet and revision caches disagree. */
  cacheWaitMs: number;
  /**
   * Every unit the pass that wrote `prev` found blocked, uncapped (prev.blockedNodes names at most
   * STATUS_LIST_CAP); undefined when this process did not make that pass.
   */
  blockedBefore?: readonly BlockedNode[];
}

/** What the caller remembers of earlier passes of the guard, for decide (reconcile/guardPass.ts). */
export interface Remembered {
  /** See {@link DecideInput.cacheWaitMs}; 0 when absent. */
  cacheWaitMs?: number;
  /** See {@link DecideInput.blockedBefore}. */
  blockedBefore?: readonly BlockedNode[];
}

/** The input once settle has found a target to judge. */
export interface TargetInput extends DecideInput {
  obs: TargetObservation;
  spec: GuardSpec;
}

/** What tracking found, for the phases after it. */
export interface Tracked {
  target: TargetView;
  split: Split;
  /** The controller has observed the DaemonSet's generation: its counters describe the live template. */
  observed: boolean;
  curRef: RevisionRef | undefined;
  rollout: RolloutStatus | undefined;
  /** A rollout is tracked and not complete. */
  active: boolean;
  /** The rollout began tracking in this pass: its first marks are a baseline, not progress to announce. */
  startedNow: boolean;
  /** A high-water mark rose in this pass. */
  progressed: boolean;
  /** Every node updated and available, by the controller's counters, DESIRED did not shrink, and the bake is over. */
  complete: boolean;
  /** Every node is updated and available and the rollout is in its bake window (see spec.bakeSeconds). */
  baking: boolean;
  /** When the bake ends, in ms, while baking. */
  bakeEndsAt?: number;
  /** DESIRED is below what the rollout started with (less nodes deleted from the cluster). */
  shrank: boolean;
  expectedDesired: number;
  lastUndo: UndoRecord | undefined;
  unobserved: GuardStatus['unobserved'];
  events: PlannedEvent[];
}

/** After tracking. */
export interface Tracking extends TargetInput {
  tracked: Tracked;
}

/** The verdict of attribution for the whole rollout. */
export interface Attribution {
  blocked: BlockedNode[];
  empty: EmptyNode[];
  /** Whose fault the rollout not completing is; `''` when nothing blocks it. */
  owner: FaultOwner | '';
  cause: CauseClass | '';
  /** Nodes that are Ready and where the new revision itself fails: the evidence an undo needs. */
  revisionEvidence: string[];
  /**
   * The API server refuses the new pods and no node shows it yet (a surge pod refused while the old pods
   * run on): the DaemonSet controller's own words, quoted. Evidence like a failing node when the owner
   * is the revision.
   */
  refusal?: string;
  /**
   * The latest moment a configured wait ends (or ended) on some node, in ms: time spent waiting for it
   * is not time without progress.
   */
  waitEndsAt?: number;
  /**
   * Admission refuses the new pods and whether it would refuse the previous revision's is not known yet:
   * the node to try a pod of the previous revision (Comparison.previous) on ('' when no node is named).
   * No undo until known.
   */
  compareAdmission?: string;
  /** The ControllerRevision to try, with compareAdmission. */
  compareWith?: string;
  /**
   * On a target whose controller waits on unready pods, when no unit is blocked: the pods of another
   * revision that are not Ready, which the controller waits on before it replaces anything, and which
   * revision they are on (see {@link HeldOn}). Never evidence against the rollout's new revision.
   */
  held?: Held;
}

/**
 * Where the pods a controller waits on were left:
 *  - `undone`: on the revision a return to the previous one left behind (after an undo or a revert);
 *  - `superseded`: on a revision a later one superseded before it reached every unit (a fix pushed
 *    forward, or a second broken push): the rollout's own leftovers, judged by what they show, and the
 *    new revision not tried yet;
 *  - `before`: on the revision they ran before the rollout reached them, failing already then.
 */
export type HeldOn = 'undone' | 'superseded' | 'before';

/** The pods a controller waits on (Attribution.held). */
export interface Held {
  pods: BlockedNode[];
  on: HeldOn;
}

/** After attribution. */
export interface Attributed extends Tracking {
  attribution: Attribution;
}

/** The verdict on one pass. */
export interface Verdict {
  state: GuardState;
  cause: CauseClass | '';
  owner: FaultOwner | '';
  message: string;
  requeueAfterMs?: number;
  /** Our undo is applied and the controller has not made the restored revision current yet. */
  undoInFlight: boolean;
  /** Every node is updated and available and the rollout is in its bake window. */
  baking?: boolean;
  lastUndo: UndoRecord | undefined;
  events: PlannedEvent[];
}

/** After the verdict. */
export interface Judged extends Attributed {
  verdict: Verdict;
}

/** What the plan adds to the verdict. */
export interface Plan {
  action?: PlannedAction;
  undoPlan?: UndoPlan;
  undoSkipped?: UndoSkip;
  repeatedRevision?: string;
  lastUndo: UndoRecord | undefined;
  /** A StatefulSet's forced rollback (forcedRollback.ts). */
  forcedRollback?: ForcedRollback;
  /** Appended to the verdict's message. */
  messageSuffix: string;
  requeueAfterMs?: number;
  events: PlannedEvent[];
}

/** After the plan: everything report needs. */
export interface Planned extends Judged {
  plan: Plan;
}
