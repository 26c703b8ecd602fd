/**
 * Names the operator reads or writes on objects it does not own: annotations users set on DaemonSets,
 * and the one the operator writes with an undo.
 */

/** A DaemonSet annotated `rolloutguard.dev/undo: disabled` is never undone (status still reports). */
export const UNDO_OPT_OUT_ANNOTATION = 'rolloutguard.dev/undo';

/** A DaemonSet annotated `rolloutguard.dev/ignore: "true"` is skipped by policies. */
export const IGNORE_ANNOTATION = 'rolloutguard.dev/ignore';

/**
 * The record of the last undo, written by the operator in the same patch that restores the template
 * (JSON: `{"from":hash,"to":hash,"at":time,"guard":"ns/name"}`). It lives on the DaemonSet so that any
 * guard, including one recreated after the undo, knows the broken revision and never restores it.
 */
export const UNDO_RECORD_ANNOTATION = 'rolloutguard.dev/last-undo';
