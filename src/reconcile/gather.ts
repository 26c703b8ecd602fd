/**
 * Gather: read the informer caches (never the API) and build the plain Observation decide needs,
 * through the adapter of the target's kind (targets/): only the adapters know what a DaemonSet, a
 * StatefulSet or a Deployment is.
 *
 * Pods and ControllerRevisions are matched to their target by controller ownerReference UID, as the
 * workload controllers and `kubectl rollout history` do: labels alone could pick up another
 * controller's pods.
 */
import type { GuardStatus, TargetKind } from '../api/types.js';
import type { Observation } from '../domain/observation.js';
import type { CacheView } from './ports.js';
import type { TargetMemory } from './targetMemory.js';
import { observeDaemonSet } from './targets/daemonSet.js';
import { observeStatefulSet } from './targets/statefulSet.js';
import { observeDeployment } from './targets/deployment.js';
import type { ObserveTarget, PodsPending } from './targets/shared.js';

/** One adapter per kind: a new kind is one entry here, its adapter in targets/ and its tests. */
const ADAPTERS: Readonly<Record<TargetKind, ObserveTarget>> = {
  DaemonSet: observeDaemonSet,
  StatefulSet: observeStatefulSet,
  Deployment: observeDeployment,
};

/** For callers whose cache always holds the pods (no `podCache`): the observation itself. */
export function observationOf(g: Observation | PodsPending): Observation {
  if (g.kind === 'PodsPending') throw new Error(`the pods of ${g.target} are not cached`);
  return g;
}

/**
 * Builds the observation for the target `kind` `namespace/name` at time `now` (see the adapter of the
 * kind). `status` is the guard's previous status: while it follows a rollout the pods are needed
 * whatever the counters say.
 */
export function gather(
  cache: CacheView,
  targets: TargetMemory,
  namespace: string,
  target: { kind: TargetKind; name: string },
  now: number,
  status?: Readonly<GuardStatus>,
): Observation | PodsPending {
  // A kind cached on demand starts its cache with its first guard: until it has listed, a missing target
  // is not known to be missing, and the pass waits (the cache's first list enqueues every guard).
  if (cache.workloadsListed && !cache.workloadsListed(target.kind)) return { kind: 'PodsPending', target: target.name };
  return ADAPTERS[target.kind](cache, targets, namespace, target.name, now, status);
}
