/**
 * What gather reads the same way whatever the kind of the target: the opening every adapter shares
 * (openTarget: missing, being deleted, its pods not cached yet), its pods, its revisions (ControllerRevisions
 * or ReplicaSets, by controller owner UID, as upstream's controller history does for every kind), the Warning Events that
 * explain a pod, and the other guards of the same target.
 */
import { needsPods } from '../../domain/podInterest.js';
import { currentRevisionOf } from '../../domain/revisions.js';
import { UNDO_OPT_OUT_ANNOTATION, UNDO_RECORD_ANNOTATION } from '../../api/names.js';
import type { Meta, SlimEvent, SlimPod, SlimRevision } from '../../api/objects.js';
import { KINDS, type KindDescriptor } from '../../api/kinds.js';
import type { DaemonSetUndoRecord, GuardStatus, LeftNode, TargetKind } from '../../api/types.js';
import type { GuardPeer, NodeView, Observation, PodView, RevisionView, TargetView, WarningView } from '../../domain/observation.js';
import type { CacheView } from '../ports.js';
import type { TargetMemory } from '../targetMemory.js';

/**
 * The target needs its pods (podInterest.ts), or a cache its kind starts on demand, and it has not
 * listed yet. Nothing is decided from half a picture: the pass ends, and the first list enqueues the
 * guard again.
 */
export interface PodsPending {
  kind: 'PodsPending';
  /** The target's name. */
  target: string;
}

/**
 * What a kind's gather adapter does: the observation of target `namespace/name` at time `now`, naming
 * the units that left since the baseline of `targets` (the guard's target memory). `status` is the
 * guard's previous status: while it follows a rollout the pods are needed whatever the counters say.
 */
export type ObserveTarget = (
  cache: CacheView,
  targets: TargetMemory,
  namespace: string,
  name: string,
  now: number,
  status?: Readonly<GuardStatus>,
) => Observation | PodsPending;

/** A target that exists, is not going away and has its pods cached where they are needed: what its adapter goes on from. */
export interface OpenedTarget<T> {
  kind: 'Opened';
  /** The target's object as the cache holds it (shared: never mutate). */
  cached: Readonly<T>;
  uid: string;
  view: TargetView;
  /** Its ControllerRevisions, newest first, and the one that stores its live template. */
  revisions: RevisionView[];
  currentRevision: RevisionView | undefined;
  /** Its pods are not cached, and not needed: its units are judged from its counters. */
  fromCounters: boolean;
}

/** What `openTarget` reads of one kind: its target as cached, and how that kind's view is built. */
export interface TargetKindParts<T> {
  cached: Readonly<T> | undefined;
  viewOf: (cache: CacheView, cached: Readonly<T>, namespace: string, name: string, uid: string) => TargetView;
}

/**
 * The opening of every kind's adapter (see ObserveTarget): a target not cached, or cached without a UID,
 * is missing, and the units the guard remembers are forgotten so one made anew is seen for the first
 * time; a target going away is only that; otherwise its view and revisions, then its pods.
 */
export function openTarget<T extends { metadata: Meta }>(
  cache: CacheView,
  targets: TargetMemory,
  at: { namespace: string; name: string; status: Readonly<GuardStatus> | undefined },
  { cached, viewOf }: TargetKindParts<T>,
): OpenedTarget<T> | Observation | PodsPending {
  const { namespace, name } = at;
  if (!cached || !cached.metadata.uid) {
    targets.forget();
    return { kind: 'TargetMissing', targetName: name };
  }
  const deleting = deletionOf(cache, cached.metadata, namespace);
  if (deleting) return { kind: 'TargetDeleting', targetName: name, ...deleting };
  const uid = cached.metadata.uid;
  const view = viewOf(cache, cached, namespace, name, uid);
  const revisions = revisionsOf(cache, uid, view.kind);
  const currentRevision = currentRevisionOf(revisions, view.templateDigest);
  // Pods only where they are needed: a settled target no guard follows a rollout of is judged from its
  // counters, so its pods need not be cached at all. Where they are needed, the pass waits for them rather
  // than guessing per unit. The rule is the pod watches' (podInterest.ts), applied to this guard's status,
  // which may be newer than their cache.
  const podCache = cache.podCache?.(view.kind, namespace, name, uid) ?? 'synced';
  if (needsPods(view, [at.status]) && podCache !== 'synced') {
    cache.wantPods?.(view.kind, namespace, name);
    return { kind: 'PodsPending', target: name };
  }
  return { kind: 'Opened', cached, uid, view, revisions, currentRevision, fromCounters: podCache !== 'synced' };
}

/** The latest of an object's Warning Events: only the newest explanation is kept per pod or DaemonSet. */
export function latestWarning(events: ReadonlyArray<Readonly<SlimEvent>> | undefined): WarningView | undefined {
  let best: Readonly<SlimEvent> | undefined;
  for (const e of events ?? []) if (!best || e.at > best.at) best = e;
  return best ? { reason: best.reason, message: best.message, at: best.at } : undefined;
}

/**
 * A pod of `target` as decide reads it, with the kubelet's latest Warning about it when it is not Ready:
 * only a pod that is not running yet needs the kubelet's word on why.
 */
export function explainedPodView(cache: CacheView, p: Readonly<SlimPod>, target: Readonly<TargetView>, now: number): PodView {
  const pv = podView(p, target.minReadySeconds, now);
  if (!p.ready) {
    const w = latestWarning(cache.warningsFor?.('Pod', target.namespace, p.metadata.name));
    if (w) pv.warning = w;
  }
  return pv;
}

/** Whether the target opted out of undo (`rolloutguard.dev/undo: disabled`). */
export function undoOptedOut(m: Readonly<Meta>): boolean {
  return m.annotations?.[UNDO_OPT_OUT_ANNOTATION] === 'disabled';
}

/**
 * What every kind's view reads the same way from the target's metadata and Events: its controller owner,
 * the undo record a guard left on it, its controller's latest Warning (FailedCreate).
 */
export function withSharedFacts(cache: CacheView, view: TargetView, m: Readonly<Meta>): TargetView {
  const owner = m.ownerReferences?.find((o) => o.controller);
  if (owner) view.owner = { kind: owner.kind, name: owner.name };
  const rec = undoRecord(m.annotations?.[UNDO_RECORD_ANNOTATION]);
  if (rec) view.undoRecord = rec;
  const warning = latestWarning(cache.warningsFor?.(view.kind, view.namespace, view.name));
  if (warning) view.warning = warning;
  return view;
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

/** A pod as decide reads it, available after `minReadySeconds` Ready. */
export function podView(p: Readonly<SlimPod>, minReadySeconds: number, now: number): PodView {
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
  if (p.metadata.uid) v.uid = p.metadata.uid;
  if (p.schedulingAttempted === false) v.schedulingAttempted = false;
  if (p.markedNotReady) v.markedNotReady = true;
  if (p.lastTermination) v.lastTermination = { ...p.lastTermination };
  if (p.metadata.deletionTimestamp) v.deletionAt = p.metadata.deletionTimestamp;
  if (p.ready && p.readySince) v.readySince = p.readySince;
  if (p.waitingReason) v.waitingReason = p.waitingReason;
  if (p.waitingMessage !== undefined) v.waitingMessage = p.waitingMessage;
  return v;
}

/**
 * The objects that hold each kind of history, found by their controller's UID (KindDescriptor.history):
 * ControllerRevisions, or ReplicaSets, which carry the same facts of the revision they stand for.
 */
const HISTORY: Readonly<Record<KindDescriptor['history'], (cache: CacheView, uid: string) => ReadonlyArray<Readonly<HistoryEntry>>>> = {
  ControllerRevisions: (cache, uid) => cache.revisionsOwnedBy(uid),
  ReplicaSets: (cache, uid) => cache.replicaSetsOwnedBy?.(uid) ?? [],
};

/** What a revision's holder tells of it, whichever object holds it. */
type HistoryEntry = Pick<SlimRevision, 'metadata' | 'hash' | 'revision' | 'volumes' | 'facets' | 'templateDigest'>;

/** The revisions of the target `uid` of `kind` (its ControllerRevisions, or its ReplicaSets), newest first. */
export function revisionsOf(cache: CacheView, uid: string, kind: TargetKind): RevisionView[] {
  return HISTORY[KINDS[kind].history](cache, uid)
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

/**
 * The observation of a target that exists, with what every kind adds the same way: its current revision,
 * whether its pods come from its counters, the other guards of the same target, the clock skew.
 */
export function targetObservation(
  cache: CacheView,
  target: TargetView,
  o: {
    revisions: RevisionView[];
    currentRevision: RevisionView | undefined;
    units: NodeView[];
    left: LeftNode[];
    removed: string[];
    fromCounters: boolean;
  },
): Observation {
  const obs: Observation = { kind: 'Target', target, revisions: o.revisions, nodes: o.units, leftNodes: o.left, removedNodes: o.removed };
  if (o.currentRevision) obs.currentRevision = o.currentRevision;
  if (o.fromCounters) obs.podsFromCounters = true;
  const peers = peersOf(cache, target.kind, target.namespace, target.name);
  if (peers.length > 0) obs.guards = peers;
  const skew = cache.clockSkewMs?.();
  if (skew !== undefined) obs.clockSkewMs = skew;
  return obs;
}

/** The guards of the same target that are not being deleted. */
export function peersOf(cache: CacheView, kind: TargetKind, namespace: string, name: string): GuardPeer[] {
  const guards = cache.guardsTargeting?.(kind, namespace, name) ?? [];
  // Guards being deleted are leaving: the next oldest takes charge now rather than after they go.
  return guards
    .filter((g) => !g.metadata.deletionTimestamp)
    .map((g) => ({ name: g.metadata.name, createdAt: g.metadata.creationTimestamp ?? '' }));
}

/**
 * Whether the target is going away: its own deletionTimestamp, or its namespace terminating. A
 * namespace that terminated after the target was created holds it; a target created after that moment
 * is in a namespace of the same name made anew (nothing can be created in a terminating one).
 */
export function deletionOf(
  cache: CacheView,
  target: Readonly<Pick<Meta, 'creationTimestamp' | 'deletionTimestamp'>>,
  namespace: string,
): { by: 'Target' | 'Namespace'; since?: string } | undefined {
  const since = cache.namespaceTerminatingSince?.(namespace);
  const created = target.creationTimestamp;
  if (since !== undefined && (created === undefined || Date.parse(created) <= Date.parse(since))) return { by: 'Namespace', since };
  if (target.deletionTimestamp) return { by: 'Target', since: target.deletionTimestamp };
  return undefined;
}
