/**
 * The gather adapter of DaemonSets: the DaemonSet's counters and template, its pods by node, and every
 * node judged against its placement (the units of a DaemonSet are nodes). What a DaemonSet shares with
 * other kinds comes from shared.ts.
 */
import { evaluateNode } from '../../domain/nodeEligibility.js';
import type { SettledCounters } from '../../domain/podInterest.js';
import { TEMPLATE_GENERATION_ANNOTATION } from '../../api/names.js';
import type { SlimDaemonSet, SlimNode } from '../../api/objects.js';
import type { NodeView, PodView, TargetView } from '../../domain/observation.js';
import type { CacheView } from '../ports.js';
import { explainedPodView, openTarget, targetObservation, undoOptedOut, withSharedFacts, type ObserveTarget } from './shared.js';

/**
 * Each cached node's labels and taints as one string, computed once per cached object (the informer
 * replaces the object when the node changes). Every guard's pass needs the fingerprints of every node:
 * computed per pass, they cost a JSON.stringify per node per pass, and kept per guard, one copy of every
 * string per guard. Shared here, an idle guard's memory of its targets holds references only.
 */
const fingerprints = new WeakMap<object, string>();
function fingerprint(n: Readonly<SlimNode>): string {
  let f = fingerprints.get(n);
  if (f === undefined) {
    f = JSON.stringify([n.metadata.labels ?? {}, n.taints]);
    fingerprints.set(n, f);
  }
  return f;
}

/** A DaemonSet's generation and its controller's counters, as the pod rule (podInterest.ts) and decide read them. */
export function settledCountersOf(ds: Readonly<SlimDaemonSet>): SettledCounters {
  return {
    generation: ds.metadata.generation ?? 0,
    observedGeneration: ds.status.observedGeneration,
    desired: ds.status.desiredNumberScheduled,
    current: ds.status.currentNumberScheduled,
    updated: ds.status.updatedNumberScheduled,
    ready: ds.status.numberReady,
    available: ds.status.numberAvailable,
    misscheduled: ds.status.numberMisscheduled,
  };
}

/** The DaemonSet's observation (see ObserveTarget): its units are nodes, judged against its placement. */
export const observeDaemonSet: ObserveTarget = (cache, targets, namespace, name, now, status) => {
  const parts = { cached: cache.workload('DaemonSet', namespace, name), viewOf: daemonSetView };
  const opened = openTarget(cache, targets, { namespace, name, status }, parts);
  if (opened.kind !== 'Opened') return opened;
  const { cached: ds, uid, view, revisions, currentRevision, fromCounters } = opened;
  const { nodes, known } = nodeViews(cache, ds, fromCounters ? new Map() : podsByNode(cache, view, now));
  const eligibleCount = nodes.filter((n) => n.eligible).length;
  const settled = view.observedGeneration >= view.generation && eligibleCount === view.desired;
  const prints = new Map(cache.nodes().map((n) => [n.metadata.name, fingerprint(n)] as const));
  const { left, removed } = targets.diff(uid, nodes, known, settled, prints);
  const relevant = nodes.filter((n) => n.eligible || n.pods.length > 0);
  return targetObservation(cache, view, { revisions, currentRevision, units: relevant, left, removed, fromCounters });
};

/** The DaemonSet as decide reads it: counters, strategy, template, owner, undo record, latest Warning. */
function daemonSetView(cache: CacheView, ds: Readonly<SlimDaemonSet>, namespace: string, name: string, uid: string): TargetView {
  const view: TargetView = {
    kind: 'DaemonSet',
    name,
    namespace,
    uid,
    ...settledCountersOf(ds),
    strategy: ds.spec.updateStrategy.type === 'OnDelete' ? 'OnDelete' : 'RollingUpdate',
    minReadySeconds: ds.spec.minReadySeconds,
    undoOptOut: undoOptedOut(ds.metadata),
    images: [...ds.spec.images],
  };
  const tg = ds.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
  if (tg !== undefined) view.templateGeneration = tg;
  if (ds.spec.templateDigest !== undefined) view.templateDigest = ds.spec.templateDigest;
  return withSharedFacts(cache, view, ds.metadata);
}

/** The DaemonSet's cached pods by node name. */
function podsByNode(cache: CacheView, view: TargetView, now: number): Map<string, PodView[]> {
  const byNode = new Map<string, PodView[]>();
  for (const p of cache.podsOwnedBy(view.uid)) {
    if (!p.node || !p.hash) continue; // a pod without a node or hash label cannot be placed in the split
    const list = byNode.get(p.node) ?? [];
    list.push(explainedPodView(cache, p, view, now));
    byNode.set(p.node, list);
  }
  return byNode;
}

/** Every cached node judged against the DaemonSet's placement with its pods, and `known`: their names. */
function nodeViews(
  cache: CacheView,
  ds: Readonly<SlimDaemonSet>,
  pods: ReadonlyMap<string, PodView[]>,
): { nodes: NodeView[]; known: Set<string> } {
  const nodes: NodeView[] = [];
  const known = new Set<string>();
  for (const n of cache.nodes()) {
    known.add(n.metadata.name);
    const e = evaluateNode(ds.spec.placement, { name: n.metadata.name, labels: n.metadata.labels ?? {}, taints: n.taints });
    // Nodes that neither should nor do run the pod are irrelevant, except to name the ones that left.
    const nv: NodeView = { node: n.metadata.name, eligible: e.eligible, pods: pods.get(n.metadata.name) ?? [] };
    if (e.reason) nv.ineligibleReason = e.reason;
    if (n.health) nv.health = { ...n.health };
    nodes.push(nv);
  }
  // Pods on nodes we do not know (deleted nodes): still part of the split.
  for (const [node, onNode] of pods) {
    if (!known.has(node)) nodes.push({ node, eligible: false, ineligibleReason: 'node no longer exists', pods: onNode });
  }
  return { nodes, known };
}
