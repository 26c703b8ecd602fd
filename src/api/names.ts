/**
 * Every name the operator shares with the API server: its own group, versions, kinds and resources,
 * the built-in kinds it reads or writes, and the annotations and labels it reads or writes on objects.
 * Kept in one module so that a rename is one edit and no two places can spell a name differently.
 */

/** API group and version of our own kinds. */
export const GROUP = 'rolloutguard.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** Our kinds and their plurals (the resource names in API paths). */
export const GUARD_KIND = 'RolloutGuard';
export const GUARD_RESOURCE = 'rolloutguards';
export const POLICY_KIND = 'RolloutGuardPolicy';
export const POLICY_RESOURCE = 'rolloutguardpolicies';

/** The built-in kinds a guard targets and reads. */
export const APPS_API_VERSION = 'apps/v1';
export const DAEMONSET_KIND = 'DaemonSet';
export const EVENTS_API_VERSION = 'events.k8s.io/v1';
/** Leader election's Lease, and the reviews behind `--metrics-secure`. */
export const COORDINATION_API_VERSION = 'coordination.k8s.io/v1';
export const AUTHENTICATION_API_VERSION = 'authentication.k8s.io/v1';
export const AUTHORIZATION_API_VERSION = 'authorization.k8s.io/v1';

/** The reportingController of our Events. */
export const CONTROLLER_NAME = 'rolloutguard.dev/rollout-guard';

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

/** On a generated guard: the policy that generated it, as a label (selectable) ... */
export const POLICY_LABEL = 'rolloutguard.dev/policy';
/** ... and as `rolloutguardpolicy/<name>`, for people reading the guard. */
export const GENERATED_BY_ANNOTATION = 'rolloutguard.dev/generated-by';

/** The DaemonSet-template generation annotation: moves exactly when the pod template changes. */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';
/** The pod/revision label carrying the template hash. */
export const HASH_LABEL = 'controller-revision-hash';
