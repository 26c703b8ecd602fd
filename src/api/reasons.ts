/**
 * Event and condition reasons: one CamelCase constant per category, so dashboards and alert rules
 * can match on them. Events complement status (the API server expires them after an hour).
 */
export const Reason = {
  // Events on transitions
  RolloutStarted: 'RolloutStarted',
  RolloutSuspect: 'RolloutSuspect',
  RolloutStalled: 'RolloutStalled',
  RolloutResumed: 'RolloutResumed',
  RolloutComplete: 'RolloutComplete',
  /** Every node is updated and available; the rollout is watched for its bake window. */
  RolloutBaking: 'RolloutBaking',
  /** The new revision crashed after starting on failedNodesThreshold Ready nodes. */
  RevisionFailed: 'RevisionFailed',
  DesiredShrank: 'DesiredShrank',
  NoNodesMatched: 'NoNodesMatched',
  TargetNotFound: 'TargetNotFound',
  TargetFound: 'TargetFound',
  /** The DaemonSet or its namespace is being deleted: nothing is judged and nothing is done. */
  TargetDeleting: 'TargetDeleting',
  UndoStarted: 'UndoStarted',
  UndoComplete: 'UndoComplete',
  UndoSkipped: 'UndoSkipped',
  UndoFailed: 'UndoFailed',
  RollbackStalled: 'RollbackStalled',
  RepeatedBrokenRevision: 'RepeatedBrokenRevision',
  /** The forced rollback evicted a StatefulSet pod stuck on the undone revision. */
  PodEvicted: 'PodEvicted',
  /** The Eviction API refused it (a PodDisruptionBudget without room): retried with backoff. */
  EvictionRefused: 'EvictionRefused',
  /** Another guard targets the same DaemonSet and is in charge of it. */
  Conflict: 'Conflict',
  /** progressDeadlineSeconds is not longer than the target's minReadySeconds. */
  DeadlineNotAboveMinReadySeconds: 'DeadlineNotAboveMinReadySeconds',
  // Condition reasons
  ProgressDeadlineExceeded: 'ProgressDeadlineExceeded',
  /** Progressing=False when the verdict is Failed. */
  RevisionFailedReason: 'RevisionFailed',
  /** Progressing=True while the rollout bakes. */
  Baking: 'Baking',
  NewRevisionRolling: 'NewRevisionRolling',
  NoProgress: 'NoProgress',
  RolloutCompleteReason: 'RolloutComplete',
  NotStalled: 'NotStalled',
  TargetHealthy: 'TargetHealthy',
  TargetUnhealthy: 'TargetUnhealthy',
  OnDeleteStrategy: 'OnDeleteStrategy',
  Suspended: 'Suspended',
  NoUndo: 'NoUndo',
  UndoApplied: 'UndoApplied',
  /** Ready=False: the installed CRD refused a status value it does not know; it is older than the operator. */
  CRDOutdated: 'CRDOutdated',
} as const;

/** The `action` field of events.k8s.io/v1 Events, by what the controller was doing. */
export const EventAction = {
  Observe: 'Observe',
  Undo: 'Undo',
  Evict: 'Evict',
} as const;
