// End-to-end check that the local control plane reproduces the DaemonSet behaviours rollout-guard
// must detect, observed with kubectl exactly as an operator on call would. Each scenario runs in its
// own namespace on its own node pool, so scenarios (and other test files) can run concurrently.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import {
  FatalWaitError,
  POOL_LABEL,
  createNamespace,
  createNodePool,
  daemonSetRow,
  decoderDaemonSet,
  ensureCluster,
  holdsFor,
  kubectl,
  kubectlJson,
  uniqueName,
  waitFor,
  type DaemonSetRow,
  type DecoderDaemonSetOptions,
  type NodePool,
  type NodePoolOptions,
} from '../support/cluster.js';

const GOOD = 'registry.example/decoder:1.0';
const BROKEN = 'registry.example/decoder:1.1-broken';
const CRASHLOOP = 'registry.example/decoder:1.1-crashloop';
// Images that start fine and crash later (see the image conventions in cluster/stages.yaml).
const CRASHAFTER = 'registry.example/decoder:2-crashafter';
const OOMAFTER = 'registry.example/decoder:2-oomafter';
const RESTARTONCE = 'registry.example/decoder:2-restartonce';
// Crash-loops on the node whose name ends in -1 only: a node whose runtime breaks every container.
const SICKON1 = 'registry.example/decoder:2-sickon1';
// The pod annotation that breaks a Running, Ready pod into a crash loop: a dependency failing under it.
const BREAK_ANNOTATION = 'rollout-guard.test/break';
// Images that fail the pod before its containers start: a volume that does not mount, a sandbox the node's CNI
// cannot set up. And init container images: the app-container markers, on an init container instead.
const MOUNTFAIL = 'registry.example/decoder:3-mountfail';
const PROBEFAIL = 'registry.example/decoder:3-probefail';
const SANDBOXFAIL = 'registry.example/decoder:3-sandboxfail';
const INIT_GOOD = 'registry.example/decoder-init:1.0';
const INIT_BROKEN = 'registry.example/decoder-init:1.1-broken';
const INIT_CRASHLOOP = 'registry.example/decoder-init:1.1-crashloop';
// The kubelet's Warnings as kwok reproduces them (fixed messages: tests name the volume "settings").
const FAILED_MOUNT = 'MountVolume.SetUp failed for volume "settings" : configmap "decoder-settings" not found';
const FAILED_SANDBOX =
  'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "abc": plugin type="calico" failed (add): stat /var/lib/calico/nodename: no such file or directory';
const DS = 'decoder';
// DS controller, scheduler and kwok each add a little latency; generous, but only ever a ceiling.
const WAIT = { timeoutMs: 60_000, intervalMs: 300 };

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}
interface ContainerStatus {
  name: string;
  image?: string;
  ready: boolean;
  started?: boolean;
  restartCount: number;
  state?: { waiting?: { reason?: string; message?: string }; running?: object; terminated?: { exitCode: number; reason?: string } };
  lastState?: { terminated?: { exitCode: number; reason?: string; finishedAt?: string } };
}
interface Pod {
  metadata: { name: string; resourceVersion?: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status: {
    phase?: string;
    podIP?: string;
    conditions?: Condition[];
    containerStatuses?: ContainerStatus[];
    initContainerStatuses?: ContainerStatus[];
  };
}
/** A core/v1 Event, as `kubectl get events -o json` lists it. */
interface KubeEvent {
  type: string;
  reason: string;
  message: string;
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  involvedObject: { kind: string; name: string };
}
interface ControllerRevision {
  metadata: { labels?: Record<string, string> };
  revision: number;
}

before(async () => {
  await ensureCluster();
});

/** Gives `fn` a fresh namespace and node pool, and on failure attaches what the cluster looked like. */
async function scenario(
  prefix: string,
  nodes: number,
  poolOpts: NodePoolOptions,
  fn: (ns: string, pool: NodePool) => Promise<void>,
): Promise<void> {
  const ns = await createNamespace(prefix);
  let pool: NodePool | undefined;
  try {
    pool = await createNodePool(uniqueName(prefix), nodes, poolOpts);
    await fn(ns.name, pool);
  } catch (err) {
    const snapshot = await kubectl(['get', 'ds,pods,controllerrevisions', '-o', 'wide'], { ns: ns.name, allowFail: true });
    if (err instanceof Error) err.message += `\n--- namespace ${ns.name} ---\n${snapshot.stdout}${snapshot.stderr}`;
    throw err;
  } finally {
    // Namespace first: its pods are then deleted by kwok while their nodes still exist.
    await ns.cleanup().finally(() => pool?.cleanup());
  }
}

/** What a scenario may vary in the decoder DaemonSet besides its image. */
type DaemonSetExtra = Pick<DecoderDaemonSetOptions, 'cpuRequest' | 'initImage' | 'settingsVolume'>;

async function applyDaemonSet(ns: string, pool: string, image: string, extra: DaemonSetExtra = {}): Promise<void> {
  await kubectl(['apply', '-f', '-'], {
    input: JSON.stringify(decoderDaemonSet({ name: DS, ns, pool, image, maxUnavailable: 1, ...extra })),
  });
}

function waitForRow(ns: string, want: DaemonSetRow): Promise<DaemonSetRow> {
  return waitFor(
    async () => {
      const row = await daemonSetRow(ns, DS);
      return isDeepEqual(row, want) && (await observedCurrentSpec(ns)) ? row : undefined;
    },
    { ...WAIT, describe: `kubectl get ds ${DS} to show ${JSON.stringify(want)}` },
  );
}

/** Status counters are only meaningful once the controller has seen the latest spec. */
async function observedCurrentSpec(ns: string): Promise<boolean> {
  const ds = await kubectlJson<{ metadata: { generation: number }; status: { observedGeneration?: number } }>(['get', 'ds', DS], { ns });
  return ds.status.observedGeneration === ds.metadata.generation;
}

async function rollOut(ns: string, pool: string, image: string, extra: DaemonSetExtra = {}, nodes = 3): Promise<void> {
  await applyDaemonSet(ns, pool, image, extra);
  await kubectl(['rollout', 'status', `ds/${DS}`, '--timeout=60s'], { ns });
  await waitForRow(ns, { desired: nodes, current: nodes, ready: nodes, upToDate: nodes, available: nodes });
}

async function daemonPods(ns: string): Promise<Pod[]> {
  const list = await kubectlJson<{ items: Pod[] }>(['get', 'pods', '-l', `app=${DS}`], { ns });
  return list.items.filter((p) => !p.metadata.deletionTimestamp);
}

/** Hash of the newest ControllerRevision: the revision the DaemonSet is rolling towards. */
async function latestHash(ns: string): Promise<string> {
  const list = await kubectlJson<{ items: ControllerRevision[] }>(['get', 'controllerrevisions', '-l', `app=${DS}`], { ns });
  const newest = list.items.sort((a, b) => b.revision - a.revision)[0];
  const hash = newest?.metadata.labels?.['controller-revision-hash'];
  assert.ok(hash, 'newest ControllerRevision has a controller-revision-hash label');
  return hash;
}

const hashOf = (p: Pod) => p.metadata.labels?.['controller-revision-hash'];
const isReady = (p: Pod) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
const waitingReason = (p: Pod) => p.status.containerStatuses?.[0]?.state?.waiting?.reason;
const restarts = (p: Pod) => p.status.containerStatuses?.[0]?.restartCount ?? 0;
const lastTermination = (p: Pod) => p.status.containerStatuses?.[0]?.lastState?.terminated;
const initStatus = (p: Pod) => p.status.initContainerStatuses?.[0];
const condition = (p: Pod, type: string) => p.status.conditions?.find((c) => c.type === type);

/** The STATUS column of `kubectl get pods` for one pod, as a user reads it. */
async function statusColumn(ns: string, pod: string): Promise<string> {
  const { stdout } = await kubectl(['get', 'pod', pod, '--no-headers'], { ns });
  const status = stdout.trim().split(/\s+/)[2]; // NAME READY STATUS RESTARTS AGE
  assert.ok(status, `unexpected kubectl get pod output: ${stdout}`);
  return status;
}

/** The Events with this reason about one pod, found the way a user would look for them. */
async function podEvents(ns: string, pod: string, reason: string): Promise<KubeEvent[]> {
  const selector = `involvedObject.kind=Pod,involvedObject.name=${pod},reason=${reason}`;
  return (await kubectlJson<{ items: KubeEvent[] }>(['get', 'events', '--field-selector', selector], { ns })).items;
}

function isDeepEqual(a: unknown, b: unknown): boolean {
  try {
    assert.deepEqual(a, b);
    return true;
  } catch {
    return false;
  }
}

/** Waits for the stalled shape maxUnavailable=1 produces and checks that it does not move on. */
async function expectStalledAtOneNode(ns: string, reason: string): Promise<{ broken: Pod; old: Pod[] }> {
  const stalled = { desired: 3, current: 3, ready: 2, upToDate: 1, available: 2 };
  await waitForRow(ns, stalled);
  const newHash = await latestHash(ns);
  const split = await waitFor(
    async () => {
      const pods = await daemonPods(ns);
      const fresh = pods.filter((p) => hashOf(p) === newHash);
      const old = pods.filter((p) => hashOf(p) !== newHash);
      return fresh.length === 1 && old.length === 2 && waitingReason(fresh[0]!) === reason ? { broken: fresh[0]!, old } : undefined;
    },
    { ...WAIT, describe: `one new-revision pod waiting ${reason} and two old-revision pods` },
  );
  // A stall is a state that persists, not a moment in a transition: re-read it for a while.
  await holdsFor(async () => isDeepEqual(await daemonSetRow(ns, DS), stalled), {
    durationMs: 5_000,
    intervalMs: 1_000,
    describe: `kubectl get ds ${DS} showing ${JSON.stringify(stalled)}`,
  });
  return split;
}

/**
 * The shape of a pod that never gets its sandbox, however it fails: the rollout stalls on one node, where the new
 * pod stays Pending without a pod IP, its container waiting in ContainerCreating (kubectl's STATUS), and the
 * kubelet's Warning `reason` with `message` is on the pod and keeps coming back (count + 1 on the same Event)
 * without the pod being written.
 */
async function expectStuckCreating(ns: string, reason: string, message: string): Promise<void> {
  const { broken } = await expectStalledAtOneNode(ns, 'ContainerCreating');
  const name = broken.metadata.name;
  assert.equal(broken.status.phase, 'Pending');
  assert.equal(isReady(broken), false);
  assert.equal(broken.status.podIP, undefined, 'no sandbox, no pod IP');
  assert.equal(condition(broken, 'PodReadyToStartContainers')?.status, 'False');
  assert.deepEqual(
    broken.status.containerStatuses?.map((c) => [c.name, c.ready, c.state?.waiting?.reason]),
    [['decoder', false, 'ContainerCreating']],
  );
  assert.equal(await statusColumn(ns, name), 'ContainerCreating');

  const first = await waitFor(async () => (await podEvents(ns, name, reason))[0], {
    ...WAIT,
    describe: `a ${reason} Event on pod ${name}`,
  });
  assert.equal(first.type, 'Warning');
  assert.equal(first.message, message);
  assert.equal(first.involvedObject.kind, 'Pod');
  const repeated = await waitFor(async () => (await podEvents(ns, name, reason)).find((e) => (e.count ?? 1) >= 2), {
    ...WAIT,
    intervalMs: 1_000,
    describe: `the ${reason} Event on pod ${name} to repeat (count >= 2)`,
  });
  assert.equal(repeated.message, message);
  assert.ok(
    repeated.firstTimestamp && repeated.lastTimestamp && Date.parse(repeated.lastTimestamp) > Date.parse(repeated.firstTimestamp),
    `repeated later than first seen: ${repeated.firstTimestamp} .. ${repeated.lastTimestamp}`,
  );
  const now = await kubectlJson<Pod>(['get', 'pod', name], { ns });
  assert.equal(now.metadata.resourceVersion, broken.metadata.resourceVersion, 'the repeated Events do not write the pod');
}

describe('local control plane reproduces DaemonSet rollout behaviour', { concurrency: true }, () => {
  it('a broken image stalls the rollout on one node and `rollout undo` recovers it', async () => {
    await scenario('rg-stall', 3, {}, async (ns, pool) => {
      await rollOut(ns, pool.name, GOOD);
      const goodHash = await latestHash(ns);

      await kubectl(['set', 'image', `ds/${DS}`, `decoder=${BROKEN}`], { ns });
      const { broken, old } = await expectStalledAtOneNode(ns, 'ImagePullBackOff');

      assert.equal(broken.status.phase, 'Pending');
      assert.equal(isReady(broken), false);
      // The 1.37 kubelet's message: the back-off, then the runtime's reason (test/e2e/realNode.test.ts shows a real one).
      assert.equal(
        broken.status.containerStatuses?.[0]?.state?.waiting?.message,
        `Back-off pulling image "${BROKEN}": ErrImagePull: failed to pull and unpack image "${BROKEN}": failed to resolve reference "${BROKEN}": ${BROKEN}: not found`,
      );
      assert.ok(
        old.every((p) => hashOf(p) === goodHash && isReady(p)),
        'the two untouched pods still run the old revision, Ready',
      );
      const nodes = [broken, ...old].map((p) => p.spec.nodeName).sort();
      assert.deepEqual(nodes, [...pool.nodes].sort(), 'one pod per pool node');

      const status = await kubectl(['rollout', 'status', `ds/${DS}`, '--timeout=20s'], { ns, allowFail: true });
      assert.notEqual(status.code, 0, 'rollout status must not report success');
      assert.match(status.stdout, /1 out of 3 new pods have been updated/);

      await kubectl(['rollout', 'undo', `ds/${DS}`], { ns });
      await kubectl(['rollout', 'status', `ds/${DS}`, '--timeout=60s'], { ns });
      await waitForRow(ns, { desired: 3, current: 3, ready: 3, upToDate: 3, available: 3 });
      const after = await waitFor(
        async () => {
          const pods = await daemonPods(ns);
          return pods.length === 3 && pods.every((p) => isReady(p)) ? pods : undefined;
        },
        { ...WAIT, describe: '3 Ready pods after undo' },
      );
      assert.equal(new Set(after.map(hashOf)).size, 1, 'all nodes back on one revision');
      assert.equal(hashOf(after[0]!), await latestHash(ns));
      assert.deepEqual(after.map((p) => p.spec.nodeName).sort(), [...pool.nodes].sort());
    });
  });

  it('a new pool is usable as createNodePool returns: no not-ready taint left, and rollout status means a pod on every node', async () => {
    await scenario('rg-fresh', 3, {}, async (ns, pool) => {
      // Straight after the pool, before anything else could give the controller manager time.
      const nodes = await kubectlJson<{ items: Array<{ metadata: { name: string }; spec: { taints?: Array<{ key: string }> } }> }>([
        'get',
        'nodes',
        '-l',
        `${POOL_LABEL}=${pool.name}`,
      ]);
      assert.deepEqual(
        nodes.items.map((n) => [n.metadata.name, (n.spec.taints ?? []).map((t) => t.key)]).sort(),
        pool.nodes.map((n) => [n, []]).sort(),
      );
      await applyDaemonSet(ns, pool.name, GOOD);
      await kubectl(['rollout', 'status', `ds/${DS}`, '--timeout=60s'], { ns });
      assert.deepEqual(await daemonSetRow(ns, DS), { desired: 3, current: 3, ready: 3, upToDate: 3, available: 3 });
    });
  });

  it('a NoExecute taint the pods do not tolerate shrinks DESIRED from 3 to 2', async () => {
    await scenario('rg-taint', 3, {}, async (ns, pool) => {
      await rollOut(ns, pool.name, GOOD);
      const tainted = pool.nodes[1]!;
      await kubectl(['taint', 'nodes', tainted, 'rollout-guard.dev/maintenance=true:NoExecute']);
      await waitForRow(ns, { desired: 2, current: 2, ready: 2, upToDate: 2, available: 2 });
      const pods = await waitFor(
        async () => {
          const ps = await daemonPods(ns);
          return ps.length === 2 ? ps : undefined;
        },
        { ...WAIT, describe: 'the pod on the tainted node to be removed' },
      );
      assert.ok(pods.every((p) => p.spec.nodeName !== tainted));
    });
  });

  it('a nodeSelector that matches no node gives DESIRED 0, which `rollout status` calls a success', async () => {
    await scenario('rg-nosel', 3, {}, async (ns, pool) => {
      await rollOut(ns, pool.name, GOOD);
      const patch = { spec: { template: { spec: { nodeSelector: { 'rollout-guard.dev/nowhere': 'true' } } } } };
      await kubectl(['patch', 'ds', DS, '--type=merge', '-p', JSON.stringify(patch)], { ns });
      await waitForRow(ns, { desired: 0, current: 0, ready: 0, upToDate: 0, available: 0 });
      await waitFor(async () => (await daemonPods(ns)).length === 0, { ...WAIT, describe: 'all daemon pods removed' });
      // The blind spot rollout-guard exists for: every counter equals DESIRED, so kubectl is satisfied.
      const status = await kubectl(['rollout', 'status', `ds/${DS}`, '--timeout=20s'], { ns });
      assert.match(status.stdout, /successfully rolled out/);
    });
  });

  it('a revision requesting more CPU than a node has leaves its pod Pending and Unschedulable', async () => {
    await scenario('rg-cpu', 3, { allocatable: { cpu: '4' } }, async (ns, pool) => {
      await rollOut(ns, pool.name, GOOD);
      const goodHash = await latestHash(ns);
      await kubectl(['set', 'resources', `ds/${DS}`, '-c', 'decoder', '--requests=cpu=8'], { ns });
      // The controller writes the new ControllerRevision before it reports the generation observed, so the
      // revisions are read only after that report: read before it, they may still end at the good one.
      const newHash = await waitFor(
        async () => {
          if (!(await observedCurrentSpec(ns))) return undefined;
          const h = await latestHash(ns);
          return h !== goodHash ? h : undefined;
        },
        { ...WAIT, describe: 'the new revision to be observed' },
      );
      const pending = await waitFor(
        async () => {
          const fresh = (await daemonPods(ns)).filter((p) => hashOf(p) === newHash);
          const p = fresh[0];
          const scheduled = p?.status.conditions?.find((c) => c.type === 'PodScheduled');
          return fresh.length === 1 && scheduled?.status === 'False' ? { pod: p!, scheduled } : undefined;
        },
        { ...WAIT, describe: 'a new-revision pod with PodScheduled=False' },
      );
      assert.equal(pending.pod.status.phase, 'Pending');
      assert.equal(pending.pod.spec.nodeName, undefined);
      assert.equal(pending.scheduled.reason, 'Unschedulable');
      assert.match(pending.scheduled.message ?? '', /Insufficient cpu/);
      // The DS controller maps an unbound pod to its node through the pinned node affinity, so the
      // Pending pod counts as CURRENT and UP-TO-DATE: the counters look exactly like a broken image.
      await waitForRow(ns, { desired: 3, current: 3, ready: 2, upToDate: 1, available: 2 });
    });
  });

  it('a crash-looping image stalls the rollout like a broken one', async () => {
    await scenario('rg-crash', 3, {}, async (ns, pool) => {
      await rollOut(ns, pool.name, GOOD);
      await kubectl(['set', 'image', `ds/${DS}`, `decoder=${CRASHLOOP}`], { ns });
      const { broken } = await expectStalledAtOneNode(ns, 'CrashLoopBackOff');
      assert.equal(broken.status.phase, 'Running');
      assert.equal(isReady(broken), false);
      const cs = broken.status.containerStatuses?.[0];
      assert.ok((cs?.restartCount ?? 0) >= 1, 'restartCount > 0');
      assert.equal(cs?.lastState?.terminated?.exitCode, 1);
      // kwok keeps "restarting" it, as a kubelet would.
      await waitFor(
        async () => {
          const pods = await kubectlJson<Pod>(['get', 'pod', broken.metadata.name], { ns });
          return (pods.status.containerStatuses?.[0]?.restartCount ?? 0) > (cs?.restartCount ?? 0);
        },
        { ...WAIT, describe: 'restartCount to grow' },
      );
    });
  });

  it('a "crashafter" image (Ready, then crashing) lets the rollout move on node after node while its pods restart and recover', async () => {
    await scenario('rg-crashafter', 4, {}, async (ns, pool) => {
      await rollOut(ns, pool.name, GOOD, {}, 4);
      await kubectl(['set', 'image', `ds/${DS}`, `decoder=${CRASHAFTER}`], { ns });
      const changedAt = Date.now();
      const within = (ms: number) => ({ intervalMs: 500, timeoutMs: Math.max(1, changedAt + ms - Date.now()) });

      // Both within a deadline counted from the image change, so they are awaited side by side. A new pod is
      // Ready 1-3 s after it starts, hence available at once (minReadySeconds 0), and the controller replaces
      // the next node's pod; ~5 s after Ready it crashes and counts as unavailable until it is Ready again.
      const [, crashed] = await Promise.all([
        waitFor(async () => (await observedCurrentSpec(ns)) && (await daemonSetRow(ns, DS)).upToDate >= 3, {
          ...within(20_000),
          describe: 'UP-TO-DATE to reach 3 of 4 within 20 s of the image change',
        }),
        waitFor(async () => (await daemonPods(ns)).find((p) => restarts(p) >= 1 && lastTermination(p)?.reason === 'Error'), {
          ...within(15_000),
          describe: 'a pod with restartCount >= 1 and lastState.terminated.reason Error within 15 s of the image change',
        }),
      ]);
      assert.equal(crashed.status.phase, 'Running', 'restartPolicy Always: the crashed pod stays Running');
      assert.equal(lastTermination(crashed)?.exitCode, 1);
      assert.equal(crashed.status.containerStatuses?.[0]?.image, CRASHAFTER);

      // The back-off ends: the same pod is Ready again, and its Ready condition moved on after the crash.
      const recovered = await waitFor(async () => (await daemonPods(ns)).find((p) => restarts(p) >= 1 && isReady(p)), {
        ...WAIT,
        intervalMs: 500,
        describe: 'a crashed pod to be Ready again',
      });
      const ready = recovered.status.conditions?.find((c) => c.type === 'Ready');
      const crash = lastTermination(recovered);
      assert.ok(ready?.lastTransitionTime && crash?.finishedAt, 'Ready.lastTransitionTime and lastState.terminated.finishedAt are set');
      assert.ok(
        Date.parse(ready.lastTransitionTime) > Date.parse(crash.finishedAt),
        `Ready since ${ready.lastTransitionTime}, after the crash at ${crash.finishedAt}`,
      );
      assert.ok(recovered.status.containerStatuses?.[0]?.state?.running, 'the container runs again');

      // And it crashes again: the cycle does not stop after one restart.
      await waitFor(async () => (await daemonPods(ns)).some((p) => restarts(p) >= 2), {
        ...WAIT,
        intervalMs: 500,
        describe: 'a pod to crash a second time',
      });
    });
  });

  it('an "oomafter" image is OOMKilled (exit 137) after becoming Ready', async () => {
    await scenario('rg-oomafter', 2, {}, async (ns, pool) => {
      await applyDaemonSet(ns, pool.name, OOMAFTER);
      const pod = await waitFor(async () => (await daemonPods(ns)).find((p) => lastTermination(p)?.reason === 'OOMKilled'), {
        ...WAIT,
        intervalMs: 500,
        describe: 'a pod with lastState.terminated.reason OOMKilled',
      });
      assert.equal(lastTermination(pod)?.exitCode, 137);
      assert.ok(restarts(pod) >= 1, 'restartCount > 0');
      assert.equal(pod.status.phase, 'Running');
    });
  });

  it('a "restartonce" image restarts once on the node whose name ends in -1 only, then stays Ready', async () => {
    await scenario('rg-restartonce', 3, {}, async (ns, pool) => {
      const first = pool.nodes.filter((n) => n.endsWith('-1'));
      assert.equal(first.length, 1, `one pool node ends in -1: ${pool.nodes.join(', ')}`);
      const isFirst = (p: Pod) => p.spec.nodeName === first[0];
      await applyDaemonSet(ns, pool.name, RESTARTONCE);

      const pods = await waitFor(
        async () => {
          const ps = await daemonPods(ns);
          const p = ps.find(isFirst);
          return ps.length === 3 && p && restarts(p) === 1 && isReady(p) && lastTermination(p)?.reason === 'Error' ? ps : undefined;
        },
        { ...WAIT, intervalMs: 500, describe: `3 pods, the one on ${first[0]} Ready again after one restart (Error)` },
      );
      const names = pods.map((p) => p.metadata.name).sort();
      // A second crash would come ~5 s after Ready again: 15 s of the same picture rules it out.
      await holdsFor(
        async () => {
          const ps = await daemonPods(ns);
          return (
            isDeepEqual(ps.map((p) => p.metadata.name).sort(), names) &&
            ps.every((p) => isReady(p) && (isFirst(p) ? restarts(p) === 1 : restarts(p) === 0 && !lastTermination(p)))
          );
        },
        {
          durationMs: 15_000,
          intervalMs: 500,
          describe: `the same 3 pods Ready, restartCount 1 on ${first[0]} and 0 elsewhere`,
        },
      );
    });
  });

  it('a node annotated rollout-guard.test/not-ready=true keeps the NotReady condition a test writes, and is Ready again once the annotation is removed', async () => {
    await scenario('rg-notready', 2, {}, async (_ns, pool) => {
      const [down, up] = pool.nodes as [string, string];
      const readyOf = async (n: string): Promise<{ status?: string; reason?: string; lastTransitionTime?: string }> => {
        const node = await kubectlJson<{
          status: { conditions?: Array<{ type: string; status: string; reason?: string; lastTransitionTime?: string }> };
        }>(['get', 'node', n]);
        return node.status.conditions?.find((c) => c.type === 'Ready') ?? {};
      };
      await kubectl(['annotate', 'node', down, 'rollout-guard.test/not-ready=true']);
      const now = new Date().toISOString();
      const cond = {
        type: 'Ready',
        status: 'False',
        reason: 'KubeletNotReady',
        message: 'container runtime network not ready: NetworkReady=false',
        lastTransitionTime: now,
        lastHeartbeatTime: now,
      };
      await kubectl([
        'patch',
        'node',
        down,
        '--subresource=status',
        '--type=strategic',
        '-p',
        JSON.stringify({ status: { conditions: [cond] } }),
      ]);
      // kwok heals a NotReady node at once (node-initialize) unless it carries the annotation.
      await holdsFor(
        async () => {
          const r = await readyOf(down);
          return r.status === 'False' && r.reason === 'KubeletNotReady' && r.lastTransitionTime === now.replace(/\.\d+Z$/, 'Z');
        },
        { durationMs: 5_000, describe: `${down} stays NotReady as written` },
      );
      assert.equal((await readyOf(up)).status, 'True', 'the node without the annotation is untouched');
      await kubectl(['annotate', 'node', down, 'rollout-guard.test/not-ready-']);
      await waitFor(async () => (await readyOf(down)).status === 'True', { ...WAIT, describe: `${down} Ready again` });
    });
  });

  it('a "sickon1" image crash-loops on the node whose name ends in -1 only, and is Ready on the others', async () => {
    await scenario('rg-sickon1', 3, {}, async (ns, pool) => {
      const first = pool.nodes.filter((n) => n.endsWith('-1'));
      assert.equal(first.length, 1, `one pool node ends in -1: ${pool.nodes.join(', ')}`);
      const isFirst = (p: Pod) => p.spec.nodeName === first[0];
      await applyDaemonSet(ns, pool.name, SICKON1);

      // Every poll, from the start until it has restarted twice (10 s or more), finds the pod on -1 not Ready.
      const { sick, others } = await waitFor(
        async () => {
          const ps = await daemonPods(ns);
          const sick = ps.find(isFirst);
          if (sick && isReady(sick)) throw new FatalWaitError(new Error(`pod ${sick.metadata.name} on ${first[0]} was Ready`));
          const others = ps.filter((p) => !isFirst(p));
          const crashLooping = sick && waitingReason(sick) === 'CrashLoopBackOff' && restarts(sick) >= 2;
          return ps.length === 3 && crashLooping && others.every((p) => isReady(p) && restarts(p) === 0) ? { sick, others } : undefined;
        },
        { ...WAIT, intervalMs: 500, describe: `the pod on ${first[0]} in CrashLoopBackOff with restartCount >= 2, the other two Ready` },
      );
      assert.equal(sick.status.phase, 'Running', 'restartPolicy Always: the crash-looping pod stays Running');
      assert.equal(condition(sick, 'Ready')?.status, 'False');
      assert.equal(condition(sick, 'ContainersReady')?.status, 'False');
      assert.equal(sick.status.containerStatuses?.[0]?.ready, false);
      assert.equal(sick.status.containerStatuses?.[0]?.image, SICKON1);
      assert.equal(lastTermination(sick)?.exitCode, 1);
      assert.equal(lastTermination(sick)?.reason, 'Error');
      assert.equal(await statusColumn(ns, sick.metadata.name), 'CrashLoopBackOff');
      for (const p of others) {
        assert.ok(p.status.containerStatuses?.[0]?.state?.running, `the container of ${p.metadata.name} runs`);
        assert.equal(lastTermination(p), undefined, `${p.metadata.name} never crashed`);
        assert.equal(await statusColumn(ns, p.metadata.name), 'Running');
      }
    });
  });

  it(`a Ready pod annotated ${BREAK_ANNOTATION}=crash turns into a crash loop, and its unannotated sibling stays Ready`, async () => {
    await scenario('rg-break', 2, {}, async (ns, pool) => {
      await rollOut(ns, pool.name, GOOD, {}, 2);
      const [target, sibling] = (await daemonPods(ns)).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
      assert.ok(target && sibling && isReady(target) && isReady(sibling), 'two Ready pods');
      const name = target.metadata.name;

      await kubectl(['annotate', 'pod', name, `${BREAK_ANNOTATION}=crash`], { ns });
      const broken = await waitFor(
        async () => {
          const p = await kubectlJson<Pod>(['get', 'pod', name], { ns });
          return !isReady(p) && waitingReason(p) === 'CrashLoopBackOff' && restarts(p) >= 1 ? p : undefined;
        },
        { ...WAIT, describe: `annotated pod ${name} to turn Ready=False, waiting CrashLoopBackOff` },
      );
      assert.equal(broken.status.phase, 'Running', 'restartPolicy Always: the crashed pod stays Running');
      assert.equal(condition(broken, 'Ready')?.reason, 'ContainersNotReady');
      assert.equal(condition(broken, 'ContainersReady')?.status, 'False');
      assert.equal(broken.status.containerStatuses?.[0]?.ready, false);
      assert.equal(lastTermination(broken)?.exitCode, 1);
      assert.equal(lastTermination(broken)?.reason, 'Error');
      assert.equal(await statusColumn(ns, name), 'CrashLoopBackOff');
      // The DaemonSet controller counts it as not Ready: nothing but the pod's status changed.
      await waitForRow(ns, { desired: 2, current: 2, ready: 1, upToDate: 2, available: 1 });

      // kwok keeps "restarting" it, as a kubelet would, and it is never Ready again on the way.
      const again = await waitFor(
        async () => {
          const p = await kubectlJson<Pod>(['get', 'pod', name], { ns });
          if (isReady(p)) throw new FatalWaitError(new Error(`annotated pod ${name} was Ready again`));
          return restarts(p) >= 2 && waitingReason(p) === 'CrashLoopBackOff' ? p : undefined;
        },
        { ...WAIT, intervalMs: 500, describe: `annotated pod ${name} to restart again (restartCount >= 2)` },
      );
      assert.equal(lastTermination(again)?.exitCode, 1);

      // The pod without the annotation matched no stage all along: Ready, never restarted, never written.
      const now = await kubectlJson<Pod>(['get', 'pod', sibling.metadata.name], { ns });
      assert.equal(isReady(now), true);
      assert.equal(restarts(now), 0);
      assert.equal(lastTermination(now), undefined);
      assert.equal(now.metadata.resourceVersion, sibling.metadata.resourceVersion, 'the unannotated pod was not written');
    });
  });

  it('a "probefail" image runs and never turns Ready; only a Warning Unhealthy Event says why, as on a real kubelet', async () => {
    await scenario('rg-probefail', 3, {}, async (ns, pool) => {
      await rollOut(ns, pool.name, GOOD);
      await kubectl(['set', 'image', `ds/${DS}`, `decoder=${PROBEFAIL}`], { ns });
      await waitForRow(ns, { desired: 3, current: 3, ready: 2, upToDate: 1, available: 2 });
      const newHash = await latestHash(ns);
      const fresh = (await daemonPods(ns)).find((p) => hashOf(p) === newHash)!;
      assert.equal(fresh.status.phase, 'Running');
      assert.equal(isReady(fresh), false);
      const cs = fresh.status.containerStatuses?.[0];
      assert.equal(cs?.started, true);
      assert.ok(cs?.state?.running, 'the container runs');
      assert.equal(cs?.state?.waiting, undefined, 'no waiting reason: the status does not say why');
      const evs = await waitFor(
        async () => {
          const e = await podEvents(ns, fresh.metadata.name, 'Unhealthy');
          return e.length > 0 ? e : undefined;
        },
        { ...WAIT, describe: 'a Warning Unhealthy Event' },
      );
      assert.equal(evs[0]?.type, 'Warning');
      assert.equal(evs[0]?.message, 'Readiness probe failed: HTTP probe failed with statuscode: 503');
    });
  });

  it('a "mountfail" image whose revision adds a volume that does not mount stalls in ContainerCreating, with a repeating FailedMount Warning', async () => {
    await scenario('rg-mountfail', 3, {}, async (ns, pool) => {
      await rollOut(ns, pool.name, GOOD);
      // The new revision mounts the settings volume, whose ConfigMap does not exist.
      await applyDaemonSet(ns, pool.name, MOUNTFAIL, { settingsVolume: true });
      await expectStuckCreating(ns, 'FailedMount', FAILED_MOUNT);
    });
  });

  it('a "sandboxfail" image stalls in ContainerCreating, with a repeating FailedCreatePodSandBox Warning', async () => {
    await scenario('rg-sandboxfail', 3, {}, async (ns, pool) => {
      await rollOut(ns, pool.name, GOOD);
      await kubectl(['set', 'image', `ds/${DS}`, `decoder=${SANDBOXFAIL}`], { ns });
      await expectStuckCreating(ns, 'FailedCreatePodSandBox', FAILED_SANDBOX);
    });
  });

  it('an init container whose image is "broken" stalls the rollout in Init:ImagePullBackOff', async () => {
    await scenario('rg-initbroken', 3, {}, async (ns, pool) => {
      // A healthy init container completes and the pods run: the default path.
      await rollOut(ns, pool.name, GOOD, { initImage: INIT_GOOD });
      for (const p of await daemonPods(ns)) {
        assert.equal(initStatus(p)?.state?.terminated?.reason, 'Completed', `init container of ${p.metadata.name} completed`);
        assert.equal(initStatus(p)?.state?.terminated?.exitCode, 0);
        assert.equal(await statusColumn(ns, p.metadata.name), 'Running');
      }

      await kubectl(['set', 'image', `ds/${DS}`, `init=${INIT_BROKEN}`], { ns });
      // The app container never starts: it waits in PodInitializing behind the init container.
      const { broken } = await expectStalledAtOneNode(ns, 'PodInitializing');
      assert.equal(broken.status.phase, 'Pending');
      assert.equal(isReady(broken), false);
      assert.ok(broken.status.podIP, 'the sandbox exists: the pod has an IP');
      const init = initStatus(broken);
      assert.equal(init?.image, INIT_BROKEN);
      assert.equal(init?.ready, false);
      assert.equal(init?.state?.waiting?.reason, 'ImagePullBackOff');
      assert.equal(
        init?.state?.waiting?.message,
        `Back-off pulling image "${INIT_BROKEN}": ErrImagePull: failed to pull and unpack image "${INIT_BROKEN}": failed to resolve reference "${INIT_BROKEN}": ${INIT_BROKEN}: not found`,
      );
      assert.equal(condition(broken, 'Initialized')?.status, 'False');
      assert.equal(condition(broken, 'Initialized')?.reason, 'ContainersNotInitialized');
      assert.equal(await statusColumn(ns, broken.metadata.name), 'Init:ImagePullBackOff');
    });
  });

  it('an init container whose image is "crashloop" stalls the rollout in Init:CrashLoopBackOff while it restarts', async () => {
    await scenario('rg-initcrash', 3, {}, async (ns, pool) => {
      await rollOut(ns, pool.name, GOOD, { initImage: INIT_GOOD });
      await kubectl(['set', 'image', `ds/${DS}`, `init=${INIT_CRASHLOOP}`], { ns });
      const { broken } = await expectStalledAtOneNode(ns, 'PodInitializing');
      // Init containers run before the pod is Running: unlike an app container's crash loop, the pod stays Pending.
      assert.equal(broken.status.phase, 'Pending');
      assert.equal(isReady(broken), false);
      const init = initStatus(broken);
      assert.equal(init?.image, INIT_CRASHLOOP);
      assert.equal(init?.state?.waiting?.reason, 'CrashLoopBackOff');
      assert.ok((init?.restartCount ?? 0) >= 1, 'restartCount > 0');
      assert.equal(init?.lastState?.terminated?.exitCode, 1);
      assert.equal(init?.lastState?.terminated?.reason, 'Error');
      assert.equal(condition(broken, 'Initialized')?.status, 'False');
      assert.equal(await statusColumn(ns, broken.metadata.name), 'Init:CrashLoopBackOff');
      // kwok keeps "restarting" it, as a kubelet would.
      await waitFor(
        async () =>
          (initStatus(await kubectlJson<Pod>(['get', 'pod', broken.metadata.name], { ns }))?.restartCount ?? 0) > (init?.restartCount ?? 0),
        { ...WAIT, describe: 'the init container restartCount to grow' },
      );
    });
  });

  it('a "broken" app image beside a healthy init container is ImagePullBackOff, not an init container failure', async () => {
    await scenario('rg-initok-broken', 1, {}, async (ns, pool) => {
      // The app-container markers look at .spec.containers only, and the init-container ones at .spec.initContainers.
      await applyDaemonSet(ns, pool.name, BROKEN, { initImage: INIT_GOOD });
      const pod = await waitFor(async () => (await daemonPods(ns)).find((p) => waitingReason(p) === 'ImagePullBackOff'), {
        ...WAIT,
        describe: 'a pod whose app container waits in ImagePullBackOff',
      });
      assert.equal(initStatus(pod)?.state?.terminated?.reason, 'Completed');
      assert.equal(condition(pod, 'Initialized')?.status, 'True');
      assert.equal(await statusColumn(ns, pod.metadata.name), 'ImagePullBackOff');
    });
  });
});
