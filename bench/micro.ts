/**
 * Micro-benchmark of the CPU part of one reconcile pass, without a cluster: `gather` over an in-memory
 * CacheView holding a synthetic DaemonSet, then `decide`, then the merge-patch diff the status writer
 * computes to find out whether anything must be sent. The network round trip of a status write is not
 * in here (the in-cluster reconcile histogram has it); this is what scales with the DaemonSet.
 *
 * The objects are built the way the API server sends them and go through the operator's own slim
 * functions, so the cache holds exactly what the informers would hold.
 */
import { performance } from 'node:perf_hooks';
import { decide } from '../src/domain/decide/decide.js';
import type { GuardStatus, TargetKind } from '../src/api/types.js';
import { mergePatchDiff } from '../src/api/mergePatch.js';
import { slimDaemonSet, slimNode, slimPod, slimRevision } from '../src/k8s/slim.js';
import { type SlimDaemonSet, type SlimNode, type SlimPod, type SlimRevision } from '../src/api/objects.js';
import { gather, observationOf } from '../src/reconcile/gather.js';
import { TargetMemory } from '../src/reconcile/targetMemory.js';
import type { CacheView } from '../src/reconcile/ports.js';
import { withDefaults } from '../src/api/defaults.js';
import { round, summarize } from './stats.js';
import { buildView } from '../src/cli/getView.js';
import { guardDetail } from '../src/cli/dashboardView.js';

/** One micro-benchmark case. */
export interface MicroCase {
  /** Nodes the DaemonSet runs on. */
  dsNodes: number;
  /** Nodes in the cluster (the node cache is cluster-wide and gather walks all of it). */
  clusterNodes: number;
  /** `rollout`: 10 % of the nodes blocked on ImagePullBackOff, the rest on the old revision. `steady`: all on one revision. */
  scenario: 'rollout' | 'steady';
}

export interface MicroResult extends MicroCase {
  iterations: number;
  /** Milliseconds per pass: gather + decide + status diff. */
  passMs: { p50?: number; p99?: number; max?: number; mean?: number };
  /** Milliseconds of gather alone, decide alone (p99), to show where the time goes. */
  gatherP99Ms?: number;
  decideP99Ms?: number;
  /**
   * The dashboard's share of one change to a guard it shows (src/cli/dashboardGuardWatch.ts), after the
   * pass above: `get`'s view, the page's detail (map, legend, commands), the comparison with what was
   * sent, and the JSON pushed to each browser, in ms; and that JSON's size in bytes. The Events timeline
   * and the describe text are left out (empty here): they do not grow with the target.
   */
  dashboard?: { renderMs: { p50?: number; p99?: number; max?: number }; bytes: number };
  /** The state decide reached, as a sanity check that the case is what it claims to be. */
  state: string;
  blockedNodeCount: number;
}

const NS = 'bench';
const DS = 'agent';
const UID = 'uid-agent';
const POOL = 'rollout-guard.dev/pool';
const OLD = 'aaaaaaaaaa';
const NEW = 'bbbbbbbbbb';
const T0 = Date.parse('2025-01-01T00:00:00.000Z');

const owner = (kind: string, name: string, uid: string) => [
  { apiVersion: 'apps/v1', kind, name, uid, controller: true, blockOwnerDeletion: true },
];

function rawNode(i: number, inPool: boolean): unknown {
  const name = `node-${String(i).padStart(5, '0')}`;
  return {
    metadata: {
      name,
      uid: `uid-${name}`,
      resourceVersion: String(1000 + i),
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'node.kubernetes.io/instance-type': 'm6i.4xlarge',
        'topology.kubernetes.io/zone': `zone-${i % 3}`,
        ...(inPool ? { [POOL]: 'bench' } : { [POOL]: 'other' }),
      },
    },
    spec: { podCIDR: `10.244.${i % 256}.0/24`, providerID: `kwok://${name}` },
    status: { allocatable: { cpu: '16', memory: '64Gi', pods: '110' } },
  };
}

function rawPod(node: string, hash: string, blocked: boolean): unknown {
  const image = hash === NEW ? 'registry.local/agent:broken' : 'registry.local/agent:1';
  const created = new Date(T0 - 3_600_000).toISOString();
  return {
    metadata: {
      name: `${DS}-${hash.slice(0, 5)}-${node}`,
      namespace: NS,
      uid: `uid-${hash}-${node}`,
      resourceVersion: '5000',
      creationTimestamp: created,
      labels: { app: DS, 'controller-revision-hash': hash, 'pod-template-generation': hash === NEW ? '2' : '1' },
      ownerReferences: owner('DaemonSet', DS, UID),
    },
    spec: {
      nodeName: node,
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }],
          },
        },
      },
      containers: [{ name: 'agent', image, resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
    },
    status: blocked
      ? {
          phase: 'Pending',
          conditions: [
            { type: 'PodScheduled', status: 'True', lastTransitionTime: created },
            { type: 'Ready', status: 'False', reason: 'ContainersNotReady', lastTransitionTime: created },
          ],
          containerStatuses: [
            {
              name: 'agent',
              image,
              ready: false,
              restartCount: 0,
              state: { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}"` } },
            },
          ],
        }
      : {
          phase: 'Running',
          conditions: [
            { type: 'PodScheduled', status: 'True', lastTransitionTime: created },
            { type: 'Ready', status: 'True', lastTransitionTime: created },
          ],
          containerStatuses: [{ name: 'agent', image, ready: true, restartCount: 0, state: { running: { startedAt: created } } }],
        },
  };
}

interface Fixture {
  cache: CacheView;
  spec: ReturnType<typeof withDefaults>;
}

function fixture(c: MicroCase): Fixture {
  const blocked = c.scenario === 'rollout' ? Math.max(1, Math.round(c.dsNodes / 10)) : 0;
  const nodes: SlimNode[] = [];
  for (let i = 1; i <= c.clusterNodes; i++) nodes.push(slimNode(rawNode(i, i <= c.dsNodes)));
  const pods: SlimPod[] = [];
  for (let i = 1; i <= c.dsNodes; i++) {
    const n = nodes[i - 1]!.metadata.name;
    pods.push(slimPod(rawPod(n, i <= blocked ? NEW : OLD, i <= blocked)));
  }
  const gen = c.scenario === 'rollout' ? 2 : 1;
  const ds: SlimDaemonSet = slimDaemonSet({
    metadata: {
      name: DS,
      namespace: NS,
      uid: UID,
      generation: gen,
      resourceVersion: '6000',
      annotations: { 'deprecated.daemonset.template.generation': String(gen) },
      labels: { app: DS },
    },
    spec: {
      selector: { matchLabels: { app: DS } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%', maxSurge: 0 } },
      template: {
        spec: {
          nodeSelector: { [POOL]: 'bench' },
          containers: [{ name: 'agent', image: c.scenario === 'rollout' ? 'registry.local/agent:broken' : 'registry.local/agent:1' }],
        },
      },
    },
    status: {
      observedGeneration: gen,
      desiredNumberScheduled: c.dsNodes,
      currentNumberScheduled: c.dsNodes,
      updatedNumberScheduled: c.scenario === 'rollout' ? blocked : c.dsNodes,
      numberReady: c.dsNodes - blocked,
      numberAvailable: c.dsNodes - blocked,
      numberMisscheduled: 0,
    },
  });
  const revisions: SlimRevision[] = [
    slimRevision({
      metadata: {
        name: `${DS}-${OLD}`,
        namespace: NS,
        labels: { 'controller-revision-hash': OLD },
        ownerReferences: owner('DaemonSet', DS, UID),
      },
      revision: 1,
    }),
  ];
  if (c.scenario === 'rollout') {
    revisions.push(
      slimRevision({
        metadata: {
          name: `${DS}-${NEW}`,
          namespace: NS,
          labels: { 'controller-revision-hash': NEW },
          ownerReferences: owner('DaemonSet', DS, UID),
        },
        revision: 2,
      }),
    );
  }
  // Informer caches hand out frozen objects; freeze ours too so gather/decide run on the same kind of input.
  for (const o of [...nodes, ...pods, ...revisions, ds]) Object.freeze(o);
  const cache: CacheView = {
    workload: ((kind: TargetKind, ns: string, name: string) =>
      kind === 'DaemonSet' && ns === NS && name === DS ? ds : undefined) as CacheView['workload'],
    // The informer index returns a fresh array per call; so does this.
    podsOwnedBy: (uid) => (uid === UID ? [...pods] : []),
    revisionsOwnedBy: (uid) => (uid === UID ? [...revisions] : []),
    nodes: () => [...nodes],
  };
  const spec = withDefaults({ targetRef: { kind: 'DaemonSet', name: DS }, suspectAfterSeconds: 5, progressDeadlineSeconds: 15 });
  return { cache, spec };
}

/**
 * Runs `iterations` timed passes (after a warm-up) over one case. The previous status is the one the
 * previous pass produced, so the timed passes are the common case: nothing changed, nothing to write.
 */
export function runMicroCase(c: MicroCase, iterations: number): MicroResult {
  const { cache, spec } = fixture(c);
  const memory = new TargetMemory();
  const policy = { spec, generation: 1 };
  // Two passes 20 s apart establish the rollout and let it reach its steady state (Stalled / Healthy).
  let prev: GuardStatus = decide(observationOf(gather(cache, memory, NS, { kind: 'DaemonSet', name: DS }, T0)), {}, policy, T0).status;
  memory.commit();
  prev = decide(observationOf(gather(cache, memory, NS, { kind: 'DaemonSet', name: DS }, T0 + 20_000)), prev, policy, T0 + 20_000).status;
  memory.commit();
  const warmup = Math.max(20, Math.round(iterations / 10));
  const total: number[] = [];
  const g: number[] = [];
  const d: number[] = [];
  let last = prev;
  for (let i = 0; i < warmup + iterations; i++) {
    const now = T0 + 21_000 + i;
    const t0 = performance.now();
    const obs = observationOf(gather(cache, memory, NS, { kind: 'DaemonSet', name: DS }, now));
    const t1 = performance.now();
    const decision = decide(obs, prev, policy, now);
    const t2 = performance.now();
    mergePatchDiff(prev, decision.status);
    const t3 = performance.now();
    memory.commit();
    last = decision.status;
    if (i >= warmup) {
      total.push(t3 - t0);
      g.push(t1 - t0);
      d.push(t2 - t1);
    }
  }
  const s = summarize(total);
  return {
    ...c,
    iterations,
    passMs: { p50: round(s.p50), p99: round(s.p99), max: round(s.max), mean: round(s.mean) },
    gatherP99Ms: round(summarize(g).p99),
    decideP99Ms: round(summarize(d).p99),
    dashboard: dashboardRender(cache, memory, policy, last, Math.max(20, Math.round(iterations / 10))),
    state: last.state ?? 'Unknown',
    blockedNodeCount: last.blockedNodeCount ?? last.blockedNodes?.length ?? 0,
  };
}

/** Times what the dashboard does with one change of the case's guard: see MicroResult.dashboard. */
function dashboardRender(
  cache: CacheView,
  memory: TargetMemory,
  policy: { spec: ReturnType<typeof withDefaults>; generation: number },
  prev: GuardStatus,
  iterations: number,
): NonNullable<MicroResult['dashboard']> {
  const now = T0 + 30_000;
  const obs = observationOf(gather(cache, memory, NS, { kind: 'DaemonSet', name: DS }, now));
  const status = decide(obs, prev, policy, now).status;
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < iterations + 5; i++) {
    const t0 = performance.now();
    const view = buildView({ kind: 'RolloutGuard', targetKind: 'DaemonSet', namespace: NS, name: DS, obs, status, now });
    const detail = guardDetail({ namespace: NS, name: DS, view, status, timeline: [], describe: '' });
    // The guard watch compares before it pushes; each browser then gets the whole detail.
    const same = JSON.stringify({ ...detail, at: '', describe: '' });
    const pushed = JSON.stringify(detail);
    const t1 = performance.now();
    void same; // computed for its cost only, as the watch computes it
    bytes = Buffer.byteLength(pushed);
    if (i >= 5) times.push(t1 - t0);
  }
  const r = summarize(times);
  return { renderMs: { p50: round(r.p50), p99: round(r.p99), max: round(r.max) }, bytes };
}

/** The default case list: the 1,000-node target, a size curve, and the cluster-wide node walk. */
export function defaultMicroCases(smoke: boolean): MicroCase[] {
  const sizes = smoke ? [100, 1000] : [100, 500, 1000, 2000, 5000];
  return [
    ...sizes.map((n) => ({ dsNodes: n, clusterNodes: n, scenario: 'rollout' as const })),
    { dsNodes: 1000, clusterNodes: 1000, scenario: 'steady' },
    { dsNodes: 1000, clusterNodes: 5000, scenario: 'rollout' },
  ];
}
