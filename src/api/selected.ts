/** The status record a guard with a selector keeps per DaemonSet (status.daemonSets). */

/** A DaemonSet a guard with a selector selects, the guard that guards it and that guard's verdict. */
export interface SelectedDaemonSet {
  daemonSet: string;
  guard: string;
  state: string;
  cause?: string;
  owner?: string;
  /** Set when another guard guards it instead: HandWrittenGuard or OverlappingSelector. */
  conflict?: string;
}
