/**
 * A Deployment's rollout as decide observes it, for the phase tests of decide: revision A on three pods,
 * then a template change to B whose pods (the units: one per pod, named by it) are given by each test.
 * Built on the fixtures' builders, with the target's kind a Deployment.
 */
import type { NodeView, Observation, PodView, TargetView } from '../../src/domain/observation.js';
import { HASH, node, pod, rev, targetObs } from './fixtures.js';

/** A unit of a Deployment: pod `name`, its only pod. */
export function podUnit(name: string, p: PodView): NodeView {
  return node(name, [{ ...p, name }]);
}

/** A Deployment's view has no template generation annotation (a DaemonSet's has). */
const DEPLOYMENT = { kind: 'Deployment', templateGeneration: undefined } as const;

/** The three pods of revision A, Ready. */
export const OLD_PODS: readonly NodeView[] = ['web-a-1', 'web-a-2', 'web-a-3'].map((n) => podUnit(n, pod({ hash: HASH.A })));

/** Deployment `decoder` settled on revision A (3 replicas). */
export function settledOnA(target: Partial<TargetView> = {}): Observation {
  return targetObs({ target: { ...DEPLOYMENT, ...target }, revisions: [rev(HASH.A, 1)], nodes: [...OLD_PODS] });
}

/**
 * Deployment `decoder` rolling to revision B (generation 2): `units` are every pod it runs, and the
 * counters are `target`'s (by default one new pod created beside the three old ones, none of them updated
 * and available: updated 1, available 3, one old pod to go).
 */
export function rollingToB(units: readonly NodeView[], target: Partial<TargetView> = {}): Observation {
  return targetObs({
    target: {
      ...DEPLOYMENT,
      generation: 2,
      observedGeneration: 2,
      current: 4,
      updated: 1,
      ready: 3,
      available: 3,
      outdated: 3,
      ...target,
    },
    revisions: [rev(HASH.A, 1), rev(HASH.B, 2)],
    nodes: [...units],
  });
}
