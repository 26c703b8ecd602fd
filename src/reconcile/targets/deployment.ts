/**
 * The gather adapter of Deployments. A Deployment's units are its pods: they have no stable name, so each
 * pod is its own unit, named by the pod (whose name begins with its ReplicaSet's) and judged on the node
 * it runs on. Its history is its ReplicaSets, one per pod template (shared.ts reads them as revisions),
 * and its pods are found through them: pod → ReplicaSet → Deployment.
 *
 * Its counters are its controller's, as `kubectl get deploy` shows them: desired is spec.replicas,
 * current every pod its ReplicaSets run, updated those of the live template's ReplicaSet, ready and
 * available across all of them. What only a Deployment states is said to decide as kind-neutral facts:
 * - old pods still running beside the updated ones (`outdated`): not complete until they are gone;
 * - spec.paused (`pausedBySpec`): a configured wait, never a stall;
 * - its Progressing condition False with ProgressDeadlineExceeded (`ownDeadlineExceeded`): its own
 *   deadline fired, which the verdict never contradicts;
 * - the Recreate strategy: every old pod is gone before a new one starts;
 * - its ReplicaSet's FailedCreate Warnings, or ReplicaFailure condition (quota, admission): why pods that
 *   should exist do not (`warning`);
 * - Flagger's Canary managing it (a `<name>-primary` copy the Canary controls): its manager (`owner`), as
 *   a controller ownerReference is, so no undo fights it.
 *
 * ```
 *   Deployment web ──controls──> ReplicaSet web-7c9d (revision 2, hash 7c9d) ──controls──> pod web-7c9d-x2x9z on node-3
 *                  └─controls──> ReplicaSet web-5d8f (revision 1, hash 5d8f) ──controls──> pod web-5d8f-q4kpl on node-1
 * ```
 */
import type { SettledCounters } from '../../domain/podInterest.js';
import type { NodeHealth, SlimDeployment, SlimReplicaSet } from '../../api/objects.js';
import type { NodeView, TargetView, WarningView } from '../../domain/observation.js';
import type { CacheView } from '../ports.js';
import {
  explainedPodView,
  latestWarning,
  openTarget,
  targetObservation,
  undoOptedOut,
  withSharedFacts,
  type ObserveTarget,
} from './shared.js';

/** The reason of a Deployment's Progressing condition once its own progressDeadlineSeconds passed without progress. */
export const PROGRESS_DEADLINE_EXCEEDED = 'ProgressDeadlineExceeded';

/** A Deployment's generation and its controller's counters, as the pod rule (podInterest.ts) and decide read them. */
export function deploymentCounters(deploy: Readonly<SlimDeployment>): SettledCounters {
  const s = deploy.status;
  return {
    generation: deploy.metadata.generation ?? 0,
    observedGeneration: s.observedGeneration,
    desired: deploy.spec.replicas,
    current: s.replicas,
    updated: s.updatedReplicas,
    ready: s.readyReplicas,
    available: s.availableReplicas,
    misscheduled: 0,
  };
}

/** The Deployment's observation (see ObserveTarget): its units are its pods. */
export const observeDeployment: ObserveTarget = (cache, targets, namespace, name, now, status) => {
  const parts = { cached: cache.workload('Deployment', namespace, name), viewOf: deploymentView };
  const opened = openTarget(cache, targets, { namespace, name, status }, parts);
  if (opened.kind !== 'Opened') return opened;
  const { uid, view, revisions, currentRevision, fromCounters } = opened;
  const units = fromCounters ? [] : podUnits(cache, view, cache.replicaSetsOwnedBy?.(uid) ?? [], now);
  // Pods come and go under new names: none of them is a unit that left, or was removed.
  return targetObservation(cache, view, { revisions, currentRevision, units, left: [], removed: [], fromCounters });
};

/** The Deployment as decide reads it: counters, strategy, pause, its own deadline, template, owner, undo record, refusals. */
export function deploymentView(
  cache: CacheView,
  deploy: Readonly<SlimDeployment>,
  namespace: string,
  name: string,
  uid: string,
): TargetView {
  const replicaSets = cache.replicaSetsOwnedBy?.(uid) ?? [];
  const live = deploy.spec.templateDigest;
  const stored = live === undefined ? undefined : replicaSets.find((rs) => rs.templateDigest === live);
  const view: TargetView = {
    kind: 'Deployment',
    name,
    namespace,
    uid,
    ...deploymentCounters(deploy),
    strategy: deploy.spec.strategy.type === 'Recreate' ? 'Recreate' : 'RollingUpdate',
    minReadySeconds: deploy.spec.minReadySeconds,
    undoOptOut: undoOptedOut(deploy.metadata),
    images: [...deploy.spec.images],
  };
  const outdated = deploy.status.replicas - deploy.status.updatedReplicas;
  if (outdated > 0) view.outdated = outdated;
  // Paused, a changed template gets no ReplicaSet until the resume: that is the pause, not a revision
  // cache behind (which a live digest no revision stores would be taken for, decide/settle.ts).
  if (live !== undefined && (stored !== undefined || !deploy.spec.paused)) view.templateDigest = live;
  if (deploy.spec.paused) {
    const awaits = live !== undefined && stored === undefined;
    view.pausedBySpec = pausedSentence(namespace, name, awaits);
    if (awaits) view.templateAwaitsResume = true;
  }
  const progressing = deploy.status.progressing;
  if (progressing?.status === 'False' && progressing.reason === PROGRESS_DEADLINE_EXCEEDED) {
    view.ownDeadlineExceeded = {
      seconds: deploy.spec.progressDeadlineSeconds,
      message: progressing.message,
      ...(progressing.since !== undefined ? { since: progressing.since } : {}),
    };
  }
  withSharedFacts(cache, view, deploy.metadata);
  view.owner ??= canaryOf(cache, namespace, name);
  const newest = stored ?? newestOf(replicaSets);
  const refusal = newest ? refusalOf(cache, namespace, newest) : undefined;
  if (refusal) view.warning = refusal;
  return view;
}

/** The kind of Flagger's object that runs a Deployment's canary analysis. */
export const FLAGGER_CANARY_KIND = 'Canary';

/**
 * Flagger's Canary, when it manages the Deployment: it runs the pods from a copy named `<name>-primary`
 * that it controls, and scales the Deployment itself up for each analysis and back to 0 after it, rolling
 * back by itself. An undo would fight it, so it counts as the Deployment's manager (TargetView.owner).
 */
function canaryOf(cache: CacheView, namespace: string, name: string): { kind: string; name: string } | undefined {
  const primary = cache.workload('Deployment', namespace, `${name}-primary`);
  const owner = primary?.metadata.ownerReferences?.find((o) => o.controller);
  return owner?.kind === FLAGGER_CANARY_KIND ? { kind: owner.kind, name: owner.name } : undefined;
}

/** What a paused Deployment's guard says of the pause, and how to end it. */
function pausedSentence(namespace: string, name: string, templateWaits: boolean): string {
  const waits = templateWaits ? '; its changed template waits for the resume' : '';
  return `spec.paused is true (kubectl rollout pause): the Deployment controller rolls nothing out until kubectl rollout resume deployment/${name} -n ${namespace}${waits}`;
}

/** The ReplicaSet with the highest revision number. */
function newestOf(replicaSets: ReadonlyArray<Readonly<SlimReplicaSet>>): Readonly<SlimReplicaSet> | undefined {
  let out: Readonly<SlimReplicaSet> | undefined;
  for (const rs of replicaSets) if (!out || rs.revision > out.revision) out = rs;
  return out;
}

/**
 * Why the ReplicaSet's controller cannot create its pods: its latest FailedCreate Warning (a quota, an
 * admission refusal, a missing ServiceAccount), else its ReplicaFailure condition, which says the same
 * once the Event has expired or before the Event cache has it.
 */
export function refusalOf(cache: CacheView, namespace: string, rs: Readonly<SlimReplicaSet>): WarningView | undefined {
  const warned = latestWarning(cache.warningsFor?.('Deployment', namespace, rs.metadata.name));
  if (warned) return warned;
  const failure = rs.replicaFailure;
  if (!failure) return undefined;
  return { reason: failure.reason, message: failure.message, at: failure.since ?? rs.metadata.creationTimestamp ?? '' };
}

/**
 * One unit per pod of the Deployment's ReplicaSets. A pod being deleted is a unit only under Recreate,
 * where the controller starts no new pod until every old one is gone; in a rolling update it only leaves.
 */
export function podUnits(
  cache: CacheView,
  view: TargetView,
  replicaSets: ReadonlyArray<Readonly<SlimReplicaSet>>,
  now: number,
): NodeView[] {
  const health = new Map<string, NodeHealth | undefined>(cache.nodes().map((n) => [n.metadata.name, n.health] as const));
  const units: NodeView[] = [];
  for (const rs of replicaSets) {
    if (!rs.metadata.uid) continue;
    for (const p of cache.podsOwnedBy(rs.metadata.uid, view.uid)) {
      if (!p.hash) continue;
      const waitedFor = !p.metadata.deletionTimestamp || view.strategy === 'Recreate';
      const unit: NodeView = { node: p.metadata.name, eligible: waitedFor, pods: [explainedPodView(cache, p, view, now)] };
      if (!waitedFor) unit.ineligibleReason = 'being deleted: the rolling update does not wait for it';
      if (p.node && p.scheduled) {
        unit.host = p.node;
        const h = health.get(p.node);
        if (h) unit.health = { ...h };
      }
      units.push(unit);
    }
  }
  return units.sort((a, b) => a.node.localeCompare(b.node));
}
