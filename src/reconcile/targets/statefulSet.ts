/**
 * The gather adapter of StatefulSets. A StatefulSet's units are its ordinals: unit `web-2` is ordinal 2,
 * named by the pod every ordinal keeps the name of, and judged on the node its newest pod runs on.
 *
 * Its counters are read in a DaemonSet's terms so decide stays blind to the kind:
 * - desired: spec.replicas, every ordinal;
 * - updated: the ordinals on the update revision, plus those the partition holds back. A rollout that
 *   updated every ordinal from its partition up is done for now (the controller stops there by design),
 *   so a partitioned canary that works is Healthy and never waits on a deadline;
 * - current, ready, available: the controller's own counts of created, Ready and available pods.
 * Ordinals at or above replicas (a scale-down in progress) are not units: their pods still count in
 * the generations, and gather's memory names them removed, not lost.
 */
import type { SettledCounters } from '../../domain/podInterest.js';
import type { SlimStatefulSet } from '../../api/objects.js';
import type { TargetKind } from '../../api/types.js';
import type { ClaimView, NodeView, PodView, TargetView } from '../../domain/observation.js';
import type { CacheView } from '../ports.js';
import { explainedPodView, openTarget, targetObservation, undoOptedOut, withSharedFacts, type ObserveTarget } from './shared.js';

/** The ordinals below the partition: held on their revision by the rolling update (none under OnDelete). */
export function heldOrdinals(sts: Readonly<SlimStatefulSet>): number {
  if (sts.spec.updateStrategy.type === 'OnDelete') return 0;
  return Math.max(0, Math.min(sts.spec.updateStrategy.rollingUpdate?.partition ?? 0, sts.spec.replicas));
}

/** A StatefulSet's generation and counters in a DaemonSet's terms (see the top of this file). */
export function statefulSetCounters(sts: Readonly<SlimStatefulSet>): SettledCounters {
  const s = sts.status;
  const replicas = sts.spec.replicas;
  const held = heldOrdinals(sts);
  return {
    ...(held > 0 && s.currentRevision !== s.updateRevision ? { partition: held } : {}),
    generation: sts.metadata.generation ?? 0,
    observedGeneration: s.observedGeneration,
    desired: replicas,
    current: s.replicas,
    updated: Math.min(replicas, s.updatedReplicas + held),
    ready: s.readyReplicas,
    available: s.availableReplicas,
    misscheduled: 0,
  };
}

/** The ordinal of pod `pod` of StatefulSet `name`, or undefined when the name is not `<name>-<n>`. */
export function ordinalOf(name: string, pod: string): number | undefined {
  if (!pod.startsWith(`${name}-`)) return undefined;
  const tail = pod.slice(name.length + 1);
  return /^(0|[1-9][0-9]*)$/.test(tail) ? Number(tail) : undefined;
}

/**
 * The StatefulSets among `statefulSets` in `namespace` whose ordinals' claims are named like `claim`
 * (`<template>-<name>-<i>`): the workloads a change of that claim explains.
 */
export function claimOwners(
  statefulSets: ReadonlyArray<Readonly<SlimStatefulSet>>,
  namespace: string,
  claim: string,
): Array<{ kind: TargetKind; name: string }> {
  return statefulSets
    .filter((s) => (s.metadata.namespace ?? '') === namespace)
    .filter((s) => s.spec.claimTemplates.some((t) => ordinalOf(`${t}-${s.metadata.name}`, claim) !== undefined))
    .map((s) => ({ kind: 'StatefulSet', name: s.metadata.name }));
}

/** The StatefulSet's observation (see ObserveTarget): its units are ordinals. */
export const observeStatefulSet: ObserveTarget = (cache, targets, namespace, name, now, status) => {
  const parts = { cached: cache.workload('StatefulSet', namespace, name), viewOf: statefulSetView };
  const opened = openTarget(cache, targets, { namespace, name, status }, parts);
  if (opened.kind !== 'Opened') return opened;
  const { cached: sts, uid, view, revisions, currentRevision, fromCounters } = opened;
  const units = unitViews(cache, view, sts.spec.replicas, fromCounters ? [] : cache.podsOwnedBy(uid), now);
  for (const u of units) {
    const claims = u.ordinal !== undefined ? unservedClaims(cache, sts, u.ordinal) : [];
    if (claims.length > 0) u.claims = claims;
  }
  const existing = new Set(units.filter((u) => u.eligible).map((u) => u.node));
  const settled = view.observedGeneration >= view.generation && view.current === view.desired;
  // Ordinals at or above replicas are not units any more: a scale-down removes them, it does not shrink
  // the rollout's targets.
  const { removed } = targets.diff(uid, units, existing, settled);
  return targetObservation(cache, view, { revisions, currentRevision, units, left: [], removed, fromCounters });
};

/** The StatefulSet as decide reads it: counters, strategy, partition, template, owner, undo record. */
function statefulSetView(cache: CacheView, sts: Readonly<SlimStatefulSet>, namespace: string, name: string, uid: string): TargetView {
  const view: TargetView = {
    kind: 'StatefulSet',
    name,
    namespace,
    uid,
    ...statefulSetCounters(sts),
    strategy: sts.spec.updateStrategy.type === 'OnDelete' ? 'OnDelete' : 'RollingUpdate',
    minReadySeconds: sts.spec.minReadySeconds,
    undoOptOut: undoOptedOut(sts.metadata),
    images: [...sts.spec.images],
    waitsOnUnreadyPods: sts.spec.podManagementPolicy === 'OrderedReady',
  };
  if (sts.spec.templateDigest !== undefined) view.templateDigest = sts.spec.templateDigest;
  return withSharedFacts(cache, view, sts.metadata);
}

/**
 * One unit per ordinal below replicas, and one per ordinal above it that still has a pod (a scale-down
 * in progress: not eligible). Each unit is judged on the node its newest pod runs on.
 */
function unitViews(
  cache: CacheView,
  view: TargetView,
  replicas: number,
  pods: ReadonlyArray<Parameters<typeof explainedPodView>[1]>,
  now: number,
): NodeView[] {
  const byOrdinal = new Map<number, PodView[]>();
  const hostOf = new Map<number, string>();
  for (const p of pods) {
    const ordinal = ordinalOf(view.name, p.metadata.name);
    if (ordinal === undefined || !p.hash) continue;
    const list = byOrdinal.get(ordinal) ?? [];
    list.push(explainedPodView(cache, p, view, now));
    byOrdinal.set(ordinal, list);
    if (p.node && p.scheduled) hostOf.set(ordinal, p.node);
  }
  const health = new Map(cache.nodes().map((n) => [n.metadata.name, n.health] as const));
  const count = Math.max(replicas, ...[...byOrdinal.keys()].map((o) => o + 1));
  const units: NodeView[] = [];
  for (let ordinal = 0; ordinal < count; ordinal++) {
    const unitPods = byOrdinal.get(ordinal) ?? [];
    if (ordinal >= replicas && unitPods.length === 0) continue;
    const unit: NodeView = { node: `${view.name}-${ordinal}`, ordinal, eligible: ordinal < replicas, pods: unitPods };
    if (ordinal >= replicas) unit.ineligibleReason = `ordinal ${ordinal} is at or above replicas ${replicas} (scaling down)`;
    const host = hostOf.get(ordinal);
    if (host !== undefined) {
      unit.host = host;
      const h = health.get(host);
      if (h) unit.health = { ...h };
    }
    units.push(unit);
  }
  return units;
}

/**
 * The claims of `ordinal` that cannot serve its pod now: not Bound, being deleted, or not in the cache
 * (the cache lists every claim of the namespace, so a claim absent there does not exist).
 */
export function unservedClaims(cache: CacheView, sts: Readonly<SlimStatefulSet>, ordinal: number): ClaimView[] {
  if (!cache.claim) return [];
  const out: ClaimView[] = [];
  for (const template of sts.spec.claimTemplates) {
    const name = `${template}-${sts.metadata.name}-${ordinal}`;
    const c = cache.claim(sts.metadata.namespace ?? '', name);
    if (!c) {
      out.push({ name, phase: 'Missing' });
      continue;
    }
    const phase = c.phase === 'Bound' || c.phase === 'Lost' ? c.phase : 'Pending';
    if (phase === 'Bound' && !c.metadata.deletionTimestamp) continue;
    const view: ClaimView = { name, phase };
    if (c.metadata.deletionTimestamp) view.deletingSince = c.metadata.deletionTimestamp;
    if (c.storageClassName) view.storageClass = c.storageClassName;
    out.push(view);
  }
  return out;
}
