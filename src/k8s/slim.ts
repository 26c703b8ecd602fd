/**
 * Slim cached objects. The informers keep only the fields gather and the event mappers read, so the
 * operator's memory grows with the number of DaemonSet pods and nodes, not with the size of their specs
 * (a full Pod is 5–20 kB of JSON; a slim one is a few hundred bytes).
 *
 * Cached objects are shared by every reader: never mutate them (the types are Readonly for that reason).
 */
import { createHash } from 'node:crypto';
import {
  HASH_LABEL,
  IGNORE_ANNOTATION,
  NOT_READY_TAINT,
  TEMPLATE_GENERATION_ANNOTATION,
  UNDO_OPT_OUT_ANNOTATION,
  UNDO_RECORD_ANNOTATION,
  UNREACHABLE_TAINT,
} from '../api/names.js';
import type { Taint } from '../api/objects.js';
import { DEFAULT_KIND, KINDS, TARGET_KINDS, kindDescriptor, podControllerKind } from '../api/kinds.js';
import type {
  Meta,
  SlimDaemonSet,
  SlimEvent,
  SlimGuard,
  SlimNamespace,
  SlimNode,
  SlimPod,
  SlimPolicy,
  SlimRevision,
} from '../api/objects.js';
import type { NodeHealth } from '../api/objects.js';
import type { TemplateFacets } from '../api/types.js';
import { parseQuantity } from '../domain/compare.js';
import { canonicalTemplate } from '../domain/undo.js';
import { slimLabelSelector } from './labelSelector.js';

// The raw objects come straight from JSON; they are typed loosely on purpose and read defensively.
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return */

export function meta(m: any, keep: { labels?: boolean; annotations?: string[]; owners?: boolean } = {}): Meta {
  const out: Meta = { name: m?.name ?? '' };
  if (m?.namespace) out.namespace = m.namespace;
  if (m?.uid) out.uid = m.uid;
  if (m?.resourceVersion) out.resourceVersion = m.resourceVersion;
  if (typeof m?.generation === 'number') out.generation = m.generation;
  if (m?.creationTimestamp) out.creationTimestamp = String(m.creationTimestamp);
  if (m?.deletionTimestamp) out.deletionTimestamp = String(m.deletionTimestamp);
  if (keep.labels && m?.labels) out.labels = { ...m.labels };
  if (keep.annotations && m?.annotations) {
    const a: Record<string, string> = {};
    for (const k of keep.annotations) if (m.annotations[k] !== undefined) a[k] = m.annotations[k];
    out.annotations = a;
  }
  if (keep.owners && Array.isArray(m?.ownerReferences)) {
    const c = m.ownerReferences.filter((o: any) => o?.controller === true);
    if (c.length > 0)
      out.ownerReferences = c.map((o: any) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.name, uid: o.uid, controller: true }));
  }
  return out;
}

/** The first `chars` hex characters of the SHA-256 of `text`: kept instead of what it digests. */
function digest(text: string, chars: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, chars);
}

/**
 * The same digest for a DaemonSet's live template and for the template its ControllerRevision stores
 * (16 hex characters per object instead of either template). About 16 µs per DaemonSet event.
 */
export function templateDigest(template: unknown): string {
  return digest(canonicalTemplate(template), 16);
}

/** Guards are few and small: keep them whole (the status is what decide starts from). */
export function slimGuard(raw: any): SlimGuard {
  return {
    metadata: meta(raw?.metadata, { labels: true, owners: true }),
    spec: structuredClone(raw?.spec ?? { targetRef: { kind: DEFAULT_KIND, name: '' } }),
    ...(raw?.status ? { status: structuredClone(raw.status) } : {}),
  };
}

export function slimDaemonSet(raw: any): SlimDaemonSet {
  const tpl = raw?.spec?.template?.spec ?? {};
  const required = tpl.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  const s = raw?.status ?? {};
  return {
    metadata: meta(raw?.metadata, {
      labels: true,
      owners: true,
      annotations: [TEMPLATE_GENERATION_ANNOTATION, UNDO_OPT_OUT_ANNOTATION, IGNORE_ANNOTATION, UNDO_RECORD_ANNOTATION],
    }),
    spec: {
      selector: slimLabelSelector(raw?.spec?.selector),
      updateStrategy: {
        type: raw?.spec?.updateStrategy?.type ?? 'RollingUpdate',
        ...(raw?.spec?.updateStrategy?.rollingUpdate ? { rollingUpdate: { ...raw.spec.updateStrategy.rollingUpdate } } : {}),
      },
      minReadySeconds: raw?.spec?.minReadySeconds ?? 0,
      placement: {
        ...(tpl.nodeSelector ? { nodeSelector: { ...tpl.nodeSelector } } : {}),
        ...(required ? { nodeSelectorTerms: structuredClone(required) } : {}),
        ...(tpl.tolerations ? { tolerations: structuredClone(tpl.tolerations) } : {}),
      },
      images: (tpl.containers ?? []).map((c: any) => String(c?.image ?? '')),
      ...(raw?.spec?.template ? { templateDigest: templateDigest(raw.spec.template) } : {}),
    },
    status: {
      observedGeneration: s.observedGeneration ?? 0,
      desiredNumberScheduled: s.desiredNumberScheduled ?? 0,
      currentNumberScheduled: s.currentNumberScheduled ?? 0,
      updatedNumberScheduled: s.updatedNumberScheduled ?? 0,
      numberReady: s.numberReady ?? 0,
      numberAvailable: s.numberAvailable ?? 0,
      numberMisscheduled: s.numberMisscheduled ?? 0,
    },
  };
}

/**
 * The node a daemon pod belongs to: spec.nodeName once bound; before that, the node its node affinity
 * pins it to (the DaemonSet controller sets matchFields metadata.name In [node]).
 */
function podNode(spec: any): string | undefined {
  if (spec?.nodeName) return spec.nodeName;
  const terms = spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const t of terms) {
    for (const f of t?.matchFields ?? []) {
      if (f?.key === 'metadata.name' && f?.operator === 'In' && Array.isArray(f.values) && f.values.length === 1) return f.values[0];
    }
  }
  return undefined;
}

/**
 * The kubelet computes Ready as ContainersReady and every readiness gate, so Ready False beside
 * ContainersReady True with each gate True was set by someone else: the node lifecycle controller does it
 * to every pod of a node that stopped reporting, and the kubelet puts it back only on a later status sync.
 */
function markedNotReady(raw: any, conds: any[]): boolean {
  if (raw?.status?.phase !== 'Running') return false;
  const status = (type: string): unknown => conds.find((c) => c?.type === type)?.status;
  if (status('Ready') !== 'False' || status('ContainersReady') !== 'True') return false;
  const gates: any[] = raw?.spec?.readinessGates ?? [];
  return gates.every((g) => status(String(g?.conditionType ?? '')) === 'True');
}

/**
 * The revision hash of a pod. A daemon pod's `controller-revision-hash` label holds the hash; a
 * StatefulSet pod's holds its ControllerRevision's name, `<statefulset>-<hash>` (its controller's kind
 * says which: KindDescriptor.revisionLabelHolds); a Deployment pod's `pod-template-hash` (its controller
 * is a ReplicaSet) holds the hash: all are read as the hash, as the revisions are (slimRevision, slimReplicaSet).
 */
function podHash(m: any): string {
  const controller = Array.isArray(m?.ownerReferences) ? m.ownerReferences.find((o: any) => o?.controller === true) : undefined;
  // The kind whose pods this controller creates (a ReplicaSet's pods are a Deployment's) names the label.
  const kind = TARGET_KINDS.find((k) => podControllerKind(k) === String(controller?.kind));
  const label = String(m?.labels?.[kind ? KINDS[kind].revisionLabel : HASH_LABEL] ?? '');
  const owner = controller && kindDescriptor(String(controller.kind))?.revisionLabelHolds === 'revisionName' ? controller : undefined;
  const prefix = owner ? `${String(owner.name)}-` : undefined;
  return prefix !== undefined && label.startsWith(prefix) ? label.slice(prefix.length) : label;
}

export function slimPod(raw: any): SlimPod {
  const st = raw?.status ?? {};
  const conds: any[] = st.conditions ?? [];
  const readyCond = conds.find((c) => c?.type === 'Ready');
  const sched = conds.find((c) => c?.type === 'PodScheduled');
  const statuses: any[] = [...(st.initContainerStatuses ?? []), ...(st.containerStatuses ?? [])];
  const waiting = statuses.find(
    (c) => c?.state?.waiting?.reason && c.state.waiting.reason !== 'PodInitializing' && c.state.waiting.reason !== 'ContainerCreating',
  );
  const out: SlimPod = {
    metadata: meta(raw?.metadata, { owners: true }),
    scheduled: Boolean(raw?.spec?.nodeName),
    hash: podHash(raw?.metadata),
    images: (raw?.spec?.containers ?? []).map((c: any) => String(c?.image ?? '')),
    phase: st.phase ?? '',
    ready: readyCond?.status === 'True',
    restartCount: statuses.reduce((n, c) => n + (c?.restartCount ?? 0), 0),
  };
  if (!raw?.spec?.nodeName && sched === undefined) out.schedulingAttempted = false;
  if (markedNotReady(raw, conds)) out.markedNotReady = true;
  const node = podNode(raw?.spec);
  if (node) out.node = node;
  if (out.ready && readyCond?.lastTransitionTime) out.readySince = String(readyCond.lastTransitionTime);
  // The latest container termination: its reason (OOMKilled, Error) names the remedy, its time says when
  // the new revision crashed.
  const last = statuses
    .map((c) => ({ name: String(c?.name ?? ''), t: c?.lastState?.terminated }))
    .filter((x) => x.t)
    .sort((a, b) => String(b.t.finishedAt ?? '').localeCompare(String(a.t.finishedAt ?? '')))[0];
  if (last) {
    out.lastTermination = { container: last.name, reason: String(last.t.reason ?? 'Error'), exitCode: Number(last.t.exitCode ?? 0) };
    if (last.t.finishedAt) out.lastTermination.at = String(last.t.finishedAt);
  }
  const inits: any[] = st.initContainerStatuses ?? [];
  const initNames = new Set<string>(inits.map((c) => String(c?.name ?? '')));
  if (waiting) {
    out.waitingReason = waiting.state.waiting.reason;
    const msg = String(waiting.state.waiting.message ?? '');
    // kubectl shows these as Init:<reason>; the class is the same, the message names the init container.
    out.waitingMessage = initNames.has(String(waiting.name ?? '')) ? `init container ${String(waiting.name)}: ${msg}` : msg;
  } else if (sched?.status === 'False') {
    out.waitingReason = sched.reason ?? 'Unschedulable';
    out.waitingMessage = sched.message ?? '';
  } else if (!out.ready && out.phase === 'Running' && statuses.some((c) => c?.lastState?.terminated && !c?.ready && c?.restartCount > 0)) {
    const t = statuses.find((c) => c?.lastState?.terminated)?.lastState?.terminated;
    out.waitingReason = 'CrashLoopBackOff';
    out.waitingMessage = `last exit ${t?.exitCode ?? '?'} (${t?.reason ?? 'Error'})`;
  }
  return out;
}

/**
 * The node port a container port takes. On a pod with `hostNetwork: true` the API server defaults every
 * container and init container port's `hostPort` to its `containerPort` (kubernetes/kubernetes
 * pkg/apis/core/v1/defaults.go, SetDefaults_Pod), so the scheduler counts it as a host port. It does so
 * on pods only, not on the template or its ControllerRevision: a template that declares
 * `containerPort: 61678` and no `hostPort` still takes port 61678 on every node it runs on.
 */
function hostPortOf(port: any, hostNetwork: boolean): number | undefined {
  if (typeof port?.hostPort === 'number' && port.hostPort > 0) return port.hostPort;
  if (hostNetwork && typeof port?.containerPort === 'number' && port.containerPort > 0) return port.containerPort;
  return undefined;
}

/**
 * The facets of a pod template that scheduling and admission failures are about. Requests are what the
 * scheduler counts for a pod: the larger of the app containers' sum and any one init container, per
 * resource, plus the pod overhead.
 */
export function templateFacets(template: unknown): TemplateFacets {
  const spec: any = (template as any)?.spec ?? {};
  const containers: any[] = Array.isArray(spec.containers) ? spec.containers : [];
  const inits: any[] = Array.isArray(spec.initContainers) ? spec.initContainers : [];
  const requestsOf = (c: any): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries({ ...(c?.resources?.limits ?? {}), ...(c?.resources?.requests ?? {}) } as Record<
      string,
      unknown
    >)) {
      const n = parseQuantity(v);
      if (n !== undefined) out[k] = n;
    }
    return out;
  };
  const requests: Record<string, number> = {};
  for (const c of containers) for (const [k, v] of Object.entries(requestsOf(c))) requests[k] = (requests[k] ?? 0) + v;
  for (const c of inits) for (const [k, v] of Object.entries(requestsOf(c))) requests[k] = Math.max(requests[k] ?? 0, v);
  for (const [k, v] of Object.entries((spec.overhead ?? {}) as Record<string, unknown>)) {
    const n = parseQuantity(v);
    if (n !== undefined) requests[k] = (requests[k] ?? 0) + n;
  }
  const hostPorts = new Set<string>();
  for (const c of [...containers, ...inits]) {
    for (const p of Array.isArray(c?.ports) ? c.ports : []) {
      const port = hostPortOf(p, spec.hostNetwork === true);
      if (port !== undefined) hostPorts.add(`${port}/${String(p.protocol ?? 'TCP')}`);
    }
  }
  const security = {
    pod: spec.securityContext ?? null,
    host: [spec.hostNetwork === true, spec.hostPID === true, spec.hostIPC === true],
    containers: [...inits, ...containers].map((c) => c?.securityContext ?? null),
    volumes: (Array.isArray(spec.volumes) ? spec.volumes : []).map((v: any) =>
      Object.keys((v ?? {}) as object)
        .filter((k) => k !== 'name')
        .sort(),
    ),
  };
  const placement = [spec.nodeSelector ?? null, spec.affinity?.nodeAffinity ?? null, spec.tolerations ?? null];
  const facets: TemplateFacets = {
    hostPorts: [...hostPorts].sort(),
    requests,
    security: digest(JSON.stringify(security), 12),
    placement: digest(JSON.stringify(placement), 12),
  };
  if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '') facets.serviceAccountName = spec.serviceAccountName;
  if (typeof spec.priorityClassName === 'string' && spec.priorityClassName !== '') facets.priorityClassName = spec.priorityClassName;
  return facets;
}

/**
 * A digest per pod volume of `template`, so that a mount failure can be blamed on the revision only when
 * it added or changed that volume; the template itself is not kept. Undefined without a pod spec.
 */
export function volumeDigests(template: any): Record<string, string> | undefined {
  const podSpec = template?.spec;
  if (!podSpec) return undefined;
  const vols: any[] = Array.isArray(podSpec.volumes) ? podSpec.volumes : [];
  return Object.fromEntries(vols.map((v) => [String(v?.name ?? ''), digest(JSON.stringify(v), 12)]));
}

export function slimRevision(raw: any): SlimRevision {
  const name: string = raw?.metadata?.name ?? '';
  const hash: string = raw?.metadata?.labels?.[HASH_LABEL] ?? name.slice(name.lastIndexOf('-') + 1);
  const out: SlimRevision = { metadata: meta(raw?.metadata, { owners: true }), hash, revision: Number(raw?.revision ?? 0) };
  const template = raw?.data?.spec?.template;
  const volumes = volumeDigests(template);
  if (volumes) out.volumes = volumes;
  if (template) {
    out.templateDigest = templateDigest(template);
    out.facets = templateFacets(template);
  }
  return out;
}

/** Keeps the involved object, reason, a bounded message and the time of a Warning Event. */
export function slimEvent(raw: any): SlimEvent {
  const io = raw?.involvedObject ?? raw?.regarding ?? {};
  const message = String(raw?.message ?? raw?.note ?? '');
  return {
    metadata: meta(raw?.metadata),
    involved: { kind: String(io.kind ?? ''), name: String(io.name ?? ''), ...(io.namespace ? { namespace: String(io.namespace) } : {}) },
    reason: String(raw?.reason ?? ''),
    message: message.length > 1024 ? `${message.slice(0, 1023)}…` : message,
    at: String(
      raw?.lastTimestamp ??
        raw?.series?.lastObservedTime ??
        raw?.eventTime ??
        raw?.firstTimestamp ??
        raw?.metadata?.creationTimestamp ??
        '',
    ),
  };
}

/** Node conditions that, when True, mean the node cannot be trusted to run a new pod. */
const PRESSURE = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'];
/** Taints the node lifecycle controller sets on a node it cannot reach or that is not ready. */
const LIFECYCLE_TAINTS = [UNREACHABLE_TAINT, NOT_READY_TAINT];

/**
 * Keeps labels, taints and what the Ready and pressure conditions say, never their heartbeat times:
 * a kubelet posts status every few seconds, and a slim node that did not change raises no event.
 */
export function slimNode(raw: any): SlimNode {
  const taints: Taint[] = (raw?.spec?.taints ?? []).map((t: any) => ({
    key: t.key,
    ...(t.value ? { value: t.value } : {}),
    effect: t.effect,
  }));
  const out: SlimNode = { metadata: meta(raw?.metadata, { labels: true }), taints };
  const conds: any[] = raw?.status?.conditions ?? [];
  const ready = conds.find((c) => c?.type === 'Ready');
  if (ready) {
    const status = ready.status === 'True' || ready.status === 'False' ? ready.status : 'Unknown';
    const health: NodeHealth = { ready: status };
    if (status !== 'True') {
      if (ready.reason) health.reason = String(ready.reason);
      if (ready.message) health.message = String(ready.message);
      // When it stopped being Ready: compared with when a new pod started on it (compare.ts). Kept only
      // while not Ready, so a healthy node's slim copy does not change with it.
      if (ready.lastTransitionTime) health.since = String(ready.lastTransitionTime);
    }
    const pressure = conds.filter((c) => PRESSURE.includes(String(c?.type)) && c?.status === 'True').map((c) => String(c.type));
    if (pressure.length > 0) health.pressure = pressure;
    if (taints.some((t) => LIFECYCLE_TAINTS.includes(t.key) && t.effect === 'NoExecute')) health.unreachable = true;
    out.health = health;
  }
  return out;
}

/** Policies are few and small: keep spec and status whole. */
export function slimPolicy(raw: any): SlimPolicy {
  return {
    metadata: {
      name: raw?.metadata?.name ?? '',
      uid: raw?.metadata?.uid,
      generation: raw?.metadata?.generation,
      resourceVersion: raw?.metadata?.resourceVersion,
    },
    spec: structuredClone(raw?.spec ?? {}),
    ...(raw?.status ? { status: structuredClone(raw.status) } : {}),
  };
}

/** A namespace: its name and labels, which is what a policy's namespaceSelector reads. */
export function slimNamespace(raw: any): SlimNamespace {
  return {
    metadata: {
      name: raw?.metadata?.name ?? '',
      labels: { ...(raw?.metadata?.labels ?? {}) },
      resourceVersion: raw?.metadata?.resourceVersion,
      uid: raw?.metadata?.uid,
      ...(raw?.metadata?.deletionTimestamp ? { deletionTimestamp: String(raw.metadata.deletionTimestamp) } : {}),
    },
  };
}
