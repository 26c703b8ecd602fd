/**
 * End to end on a real kubelet: a private control plane with the real node `real-1` (kubelet v1.37.2 over
 * containerd and runc, cluster/realNode.ts), and one operator. Each case rolls a DaemonSet that runs only
 * there from a good busybox revision to one that fails as it would in the field, and asserts the guard's
 * cause, owner and message on what the kubelet itself reported: nothing here is scripted by kwok.
 *
 * The kwok stage for the same case (cluster/stages.yaml) is named beside each one; docs/development.md's "The
 * real node" section lists where the two differ.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import {
  daemonSetManifest,
  deploymentManifest,
  statefulSetManifest,
  toleration,
  type ContainerOptions,
  type Manifest,
} from '../../cluster/manifests.js';
import { PrivateCluster } from '../../cluster/privateCluster.js';
import { LOCAL_IMAGES, REAL_NODE_NAME, REAL_NODE_POOL, REAL_NODE_TAINT } from '../../cluster/realNode.js';
import { POOL_LABEL, holdsFor, waitFor } from '../support/cluster.js';
import { GuardReader, type GuardObj, type NodeEntry } from '../support/guards.js';
import { OperatorProcess, ROOT, guard } from '../support/operator.js';

const CASES = ['pull', 'exit', 'oom', 'probe', 'mount', 'late', 'term', 'stspull', 'stsexit', 'stsundo', 'deppull', 'depexit'] as const;
type Case = (typeof CASES)[number];

let pc: PrivateCluster;
let op: OperatorProcess;
let read: GuardReader;
const ns = {} as Record<Case, string>;

/** The pods' placement: the real node only, by its pool and a toleration of its taint. */
const ON_REAL_NODE = {
  nodeSelector: { [POOL_LABEL]: REAL_NODE_POOL },
  tolerations: [toleration(REAL_NODE_TAINT.key, REAL_NODE_TAINT.effect)],
};

/**
 * The good revision's container: busybox sleeping, Ready at its first probe. It requests nothing: the real
 * node's allocatable is the machine's own.
 */
function goodContainer(name: string): ContainerOptions {
  return {
    name,
    image: LOCAL_IMAGES.busybox,
    command: ['sleep', '100000'],
    readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 },
  };
}

/** A DaemonSet `decoder` that runs only on the real node; `grace` is the pods' termination grace period. */
function daemonSet(
  n: string,
  c: Partial<ContainerOptions> = {},
  extra: { volumes?: Array<Record<string, unknown>>; grace?: number } = {},
): Manifest {
  return daemonSetManifest({
    name: 'decoder',
    namespace: n,
    ...ON_REAL_NODE,
    terminationGracePeriodSeconds: extra.grace,
    volumes: extra.volumes,
    container: { ...goodContainer('decoder'), ...c },
  });
}

/** StatefulSet `store`, 2 replicas, OrderedReady, on the real node only: `c` overrides its container. */
function statefulSet(n: string, c: Partial<ContainerOptions> = {}): Manifest {
  return statefulSetManifest({ name: 'store', namespace: n, replicas: 2, ...ON_REAL_NODE, container: { ...goodContainer('store'), ...c } });
}

/** The StatefulSet `store` guarded (Report unless told) and Healthy on the real node, then `broken` applied. */
async function rollOutStatefulSet(c: Case, broken: Partial<ContainerOptions>, action: 'Report' | 'Undo' = 'Report'): Promise<GuardObj> {
  const n = ns[c];
  const spec = {
    targetRef: { kind: 'StatefulSet', name: 'store' },
    suspectAfterSeconds: 3,
    progressDeadlineSeconds: 20,
    onStall: { action },
  };
  await pc.apply(statefulSet(n));
  await pc.apply(guard('store', n, 'store', spec));
  await read.waitGuard(
    n,
    (g) => g.status?.state === 'Healthy' && g.status.generations?.[0]?.ready === 2,
    'Healthy on the good revision',
    150_000,
    'store',
  );
  await pc.apply(statefulSet(n, broken));
  // An Undo guard goes on past the verdict at once: its caller waits for what follows.
  const judged = (g: GuardObj): boolean =>
    ['Stalled', 'Failed', ...(action === 'Undo' ? ['RollingBack', 'RolledBack'] : [])].includes(g.status?.state ?? '');
  return read.waitGuard(n, judged, 'Stalled or Failed', 150_000, 'store');
}

/** Deployment `web`, 2 replicas (maxSurge 25 %: one new pod beside the two old ones), on the real node only. */
function deployment(n: string, c: Partial<ContainerOptions> = {}): Manifest {
  return deploymentManifest({ name: 'web', namespace: n, replicas: 2, ...ON_REAL_NODE, container: { ...goodContainer('web'), ...c } });
}

/** The Deployment `web` guarded (Report unless told) and Healthy on the real node, then `broken` applied. */
async function rollOutDeployment(c: Case, broken: Partial<ContainerOptions>, action: 'Report' | 'Undo' = 'Report'): Promise<GuardObj> {
  const n = ns[c];
  const spec = { targetRef: { kind: 'Deployment', name: 'web' }, suspectAfterSeconds: 3, progressDeadlineSeconds: 20, onStall: { action } };
  await pc.apply(deployment(n));
  await pc.apply(guard('web', n, 'web', spec));
  await read.waitGuard(
    n,
    (g) => g.status?.state === 'Healthy' && g.status.generations?.[0]?.ready === 2,
    'Healthy on the good revision',
    150_000,
    'web',
  );
  await pc.apply(deployment(n, broken));
  const judged = (g: GuardObj): boolean =>
    ['Stalled', 'Failed', ...(action === 'Undo' ? ['RollingBack', 'RolledBack'] : [])].includes(g.status?.state ?? '');
  return read.waitGuard(n, judged, 'Stalled or Failed', 150_000, 'web');
}

const waitGuard = (n: string, pred: (g: GuardObj) => boolean, what: string, timeoutMs = 150_000): Promise<GuardObj> =>
  read.waitGuard(n, pred, what, timeoutMs);
const entries = (g: GuardObj): NodeEntry[] => [...(g.status?.blockedNodes ?? []), ...(g.status?.emptyNodes ?? [])];
const onNode = (g: GuardObj): NodeEntry | undefined => entries(g).find((e) => e.node === REAL_NODE_NAME && e.cause !== 'PodTerminating');

/**
 * Guards the good revision, waits until it is Healthy on the real node, then gives the guard `spec` and
 * applies the broken revision. (A bake in the first spec would bake the first revision too.)
 */
async function rollOut(c: Case, spec: Record<string, unknown>, broken: Record<string, unknown>): Promise<string> {
  const n = ns[c];
  const base = { suspectAfterSeconds: 3, progressDeadlineSeconds: 20 };
  await pc.apply(daemonSet(n));
  await pc.apply(guard('decoder', n, 'decoder', base));
  await waitGuard(n, (g) => g.status?.state === 'Healthy', 'Healthy on the good revision');
  await pc.apply(guard('decoder', n, 'decoder', { ...base, ...spec }));
  await pc.apply(broken);
  return n;
}

/** `kubectl describe rg` and the guard's Events, kept for the docs when RG_CAPTURE_DIR names a folder. */
async function capture(n: string, file: string): Promise<void> {
  const dir = process.env.RG_CAPTURE_DIR;
  if (dir) await writeFile(join(dir, file), (await pc.kubectl(['describe', 'rolloutguard', 'decoder'], { ns: n })).stdout);
}

/** Messages of the guard's Events with `reason`. */
async function eventMessages(n: string, reason: string): Promise<string> {
  const evs = await read.events(n, 'RolloutGuard');
  return evs
    .filter((e) => e.reason === reason)
    .map((e) => e.message ?? e.note ?? '')
    .join('\n');
}

/**
 * What containerd itself says of an image whose registry does not resolve, as the kubelet passes it on
 * in the pod's waiting message (`ErrImagePull`, or wrapped in `Back-off pulling image "…": ErrImagePull:
 * …`): its pull failed resolving the reference, at the DNS lookup of the registry's host. None of these
 * words is in the manifest the test applies, only the image name.
 */
const RUNTIME_PULL_ERROR = (image: string): RegExp => {
  const q = image.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const host = image.split('/')[0]!.replace(/\./g, '\\.');
  return new RegExp(`failed to pull and unpack image "${q}": failed to resolve reference "${q}": .*lookup ${host}\\b`);
};

/** The verdict's attribution sentence when the new revision is blamed for what it does on the real node. */
const REVISION_BLAMED = /The new revision (itself fails on Ready node real-1: the revision is at fault|is at fault on real-1)/;

/** The container ID the kubelet reports for the DaemonSet's pod: proof a real runtime runs it. */
async function containerId(n: string): Promise<string> {
  const pods = await pc.kubectlJson<{
    items: Array<{ status?: { containerStatuses?: Array<{ containerID?: string; ready?: boolean }> } }>;
  }>(['get', 'pods', '-l', 'app=decoder'], { ns: n });
  return pods.items.flatMap((p) => p.status?.containerStatuses ?? []).find((s) => s.ready)?.containerID ?? '';
}

describe('the classifier on a real kubelet and container runtime', { concurrency: true }, () => {
  before(async () => {
    pc = await PrivateCluster.start({ dir: `.cluster-real-${process.pid}`, realNode: true });
    await pc.installCrds();
    for (const c of CASES) ns[c] = await pc.createNamespace(`real-${c}`);
    op = await OperatorProcess.start({ namespaces: Object.values(ns), kubeconfig: pc.kubeconfig });
    read = new GuardReader(
      (args, opts) => pc.kubectlJson(args, opts),
      () => op.logs,
    );
  });
  after(async () => {
    await op?.stop();
    await pc?.down();
  });

  it('the real node runs containerd, and a DaemonSet pod on it has a real container ID', async () => {
    const nodes = await pc.kubectlJson<{
      items: Array<{ metadata: { name: string }; status: { nodeInfo: { containerRuntimeVersion: string; kubeletVersion: string } } }>;
    }>(['get', 'nodes']);
    const real = nodes.items.find((x) => x.metadata.name === REAL_NODE_NAME);
    assert.match(real?.status.nodeInfo.containerRuntimeVersion ?? '', /^containerd:\/\/1\.6\./);
    assert.equal(real?.status.nodeInfo.kubeletVersion, 'v1.37.2');
    const { stdout } = await pc.kubectl(['get', 'nodes', '-o', 'wide']);
    assert.match(stdout, new RegExp(`${REAL_NODE_NAME}\\s+Ready\\b.*containerd://`));
  });

  it('an image that cannot be pulled (the registry does not resolve): ImagePullFailure, the revision blamed with the runtime quoted, undone; the good pod runs again', async () => {
    const n = await rollOut('pull', { onStall: { action: 'Undo' } }, daemonSet(ns.pull, { image: 'registry.invalid/decoder:2' }));
    const stalled = await waitGuard(
      n,
      (g) => onNode(g)?.cause === 'ImagePullFailure' || g.status?.lastUndo !== undefined,
      'ImagePullFailure on the real node',
    );
    const e = onNode(stalled);
    if (e) {
      assert.equal(e.owner, 'Revision');
      assert.match(e.message, RUNTIME_PULL_ERROR('registry.invalid/decoder:2'), e.message);
    }
    const done = await waitGuard(n, (g) => g.status?.state === 'RolledBack', 'RolledBack');
    assert.equal(done.status?.lastUndo?.result, 'Complete');
    // Whether or not a read caught the stall above, the Event records what the runtime said (the
    // Event quotes the first 120 characters: containerd's own words begin within them).
    const stalledSaid = await eventMessages(n, 'RolloutStalled');
    assert.match(stalledSaid, /real-1 (ErrImagePull|ImagePullBackOff) \([^)]*failed to pull and unpack image/, stalledSaid);
    assert.match(stalledSaid, REVISION_BLAMED, 'the revision blamed, whether or not a read caught the entry above');
    assert.equal(await read.image(n), LOCAL_IMAGES.busybox);
    assert.match(await containerId(n), /^containerd:\/\/[0-9a-f]{64}$/);
  });

  it('a container that exits (the real CrashLoopBackOff): CrashLoop, the revision blamed, undone', async () => {
    // A bake window, as by default: on a loaded machine the shell can live long enough for the exec
    // readiness probe to pass once, and the controller then counts the pod available. Without a bake
    // that completes the rollout, and the crash that follows is no longer this rollout's to undo.
    const n = await rollOut(
      'exit',
      { onStall: { action: 'Undo' }, bakeSeconds: 60 },
      daemonSet(ns.exit, { command: ['sh', '-c', 'echo starting; exit 3'] }),
    );
    const stalled = await waitGuard(
      n,
      (g) => onNode(g)?.cause === 'CrashLoop' || g.status?.lastUndo !== undefined,
      'CrashLoop on the real node',
    );
    const e = onNode(stalled);
    if (e) assert.equal(e.owner, 'Revision');
    const done = await waitGuard(n, (g) => g.status?.state === 'RolledBack', 'RolledBack');
    assert.equal(done.status?.lastUndo?.result, 'Complete');
    const said = await eventMessages(n, 'RolloutStalled');
    assert.match(said, /CrashLoop/);
    assert.match(said, REVISION_BLAMED, 'the revision blamed, whether or not a read caught the entry above');
    assert.match(await containerId(n), /^containerd:\/\//);
  });

  it("a memory limit exceeded: OOMKilled from the kernel's OOM kill, the revision blamed", async () => {
    const n = await rollOut('oom', {}, daemonSet(ns.oom, { command: ['tail', '/dev/zero'], limits: { memory: '16Mi' } }));
    const g = await waitGuard(n, (x) => x.status?.state === 'Stalled', 'Stalled');
    assert.equal(g.status?.cause, 'OOMKilled', JSON.stringify(g.status));
    assert.equal(g.status?.owner, 'Revision');
    assert.equal(onNode(g)?.cause, 'OOMKilled');
    await capture(n, 'real-oom.txt');
  });

  it('an exec readiness probe that fails: the pod runs but never turns Ready; the revision blamed, the probe named', async () => {
    const n = await rollOut(
      'probe',
      {},
      daemonSet(ns.probe, { readinessProbe: { exec: { command: ['sh', '-c', 'echo not yet; exit 1'] }, periodSeconds: 1 } }),
    );
    const g = await waitGuard(n, (x) => x.status?.state === 'Stalled', 'Stalled');
    assert.equal(g.status?.owner, 'Revision', JSON.stringify(g.status));
    const e = onNode(g);
    assert.equal(e?.cause, 'NotReady');
    // The pod's status says only "not ready"; the kubelet's Unhealthy Event says what the probe printed.
    assert.match(e?.message ?? '', /container running but not ready; the kubelet: "Readiness probe failed: not yet"/);
    await capture(n, 'real-probe.txt');
  });

  it('a ConfigMap volume that does not exist (FailedMount): VolumeMountFailure, the revision that added it blamed, the kubelet quoted', async () => {
    const broken = daemonSet(
      ns.mount,
      { volumeMounts: [{ name: 'settings', mountPath: '/etc/settings' }] },
      { volumes: [{ name: 'settings', configMap: { name: 'decoder-settings' } }] },
    );
    const n = await rollOut('mount', {}, broken);
    const g = await waitGuard(n, (x) => x.status?.state === 'Stalled', 'Stalled');
    assert.equal(g.status?.cause, 'VolumeMountFailure', JSON.stringify(g.status));
    const e = onNode(g);
    assert.equal(e?.owner, 'Revision');
    assert.match(e?.message ?? '', /MountVolume\.SetUp failed for volume "settings" : configmap "decoder-settings" not found/);
  });

  it('a crash some seconds after Ready, under the real back-off: the crashes are the evidence, Failed before the deadline', async (t: TestContext) => {
    const n = await rollOut(
      'late',
      { failedNodesThreshold: 1, bakeSeconds: 120, progressDeadlineSeconds: 600, suspectAfterSeconds: 300 },
      daemonSet(ns.late, { command: ['sh', '-c', 'sleep 4; exit 1'] }),
    );
    const changedAt = Date.now();
    const g = await waitGuard(n, (x) => x.status?.state === 'Failed', 'Failed from the crashes');
    t.diagnostic(
      `Failed ${((Date.now() - changedAt) / 1000).toFixed(1)} s after the change; first crash at ${g.status?.rollout?.failures?.nodes[0]?.at}`,
    );
    assert.equal(g.status?.cause, 'CrashLoop', JSON.stringify(g.status));
    assert.equal(g.status?.owner, 'Revision');
    assert.ok((g.status?.rollout?.failures?.count ?? 0) >= 1);
    assert.equal(g.status?.rollout?.failures?.nodes[0]?.node, REAL_NODE_NAME);
  });

  it("a slow SIGTERM within its grace period: the old pod's wait is named as the configured grace, no verdict, Healthy after", async () => {
    const slow = { command: ['sh', '-c', "trap 'echo draining' TERM; while :; do sleep 1; done"] };
    const n = ns.term;
    await pc.apply(daemonSet(n, slow, { grace: 12 }));
    await pc.apply(guard('decoder', n, 'decoder', { suspectAfterSeconds: 3, progressDeadlineSeconds: 60, onStall: { action: 'Undo' } }));
    await waitGuard(n, (g) => g.status?.state === 'Healthy', 'Healthy on the first revision');
    const changedAt = Date.now();
    await pc.apply(daemonSet(n, { ...slow, command: ['sh', '-c', "trap 'exit 0' TERM; while :; do sleep 1; done"] }, { grace: 12 }));
    const waiting = await waitGuard(n, (g) => entries(g).some((e) => e.cause === 'PodTerminating'), 'the old pod Terminating named');
    const e = entries(waiting).find((x) => x.cause === 'PodTerminating')!;
    assert.equal(e.owner, 'ConfiguredWait');
    assert.match(e.message, /termination grace period \(\d+s left\)/);
    const healthy = await waitGuard(
      n,
      (g) => g.status?.state === 'Healthy' && (g.status.generations?.length ?? 0) === 1,
      'Healthy on the new revision',
    );
    assert.equal(healthy.status?.lastUndo, undefined);
    // The kubelet kept the old pod for its whole grace period: the shell ignores TERM until SIGKILL.
    assert.ok(Date.now() - changedAt >= 11_000, `rollout took ${Date.now() - changedAt} ms`);
    await holdsFor(async () => (await read.guard(n)).status?.lastUndo === undefined, { durationMs: 3_000, describe: 'no undo' });
  });

  it('a StatefulSet whose new image cannot be pulled: Stalled, ImagePullFailure, the revision blamed on the highest ordinal, the runtime quoted', async () => {
    const g = await rollOutStatefulSet('stspull', { image: 'registry.invalid/store:2' });
    assert.equal(g.status?.state, 'Stalled', JSON.stringify(g.status));
    assert.equal(g.status?.cause, 'ImagePullFailure');
    assert.equal(g.status?.owner, 'Revision');
    const e = entries(g).find((x) => x.node === 'store-1');
    assert.ok(e, JSON.stringify(g.status));
    assert.match(e.message, RUNTIME_PULL_ERROR('registry.invalid/store:2'), e.message);
    assert.match(g.status?.message ?? '', /kubectl rollout undo statefulset\/store .*--to-revision=1, then kubectl delete pod store-1/);
  });

  it('a StatefulSet whose new container exits: CrashLoop, the revision blamed on the highest ordinal', async () => {
    const g = await rollOutStatefulSet('stsexit', { command: ['sh', '-c', 'exit 1'] });
    assert.equal(g.status?.cause, 'CrashLoop', JSON.stringify(g.status));
    assert.equal(g.status?.owner, 'Revision');
    assert.ok(
      entries(g).some((x) => x.node === 'store-1'),
      JSON.stringify(g.status),
    );
  });

  it('a StatefulSet, Undo: the template restored and the stuck pod evicted by the real kubelet, both pods Ready on one revision', async () => {
    await rollOutStatefulSet('stsundo', { image: 'registry.invalid/store:2' }, 'Undo');
    const n = ns.stsundo;
    const g = await read.waitGuard(n, (x) => x.status?.state === 'RolledBack', 'RolledBack', 150_000, 'store');
    assert.equal(g.status?.undoneRevisions?.length, 1, 'one undo');
    assert.deepEqual(
      g.status?.forcedRollback?.evictions.map((e) => [e.pod, e.result]),
      [['store-1', 'Evicted']],
    );
    const sts = await pc.kubectlJson<{ status: { readyReplicas?: number; currentRevision?: string; updateRevision?: string } }>(
      ['get', 'sts', 'store'],
      { ns: n },
    );
    assert.equal(sts.status.readyReplicas, 2);
    assert.equal(sts.status.currentRevision, sts.status.updateRevision);
  });

  it('a Deployment whose new image cannot be pulled: Stalled, ImagePullFailure, the revision blamed on the surge pod on its node, the runtime quoted, the undo named', async () => {
    const g = await rollOutDeployment('deppull', { image: 'registry.invalid/web:2' });
    assert.equal(g.status?.state, 'Stalled', JSON.stringify(g.status));
    assert.equal(g.status?.cause, 'ImagePullFailure');
    assert.equal(g.status?.owner, 'Revision');
    const blocked = (g.status?.blockedNodes ?? []) as Array<NodeEntry & { host?: string; pod?: string }>;
    assert.equal(blocked.length, 1, JSON.stringify(blocked));
    const e = blocked[0]!;
    assert.equal(e.host, REAL_NODE_NAME, JSON.stringify(e));
    assert.equal(e.pod, e.node, "a Deployment's unit is its pod");
    assert.match(e.message, RUNTIME_PULL_ERROR('registry.invalid/web:2'), e.message);
    assert.match(g.status?.message ?? '', /kubectl rollout undo deployment\/web -n \S+ --to-revision=1 \(onStall/, g.status?.message);
  });

  it('a Deployment whose new container exits, Undo: CrashLoop, the revision blamed, undone by the previous ReplicaSet, both pods Ready on it', async () => {
    await rollOutDeployment('depexit', { command: ['sh', '-c', 'echo starting; exit 3'] }, 'Undo');
    const n = ns.depexit;
    const g = await read.waitGuard(n, (x) => x.status?.state === 'RolledBack', 'RolledBack', 150_000, 'web');
    assert.equal(g.status?.lastUndo?.result, 'Complete', JSON.stringify(g.status?.lastUndo));
    assert.equal(g.status?.undoneRevisions?.length, 1, 'one undo');
    const said = (await read.events(n, 'RolloutGuard', 'web'))
      .filter((x) => x.reason === 'RolloutStalled' || x.reason === 'RevisionFailed')
      .map((x) => x.message ?? x.note ?? '')
      .join('\n');
    assert.match(said, /CrashLoop/, said);
    type Deploy = {
      spec: { template: { spec: { containers: Array<{ command?: string[] }> } } };
      status: { readyReplicas?: number; updatedReplicas?: number; replicas?: number };
    };
    const d = await waitFor(
      async () => {
        const x = await pc.kubectlJson<Deploy>(['get', 'deploy', 'web'], { ns: n });
        return x.status.readyReplicas === 2 && x.status.updatedReplicas === 2 && x.status.replicas === 2 ? x : false;
      },
      { timeoutMs: 60_000, describe: 'web: 2 pods, updated and Ready' },
    );
    assert.deepEqual(d.spec.template.spec.containers[0]?.command, ['sleep', '100000'], 'the good template back');
  });

  /** `npm run demo -- ARGS` in CI mode; its up() finds this cluster (its directory and ports) healthy, with its real node running. */
  const demo = (args: string[]): Promise<{ code: number | null; out: string }> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [join(ROOT, 'dist/demo/demo.js'), ...args], {
        env: { ...pc.environment, CI: 'true' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (text += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (text += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
      child.on('error', reject);
      child.on('close', (c) => {
        clearTimeout(timer);
        resolve({ code: c, out: text });
      });
    });

  it("npm run demo -- --story real-node: the classic stall on the real node, explained with the runtime's words and undone", async () => {
    const { code, out } = await demo(['--story', 'real-node', '--namespace', 'real-demo']);
    assert.equal(code, 0, out.slice(-3000));
    assert.match(out, /demo: OK \(Undo\): the story completed as expected/);
    assert.match(
      out,
      /RolloutStalled .*real-1 ImagePullBackOff \(Back-off pulling image "registry\.invalid\/decoder:2": ErrImagePull: failed to pull and unpack/,
    );
    assert.match(out, /UndoComplete .*all 1 node back on revision/);
  });
  it('npm run demo -- --story statefulset --real-node: the revert by hand left stuck on a real kubelet, finished by the guard', async () => {
    const { code, out } = await demo(['--story', 'statefulset', '--real-node', '--namespace', 'real-demo-sts']);
    assert.equal(code, 0, out.slice(-3000));
    assert.match(out, /demo: OK \(statefulset\): the story completed as expected/);
    assert.match(out, /then kubectl delete pod store-1 -n real-demo-sts/);
    assert.match(out, /Reverted by a person or tool to .*, but store-1 is still on .* and not Ready/);
    assert.match(out, /PodEvicted .*Evicted store-1: it was not Ready on the undone revision/);
  });
});
