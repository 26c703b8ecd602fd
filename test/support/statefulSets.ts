/**
 * The `store` StatefulSet the end-to-end suites roll, and what they read of it: its status, its pods by
 * name, and the wait for its rollout to settle on one revision.
 *
 * @module
 */
// Manifests and API objects are read and built as the plain JSON they are.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { POOL_LABEL, kubectl, kubectlJson, uniqueName, waitFor } from './cluster.js';
import { apply } from './operator.js';

export const STORE_GOOD = 'registry.local/store:1';

/** A pod of the StatefulSet as the suites compare them. */
export interface PodRow {
  name: string;
  uid: string;
  /** Its `controller-revision-hash` label: the ControllerRevision's name. */
  revision: string;
  ready: boolean;
  waiting?: string;
  node?: string;
}

export interface StsStatus {
  replicas?: number;
  readyReplicas?: number;
  updatedReplicas?: number;
  availableReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
  observedGeneration?: number;
}

export interface StoreOptions {
  ns: string;
  /** The node pool its pods are placed on. */
  pool: string;
  policy?: 'OrderedReady' | 'Parallel';
  partition?: number;
  replicas?: number;
  minReadySeconds?: number;
  /** A StorageClass: each ordinal gets a claim `data-store-<i>` of it. */
  claims?: string;
  image?: string;
}

/** StatefulSet `store`: 3 replicas (unless told), OrderedReady, a container that requests a little. */
export function storeStatefulSet(o: StoreOptions): Record<string, any> {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'store', namespace: o.ns },
    spec: {
      serviceName: 'store',
      replicas: o.replicas ?? 3,
      podManagementPolicy: o.policy ?? 'OrderedReady',
      ...(o.minReadySeconds !== undefined ? { minReadySeconds: o.minReadySeconds } : {}),
      selector: { matchLabels: { app: 'store' } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: o.partition ?? 0 } },
      template: {
        metadata: { labels: { app: 'store' } },
        spec: {
          nodeSelector: { [POOL_LABEL]: o.pool },
          containers: [
            {
              name: 'store',
              image: o.image ?? STORE_GOOD,
              resources: { requests: { cpu: '100m', memory: '64Mi' } },
              ...(o.claims ? { volumeMounts: [{ name: 'data', mountPath: '/data' }] } : {}),
            },
          ],
        },
      },
      ...(o.claims
        ? {
            volumeClaimTemplates: [
              {
                metadata: { name: 'data' },
                spec: { accessModes: ['ReadWriteOnce'], storageClassName: o.claims, resources: { requests: { storage: '1Gi' } } },
              },
            ],
          }
        : {}),
    },
  };
}

export const stsStatus = async (ns: string): Promise<StsStatus> =>
  (await kubectlJson<{ status: StsStatus }>(['get', 'sts', 'store'], { ns })).status;

/** The pods of `store`, by name. */
export async function stsPods(ns: string): Promise<Map<string, PodRow>> {
  const list = await kubectlJson<{ items: any[] }>(['get', 'pods', '-l', 'app=store'], { ns });
  return new Map(
    list.items.map((p) => {
      const c = (p.status?.containerStatuses ?? [])[0];
      const row: PodRow = {
        name: p.metadata.name,
        uid: p.metadata.uid,
        revision: p.metadata.labels?.['controller-revision-hash'] ?? '',
        ready: (p.status?.conditions ?? []).some((x: any) => x.type === 'Ready' && x.status === 'True'),
      };
      if (c?.state?.waiting?.reason) row.waiting = c.state.waiting.reason;
      if (p.spec?.nodeName) row.node = p.spec.nodeName;
      return [row.name, row];
    }),
  );
}

/** Waits until the `replicas` pods are Ready on one revision, the rollout done. */
export async function settledSts(ns: string, replicas = 3): Promise<StsStatus> {
  return waitFor(
    async () => {
      const s = await stsStatus(ns);
      return s.readyReplicas === replicas && s.updatedReplicas === replicas && s.currentRevision === s.updateRevision ? s : false;
    },
    { timeoutMs: 120_000, describe: `store: ${replicas}/${replicas} Ready on one revision` },
  );
}

/** The image of `store`'s first container, as its template holds it now. */
export const storeImage = async (ns: string): Promise<string | undefined> =>
  (await kubectlJson<{ spec: { template: { spec: { containers: Array<{ image: string }> } } } }>(['get', 'sts', 'store'], { ns })).spec
    .template.spec.containers[0]?.image;

export const setStoreImage = (ns: string, image: string): Promise<unknown> =>
  kubectl(['set', 'image', 'sts/store', `store=${image}`], { ns });

/** A StorageClass of static local volumes, and the node each of its PersistentVolumes is pinned to. */
export interface PinnedVolumes {
  storageClass: string;
  /** PersistentVolume name → the node its node affinity pins it to. */
  nodeOf: Map<string, string>;
  /** Deletes the PersistentVolumes and the StorageClass (cluster-scoped: no namespace removes them). */
  cleanup: () => Promise<void>;
}

/**
 * A WaitForFirstConsumer StorageClass with no provisioner and one static local PersistentVolume pinned to
 * each of `nodes`: a claim binds when the scheduler picks the node its volume is on, through the real
 * volume binder.
 */
export async function pinnedVolumes(prefix: string, nodes: readonly string[]): Promise<PinnedVolumes> {
  const sc = uniqueName(prefix);
  await apply({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: sc },
    provisioner: 'kubernetes.io/no-provisioner',
    volumeBindingMode: 'WaitForFirstConsumer',
  });
  const nodeOf = new Map(nodes.map((node, i) => [`${sc}-${i}`, node] as const));
  for (const [name, node] of nodeOf)
    await apply({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        storageClassName: sc,
        persistentVolumeReclaimPolicy: 'Retain',
        local: { path: `/mnt/${name}` },
        nodeAffinity: {
          required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] },
        },
      },
    });
  const cleanup = async (): Promise<void> => {
    await kubectl(['delete', 'pv', ...nodeOf.keys(), '--ignore-not-found', '--wait=false']);
    await kubectl(['delete', 'storageclass', sc, '--ignore-not-found']);
  };
  return { storageClass: sc, nodeOf, cleanup };
}
