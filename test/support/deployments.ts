/**
 * The `web` Deployment the end-to-end suites roll, and what they read of it as a person would with
 * kubectl: its status and conditions, its pods with the ReplicaSet each belongs to (pod-template-hash)
 * and the node it runs on, its ReplicaSets with their `deployment.kubernetes.io/revision`, and the wait
 * for its rollout to settle on one ReplicaSet.
 *
 * @module
 */
import { deploymentManifest, type DeploymentOptions, type Manifest } from '../../cluster/manifests.js';
import { POOL_LABEL, kubectl, kubectlJson, waitFor } from './cluster.js';
import type { GuardObj, GuardSuite } from './guards.js';
import { apply, guard } from './operator.js';

/** The image `web` starts on (no marker: kwok runs it Ready, see cluster/stages.yaml). */
export const WEB_GOOD = 'registry.local/web:1';
/** The annotation on a ReplicaSet (and its Deployment) numbering its revision. */
export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';

/** Options for {@link webDeployment}: the Deployment's own fields, and the node pool its pods go to. */
export interface WebOptions extends Partial<Omit<DeploymentOptions, 'name' | 'namespace' | 'container' | 'nodeSelector'>> {
  ns: string;
  /** The node pool (value of {@link POOL_LABEL}) its pods are placed on. */
  pool: string;
  image?: string;
}

/** Deployment `web`: 3 replicas unless told, one container `web` that requests a little, on one node pool. */
export function webDeployment(o: WebOptions): Manifest {
  const { ns, pool, image, ...rest } = o;
  return deploymentManifest({
    replicas: 3,
    ...rest,
    name: 'web',
    namespace: ns,
    nodeSelector: { [POOL_LABEL]: pool },
    container: { name: 'web', image: image ?? WEB_GOOD, requests: { cpu: '100m', memory: '64Mi' } },
  });
}

/** A pod of `web` as the suites compare them. */
export interface WebPod {
  name: string;
  uid: string;
  /** The ReplicaSet controlling it (its controller ownerReference). */
  replicaSet: string;
  /** Its `pod-template-hash` label: the hash its ReplicaSet is named for. */
  hash: string;
  ready: boolean;
  /** Its first container's waiting reason (ImagePullBackOff, CrashLoopBackOff), when it waits. */
  waiting?: string;
  node?: string;
  /** It has a deletionTimestamp: it is leaving. */
  deleting: boolean;
}

/** A ReplicaSet of `web`, as `kubectl get rs` and `kubectl rollout history` show it. */
export interface WebReplicaSet {
  name: string;
  hash: string;
  /** Its `deployment.kubernetes.io/revision`. */
  revision: number;
  /** spec.replicas: what the Deployment controller scaled it to. */
  replicas: number;
  ready: number;
  available: number;
  image: string;
}

/** The Deployment's status as the suites read it. */
export interface WebStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
}

interface RawPod {
  metadata: {
    name: string;
    uid: string;
    labels?: Record<string, string>;
    deletionTimestamp?: string;
    ownerReferences?: Array<{ kind: string; name: string; controller?: boolean }>;
  };
  spec?: { nodeName?: string };
  status?: {
    conditions?: Array<{ type: string; status: string }>;
    containerStatuses?: Array<{ state?: { waiting?: { reason?: string } } }>;
  };
}

interface RawReplicaSet {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { replicas?: number; template: { spec: { containers: Array<{ image: string }> } } };
  status?: { readyReplicas?: number; availableReplicas?: number };
}

/** The pods of `web` in `ns` (those being deleted too), by name. */
export async function webPods(ns: string): Promise<Map<string, WebPod>> {
  const list = await kubectlJson<{ items: RawPod[] }>(['get', 'pods', '-l', 'app=web'], { ns });
  return new Map(
    list.items.map((p) => {
      const waiting = p.status?.containerStatuses?.[0]?.state?.waiting?.reason;
      const row: WebPod = {
        name: p.metadata.name,
        uid: p.metadata.uid,
        replicaSet: p.metadata.ownerReferences?.find((o) => o.controller && o.kind === 'ReplicaSet')?.name ?? '',
        hash: p.metadata.labels?.['pod-template-hash'] ?? '',
        ready: (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
        deleting: p.metadata.deletionTimestamp !== undefined,
        ...(waiting ? { waiting } : {}),
        ...(p.spec?.nodeName ? { node: p.spec.nodeName } : {}),
      };
      return [row.name, row] as const;
    }),
  );
}

/** The ReplicaSets of `web` in `ns`, lowest revision first. */
export async function webReplicaSets(ns: string): Promise<WebReplicaSet[]> {
  const list = await kubectlJson<{ items: RawReplicaSet[] }>(['get', 'rs', '-l', 'app=web'], { ns });
  return list.items
    .map((rs) => ({
      name: rs.metadata.name,
      hash: rs.metadata.labels?.['pod-template-hash'] ?? '',
      revision: Number(rs.metadata.annotations?.[REVISION_ANNOTATION] ?? 0),
      replicas: rs.spec.replicas ?? 0,
      ready: rs.status?.readyReplicas ?? 0,
      available: rs.status?.availableReplicas ?? 0,
      image: rs.spec.template.spec.containers[0]?.image ?? '',
    }))
    .sort((a, b) => a.revision - b.revision);
}

/** The ReplicaSet of `web` whose template runs `image`; throws when none does. */
export async function replicaSetOf(ns: string, image: string): Promise<WebReplicaSet> {
  const rs = (await webReplicaSets(ns)).find((r) => r.image === image);
  if (!rs) throw new Error(`no ReplicaSet of web runs ${image}`);
  return rs;
}

export const webStatus = async (ns: string): Promise<WebStatus> =>
  (await kubectlJson<{ status: WebStatus }>(['get', 'deploy', 'web'], { ns })).status;

/** The condition `type` of `web`'s status, if it has one. */
export const webCondition = async (ns: string, type: string): Promise<NonNullable<WebStatus['conditions']>[number] | undefined> =>
  (await webStatus(ns)).conditions?.find((c) => c.type === type);

/**
 * Waits until `web` runs `replicas` pods, every one updated and available, and its controller has seen
 * its last change: `kubectl rollout status` would say it rolled out.
 */
export async function settledWeb(ns: string, replicas = 3): Promise<WebStatus> {
  return waitFor(
    async () => {
      const d = await kubectlJson<{ metadata: { generation: number }; status: WebStatus }>(['get', 'deploy', 'web'], { ns });
      const s = d.status;
      return (s.observedGeneration ?? 0) >= d.metadata.generation &&
        s.replicas === replicas &&
        s.updatedReplicas === replicas &&
        s.availableReplicas === replicas
        ? s
        : false;
    },
    { timeoutMs: 120_000, describe: `web: ${replicas}/${replicas} updated and available` },
  );
}

/** The image of `web`'s container, as its template holds it now. */
export const webImage = async (ns: string): Promise<string | undefined> =>
  (await kubectlJson<{ spec: { template: { spec: { containers: Array<{ image: string }> } } } }>(['get', 'deploy', 'web'], { ns })).spec
    .template.spec.containers[0]?.image;

/** `kubectl set image deploy/web web=<image>`. */
export const setWebImage = (ns: string, image: string): Promise<unknown> => kubectl(['set', 'image', 'deploy/web', `web=${image}`], { ns });

/**
 * The guards of a suite's `web` Deployments: each scenario's `web` rolled out on its pool and guarded
 * (with `spec`, the suite's, under the scenario's own), and what the suites read of the guard, its Events
 * counted with their repeats. Verdicts that must never happen are read from the guard's Events, which
 * stay an hour: a Suspect or Stalled between two reads of the status is still an Event.
 */
export class WebGuards<S extends string> {
  constructor(
    private readonly suite: GuardSuite<S>,
    private readonly spec: Record<string, unknown>,
  ) {}

  /** Waits until `web`'s guard in `ns` satisfies `pred`. */
  readonly wait = (ns: string, pred: (g: GuardObj) => boolean, what: string, timeoutMs = 90_000): Promise<GuardObj> =>
    this.suite.read.waitGuard(ns, pred, what, timeoutMs, 'web');

  /** Scenario `s`'s Deployment `web` rolled out on its pool, then its guard with `spec`, once Healthy. Returns the namespace. */
  readonly guarded = async (s: S, o: Partial<WebOptions> = {}, spec: Record<string, unknown> = {}): Promise<string> => {
    const ns = this.suite.ns[s];
    await apply(webDeployment({ ns, pool: this.suite.pools[s].name, ...o }));
    await settledWeb(ns, o.replicas ?? 3);
    await apply(guard('web', ns, 'web', { ...this.spec, ...spec, targetRef: { kind: 'Deployment', name: 'web' } }));
    await this.wait(ns, (g) => g.status?.state === 'Healthy', 'Healthy');
    return ns;
  };

  /** The reasons of the Events about `web`'s guard (or, with `kind`, about `web` of that kind). */
  readonly reasons = (ns: string, kind = 'RolloutGuard'): Promise<string[]> => this.suite.read.reasons(ns, kind, 'web');

  /** How many times Events of `reason` about `kind` `web` happened, each counted with its repeats. */
  readonly countOf = async (ns: string, reason: string, kind = 'RolloutGuard'): Promise<number> =>
    (await this.suite.read.events(ns, kind, 'web'))
      .filter((e) => e.reason === reason)
      .reduce((n, e) => n + Math.max(1, e.count ?? 1, e.series?.count ?? 1), 0);

  /** The guard's verdict Events from its creation on. */
  readonly verdictEvents = async (ns: string): Promise<string[]> =>
    (await this.reasons(ns)).filter((r) => r === 'RolloutSuspect' || r === 'RolloutStalled' || r === 'RevisionFailed');
}
