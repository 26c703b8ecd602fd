/**
 * The fault harness itself, end to end, on a private control plane started with the node-lifecycle
 * controllers: before suites rely on a dead node or a frozen controller manager behaving as in a real
 * cluster, this checks that they do, and measures how long each reaction takes.
 *
 * - Dead kubelets: a pool driven by its own kwok is frozen (SIGSTOP). Its nodes must turn
 *   `Ready=Unknown` with the `unreachable:NoExecute` taint, their pods `Ready=False`, a pod deleted there
 *   must stay Terminating, and a node of the main kwok must stay Ready throughout. Thawed, everything
 *   comes back.
 * - Controller manager frozen: a DaemonSet template change stays unobserved while it is stopped, and is
 *   acted on after SIGCONT (it runs with `--leader-elect=false`, so there is no lease to lose).
 *
 * Run: `npx tsc -p tsconfig.json && node --test dist/test/e2e/harness.test.js`
 * (`RG_KEEP_FAULT_CLUSTER=1` keeps the cluster for diagnosis).
 */
import assert from 'node:assert/strict';
import * as https from 'node:https';
import { after, before, describe, it, type TestContext } from 'node:test';
import { NODE_LIFECYCLE_TIMINGS } from '../../cluster/controllers.js';
import { daemonSetManifest } from '../../cluster/manifests.js';
import { FatalWaitError, POOL_LABEL, holdsFor, waitFor } from '../support/cluster.js';
import { isUnreachable, nodeUsable, readyCondition } from '../../cluster/nodes.js';
import { PrivateCluster, type KillableNodePool, type PrivateNodePool } from '../../cluster/privateCluster.js';

interface PodObj {
  metadata: { name: string; deletionTimestamp?: string };
  spec: { nodeName?: string; containers: Array<{ image: string }> };
  status: { phase?: string; conditions?: Array<{ type: string; status: string }> };
}
interface DaemonSetObj {
  metadata: { generation: number };
  status: {
    observedGeneration?: number;
    desiredNumberScheduled?: number;
    currentNumberScheduled?: number;
    numberReady?: number;
    numberAvailable?: number;
    numberMisscheduled?: number;
    updatedNumberScheduled?: number;
  };
}

const DS = 'node-agent';
const GRACE_MS = NODE_LIFECYCLE_TIMINGS.monitorGracePeriodSeconds * 1000;
const RENEW_MS = (NODE_LIFECYCLE_TIMINGS.leaseDurationSeconds * 1000) / 4; // kwok renews at a quarter of the lease
const MONITOR_MS = NODE_LIFECYCLE_TIMINGS.monitorPeriodSeconds * 1000;

let pc: PrivateCluster;
let killable: KillableNodePool;
let normal: PrivateNodePool;
let ns: string;

const getDs = (): Promise<DaemonSetObj> => pc.kubectlJson<DaemonSetObj>(['get', 'ds', DS], { ns });
const getPods = async (): Promise<PodObj[]> => (await pc.kubectlJson<{ items: PodObj[] }>(['get', 'pods'], { ns })).items;
const podReady = (p: PodObj): string | undefined => p.status.conditions?.find((c) => c.type === 'Ready')?.status;

/** A plain RollingUpdate DaemonSet confined (node affinity) to the two pools of this suite. */
function daemonSet(pools: string[], image: string): Record<string, unknown> {
  return daemonSetManifest({
    name: DS,
    namespace: ns,
    nodeAffinity: { key: POOL_LABEL, values: pools },
    container: { name: 'agent', image, requests: { cpu: '50m', memory: '32Mi' } },
  });
}

/** Fails the surrounding wait at once when the main kwok's node stops being Ready (it must never). */
async function assertNormalNodeReady(): Promise<void> {
  const [node] = await pc.getNodes(normal.nodes);
  if (!nodeUsable(node!)) {
    throw new FatalWaitError(
      new Error(
        `${normal.nodes[0]} (main kwok) is not Ready: ${JSON.stringify(readyCondition(node!))}, taints ${JSON.stringify(node!.spec.taints)}`,
      ),
    );
  }
}

/** Status code of the controller manager's /healthz (self-signed certificate, loopback only). */
function kcmHealthz(): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      `https://127.0.0.1:${pc.ports.controllerManager}/healthz`,
      { rejectUnauthorized: false, timeout: 2_000 },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('timeout', () => req.destroy(new Error('KCM /healthz timed out')));
    req.on('error', reject);
  });
}

const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

describe('fault harness: dead kubelets and a frozen controller manager (private control plane)', () => {
  before(async () => {
    pc = await PrivateCluster.start({ nodeLifecycle: true });
    ns = await pc.createNamespace('harness');
  });

  after(async () => {
    if (pc && process.env.RG_KEEP_FAULT_CLUSTER !== '1') await pc.down();
  });

  it('a killable pool (own kwok) and a normal pool are Ready, and a DaemonSet runs on all their nodes', async (t: TestContext) => {
    const started = Date.now();
    [killable, normal] = await Promise.all([pc.createKillableNodePool('hk', 2), pc.createNodePool('hn', 1)]);
    t.diagnostic(`pools Ready in ${secs(Date.now() - started)}`);
    const all = [...killable.nodes, ...normal.nodes];
    assert.ok((await pc.getNodes(all)).every(nodeUsable), 'all three nodes Ready, untainted');

    await pc.apply(daemonSet([killable.name, normal.name], 'registry.local/agent:1'), ns);
    await waitFor(
      async () => {
        const ds = await getDs();
        return ds.status.desiredNumberScheduled === 3 && ds.status.numberReady === 3 && ds.status.numberAvailable === 3;
      },
      { timeoutMs: 60_000, describe: 'the DaemonSet Ready on 3 nodes' },
    );
    const pods = await getPods();
    assert.deepEqual(pods.map((p) => p.spec.nodeName).sort(), [...all].sort(), 'one daemon pod per node');
  });

  it('frozen kwok: its nodes turn Unknown with the unreachable NoExecute taint and their pods Ready=False; the other node stays Ready', async (t: TestContext) => {
    const frozenAt = Date.now();
    killable.pause();
    await waitFor(
      async () => {
        await assertNormalNodeReady();
        return (await pc.getNodes(killable.nodes)).every(isUnreachable);
      },
      { timeoutMs: GRACE_MS + 20_000, intervalMs: 200, describe: 'the frozen pool Unknown and tainted unreachable:NoExecute' },
    );
    const detectMs = Date.now() - frozenAt;
    t.diagnostic(
      `freeze → Ready=Unknown + unreachable:NoExecute on both nodes: ${secs(detectMs)} (grace period ${secs(GRACE_MS)}, lease renewed every ${secs(RENEW_MS)})`,
    );
    // The controller waits out the grace period from the last Lease renewal it saw (at most one renewal
    // interval before the freeze): noticing earlier would mean something else marked the nodes.
    assert.ok(detectMs >= GRACE_MS - RENEW_MS - 500, `not before the grace period: ${detectMs} ms`);
    assert.ok(detectMs <= GRACE_MS + 3 * MONITOR_MS + 5_000, `within the grace period plus a few monitor periods: ${detectMs} ms`);

    // As in a real cluster: the controller marks the dead nodes' pods not Ready. Daemon pods tolerate
    // unreachable:NoExecute (they stay) but not the unreachable:NoSchedule taint that comes with it, so the
    // dead nodes drop out of DESIRED and their pods count as misscheduled.
    // Nothing here is timed: the wait is for two controllers (the node lifecycle controller's taints and
    // pod marking, then a DaemonSet controller sync). The DaemonSet controller of kube-controller-manager
    // v1.37.2 was seen to miss the taint update now and then: the dead nodes kept the unreachable
    // NoSchedule taint while DESIRED stayed 3 for over a minute, and any update of the DaemonSet made it
    // recompute DESIRED 1 at once (it has no periodic resync). So the harness waits 20 s for the drop,
    // then gives the controller that sync with an annotation and says so. A timeout names what was last
    // seen, so a slow or missed sync is told from a wrong outcome.
    const frozenWorld = async (): Promise<true> => {
      await assertNormalNodeReady();
      const pods = await getPods();
      const onFrozen = pods.filter((p) => killable.nodes.includes(p.spec.nodeName ?? ''));
      const onNormal = pods.filter((p) => p.spec.nodeName === normal.nodes[0]);
      const { status } = await getDs();
      const met =
        onFrozen.length === 2 &&
        onFrozen.every((p) => podReady(p) === 'False') &&
        onNormal.length === 1 &&
        podReady(onNormal[0]!) === 'True' &&
        status.desiredNumberScheduled === 1 &&
        status.numberReady === 1 &&
        status.numberMisscheduled === 2;
      if (met) return true;
      throw new Error(
        `pods on frozen nodes Ready [${onFrozen.map((p) => podReady(p) ?? '-').join(', ')}], on the normal node [${onNormal.map((p) => podReady(p) ?? '-').join(', ')}]; ` +
          `DaemonSet DESIRED ${String(status.desiredNumberScheduled)} READY ${String(status.numberReady)} misscheduled ${String(status.numberMisscheduled)}`,
      );
    };
    const awaited = 'the frozen nodes’ pods Ready=False and misscheduled, DaemonSet DESIRED 1 READY 1';
    try {
      await waitFor(frozenWorld, { timeoutMs: 20_000, describe: awaited });
    } catch (e) {
      const { status } = await getDs();
      if (status.desiredNumberScheduled === 1) throw e; // DESIRED dropped: not the missed sync, a wrong outcome
      t.diagnostic(
        `the DaemonSet controller had not recomputed DESIRED after the taints (${(e as Error).message}); an annotation gives it a sync`,
      );
      await pc.kubectl(['annotate', 'ds', DS, '--overwrite', `harness-sync=${Date.now()}`], { ns });
      await waitFor(frozenWorld, { timeoutMs: 25_000, describe: awaited });
    }
  });

  it('a daemon pod deleted on a frozen node stays Terminating', async () => {
    const node = killable.nodes[0]!;
    const pod = (await getPods()).find((p) => p.spec.nodeName === node);
    assert.ok(pod, `a daemon pod on ${node}`);
    await pc.kubectl(['delete', 'pod', pod.metadata.name, '--wait=false'], { ns });
    // Well past the pod's 1 s grace period: only the (frozen) kubelet could complete the deletion.
    await holdsFor(
      async () => {
        const res = await pc.kubectl(['get', 'pod', pod.metadata.name, '-o', 'json'], { ns, allowFail: true });
        if (res.code !== 0) return false;
        const p = JSON.parse(res.stdout) as PodObj;
        return p.metadata.deletionTimestamp !== undefined;
      },
      { durationMs: 4_000, intervalMs: 250, describe: `pod ${pod.metadata.name} Terminating on frozen ${node}` },
    );
    assert.ok((await pc.getNodes(killable.nodes)).every(isUnreachable), 'the pool is still down');
  });

  it('thawed kwok: the nodes are Ready again, the taint is gone, the deletion completes and the DaemonSet is whole', async (t: TestContext) => {
    const thawedAt = Date.now();
    killable.resume();
    const nodes = await pc.waitForNodes(killable.nodes, nodeUsable, {
      timeoutMs: 30_000,
      intervalMs: 200,
      describe: 'the thawed pool Ready and untainted',
    });
    const recoverMs = Date.now() - thawedAt;
    t.diagnostic(`thaw → Ready=True, unreachable taints removed: ${secs(recoverMs)}`);
    for (const n of nodes) {
      // Like a kubelet, the thawed kwok dates the Unknown → True transition now (whole seconds), not at node creation.
      const since = Date.parse(readyCondition(n)?.lastTransitionTime ?? '');
      assert.ok(
        since >= thawedAt - 1_000,
        `${n.metadata.name} Ready since ${readyCondition(n)?.lastTransitionTime}, thawed at ${new Date(thawedAt).toISOString()}`,
      );
    }

    // kwok finishes the pending deletion, the DaemonSet controller replaces the pod, and the pods the
    // controller marked not Ready are reported Ready again (as a kubelet that reconnects does).
    await waitFor(
      async () => {
        await assertNormalNodeReady();
        const pods = await getPods();
        const ds = await getDs();
        return (
          pods.length === 3 &&
          pods.every((p) => !p.metadata.deletionTimestamp && podReady(p) === 'True') &&
          ds.status.desiredNumberScheduled === 3 &&
          ds.status.numberReady === 3 &&
          ds.status.numberAvailable === 3 &&
          (ds.status.numberMisscheduled ?? 0) === 0
        );
      },
      { timeoutMs: 30_000, describe: 'three Ready daemon pods again, none Terminating' },
    );
    t.diagnostic(`thaw → DaemonSet READY 3 again: ${secs(Date.now() - thawedAt)}`);
  });

  it('frozen controller manager: a template change stays unobserved while stopped and is rolled out after SIGCONT', async (t: TestContext) => {
    const observed = await waitFor(
      async () => {
        const ds = await getDs();
        return ds.status.observedGeneration === ds.metadata.generation && ds;
      },
      { timeoutMs: 15_000, describe: 'the DaemonSet generation observed' },
    );

    pc.signalComponent('kube-controller-manager', 'SIGSTOP');
    let frozen = true;
    try {
      await pc.kubectl(['set', 'image', `ds/${DS}`, 'agent=registry.local/agent:2'], { ns });
      const generation = (await getDs()).metadata.generation;
      assert.equal(generation, observed.metadata.generation + 1, 'the template change made a new generation');
      await holdsFor(
        async () => {
          const ds = await getDs();
          return ds.metadata.generation === generation && (ds.status.observedGeneration ?? 0) < generation;
        },
        { durationMs: 5_000, intervalMs: 250, describe: 'observedGeneration behind generation while the KCM is frozen' },
      );

      const thawedAt = Date.now();
      pc.signalComponent('kube-controller-manager', 'SIGCONT');
      frozen = false;
      await waitFor(async () => (await getDs()).status.observedGeneration === generation, {
        timeoutMs: 30_000,
        intervalMs: 100,
        describe: 'the thawed KCM to observe the new generation',
      });
      const observeMs = Date.now() - thawedAt;
      await waitFor(
        async () => {
          const ds = await getDs();
          const pods = await getPods();
          return (
            ds.status.updatedNumberScheduled === 3 &&
            ds.status.numberAvailable === 3 &&
            pods.length === 3 &&
            pods.every((p) => p.spec.containers[0]?.image === 'registry.local/agent:2' && podReady(p) === 'True')
          );
        },
        { timeoutMs: 60_000, describe: 'the new template rolled out to all 3 nodes' },
      );
      t.diagnostic(`KCM thaw → new generation observed: ${secs(observeMs)}; → rolled out on 3 nodes: ${secs(Date.now() - thawedAt)}`);
    } finally {
      if (frozen) pc.signalComponent('kube-controller-manager', 'SIGCONT');
    }

    // The same process carried on (no restart, no lost leadership: it runs with --leader-elect=false), and
    // its node-lifecycle controller did not take the pause for silence from the nodes.
    assert.equal(await kcmHealthz(), 200, 'KCM /healthz');
    await pc.cli(['status']); // rejects unless every component and the kwok instance are alive
    assert.ok((await pc.getNodes([...killable.nodes, ...normal.nodes])).every(nodeUsable), 'all nodes still Ready after the KCM pause');
  });
});
