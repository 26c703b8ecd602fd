/**
 * End to end, as it ships: the operator's own image (`npm run image`, imported into the real node's
 * containerd as `ctr -n k8s.io images import` does on a node), installed by `helm install` of
 * charts/rollout-guard into a namespace held to Pod Security `restricted`, two replicas on the real
 * node's kubelet, running as the chart's ServiceAccount with the chart's RBAC. Nothing of the operator
 * runs on the host: every verdict and undo below is the in-cluster operator's.
 *
 * What only this test environment needs is set through the chart's own values, as a user would: the
 * API server listens on 127.0.0.1 with no kube-proxy in front of it, so the pods reach it through the
 * real node's forwarder on the bridge gateway (cluster/apiForward.ts), by the name its certificate
 * carries (`hostAliases` + `KUBERNETES_SERVICE_HOST` in `extraEnv`).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { PrivateCluster, type PrivateNodePool } from '../../cluster/privateCluster.js';
import {
  REAL_NODE_NAME,
  REAL_NODE_POOL,
  REAL_NODE_TAINT,
  importImage,
  realNodeGateway,
  realNodeLayout,
  tagImage,
} from '../../cluster/realNode.js';
import { POOL_LABEL, decoderDaemonSet, waitFor } from '../support/cluster.js';
import { GuardReader } from '../support/guards.js';
import { ROOT, guard } from '../support/operator.js';

const NS = 'rollout-guard-system';
const RELEASE = 'rollout-guard';
const TAG = 'e2e';
/** The tag `helm upgrade` moves to: the same image under a second name, so the Deployment rolls. */
const NEXT_TAG = 'e2e-next';
/** The chart's memory request and limit (values.yaml), against which the pods' cgroups are read. */
const MEMORY_REQUEST = 160 * 1024 * 1024;
const MEMORY_LIMIT = 576 * 1024 * 1024;
/** The name the metrics certificate carries, and the scraper checks. */
const METRICS_NAME = 'rollout-guard-metrics';

let pc: PrivateCluster;
let pool: PrivateNodePool;
let read: GuardReader;
let work: string;

/** Runs a command to completion; throws with its output unless it exits 0. */
function run(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env, cwd: ROOT, maxBuffer: 64 * 1024 * 1024, timeout: 300_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

const helm = (args: readonly string[]): string => run(join(pc.binDir, 'helm'), args, { ...process.env, KUBECONFIG: pc.kubeconfig });

/** The values a user would set to run the chart here: the image imported on the node, and where the pods may run. */
function values(): Record<string, unknown> {
  return {
    image: { repository: 'rollout-guard', tag: TAG, pullPolicy: 'Never' },
    metrics: { secure: true },
    nodeSelector: { [POOL_LABEL]: REAL_NODE_POOL },
    tolerations: [{ key: REAL_NODE_TAINT.key, operator: 'Exists', effect: REAL_NODE_TAINT.effect }],
    // This environment only: the API server through the real node's forwarder, by its certificate's name.
    hostAliases: [{ ip: realNodeGateway(pc.dir), hostnames: ['kubernetes.default.svc'] }],
    extraEnv: [
      { name: 'KUBERNETES_SERVICE_HOST', value: 'kubernetes.default.svc' },
      { name: 'KUBERNETES_SERVICE_PORT', value: String(pc.ports.apiserver) },
    ],
  };
}

interface PodRow {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  spec: { nodeName?: string; containers: Array<{ image: string }> };
  status?: {
    podIP?: string;
    conditions?: Array<{ type: string; status: string }>;
    containerStatuses?: Array<{
      containerID?: string;
      imageID?: string;
      restartCount?: number;
      lastState?: { terminated?: { reason?: string; exitCode?: number } };
    }>;
  };
}

const ready = (p: PodRow): boolean => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

async function operatorPods(): Promise<PodRow[]> {
  const list = await pc.kubectlJson<{ items: PodRow[] }>(['get', 'pods', '-l', 'app.kubernetes.io/name=rollout-guard'], { ns: NS });
  return list.items.filter((p) => !p.metadata.deletionTimestamp);
}

async function leaseHolder(): Promise<string | undefined> {
  const lease = await pc.kubectlJson<{ spec?: { holderIdentity?: string } }>(['get', 'lease', RELEASE], { ns: NS }).catch(() => undefined);
  return lease?.spec?.holderIdentity;
}

/** GET /metrics of `pod` over HTTPS, the certificate checked against its own CA by its name, with `token` if any. */
function scrape(pod: PodRow, ca: Buffer, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: pod.status?.podIP,
        port: 8080,
        path: '/metrics',
        ca,
        servername: METRICS_NAME,
        headers: token ? { Authorization: `Bearer ${token}` } : {},
        timeout: 10_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** A container's memory cgroup (v1) on the real node: its peak and its limit, in bytes. */
function memoryOf(containerId: string): { peak: number; limit: number } {
  const id = containerId.replace(/^containerd:\/\//, '');
  const find = (dir: string): string | undefined => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      const p = join(dir, e.name);
      if (e.name === id) return p;
      const found = find(p);
      if (found) return found;
    }
    return undefined;
  };
  const dir = find(join('/sys/fs/cgroup/memory', realNodeLayout(pc.dir).cgroupRoot));
  if (!dir) throw new Error(`no memory cgroup for container ${id}`);
  const read = (f: string): number => Number(readFileSync(join(dir, f), 'utf8').trim());
  return { peak: read('memory.max_usage_in_bytes'), limit: read('memory.limit_in_bytes') };
}

const MiB = (n: number): string => `${(n / 1024 / 1024).toFixed(0)} MiB`;

/** The guard's Events (core/v1, aggregated ones counted as often as they were sent), by reason. */
async function eventCounts(n: string): Promise<Record<string, number>> {
  const list = await pc.kubectlJson<{ items: Array<{ reason: string; count?: number; series?: { count?: number } }> }>(
    ['get', 'events', '--field-selector=involvedObject.kind=RolloutGuard,involvedObject.name=decoder'],
    { ns: n },
  );
  const out: Record<string, number> = {};
  for (const e of list.items) out[e.reason] = (out[e.reason] ?? 0) + Math.max(e.count ?? 1, e.series?.count ?? 1);
  return out;
}

describe('as it ships: the image, installed by its chart, running on the real node', () => {
  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'rollout-guard-install-'));
    const archive = run('bash', ['scripts/image.sh', '--tag', `rollout-guard:${TAG}`], { ...process.env, RG_IMAGE_DIR: work })
      .trim()
      .split('\n')
      .pop()!;
    pc = await PrivateCluster.start({ dir: `.cluster-real-${process.pid}`, realNode: true });
    importImage(pc.dir, archive, pc.binDir);
    pool = await pc.createNodePool('install', 3);
    await pc.kubectl(['create', 'namespace', NS]);
    await pc.kubectl(['label', 'namespace', NS, 'pod-security.kubernetes.io/enforce=restricted']);
    // metrics.secure's certificate, as cert-manager would issue it: a Secret with tls.crt and tls.key.
    run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      `/CN=${METRICS_NAME}`,
      '-addext',
      `subjectAltName=DNS:${METRICS_NAME}`,
      '-keyout',
      join(work, 'tls.key'),
      '-out',
      join(work, 'tls.crt'),
    ]);
    await pc.kubectl(
      ['create', 'secret', 'tls', `${METRICS_NAME}-tls`, `--cert=${join(work, 'tls.crt')}`, `--key=${join(work, 'tls.key')}`],
      { ns: NS },
    );
    read = new GuardReader(
      (args, opts) => pc.kubectlJson(args, opts),
      () => [],
    );
  });
  after(async () => {
    await pc?.down();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('helm install: both replicas Ready by their readiness probe on the real node, under restricted, one holds the Lease', async () => {
    const file = join(work, 'values.json');
    await writeFile(file, JSON.stringify(values()));
    helm(['install', RELEASE, join(ROOT, 'charts/rollout-guard'), '-n', NS, '-f', file, '--wait', '--timeout', '180s']);
    const pods = await pc.kubectlJson<{ items: PodRow[] }>(['get', 'pods', '-l', 'app.kubernetes.io/name=rollout-guard'], { ns: NS });
    assert.equal(pods.items.length, 2, JSON.stringify(pods.items.map((p) => p.metadata.name)));
    for (const p of pods.items) {
      assert.equal(p.spec.nodeName, REAL_NODE_NAME);
      assert.ok(ready(p), `${p.metadata.name} Ready`);
    }
    const holder = await waitFor(
      async () => {
        const lease = await pc
          .kubectlJson<{ spec?: { holderIdentity?: string } }>(['get', 'lease', RELEASE], { ns: NS })
          .catch(() => undefined);
        return lease?.spec?.holderIdentity;
      },
      { timeoutMs: 60_000, describe: 'a Lease holder' },
    );
    assert.ok(
      pods.items.some((p) => holder.startsWith(p.metadata.name)),
      `${holder} is one of ${pods.items.map((p) => p.metadata.name).join(', ')}`,
    );
    const dir = process.env.RG_CAPTURE_DIR;
    if (dir) {
      const wide = (await pc.kubectl(['get', 'pods', '-n', NS, '-o', 'wide'])).stdout;
      const lease = (await pc.kubectl(['get', 'lease', '-n', NS])).stdout;
      await writeFile(join(dir, 'install.txt'), `$ kubectl get pods -n ${NS} -o wide\n${wide}\n$ kubectl get lease -n ${NS}\n${lease}`);
    }
  });

  it("the in-cluster operator judges a kwok DaemonSet and undoes its broken rollout, as the chart's ServiceAccount", async () => {
    const n = await pc.createNamespace('install-ds');
    await pc.apply(decoderDaemonSet({ name: 'decoder', ns: n, pool: pool.name, image: 'registry.local/decoder:1' }));
    await pc.apply(guard('decoder', n, 'decoder', { suspectAfterSeconds: 5, progressDeadlineSeconds: 15, onStall: { action: 'Undo' } }));
    await read.waitGuard(n, (g) => g.status?.state === 'Healthy', 'Healthy', 120_000);
    await pc.kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: n });
    const g = await read.waitGuard(n, (x) => x.status?.state === 'RolledBack', 'RolledBack', 150_000);
    assert.equal(g.status?.lastUndo?.result, 'Complete');
    // Stalled first, with its cause, then undone: the verdict and the undo are the in-cluster operator's.
    const counts = await eventCounts(n);
    for (const reason of ['RolloutStalled', 'UndoStarted', 'UndoComplete']) assert.equal(counts[reason], 1, JSON.stringify(counts));
    const stalled = (await read.events(n, 'RolloutGuard')).find((e) => e.reason === 'RolloutStalled');
    assert.match(stalled?.message ?? stalled?.note ?? '', /Cause ImagePullFailure/);
    const ds = await pc.kubectlJson<{
      metadata: { annotations?: Record<string, string> };
      spec: { template: { spec: { containers: Array<{ image: string }> } } };
    }>(['get', 'ds', 'decoder'], { ns: n });
    assert.equal(ds.spec.template.spec.containers[0]?.image, 'registry.local/decoder:1');
  });
  it("metrics over HTTPS: a token bound to the chart's metrics-reader role is served, no token and an unbound one are refused", async () => {
    const ca = await readFile(join(work, 'tls.crt'));
    await pc.kubectl(['create', 'serviceaccount', 'scraper'], { ns: NS });
    await pc.kubectl(['create', 'serviceaccount', 'stranger'], { ns: NS });
    await pc.kubectl([
      'create',
      'clusterrolebinding',
      'scraper-metrics',
      `--clusterrole=${RELEASE}-metrics-reader`,
      `--serviceaccount=${NS}:scraper`,
    ]);
    const token = (sa: string): Promise<string> => pc.kubectl(['create', 'token', sa], { ns: NS }).then((r) => r.stdout.trim());
    const [pod] = await operatorPods();
    assert.ok(pod?.status?.podIP, 'the pod has an IP on the real node');
    const allowed = await scrape(pod, ca, await token('scraper'));
    assert.equal(allowed.status, 200, allowed.body);
    assert.match(allowed.body, /^rollout_guard_/m);
    assert.equal((await scrape(pod, ca)).status, 401);
    assert.equal((await scrape(pod, ca, await token('stranger'))).status, 403);
  });

  it('the leader deleted mid-rollout: another replica takes over, and the undo is made once, every Event once', async () => {
    const n = await pc.createNamespace('install-failover');
    await pc.apply(decoderDaemonSet({ name: 'decoder', ns: n, pool: pool.name, image: 'registry.local/decoder:1' }));
    await pc.apply(guard('decoder', n, 'decoder', { suspectAfterSeconds: 8, progressDeadlineSeconds: 20, onStall: { action: 'Undo' } }));
    await read.waitGuard(n, (g) => g.status?.state === 'Healthy', 'Healthy', 120_000);
    const leader = await waitFor(leaseHolder, { timeoutMs: 30_000, describe: 'a Lease holder' });
    const pods = await operatorPods();
    const leaderPod = pods.find((p) => leader.startsWith(p.metadata.name));
    assert.ok(leaderPod, `the Lease holder ${leader} is a pod of the release`);
    await pc.kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: n });
    await read.waitGuard(n, (g) => g.status?.state === 'Progressing' || g.status?.state === 'Suspect', 'the rollout judged', 60_000);
    await pc.kubectl(['delete', 'pod', leaderPod.metadata.name, '--wait=false'], { ns: NS });
    const next = await waitFor(
      async () => {
        const h = await leaseHolder();
        return h && !h.startsWith(leaderPod.metadata.name) ? h : undefined;
      },
      { timeoutMs: 60_000, describe: 'another replica holding the Lease' },
    );
    // The warm standby, or the Deployment's replacement for the deleted pod: whichever asks first after
    // the old leader released the Lease on its way out.
    const holderPod = (await operatorPods()).find((p) => next.startsWith(p.metadata.name));
    assert.ok(holderPod, `${next}, which took over from ${leaderPod.metadata.name}, is a running pod of the release`);
    const g = await read.waitGuard(n, (x) => x.status?.state === 'RolledBack', 'RolledBack', 150_000);
    assert.equal(g.status?.undoneRevisions?.length, 1, 'one undo');
    const counts = await eventCounts(n);
    // Lost, an Event would be missing; sent by both replicas, it would count twice.
    for (const reason of ['RolloutStalled', 'UndoStarted', 'UndoComplete'])
      assert.equal(counts[reason], 1, `${reason} once: ${JSON.stringify(counts)}`);
  });

  it("the memory the chart asks for, read in both pods' cgroups: the limit applied, the peak under it, never killed for it", async (t: TestContext) => {
    // Both replicas (the one that replaced the deleted leader included), each read: none may be skipped.
    const pods = await waitFor(
      async () => {
        const list = await operatorPods();
        return list.length === 2 && list.every((p) => ready(p) && p.status?.containerStatuses?.[0]?.containerID) ? list : undefined;
      },
      { timeoutMs: 120_000, describe: 'two Ready pods of the release with a container each' },
    );
    assert.equal(pods.length, 2);
    for (const p of pods) {
      const c = p.status?.containerStatuses?.[0];
      const id = c?.containerID;
      assert.ok(id, `${p.metadata.name} has a container`);
      const m = memoryOf(id);
      t.diagnostic(`${p.metadata.name}: peak ${MiB(m.peak)} (request ${MiB(MEMORY_REQUEST)}, limit ${MiB(m.limit)})`);
      assert.equal(m.limit, MEMORY_LIMIT, "the chart's limit is the container's");
      assert.ok(m.peak > 0 && m.peak < MEMORY_LIMIT, `peak ${m.peak}`);
      // A container the cgroup killed comes back with a fresh peak: the peak alone would not show it.
      assert.equal(c?.lastState?.terminated?.reason, undefined, `${p.metadata.name} last terminated: ${JSON.stringify(c?.lastState)}`);
      assert.equal(c?.restartCount, 0, `${p.metadata.name} restarts`);
      const dir = process.env.RG_CAPTURE_DIR;
      if (dir) await writeFile(join(dir, `install-memory-${p.metadata.name}.txt`), `peak ${MiB(m.peak)}, limit ${MiB(m.limit)}\n`);
    }
  });

  it('helm upgrade to a new image tag rolls the Deployment; helm uninstall keeps the CRDs and the guards', async () => {
    const before = new Set((await operatorPods()).map((p) => p.metadata.uid));
    tagImage(pc.dir, `docker.io/library/rollout-guard:${TAG}`, `docker.io/library/rollout-guard:${NEXT_TAG}`, pc.binDir);
    helm([
      'upgrade',
      RELEASE,
      join(ROOT, 'charts/rollout-guard'),
      '-n',
      NS,
      '--reuse-values',
      '--set',
      `image.tag=${NEXT_TAG}`,
      '--wait',
      '--timeout',
      '180s',
    ]);
    const after = await waitFor(
      async () => {
        const pods = await operatorPods();
        return pods.length === 2 && pods.every((p) => ready(p) && !before.has(p.metadata.uid)) ? pods : undefined;
      },
      { timeoutMs: 120_000, describe: 'two new Ready pods' },
    );
    for (const p of after) assert.equal(p.spec.containers[0]?.image, `rollout-guard:${NEXT_TAG}`);
    const guards = (await pc.kubectlJson<{ items: unknown[] }>(['get', 'rolloutguards', '-A'])).items.length;
    assert.ok(guards >= 2, `${guards} guards`);
    helm(['uninstall', RELEASE, '-n', NS, '--wait']);
    await pc.kubectl(['get', 'crd', 'rolloutguards.rolloutguard.dev', 'rolloutguardpolicies.rolloutguard.dev']);
    assert.equal((await pc.kubectlJson<{ items: unknown[] }>(['get', 'rolloutguards', '-A'])).items.length, guards, 'the guards kept');
    assert.equal((await operatorPods()).length, 0, 'the operator is gone');
  });
  it('kubectl apply -k of deploy/ through a small overlay (the image, where it runs, the API server): Ready, one holds the Lease', async () => {
    // What a user's overlay of deploy/ sets for this node: the imported image, never pulled, the node's
    // taint and pool, and (this environment only) the API server by its certificate's name.
    const overlay = join(work, 'overlay');
    await mkdir(overlay, { recursive: true });
    const place = values();
    const patch = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'rollout-guard', namespace: NS },
      spec: {
        template: {
          spec: {
            nodeSelector: place.nodeSelector,
            tolerations: place.tolerations,
            hostAliases: place.hostAliases,
            containers: [{ name: 'rollout-guard', imagePullPolicy: 'Never', env: place.extraEnv }],
          },
        },
      },
    };
    await writeFile(
      join(overlay, 'kustomization.yaml'),
      JSON.stringify({
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        resources: [relative(overlay, join(ROOT, 'deploy'))],
        images: [{ name: 'rollout-guard', newTag: TAG }],
        patches: [{ patch: JSON.stringify(patch) }],
      }),
    );
    await pc.kubectl(['apply', '--server-side', '--force-conflicts', '-k', overlay]);
    await pc.kubectl(['rollout', 'status', 'deployment/rollout-guard', '--timeout=180s'], { ns: NS });
    const pods = await operatorPods();
    assert.equal(pods.length, 2);
    for (const p of pods) {
      assert.ok(ready(p), `${p.metadata.name} Ready`);
      assert.equal(p.spec.containers[0]?.image, `rollout-guard:${TAG}`);
    }
    // The Lease outlives the helm release's pods: wait until one of these pods holds it.
    const holder = await waitFor(
      async () => {
        const h = await leaseHolder();
        return h && pods.some((p) => h.startsWith(p.metadata.name)) ? h : undefined;
      },
      { timeoutMs: 60_000, describe: 'a pod of the kustomize install holding the Lease' },
    );
    assert.ok(holder);
  });
});
