/**
 * From watch events to keys (level-based): a handler only says which keys to look at again, and a
 * pass reads the caches, never the event's payload. A workload, one of its pods, ControllerRevisions or
 * ReplicaSets (a Deployment's, and their Warnings) maps back to the guards that target it; a node whose labels or taints change re-enqueues
 * every guard (eligibility may have changed). Heartbeat-only node updates enqueue nothing.
 */
import type { InformerEvent } from '../k8s/informerStore.js';
import { POLICY_LABEL, SELECTOR_GUARD_LABEL } from '../api/names.js';
import { DEFAULT_KIND, controllingWorkload } from '../api/kinds.js';
import { isSelectorGuard, type Meta as ObjectMeta, type SlimGuard, type SlimNode, type SlimRevision } from '../api/objects.js';
import { TARGET_KINDS, type TargetKind } from '../api/types.js';
import type { Caches } from './caches.js';
import { claimOwners } from '../reconcile/targets/statefulSet.js';
import type { InformerSet, Meta } from './informerSet.js';

/** Where the keys go: the guards' queue (`namespace/name`) and the policies' queue (a name). */
export interface KeySink {
  /** `urgent`: a change that explains a node (a pod that just failed), served before the others. */
  guard(key: string, urgent?: boolean): void;
  /** Absent when policies are disabled. */
  policy?(name: string): void;
}

const keyOf = (o: { metadata: { namespace?: string; name: string } }): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** Enqueues every guard targeting `kind` `namespace/name`; `urgent` as in {@link KeySink.guard}. */
export function enqueueForTarget(
  caches: Caches,
  sink: KeySink,
  kind: TargetKind,
  namespace: string | undefined,
  name: string,
  urgent = false,
): void {
  for (const g of caches.guardsTargeting(kind, namespace, name)) sink.guard(keyOf(g), urgent);
}

/** The kind and name of the workload controlling an object (a ControllerRevision, a ReplicaSet), if a guardable one does. */
function workloadOf(m: Readonly<ObjectMeta>): { kind: TargetKind; name: string } | undefined {
  const w = controllingWorkload(m);
  return w ? { kind: w.kind, name: w.name } : undefined;
}

/** Every guard with a selector in `namespace`: they plan from its DaemonSets and guards. */
export function enqueueSelectorGuards(caches: Caches, sink: KeySink, namespace: string | undefined): void {
  for (const g of caches.guards.list()) if (g.metadata.namespace === namespace && isSelectorGuard(g)) sink.guard(keyOf(g));
}

export function enqueuePolicies(caches: Caches, sink: KeySink): void {
  for (const p of caches.policies?.list() ?? []) sink.policy?.(p.metadata.name);
}

/** Every guard and every policy. */
export function enqueueAll(caches: Caches, sink: KeySink): void {
  for (const g of caches.guards.list()) sink.guard(keyOf(g));
  enqueuePolicies(caches, sink);
}

/** Every target the pod watches must look at again: each cached one, and each watched one (it may be gone). */
function syncPodWatches(caches: Caches): void {
  const all = [...TARGET_KINDS.flatMap((kind) => caches.targetsOf(kind).map((t) => ({ kind, ...t }))), ...caches.pods.targets()];
  const seen = new Set<string>();
  for (const t of all) {
    const k = `${t.kind}:${t.namespace}/${t.name}`;
    if (seen.has(k)) continue;
    seen.add(k);
    caches.pods.sync(t.kind, t.namespace, t.name);
  }
}

/** Registers the handlers that turn every cache's events into keys for `sink`. */
export function mapEventsToKeys(caches: Caches, sink: KeySink): void {
  const policies = (): void => enqueuePolicies(caches, sink);
  const all = (): void => enqueueAll(caches, sink);
  caches.onPodsChanged((kind, namespace, name, urgent) => enqueueForTarget(caches, sink, kind, namespace, name, urgent));
  caches.guards.onEvent((e) => onGuard(caches, sink, e));
  for (const kind of TARGET_KINDS) caches.workloadSet(kind).onEvent((e) => onTarget(caches, sink, kind, e));
  // Any policy change can move an overlap's winner: every policy looks again (policies are few).
  caches.policies?.onEvent(policies);
  caches.namespaces?.onEvent((e) => {
    if (e.type !== 'update' || JSON.stringify(e.old?.metadata.labels) !== JSON.stringify(e.obj.metadata.labels)) policies();
  });
  caches.policies?.onRelist(policies);
  caches.namespaces?.onRelist(policies);
  for (const kind of TARGET_KINDS) caches.workloadSet(kind).onRelist(() => syncPodWatches(caches));
  caches.guards.onRelist(() => syncPodWatches(caches));
  caches.revisions.onEvent((e: InformerEvent<SlimRevision>) => {
    const w = workloadOf(e.obj.metadata);
    if (w) enqueueForTarget(caches, sink, w.kind, e.obj.metadata.namespace, w.name);
  });
  // A ReplicaSet is a revision of the Deployment that controls it, and its counts are that rollout's.
  caches.replicaSets.onEvent((e) => {
    const w = workloadOf(e.obj.metadata);
    if (w) enqueueForTarget(caches, sink, w.kind, e.obj.metadata.namespace, w.name);
  });
  // A refusal or a mount failure explains a node: the guards of its target look again, first. A
  // Deployment's refusals are reported on its ReplicaSet.
  for (const kind of TARGET_KINDS)
    caches.warnings[kind].onEvent((e) => {
      if (e.type === 'delete') return;
      const ns = e.obj.metadata.namespace ?? '';
      const name = caches.warnedWorkload(kind, ns, e.obj.involved.name);
      if (name !== undefined) enqueueForTarget(caches, sink, kind, ns, name, true);
    });
  // A claim that changes (bound, lost, being deleted) explains an ordinal of the StatefulSet it belongs to.
  caches.claims.onEvent((e) => {
    const ns = e.obj.metadata.namespace ?? '';
    for (const w of claimOwners(caches.workloads.StatefulSet.list(), ns, e.obj.metadata.name))
      enqueueForTarget(caches, sink, w.kind, ns, w.name, true);
  });
  caches.podWarnings.onEvent((e) => {
    if (e.type === 'delete') return;
    const ns = e.obj.metadata.namespace ?? '';
    const pod = caches.pods.pod(ns, e.obj.involved.name);
    const w = pod ? caches.workloadOf(ns, pod.metadata) : undefined;
    if (w) enqueueForTarget(caches, sink, w.kind, ns, w.name, true);
  });
  caches.nodes.onEvent((e) => {
    // Heartbeats change only timestamps, which we do not keep: skip updates that change nothing kept.
    const kept = (n: SlimNode): string => JSON.stringify({ l: n.metadata.labels, t: n.taints, h: n.health });
    if (e.type === 'update' && e.old && kept(e.old) === kept(e.obj)) return;
    all();
  });
  // After any relist the cache may have jumped (an outage, a 410): look at every guard again.
  // (A pod watch's relist enqueues the guards of its own DaemonSet: podWatches.ts.)
  const sets = [
    caches.guards,
    ...TARGET_KINDS.flatMap((kind) => [caches.workloads[kind], caches.warnings[kind]]),
    caches.revisions,
    caches.replicaSets,
    caches.claims,
    caches.podWarnings,
  ] as unknown as InformerSet<Meta>[];
  for (const s of sets) s.onRelist(all);
  caches.nodes.onRelist(all);
}

function onGuard(caches: Caches, sink: KeySink, e: InformerEvent<SlimGuard>): void {
  const target = e.obj.spec?.targetRef?.name;
  const oldTarget = e.old?.spec?.targetRef?.name;
  const kind = e.obj.spec?.targetRef?.kind ?? DEFAULT_KIND;
  const oldKind = e.old?.spec?.targetRef?.kind ?? DEFAULT_KIND;
  // A guard's status says whether it follows a rollout, which decides whether its pods are watched.
  caches.pods.sync(kind, e.obj.metadata.namespace ?? '', target ?? '');
  if (e.old && oldTarget !== target) caches.pods.sync(oldKind, e.old.metadata.namespace ?? '', oldTarget ?? '');
  sink.guard(keyOf(e.obj));
  // A guard that appears, goes or retargets can change which guard is in charge of a target:
  // every guard of the old and new target looks again.
  if (e.type !== 'update' || oldTarget !== target || e.old?.metadata.deletionTimestamp !== e.obj.metadata.deletionTimestamp) {
    enqueueForTarget(caches, sink, kind, e.obj.metadata.namespace, target ?? '');
    if (e.old && oldTarget !== target) enqueueForTarget(caches, sink, oldKind, e.old.metadata.namespace, oldTarget ?? '');
  }
  onGuardForSelectors(caches, sink, e, oldTarget !== target);
  if (!caches.policies) return;
  const policy = e.obj.metadata.labels?.[POLICY_LABEL];
  if (policy) sink.policy?.(policy);
  // A hand-written guard appearing, going or retargeting changes which workloads policies may claim.
  else if (e.type !== 'update' || oldTarget !== target) enqueuePolicies(caches, sink);
}

/**
 * A generated guard's change (its status above all) updates its selector guard's records; a guard
 * appearing, going, retargeting or changing its selector changes what the namespace's selector guards
 * may claim.
 */
function onGuardForSelectors(caches: Caches, sink: KeySink, e: InformerEvent<SlimGuard>, retargeted: boolean): void {
  const ns = e.obj.metadata.namespace;
  const parent = e.obj.metadata.labels?.[SELECTOR_GUARD_LABEL];
  if (parent) sink.guard(`${ns ?? ''}/${parent}`);
  const selectorChanged = JSON.stringify(e.old?.spec?.selector) !== JSON.stringify(e.obj.spec?.selector);
  if (!parent && (e.type !== 'update' || retargeted || selectorChanged)) {
    enqueueSelectorGuards(caches, sink, ns);
    // A selector guard competes with the policies for its workloads.
    if (isSelectorGuard(e.obj) && e.type === 'update' && selectorChanged) enqueuePolicies(caches, sink);
  }
}

function onTarget(caches: Caches, sink: KeySink, kind: TargetKind, e: InformerEvent<{ metadata: ObjectMeta }>): void {
  // Before the guards run: a target that starts rolling has its pods listed by then or soon after.
  caches.pods.sync(kind, e.obj.metadata.namespace ?? '', e.obj.metadata.name);
  enqueueForTarget(caches, sink, kind, e.obj.metadata.namespace, e.obj.metadata.name);
  // Labels and the ignore annotation decide what selector guards and policies choose.
  if (
    e.type !== 'update' ||
    JSON.stringify(e.old?.metadata.labels) !== JSON.stringify(e.obj.metadata.labels) ||
    JSON.stringify(e.old?.metadata.annotations) !== JSON.stringify(e.obj.metadata.annotations)
  ) {
    enqueuePolicies(caches, sink);
    enqueueSelectorGuards(caches, sink, e.obj.metadata.namespace);
  }
}
