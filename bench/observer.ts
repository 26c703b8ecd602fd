/**
 * The bench's own view of the cluster, from watches (not polling) on the bench namespace: every
 * RolloutGuard status the operator wrote, every DaemonSet status the controller wrote, and when each
 * daemon pod appeared and when it first showed why it cannot run. Each change is stamped with the
 * bench's clock on arrival; the operator runs on the same machine, so its timestamps compare directly.
 *
 * It uses the operator's own Informer (list + watch, bookmarks, restarts) with a separate client and
 * User-Agent: its requests are not in the operator's counters.
 */
import { pino } from 'pino';
import type { ApiClient } from '../src/k8s/apiClient.js';
import { HASH_LABEL } from '../src/api/names.js';
import { TARGET_KINDS } from '../src/api/types.js';
import type { LabelSelector } from '../src/api/objects.js';
import { Informer } from '../src/k8s/informer.js';
import { selectorString } from '../src/k8s/labelSelector.js';
import { lastWrittenAt } from '../src/k8s/writtenAt.js';
import type { DsStatusSample } from './alert.js';

interface Meta {
  name: string;
  namespace?: string;
  resourceVersion?: string;
  uid?: string;
}

/** What the bench keeps of a guard. */
export interface GuardSnap {
  metadata: Meta;
  state?: string;
  cause?: string;
  blocked: Array<{ node: string; reason: string }>;
  blockedNodeCount?: number;
  lastProgressAt?: string;
  startedAt?: string;
  completedAt?: string;
  /** lastTransitionTime of the Stalled condition while it is True (the operator's clock, ms precision). */
  stalledSince?: string;
  /** status.rollout.failedAt: the verdict Failed (crashes on failedNodesThreshold Ready nodes), and the failure count. */
  failedAt?: string;
  failures?: number;
  /** status.rollout.rollback: the rollout tracked is the guard's own undo converging. */
  rollback?: boolean;
  lastUndo?: { at: string; result: string; fromHash: string; toHash: string };
  currentHash?: string;
}

/** A guard status as seen at time `t`. */
export interface GuardObs extends GuardSnap {
  t: number;
}

interface DsSnap {
  metadata: Meta & { generation?: number };
  /** Its pod selector, as the operator turns it into its pod watch's (k8s/labelSelector.ts). */
  selector?: LabelSelector;
  observedGeneration: number;
  sample: Omit<DsStatusSample, 't'>;
}

/** What the bench reads of a StatefulSet: whether its rollout finished. */
export interface StsSnap {
  metadata: Meta & { generation?: number };
  observedGeneration: number;
  replicas: number;
  readyReplicas: number;
  updatedReplicas: number;
  currentRevision?: string;
  updateRevision?: string;
}

/** What the bench reads of a Deployment: whether its rollout finished. */
export interface DeploySnap {
  metadata: Meta & { generation?: number };
  observedGeneration: number;
  replicas: number;
  /** status.replicas: every pod of every ReplicaSet, old ones still terminating included. */
  pods: number;
  updatedReplicas: number;
  availableReplicas: number;
}

export interface PodSnap {
  metadata: Meta;
  /** The workload that owns it: its DaemonSet or StatefulSet, or the Deployment of its ReplicaSet. */
  ds?: string;
  /** A guard names the pod itself (a StatefulSet's ordinal, a Deployment's pod), not its node. */
  namedByPod?: boolean;
  hash: string;
  node?: string;
  /** ImagePullBackOff, Unschedulable, …: the first thing that says the pod cannot run. */
  failure?: string;
  ready: boolean;
  /** A container has started (running now, or terminated since it ran). */
  started: boolean;
  /** Earliest lastState.terminated.finishedAt of its containers: a crash (metav1.Time, whole seconds). */
  crashFinishedAt?: string;
  /** The API server's last write of the pod (k8s/writtenAt.ts: whole seconds). */
  writtenAt?: number;
}

/** First sighting of a daemon pod, and of its failure. */
export interface PodRecord {
  /** The DaemonSet or StatefulSet that owns it. */
  ds: string;
  hash: string;
  node?: string;
  /** What a guard names when it is blocked: its node, or for a StatefulSet's pod the pod itself. */
  unit?: string;
  /** A StatefulSet recreates a pod under the same name: a new UID is a new pod, with a record of its own. */
  uid?: string;
  seenAt: number;
  failedAt?: number;
  failure?: string;
  /** The API server's write of the failure the bench first saw (whole seconds). */
  failureWrittenAt?: number;
  /** When the bench first saw a container of the pod started, and the pod Ready. */
  startedAt?: number;
  readyAt?: number;
  /** Earliest crash of the pod: its lastState.terminated.finishedAt (ms since epoch), and when the bench first saw one. */
  crashAt?: number;
  crashSeenAt?: number;
  /** When the bench saw the pod deleted. */
  deletedAt?: number;
}

/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-return -- raw API JSON, read defensively */
function meta(m: any): Meta {
  return {
    name: String(m?.name ?? ''),
    ...(m?.namespace ? { namespace: String(m.namespace) } : {}),
    ...(m?.resourceVersion ? { resourceVersion: String(m.resourceVersion) } : {}),
    ...(m?.uid ? { uid: String(m.uid) } : {}),
  };
}

function slimGuardSnap(raw: any): GuardSnap {
  const s = raw?.status ?? {};
  const stalled = (s.conditions ?? []).find((c: any) => c?.type === 'Stalled' && c?.status === 'True');
  return {
    metadata: meta(raw?.metadata),
    ...(s.state ? { state: String(s.state) } : {}),
    ...(s.cause ? { cause: String(s.cause) } : {}),
    blocked: (s.blockedNodes ?? []).map((b: any) => ({ node: String(b?.node ?? ''), reason: String(b?.reason ?? '') })),
    ...(typeof s.blockedNodeCount === 'number' ? { blockedNodeCount: s.blockedNodeCount } : {}),
    ...(s.rollout?.lastProgressAt ? { lastProgressAt: String(s.rollout.lastProgressAt) } : {}),
    ...(s.rollout?.startedAt ? { startedAt: String(s.rollout.startedAt) } : {}),
    ...(s.rollout?.completedAt ? { completedAt: String(s.rollout.completedAt) } : {}),
    ...(stalled?.lastTransitionTime ? { stalledSince: String(stalled.lastTransitionTime) } : {}),
    ...(s.rollout?.failedAt ? { failedAt: String(s.rollout.failedAt) } : {}),
    ...(typeof s.rollout?.failures?.count === 'number' ? { failures: s.rollout.failures.count } : {}),
    ...(s.rollout?.rollback ? { rollback: true } : {}),
    ...(s.lastUndo?.at
      ? {
          lastUndo: {
            at: String(s.lastUndo.at),
            result: String(s.lastUndo.result ?? ''),
            fromHash: String(s.lastUndo.fromHash ?? ''),
            toHash: String(s.lastUndo.toHash ?? ''),
          },
        }
      : {}),
    ...(s.currentRevision?.hash ? { currentHash: String(s.currentRevision.hash) } : {}),
  };
}

function slimDsSnap(raw: any): DsSnap {
  const s = raw?.status ?? {};
  return {
    metadata: { ...meta(raw?.metadata), generation: Number(raw?.metadata?.generation ?? 0) },
    ...(raw?.spec?.selector ? { selector: raw.spec.selector as LabelSelector } : {}),
    observedGeneration: Number(s.observedGeneration ?? 0),
    sample: {
      desired: Number(s.desiredNumberScheduled ?? 0),
      current: Number(s.currentNumberScheduled ?? 0),
      updated: Number(s.updatedNumberScheduled ?? 0),
      available: Number(s.numberAvailable ?? 0),
      misscheduled: Number(s.numberMisscheduled ?? 0),
    },
  };
}

function slimStsSnap(raw: any): StsSnap {
  const s = raw?.status ?? {};
  return {
    metadata: { ...meta(raw?.metadata), generation: Number(raw?.metadata?.generation ?? 0) },
    observedGeneration: Number(s.observedGeneration ?? 0),
    replicas: Number(raw?.spec?.replicas ?? 1),
    readyReplicas: Number(s.readyReplicas ?? 0),
    updatedReplicas: Number(s.updatedReplicas ?? 0),
    ...(s.currentRevision ? { currentRevision: String(s.currentRevision) } : {}),
    ...(s.updateRevision ? { updateRevision: String(s.updateRevision) } : {}),
  };
}

function slimDeploySnap(raw: any): DeploySnap {
  const s = raw?.status ?? {};
  return {
    metadata: { ...meta(raw?.metadata), generation: Number(raw?.metadata?.generation ?? 0) },
    observedGeneration: Number(s.observedGeneration ?? 0),
    replicas: Number(raw?.spec?.replicas ?? 1),
    pods: Number(s.replicas ?? 0),
    updatedReplicas: Number(s.updatedReplicas ?? 0),
    availableReplicas: Number(s.availableReplicas ?? 0),
  };
}

/** Every replica updated and available, and no old pod left: `kubectl rollout status` would say it rolled out. */
export function deploymentRolledOut(x: DeploySnap | undefined): boolean {
  return (
    x !== undefined &&
    x.observedGeneration >= (x.metadata.generation ?? 0) &&
    x.updatedReplicas === x.replicas &&
    x.availableReplicas === x.replicas &&
    x.pods === x.replicas
  );
}

/** Every replica ready on the revision the StatefulSet's current spec asks for. */
export function statefulSetRolledOut(x: StsSnap | undefined): boolean {
  return (
    x !== undefined &&
    x.observedGeneration >= (x.metadata.generation ?? 0) &&
    x.readyReplicas === x.replicas &&
    x.updatedReplicas === x.replicas &&
    x.currentRevision === x.updateRevision
  );
}

/**
 * A pod as the bench keeps it, its revision read from `revisionLabel`. A pod of a ReplicaSet belongs to
 * the Deployment the ReplicaSet is named for (`<deployment>-<pod-template-hash>`), as the bench creates them.
 */
const slimPodSnap =
  (revisionLabel: string) =>
  (raw: any): PodSnap => {
    const snap = podSnap(raw, revisionLabel);
    const rs = (raw?.metadata?.ownerReferences ?? []).find((o: any) => o?.controller && o?.kind === 'ReplicaSet');
    const suffix = `-${snap.hash}`;
    if (rs && snap.hash && String(rs.name).endsWith(suffix))
      return { ...snap, ds: String(rs.name).slice(0, -suffix.length), namedByPod: true };
    return snap;
  };

function podSnap(raw: any, revisionLabel: string): PodSnap {
  const owner = (raw?.metadata?.ownerReferences ?? []).find(
    (o: any) => o?.controller && (TARGET_KINDS as readonly string[]).includes(o?.kind),
  );
  let node: string | undefined = raw?.spec?.nodeName;
  for (const t of raw?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []) {
    for (const f of t?.matchFields ?? []) if (!node && f?.key === 'metadata.name' && f?.values?.length === 1) node = String(f.values[0]);
  }
  const waiting = (raw?.status?.containerStatuses ?? [])
    .map((c: any) => c?.state?.waiting?.reason)
    .find((r: unknown) => r && r !== 'ContainerCreating');
  const sched = (raw?.status?.conditions ?? []).find((c: any) => c?.type === 'PodScheduled');
  const failure = waiting ? String(waiting) : sched?.status === 'False' ? String(sched.reason ?? 'Unschedulable') : undefined;
  const statuses: any[] = raw?.status?.containerStatuses ?? [];
  const written = lastWrittenAt(raw);
  const crashes = statuses
    .map((c) => c?.lastState?.terminated?.finishedAt)
    .filter(Boolean)
    .map(String)
    .sort();
  return {
    metadata: meta(raw?.metadata),
    ...(owner ? { ds: String(owner.name), ...(owner.kind === 'StatefulSet' ? { namedByPod: true } : {}) } : {}),
    hash: String(raw?.metadata?.labels?.[revisionLabel] ?? ''),
    ...(node ? { node } : {}),
    ...(failure ? { failure } : {}),
    ready: (raw?.status?.conditions ?? []).some((c: any) => c?.type === 'Ready' && c?.status === 'True'),
    started: statuses.some((c) => c?.state?.running || c?.state?.terminated || c?.lastState?.terminated),
    ...(crashes[0] ? { crashFinishedAt: crashes[0] } : {}),
    ...(written !== undefined ? { writtenAt: written } : {}),
  };
}
/* eslint-enable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-return */

export class Observer {
  readonly guards: Informer<GuardSnap>;
  readonly daemonSets: Informer<DsSnap>;
  readonly statefulSets: Informer<StsSnap>;
  readonly deployments: Informer<DeploySnap>;
  readonly pods: Informer<PodSnap>;
  /** Every status of every guard, in arrival order. */
  readonly guardLog = new Map<string, GuardObs[]>();
  /** Every status of every DaemonSet, in arrival order (the alert's input). */
  readonly dsLog = new Map<string, DsStatusSample[]>();
  /** Pods by name: when first seen and when first failing. */
  readonly podLog = new Map<string, PodRecord>();
  /** How far behind the API server's writes each pod event arrived (k8s/writtenAt.ts: whole seconds, so 0 to 1 s high). */
  readonly podDeliveries: Array<{ t: number; lagMs: number }> = [];
  /**
   * With BENCH_TWIN_WATCHES: per failing DaemonSet, a pod watch like the operator's own (its selector),
   * and when any of them first saw each pod failing. Beside the namespace-wide watch, it tells whether a
   * watch of one DaemonSet's pods is served later than a watch of all of them (bench/explanationParts.ts).
   */
  private readonly twins: Array<Informer<PodSnap>> = [];
  readonly twinFailedAt = new Map<string, number>();
  /** Arrival times of pod and DaemonSet changes per DaemonSet: each one is a reason for the operator to look again. */
  readonly changesByDs = new Map<string, number[]>();

  constructor(
    private readonly client: ApiClient,
    readonly ns: string,
    /** The pod label naming a pod's revision: `pod-template-hash` where the workloads are Deployments. */
    private readonly revisionLabel = HASH_LABEL,
  ) {
    const log = pino({ level: 'warn', base: { component: 'bench-observer' } }, pino.destination(2));
    this.guards = new Informer(
      client,
      { name: 'bench-guards', listPath: `/apis/rolloutguard.dev/v1alpha1/namespaces/${ns}/rolloutguards`, slim: slimGuardSnap },
      log,
    );
    this.daemonSets = new Informer(
      client,
      { name: 'bench-daemonsets', listPath: `/apis/apps/v1/namespaces/${ns}/daemonsets`, slim: slimDsSnap },
      log,
    );
    this.statefulSets = new Informer(
      client,
      { name: 'bench-statefulsets', listPath: `/apis/apps/v1/namespaces/${ns}/statefulsets`, slim: slimStsSnap },
      log,
    );
    this.deployments = new Informer(
      client,
      { name: 'bench-deployments', listPath: `/apis/apps/v1/namespaces/${ns}/deployments`, slim: slimDeploySnap },
      log,
    );
    this.pods = new Informer(
      client,
      {
        name: 'bench-pods',
        listPath: `/api/v1/namespaces/${ns}/pods`,
        labelSelector: revisionLabel,
        slim: slimPodSnap(revisionLabel),
        onDelivery: (_r, writtenAt, receivedAt) => this.podDeliveries.push({ t: receivedAt, lagMs: Math.max(0, receivedAt - writtenAt) }),
      },
      log,
    );

    this.guards.onEvent((e) => {
      if (e.type === 'delete') return;
      if (e.old && e.old.metadata.resourceVersion === e.obj.metadata.resourceVersion) return;
      const list = this.guardLog.get(e.obj.metadata.name) ?? [];
      list.push({ ...e.obj, t: Date.now() });
      this.guardLog.set(e.obj.metadata.name, list);
    });
    this.daemonSets.onEvent((e) => {
      if (e.type === 'delete') return;
      const t = Date.now();
      this.touch(e.obj.metadata.name, t);
      const list = this.dsLog.get(e.obj.metadata.name) ?? [];
      const last = list.at(-1);
      const s = e.obj.sample;
      if (
        !last ||
        last.desired !== s.desired ||
        last.current !== s.current ||
        last.updated !== s.updated ||
        last.available !== s.available ||
        last.misscheduled !== s.misscheduled
      ) {
        list.push({ t, ...s });
      }
      this.dsLog.set(e.obj.metadata.name, list);
    });
    this.pods.onEvent((e) => {
      const p = e.obj;
      if (!p.ds) return;
      const t = Date.now();
      this.touch(p.ds, t);
      let rec = this.podLog.get(p.metadata.name);
      if (e.type === 'delete') {
        if (rec && rec.deletedAt === undefined) rec.deletedAt = t;
        return;
      }
      if (!rec || (p.metadata.uid !== undefined && rec.uid !== undefined && rec.uid !== p.metadata.uid)) {
        rec = {
          ds: p.ds,
          hash: p.hash,
          seenAt: t,
          ...(p.metadata.uid !== undefined ? { uid: p.metadata.uid } : {}),
          ...(p.namedByPod ? { unit: p.metadata.name } : {}),
        };
        this.podLog.set(p.metadata.name, rec);
      }
      if (p.node) {
        rec.node = p.node;
        if (!p.namedByPod) rec.unit = p.node;
      }
      if (p.failure && rec.failedAt === undefined) {
        rec.failedAt = t;
        rec.failure = p.failure;
        if (p.writtenAt !== undefined) rec.failureWrittenAt = p.writtenAt;
      }
      if (p.started && rec.startedAt === undefined) rec.startedAt = t;
      if (p.ready && rec.readyAt === undefined) rec.readyAt = t;
      if (p.crashFinishedAt && rec.crashAt === undefined) {
        rec.crashAt = Date.parse(p.crashFinishedAt);
        rec.crashSeenAt = t;
      }
    });
  }

  private touch(ds: string, t: number): void {
    const list = this.changesByDs.get(ds) ?? [];
    list.push(t);
    this.changesByDs.set(ds, list);
  }

  async start(): Promise<void> {
    const all = [this.guards, this.daemonSets, this.statefulSets, this.deployments, this.pods];
    for (const i of all) i.start();
    await Promise.all(all.map((i) => i.waitForSync()));
  }

  async stop(): Promise<void> {
    await Promise.allSettled(
      [this.guards, this.daemonSets, this.statefulSets, this.deployments, this.pods, ...this.twins].map((i: { stop(): Promise<void> }) =>
        i.stop(),
      ),
    );
  }

  /** Starts a twin watch (see {@link twinFailedAt}) of each DaemonSet named, selecting `app=<name>` as the operator does. */
  async watchLikeOperator(names: readonly string[]): Promise<void> {
    const log = pino({ level: 'warn', base: { component: 'bench-twin' } }, pino.destination(2));
    for (const n of names) {
      // The operator's own rule (runtime/podWatches.ts): the DaemonSet's selector and the revision label.
      const twin = new Informer<PodSnap>(
        this.client,
        {
          name: `bench-twin-${n}`,
          listPath: `/api/v1/namespaces/${this.ns}/pods`,
          labelSelector: selectorString(this.daemonSets.get(this.ns, n)?.selector, [HASH_LABEL]),
          slim: slimPodSnap(this.revisionLabel),
        },
        log,
      );
      twin.onEvent((e) => {
        if (e.type !== 'delete' && e.obj.failure && !this.twinFailedAt.has(e.obj.metadata.name))
          this.twinFailedAt.set(e.obj.metadata.name, Date.now());
      });
      twin.start();
      this.twins.push(twin);
    }
    await Promise.all(this.twins.map((t) => t.waitForSync()));
  }

  /** The current cached status of a DaemonSet, with its generations. */
  daemonSet(name: string): DsSnap | undefined {
    return this.daemonSets.get(this.ns, name);
  }

  /** The current cached status of a StatefulSet. */
  statefulSet(name: string): StsSnap | undefined {
    return this.statefulSets.get(this.ns, name);
  }

  /** The current cached status of a Deployment. */
  deployment(name: string): DeploySnap | undefined {
    return this.deployments.get(this.ns, name);
  }

  guard(name: string): GuardSnap | undefined {
    return this.guards.get(this.ns, name);
  }

  /** Hashes of the live pods of one DaemonSet. */
  podHashes(ds: string): Set<string> {
    return new Set(
      this.pods
        .list()
        .filter((p) => p.ds === ds)
        .map((p) => p.hash),
    );
  }

  /** Time of the last guard write anyone observed. */
  lastGuardWrite(): number {
    let last = 0;
    for (const l of this.guardLog.values()) last = Math.max(last, l.at(-1)?.t ?? 0);
    return last;
  }
}
