/**
 * End to end on the shared local control plane, with real public DaemonSet manifests
 * (test/corpus/daemonsets/, each headed with its source and what was changed to run it here): the
 * kinds of node agent platform teams run (CNIs, a node exporter, a log shipper, a GPU device plugin, a
 * CSI node plugin, kube-proxy, a mesh's CNI agent), each guarded with onStall.action Undo and rolled
 * twice as its operators roll it:
 *
 * - healthy (every image to a new tag, the manifest's own strategy): never Suspect, ends Healthy, no undo;
 * - broken in a way realistic for it: the right cause and owner, and undone only when the revision is
 *   at fault. aws-node, a hostNetwork agent whose port is declared without a hostPort, is rolled with
 *   maxSurge: its surge pod can never take the port the old pod holds, so that stall is the
 *   configuration's, never undone, and its one node is counted once.
 *
 * The test adds only what running on this cluster needs, at apply time: the namespace, a nodeSelector
 * for the scenario's node pool, and the ServiceAccount the pod names.
 */
// Manifests are edited as the plain JSON they are.
/* eslint-disable @typescript-eslint/no-explicit-any */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { POOL_LABEL, holdsFor, kubectl, kubectlJson } from '../support/cluster.js';
import { GuardSuite, type GuardObj } from '../support/guards.js';
import { apply, guard } from '../support/operator.js';
import type { NodePoolOptions } from '../support/cluster.js';

type Manifest = Record<string, any>;
type Owner = 'Revision' | 'Configuration' | 'Node';

interface Entry {
  /** The node pool the agent's nodes need (a GPU taint, room for one pod, a legacy OS label). */
  pool?: NodePoolOptions;
  /** The broken rollout, as its operators would push it, and the verdict it deserves. */
  broken: { what: string; edit: (ds: Manifest) => void; cause: string; owner: Owner; undone: boolean };
}

/**
 * As a platform team would guard a node agent, with shorter clocks: a bake window (a revision that
 * crashes after its pods turn Ready is caught before the rollout counts as complete) and a few seconds
 * between the verdict and the undo, in which the verdict is there to read.
 */
const GUARD = {
  suspectAfterSeconds: 10,
  progressDeadlineSeconds: 20,
  failedNodesThreshold: 2,
  bakeSeconds: 20,
  onStall: { action: 'Undo', delaySeconds: 3 },
};

/** Every container of the pod template, init containers first. */
const containers = (ds: Manifest): Manifest[] => [
  ...((ds.spec.template.spec.initContainers ?? []) as Manifest[]),
  ...(ds.spec.template.spec.containers as Manifest[]),
];
/** Every image to `tag` (the corpus images all end in `:1`). */
const retag = (ds: Manifest, tag: string): void => {
  for (const c of containers(ds)) c.image = String(c.image).replace(/:[^:/]+$/, `:${tag}`);
};
/** Container `name`'s image to tag `3-<marker>`: the marker decides what the local kubelet does with it. */
const marked =
  (name: string, marker: string) =>
  (ds: Manifest): void => {
    retag(ds, '3');
    const c = containers(ds).find((x) => x.name === name);
    if (!c) throw new Error(`no container ${name} in ${ds.metadata.name}`);
    c.image = String(c.image).replace(/:[^:/]+$/, `:3-${marker}`);
  };

const CORPUS: Record<string, Entry> = {
  'aws-node': {
    broken: {
      what: 'a good revision rolled with maxSurge 1, maxUnavailable 0: containerPort 61678 on hostNetwork is a host port',
      edit: (ds) => {
        retag(ds, '3');
        ds.spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } };
      },
      cause: 'Unschedulable',
      owner: 'Configuration',
      undone: false,
    },
  },
  'calico-node': {
    broken: {
      what: 'the CNI install init container cannot be pulled',
      edit: marked('install-cni', 'broken'),
      cause: 'ImagePullFailure',
      owner: 'Revision',
      undone: true,
    },
  },
  cilium: {
    broken: {
      what: 'the agent crash-loops',
      edit: marked('cilium-agent', 'crashloop'),
      cause: 'CrashLoop',
      owner: 'Revision',
      undone: true,
    },
  },
  'kube-flannel': {
    broken: {
      what: 'the CNI config install init container crash-loops',
      edit: marked('install-cni', 'crashloop'),
      cause: 'CrashLoop',
      owner: 'Revision',
      undone: true,
    },
  },
  'weave-net': {
    broken: {
      what: 'the router never passes its readiness probe',
      edit: marked('weave', 'probefail'),
      cause: 'NotReady',
      owner: 'Revision',
      undone: true,
    },
  },
  'node-exporter': {
    broken: {
      what: 'the exporter passes readiness, then crashes',
      edit: marked('node-exporter', 'crashafter'),
      cause: 'CrashLoop',
      owner: 'Revision',
      undone: true,
    },
  },
  'fluent-bit': {
    broken: {
      what: 'the shipper is killed for memory after it starts',
      edit: marked('fluent-bit', 'oomafter'),
      cause: 'OOMKilled',
      owner: 'Revision',
      undone: true,
    },
  },
  'nvidia-device-plugin': {
    pool: { taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }], allocatable: { 'nvidia.com/gpu': '8' } },
    broken: {
      what: 'the plugin crash-loops on one class of node only (where the previous revision ran)',
      edit: marked('nvidia-device-plugin-ctr', 'sickon1'),
      cause: 'CrashLoop',
      owner: 'Revision',
      undone: true,
    },
  },
  'ebs-csi-node': {
    pool: { allocatable: { cpu: '1' } },
    broken: {
      what: 'the plugin now requests more cpu than a node has',
      edit: (ds) => {
        retag(ds, '3');
        const c = containers(ds).find((x) => x.name === 'ebs-plugin')!;
        c.resources = { ...c.resources, requests: { ...c.resources?.requests, cpu: '2' } };
      },
      cause: 'InsufficientResources',
      owner: 'Revision',
      undone: true,
    },
  },
  'kube-proxy': {
    broken: {
      what: 'a tag that does not exist',
      edit: marked('kube-proxy', 'broken'),
      cause: 'ImagePullFailure',
      owner: 'Revision',
      undone: true,
    },
  },
  'linkerd-cni': {
    // It selects nodes by the legacy beta.kubernetes.io/os label, which kubelets still set.
    pool: { labels: { 'beta.kubernetes.io/os': 'linux' } },
    broken: {
      what: 'the installer crash-loops',
      edit: marked('install-cni', 'crashloop'),
      cause: 'CrashLoop',
      owner: 'Revision',
      undone: true,
    },
  },
};
const SCENARIOS = Object.keys(CORPUS);

const suite = new GuardSuite(
  'co',
  SCENARIOS,
  () => 3,
  (s) => CORPUS[s]!.pool ?? {},
);
const { read, ns, pools } = suite;

/** The corpus manifest `file`, as published (images mapped to the local conventions). */
function manifest(file: string): Manifest {
  return parse(readFileSync(join('test', 'corpus', 'daemonsets', `${file}.yaml`), 'utf8')) as Manifest;
}

/** `ds` as this cluster runs it: in the scenario's namespace, confined to its pool. */
function placed(s: string, ds: Manifest): Manifest {
  const out = structuredClone(ds);
  out.metadata.namespace = ns[s];
  out.spec.template.spec.nodeSelector = { ...out.spec.template.spec.nodeSelector, [POOL_LABEL]: pools[s]!.name };
  return out;
}

const images = (ds: Manifest): string[] => containers(ds).map((c) => String(c.image));
async function liveImages(n: string, name: string): Promise<string[]> {
  return images(await kubectlJson<Manifest>(['get', 'ds', name], { ns: n }));
}
const notHealthy = ['RolloutSuspect', 'RolloutStalled', 'RevisionFailed', 'UndoStarted'];

describe('a corpus of real DaemonSet manifests: rolled healthy, then broken as their operators break them', { concurrency: true }, () => {
  before(() => suite.setUp());
  after(() => suite.tearDown());

  for (const s of SCENARIOS) {
    const entry = CORPUS[s]!;
    it(`${s}: a healthy roll ends Healthy, never Suspect; ${entry.broken.what}: ${entry.broken.cause}, owner ${entry.broken.owner}, ${entry.broken.undone ? 'undone' : 'not undone'}`, async () => {
      const n = ns[s]!;
      const v1 = manifest(s);
      const name = String(v1.metadata.name);
      const sa = v1.spec.template.spec.serviceAccountName ?? v1.spec.template.spec.serviceAccount;
      if (sa) await kubectl(['create', 'serviceaccount', sa], { ns: n });
      await apply(placed(s, v1));
      await read.availableOn(n, 3, name);
      await apply(guard(name, n, name, GUARD));
      await read.waitGuard(n, (g) => g.status?.state === 'Healthy', 'Healthy', 90_000, name);

      // Healthy: every image to a new tag, the manifest's own strategy.
      const v2 = structuredClone(v1);
      retag(v2, '2');
      await apply(placed(s, v2));
      const done = await read.waitGuard(
        n,
        (g) => g.status?.state === 'Healthy' && g.status?.rollout?.toRevision?.revision === 2 && g.status.rollout.completedAt !== undefined,
        'the healthy roll complete',
        120_000,
        name,
      );
      assert.equal(done.status?.lastUndo, undefined);
      const said = await read.reasons(n, 'RolloutGuard', name);
      assert.ok(!said.some((r) => notHealthy.includes(r)), `${s} healthy roll: ${said.join(', ')}`);

      // Broken, as its operators would break it.
      const v3 = structuredClone(v2);
      entry.broken.edit(v3);
      await apply(placed(s, v3));
      const g = await read.waitGuard(n, (x) => ['Stalled', 'Failed'].includes(x.status?.state ?? ''), 'Stalled or Failed', 120_000, name);
      assert.equal(g.status?.owner, entry.broken.owner, JSON.stringify(g.status));
      assert.equal(g.status?.cause, entry.broken.cause, JSON.stringify(g.status));
      if (entry.broken.undone) {
        await read.waitGuard(n, (x) => x.status?.state === 'RolledBack', 'RolledBack', 120_000, name);
        assert.deepEqual(await liveImages(n, name), images(v2), 'the healthy revision is back');
      } else {
        assert.equal(g.status?.undoSkipped?.reason, 'NotTheRevision', JSON.stringify(g.status));
        await holdsFor(async () => (await read.guard(n, name)).status?.lastUndo === undefined, { durationMs: 4_000, describe: 'no undo' });
        assert.deepEqual(await liveImages(n, name), images(v3), 'the template stays as rolled');
        checkSurge(g);
      }
    });
  }
});

/** aws-node rolled with maxSurge: the host port named, and its three nodes counted once each. */
function checkSurge(g: GuardObj): void {
  const b = g.status?.blockedNodes?.find((x) => x.owner === 'Configuration');
  assert.match(
    b?.comparison ?? '',
    /the previous revision has the same hostPort 61678\/TCP and would not fit either/,
    JSON.stringify(g.status),
  );
  assert.match(b?.message ?? '', /free ports/, 'the scheduler is quoted');
  assert.match(g.status?.message ?? '', /1 node on revision 3 \([a-z0-9]+\), 2 nodes on revision 2/, g.status?.message);
  assert.deepEqual(
    g.status?.generations?.map((x) => x.nodes),
    [1, 2],
    'three nodes, counted once each',
  );
}
