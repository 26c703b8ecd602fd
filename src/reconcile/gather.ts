/**
 * Gather: read the informer caches (never the API) and build the plain Observation decide needs.
 *
 * Daemon pods and ControllerRevisions are matched to the DaemonSet by controller ownerReference UID,
 * as the DaemonSet controller and `kubectl rollout history` do: labels alone could pick up another
 * controller's pods.
 */
import { evaluateNode } from '../domain/nodeEligibility.js';
import { currentRevisionOf } from '../domain/decide/kit.js';
import { needsPods, type SettledCounters } from '../domain/podInterest.js';
import { TEMPLATE_GENERATION_ANNOTATION, UNDO_OPT_OUT_ANNOTATION, UNDO_RECORD_ANNOTATION } from '../api/names.js';
import type { SlimDaemonSet, SlimEvent, SlimNode, SlimPod } from '../api/objects.js';
import type { DaemonSetUndoRecord, GuardStatus, LeftNode } from '../api/types.js';
import type { DaemonSetView, GuardPeer, NodeView, Observation, PodView, RevisionView, WarningView } from '../domain/observation.js';
import type { CacheView } from './ports.js';

/**
 * The DaemonSet needs its pods (podInterest.ts) and their watch has not listed them yet. Nothing is
 * decided from half a picture: the pass ends, and the watch's first list enqueues the guard again.
 */
export interface PodsPending {
  kind: 'PodsPending';
  daemonSet: string;
}

/**
 * Remembers which nodes were one guard's targets on the previous pass, so that when DESIRED shrinks the
 * nodes that left can be named with their reason. It is a cache of earlier observations: after a
 * restart the count of nodes that left still comes from status (desiredAtStart), only the names may be
 * missing until the next change.
 */
export class TargetMemory {
  /**
   * The eligible node set the last time it agreed with the controller's DESIRED. It moves only then, so
   * a node that left is still named on the pass where the DaemonSet status catches up (node and
   * DaemonSet events arrive in either order).
   */
  private eligible: Baseline | undefined;
  /**
   * The baseline the last {@link diff} would move to. It becomes the baseline only on {@link commit},
   * once the pass that saw the departures has recorded them: a pass that waits for the cache, holds its
   * write or fails must see the same departures again, or the names are lost.
   */
  private pending: Baseline | undefined;

  /**
   * Nodes eligible at the baseline and not now: `left` still exist (a taint, a label, a selector
   * change), `removed` are gone from the cluster. Stages the next baseline for {@link commit}.
   */
  diff(
    uid: string,
    nodes: readonly NodeView[],
    existing: ReadonlySet<string>,
    settled: boolean,
    fingerprints: ReadonlyMap<string, string> = new Map(),
  ): { left: LeftNode[]; removed: string[] } {
    // Each eligible node with the fingerprint of its labels and taints, so that a node that leaves can
    // be told apart: did the node change (someone tainted it) or did the template stop selecting it?
    const now = new Map(nodes.filter((n) => n.eligible).map((n) => [n.node, fingerprints.get(n.node) ?? ''] as const));
    const prev = this.eligible;
    if (!prev || prev.uid !== uid) {
      // First sight of this target: nothing to compare with, so the baseline needs no confirmation.
      this.eligible = { uid, nodes: now };
      this.pending = undefined;
      return { left: [], removed: [] };
    }
    this.pending = settled ? { uid, nodes: now } : undefined;
    const left: LeftNode[] = [];
    const removed: string[] = [];
    const byName = new Map(nodes.map((n) => [n.node, n]));
    for (const [name, was] of prev.nodes) {
      if (now.has(name)) continue;
      if (!existing.has(name)) {
        removed.push(name);
        continue;
      }
      const n = byName.get(name);
      const l: LeftNode = { node: name, reason: n?.ineligibleReason ?? 'no longer a target' };
      const is = fingerprints.get(name);
      if (was !== '' && is !== undefined) l.nodeChanged = is !== was;
      left.push(l);
    }
    left.sort((a, b) => a.node.localeCompare(b.node));
    return { left, removed: removed.sort() };
  }

  /** The departures the last {@link diff} reported are recorded: move the baseline past them. */
  commit(): void {
    const next = this.pending;
    if (!next) return;
    this.pending = undefined;
    if (this.eligible && this.eligible.uid !== next.uid) return;
    this.eligible = next;
  }

  /** The target is gone: the next one seen is seen for the first time. */
  forget(): void {
    this.eligible = undefined;
    this.pending = undefined;
  }
}

/** The eligible nodes of the DaemonSet `uid`, each with the fingerprint of its labels and taints. */
interface Baseline {
  uid: string;
  nodes: Map<string, string>;
}

/** The undo record annotation, or undefined when absent or not ours to read (malformed). */
function undoRecord(raw: string | undefined): DaemonSetUndoRecord | undefined {
  if (!raw) return undefined;
  try {
    const r = JSON.parse(raw) as Partial<DaemonSetUndoRecord>;
    if (typeof r.from !== 'string' || typeof r.to !== 'string') return undefined;
    const rec: DaemonSetUndoRecord = {
      from: r.from,
      to: r.to,
      at: typeof r.at === 'string' ? r.at : '',
      guard: typeof r.guard === 'string' ? r.guard : '',
    };
    if (Array.isArray(r.undone)) rec.undone = r.undone.filter((h): h is string => typeof h === 'string');
    return rec;
  } catch {
    return undefined;
  }
}

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

/** The latest of an object's Warning Events: only the newest explanation is kept per pod or DaemonSet. */
function latestWarning(events: ReadonlyArray<Readonly<SlimEvent>> | undefined): WarningView | undefined {
  let best: Readonly<SlimEvent> | undefined;
  for (const e of events ?? []) if (!best || e.at > best.at) best = e;
  return best ? { reason: best.reason, message: best.message, at: best.at } : undefined;
}

function podView(p: Readonly<SlimPod>, minReadySeconds: number, now: number): PodView {
  const readyFor = p.readySince ? now - Date.parse(p.readySince) : 0;
  const v: PodView = {
    name: p.metadata.name,
    hash: p.hash,
    ready: p.ready,
    available: p.ready && (minReadySeconds === 0 || readyFor >= minReadySeconds * 1000),
    deleting: Boolean(p.metadata.deletionTimestamp),
    phase: p.phase,
    scheduled: p.scheduled,
    restartCount: p.restartCount,
    images: [...p.images],
    createdAt: p.metadata.creationTimestamp ?? '',
  };
  if (p.schedulingAttempted === false) v.schedulingAttempted = false;
  if (p.markedNotReady) v.markedNotReady = true;
  if (p.lastTermination) v.lastTermination = { ...p.lastTermination };
  if (p.metadata.deletionTimestamp) v.deletionAt = p.metadata.deletionTimestamp;
  if (p.ready && p.readySince) v.readySince = p.readySince;
  if (p.waitingReason) v.waitingReason = p.waitingReason;
  if (p.waitingMessage !== undefined) v.waitingMessage = p.waitingMessage;
  return v;
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

/** For callers whose cache always holds the pods (no `podCache`): the observation itself. */
export function observationOf(g: Observation | PodsPending): Observation {
  if (g.kind === 'PodsPending') throw new Error(`the pods of DaemonSet ${g.daemonSet} are not cached`);
  return g;
}

/**
 * Builds the observation for the DaemonSet `namespace/name` at time `now`, naming the nodes that left
 * since the baseline of `targets` (the guard's target memory). `status` is the guard's previous status:
 * while it follows a rollout the pods are needed whatever the counters say.
 */
export function gather(
  cache: CacheView,
  targets: TargetMemory,
  namespace: string,
  name: string,
  now: number,
  status?: Readonly<GuardStatus>,
): Observation | PodsPending {
  const ds = cache.daemonSet(namespace, name);
  if (!ds || !ds.metadata.uid) {
    targets.forget();
    return { kind: 'TargetMissing', targetName: name };
  }
  const deleting = deletionOf(cache, ds, namespace);
  if (deleting) return { kind: 'TargetDeleting', targetName: name, ...deleting };
  const uid = ds.metadata.uid;
  const view = daemonSetView(cache, ds, namespace, name, uid);
  const revisions = revisionsOf(cache, uid);
  const currentRevision = currentRevisionOf(revisions, view.templateDigest);

  // Pods only where they are needed: a settled DaemonSet no guard follows a rollout of is judged from its
  // counters, so its pods need not be cached at all (podInterest.ts).
  const podCache = cache.podCache?.(namespace, name, uid) ?? 'synced';
  // The same rule the pod watches follow, for this guard (whose status may be newer than their cache).
  if (needsPods(view, [status]) && podCache !== 'synced') {
    cache.wantPods?.(namespace, name);
    return { kind: 'PodsPending', daemonSet: name };
  }
  const fromCounters = podCache !== 'synced';
  const { nodes, known } = nodeViews(cache, ds, fromCounters ? new Map() : podsByNode(cache, view, now));
  const eligibleCount = nodes.filter((n) => n.eligible).length;
  const settled = view.observedGeneration >= view.generation && eligibleCount === view.desired;
  const prints = new Map(cache.nodes().map((n) => [n.metadata.name, fingerprint(n)] as const));
  const { left, removed } = targets.diff(uid, nodes, known, settled, prints);
  const relevant = nodes.filter((n) => n.eligible || n.pods.length > 0);
  const obs: Observation = { kind: 'Target', ds: view, revisions, nodes: relevant, leftNodes: left, removedNodes: removed };
  if (currentRevision) obs.currentRevision = currentRevision;
  if (fromCounters) obs.podsFromCounters = true;
  const peers = peersOf(cache, namespace, name);
  if (peers.length > 0) obs.guards = peers;
  const skew = cache.clockSkewMs?.();
  if (skew !== undefined) obs.clockSkewMs = skew;
  return obs;
}

/**
 * Whether the DaemonSet is going away: its own deletionTimestamp, or its namespace terminating. A
 * namespace that terminated after the DaemonSet was created holds it; a DaemonSet created after that
 * moment is in a namespace of the same name made anew (nothing can be created in a terminating one).
 */
function deletionOf(
  cache: CacheView,
  ds: Readonly<SlimDaemonSet>,
  namespace: string,
): { by: 'Target' | 'Namespace'; since?: string } | undefined {
  const since = cache.namespaceTerminatingSince?.(namespace);
  const created = ds.metadata.creationTimestamp;
  if (since !== undefined && (created === undefined || Date.parse(created) <= Date.parse(since))) return { by: 'Namespace', since };
  if (ds.metadata.deletionTimestamp) return { by: 'Target', since: ds.metadata.deletionTimestamp };
  return undefined;
}

/** The DaemonSet as decide reads it: counters, strategy, template, owner, undo record, latest Warning. */
function daemonSetView(cache: CacheView, ds: Readonly<SlimDaemonSet>, namespace: string, name: string, uid: string): DaemonSetView {
  const view: DaemonSetView = {
    name,
    namespace,
    uid,
    ...settledCountersOf(ds),
    strategy: ds.spec.updateStrategy.type === 'OnDelete' ? 'OnDelete' : 'RollingUpdate',
    minReadySeconds: ds.spec.minReadySeconds,
    undoOptOut: ds.metadata.annotations?.[UNDO_OPT_OUT_ANNOTATION] === 'disabled',
    images: [...ds.spec.images],
  };
  const tg = ds.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
  if (tg !== undefined) view.templateGeneration = tg;
  if (ds.spec.templateDigest !== undefined) view.templateDigest = ds.spec.templateDigest;
  const owner = ds.metadata.ownerReferences?.find((o) => o.controller);
  if (owner) view.owner = { kind: owner.kind, name: owner.name };
  const rec = undoRecord(ds.metadata.annotations?.[UNDO_RECORD_ANNOTATION]);
  if (rec) view.undoRecord = rec;
  const dsWarning = latestWarning(cache.warningsFor?.('DaemonSet', namespace, name));
  if (dsWarning) view.warning = dsWarning;
  return view;
}

/** The ControllerRevisions the DaemonSet `uid` controls, newest first. */
function revisionsOf(cache: CacheView, uid: string): RevisionView[] {
  return cache
    .revisionsOwnedBy(uid)
    .map((r) => ({
      name: r.metadata.name,
      hash: r.hash,
      revision: r.revision,
      ...(r.volumes ? { volumes: { ...r.volumes } } : {}),
      ...(r.facets ? { facets: r.facets } : {}),
      ...(r.templateDigest !== undefined ? { templateDigest: r.templateDigest } : {}),
    }))
    .sort((a, b) => b.revision - a.revision);
}

/** The DaemonSet's cached pods by node name. */
function podsByNode(cache: CacheView, view: DaemonSetView, now: number): Map<string, PodView[]> {
  const byNode = new Map<string, PodView[]>();
  for (const p of cache.podsOwnedBy(view.uid)) {
    if (!p.node || !p.hash) continue; // a pod without a node or hash label cannot be placed in the split
    const list = byNode.get(p.node) ?? [];
    const pv = podView(p, view.minReadySeconds, now);
    // Only a pod that is not running yet needs the kubelet's word on why.
    if (!p.ready) {
      const w = latestWarning(cache.warningsFor?.('Pod', view.namespace, p.metadata.name));
      if (w) pv.warning = w;
    }
    list.push(pv);
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

/** The guards of the same DaemonSet that are not being deleted. */
function peersOf(cache: CacheView, namespace: string, name: string): GuardPeer[] {
  const guards = cache.guardsTargeting?.(namespace, name) ?? [];
  // Guards being deleted are leaving: the next oldest takes charge now rather than after they go.
  return guards
    .filter((g) => !g.metadata.deletionTimestamp)
    .map((g) => ({ name: g.metadata.name, createdAt: g.metadata.creationTimestamp ?? '' }));
}
