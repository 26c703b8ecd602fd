/**
 * End to end: the operator process against the real control plane (etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler, kwok). Each scenario runs in its own namespace on its own
 * node pool; one operator process watches all of them, as it would in a cluster.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createNamespace,
  createNodePool,
  decoderDaemonSet,
  ensureCluster,
  kubectl,
  kubectlJson,
  uniqueName,
  waitFor,
  type NodePool,
} from '../support/cluster.js';
import { OperatorProcess, apply, guard, installCrds } from '../support/operator.js';
import { CACHES_DISAGREE_MSG } from '../../src/reconcile/reconciler.js';

interface GuardObj {
  metadata: { generation: number };
  status?: {
    state?: string;
    cause?: string;
    owner?: string;
    message?: string;
    desired?: number;
    updated?: number;
    ready?: number;
    currentRevision?: { revision?: number };
    generations?: Array<{ revision?: number; hash: string; nodes: number; ready: number; images: string[] }>;
    blockedNodes?: Array<{ node: string; reason: string; message: string; revision?: number }>;
    blockedNodeCount?: number;
    emptyNodes?: Array<{ node: string }>;
    rollout?: {
      lastProgressAt: string;
      desiredAtStart: number;
      fromRevision?: { hash: string };
      toRevision: { hash: string };
      leftNodes?: Array<{ node: string; reason: string }>;
    };
    conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
  };
}

const TIMING = { suspectAfterSeconds: 3, progressDeadlineSeconds: 8 };
const SCENARIOS = ['stall', 'healthy', 'crash', 'cpu', 'taint', 'selector', 'missing'] as const;
type Scenario = (typeof SCENARIOS)[number];

const ns = {} as Record<Scenario, string>;
const pools = {} as Record<Scenario, NodePool>;
const cleanups: Array<() => Promise<void>> = [];
let op: OperatorProcess;

async function getGuard(namespace: string, name = 'decoder'): Promise<GuardObj> {
  return kubectlJson<GuardObj>(['get', 'rolloutguard', name], { ns: namespace });
}

async function waitState(namespace: string, state: string, timeoutMs = 60_000, name = 'decoder'): Promise<GuardObj> {
  let last: GuardObj | undefined;
  await waitFor(
    async () => {
      last = await getGuard(namespace, name);
      return last.status?.state === state;
    },
    { timeoutMs, describe: `guard ${namespace}/${name} state ${state}` },
  ).catch((e: unknown) => {
    throw new Error(
      `${e instanceof Error ? e.message : String(e)}; last status: ${JSON.stringify(last?.status)}\n${op.logs.slice(-30).join('\n')}`,
    );
  });
  return last!;
}

/** Events (core/v1 view of events.k8s.io) about one object, as `kubectl get events` shows them. */
async function eventsFor(
  namespace: string,
  kind: string,
  name: string,
): Promise<Array<{ reason: string; type: string; message?: string; note?: string }>> {
  const list = await kubectlJson<{ items: Array<{ reason: string; type: string; message?: string }> }>(
    ['get', 'events', `--field-selector=involvedObject.kind=${kind},involvedObject.name=${name}`],
    { ns: namespace },
  );
  return list.items;
}

async function rollOut(
  namespace: string,
  pool: NodePool,
  image: string,
  extra: Partial<Parameters<typeof decoderDaemonSet>[0]> = {},
): Promise<void> {
  await apply(decoderDaemonSet({ name: 'decoder', ns: namespace, pool: pool.name, image, ...extra }));
  await kubectl(['rollout', 'status', 'ds/decoder', '--timeout=90s'], { ns: namespace });
}

async function setImage(namespace: string, image: string): Promise<void> {
  await kubectl(['set', 'image', 'ds/decoder', `decoder=${image}`], { ns: namespace });
}

describe('operator end to end', { concurrency: true }, () => {
  before(async () => {
    await ensureCluster();
    await installCrds();
    for (const s of SCENARIOS) {
      const n = await createNamespace(`e2e-${s}`);
      ns[s] = n.name;
      cleanups.push(n.cleanup);
      const pool = await createNodePool(uniqueName(`p-${s}`), 3, s === 'cpu' ? { allocatable: { cpu: '2' } } : {});
      pools[s] = pool;
      cleanups.push(pool.cleanup);
    }
    op = await OperatorProcess.start({ namespaces: SCENARIOS.map((s) => ns[s]) });
  });

  after(async () => {
    const disagreements = op ? op.jsonLogs().filter((l) => l.msg === CACHES_DISAGREE_MSG) : [];
    const code = op ? await op.stop() : 0;
    // The wait for the two caches is one watch event long; a relist would mean the pairing misfired.
    assert.deepEqual(disagreements, [], 'the DaemonSet and revision caches always agreed within 10 s');
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    assert.equal(code, 0, 'operator exits 0 on SIGTERM');
  });

  it('a healthy rollout goes Progressing then Healthy and records RolloutComplete', async () => {
    const n = ns.healthy;
    await rollOut(n, pools.healthy, 'registry.local/decoder:1');
    await apply(guard('decoder', n, 'decoder', TIMING));
    await waitState(n, 'Healthy');
    await setImage(n, 'registry.local/decoder:2');
    await kubectl(['rollout', 'status', 'ds/decoder', '--timeout=90s'], { ns: n });
    const g = await waitState(n, 'Healthy');
    assert.equal(g.status?.updated, 3);
    assert.equal(g.status?.generations?.length, 1, 'one generation after the rollout');
    await waitFor(async () => (await eventsFor(n, 'RolloutGuard', 'decoder')).some((e) => e.reason === 'RolloutComplete'), {
      timeoutMs: 20_000,
      describe: 'RolloutComplete event',
    });
    const started = (await eventsFor(n, 'DaemonSet', 'decoder')).filter((e) => e.reason === 'RolloutStarted');
    assert.equal(started.length, 1, 'RolloutStarted mirrored once on the DaemonSet');
    const cond = (t: string) => g.status?.conditions?.find((c) => c.type === t);
    assert.equal(cond('Ready')?.status, 'True');
    assert.equal(cond('Stalled')?.status, 'False');
  });

  it('the classic stall: a broken image is Suspect, then Stalled at the deadline, and explained', async () => {
    const n = ns.stall;
    await rollOut(n, pools.stall, 'registry.local/decoder:1');
    await apply(guard('decoder', n, 'decoder', TIMING));
    await waitState(n, 'Healthy');
    await setImage(n, 'registry.local/decoder:2-broken');
    await waitState(n, 'Suspect', 30_000);
    const g = await waitState(n, 'Stalled', 30_000);
    const stalledSeen = Date.now();
    const s = g.status!;
    // Detected within the deadline plus a few seconds of the last progress.
    const deadline = Date.parse(s.rollout!.lastProgressAt) + TIMING.progressDeadlineSeconds * 1000;
    assert.ok(stalledSeen - deadline < 5_000, `detected ${stalledSeen - deadline} ms after the deadline`);
    assert.equal(s.cause, 'ImagePullFailure');
    assert.deepEqual([s.desired, s.updated, s.ready], [3, 1, 2]);
    const gens = s.generations!;
    assert.equal(gens.length, 2);
    const newGen = gens.find((x) => x.hash === s.rollout!.toRevision.hash)!;
    const oldGen = gens.find((x) => x.hash !== s.rollout!.toRevision.hash)!;
    assert.deepEqual([oldGen.nodes, oldGen.ready], [2, 2]);
    assert.deepEqual([newGen.nodes, newGen.ready], [1, 0]);
    assert.deepEqual(newGen.images, ['registry.local/decoder:2-broken']);
    assert.equal(s.blockedNodeCount, 1);
    const blocked = s.blockedNodes![0]!;
    assert.ok(pools.stall.nodes.includes(blocked.node));
    assert.equal(blocked.reason, 'ImagePullBackOff');
    assert.match(s.message!, new RegExp(blocked.node));
    const cond = (t: string) => s.conditions!.find((c) => c.type === t)!;
    assert.deepEqual([cond('Stalled').status, cond('Stalled').reason], ['True', 'ImagePullFailure']);
    assert.deepEqual([cond('Progressing').status, cond('Progressing').reason], ['False', 'ProgressDeadlineExceeded']);

    // kstatus-style tooling works on it.
    await kubectl(['wait', '--for=condition=Stalled', 'rolloutguard/decoder', '--timeout=5s'], { ns: n });
    // Warning Events on the guard and on the DaemonSet.
    await waitFor(
      async () => {
        const onDs = await eventsFor(n, 'DaemonSet', 'decoder');
        const onGuard = await eventsFor(n, 'RolloutGuard', 'decoder');
        return [onDs, onGuard].every((evs) => evs.some((e) => e.reason === 'RolloutStalled' && e.type === 'Warning'));
      },
      { timeoutMs: 15_000, describe: 'RolloutStalled on guard and DaemonSet' },
    );
    const stalled = (await eventsFor(n, 'RolloutGuard', 'decoder')).filter((e) => e.reason === 'RolloutStalled');
    assert.equal(stalled.length, 1, 'one RolloutStalled event, not one per pass');
    // What a user reads.
    const { stdout: table } = await kubectl(['get', 'rg', 'decoder'], { ns: n });
    assert.match(table, /TARGET\s+KIND\s+STATE\s+DESIRED\s+UPDATED\s+READY\s+CAUSE\s+FAULT\s+AGE/);
    assert.match(table, /decoder\s+decoder\s+DaemonSet\s+Stalled\s+3\s+1\s+2\s+ImagePullFailure\s+Revision/);
    const { stdout: desc } = await kubectl(['describe', 'rg', 'decoder'], { ns: n });
    assert.match(desc, /State:\s+Stalled/);
    assert.match(desc, new RegExp(`Node:\\s+${blocked.node}`));
    assert.match(desc, /RolloutStalled/);
    const { stdout: dsDesc } = await kubectl(['describe', 'ds', 'decoder'], { ns: n });
    assert.match(dsDesc, /RolloutStalled/);
  });

  it('a crash-looping image stalls with cause CrashLoop', async () => {
    const n = ns.crash;
    await rollOut(n, pools.crash, 'registry.local/decoder:1');
    await apply(guard('decoder', n, 'decoder', TIMING));
    await waitState(n, 'Healthy');
    await setImage(n, 'registry.local/decoder:2-crashloop');
    const g = await waitState(n, 'Stalled', 40_000);
    assert.equal(g.status?.cause, 'CrashLoop');
    assert.equal(g.status?.blockedNodes?.[0]?.reason, 'CrashLoopBackOff');
  });

  it('a revision needing more CPU than the node has stalls with InsufficientResources', async () => {
    const n = ns.cpu;
    await rollOut(n, pools.cpu, 'registry.local/decoder:1', { cpuRequest: '500m' });
    await apply(guard('decoder', n, 'decoder', TIMING));
    await waitState(n, 'Healthy');
    await kubectl(['set', 'resources', 'ds/decoder', '-c', 'decoder', '--requests=cpu=3'], { ns: n });
    const g = await waitState(n, 'Stalled', 40_000);
    assert.equal(g.status?.cause, 'InsufficientResources');
    const b = g.status?.blockedNodes?.[0];
    assert.equal(b?.reason, 'Unschedulable');
    assert.match(b?.message ?? '', /Insufficient cpu/);
  });

  it('DESIRED shrinking by an untolerated NoExecute taint is named, with the node and the taint', async () => {
    const n = ns.taint;
    const pool = pools.taint;
    await rollOut(n, pool, 'registry.local/decoder:1');
    await apply(guard('decoder', n, 'decoder', TIMING));
    await waitState(n, 'Healthy');
    const victim = pool.nodes[2]!;
    await kubectl(['taint', 'node', victim, 'gpu=maintenance:NoExecute']);
    await waitFor(async () => (await getGuard(n)).status?.desired === 2, { timeoutMs: 30_000, describe: 'desired 2' });
    await waitFor(
      async () => {
        const evs = await eventsFor(n, 'DaemonSet', 'decoder');
        return evs.some(
          (e) =>
            e.reason === 'DesiredShrank' &&
            e.type === 'Warning' &&
            (e.message ?? '').includes(victim) &&
            (e.message ?? '').includes('gpu=maintenance:NoExecute'),
        );
      },
      { timeoutMs: 20_000, describe: 'DesiredShrank event naming the node and taint' },
    );

    // The same shrink caused by a new revision that drops a toleration is a stalled rollout.
    await kubectl(['taint', 'node', victim, 'gpu=maintenance:NoExecute-']);
    await kubectl(['taint', 'node', victim, 'dedicated=gpu:NoExecute']);
    await apply(
      decoderDaemonSet({
        name: 'decoder',
        ns: n,
        pool: pool.name,
        image: 'registry.local/decoder:1',
        tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }],
      }),
    );
    // One read per check, and on the tolerating revision: between the two taint commands the node has
    // no taint, and revision 1 is briefly on 3 nodes and Healthy too.
    await waitFor(
      async () => {
        const s = (await getGuard(n)).status;
        return s?.desired === 3 && s.state === 'Healthy' && s.currentRevision?.revision === 2;
      },
      { timeoutMs: 60_000, describe: 'back to 3 on revision 2, with the toleration' },
    );
    await apply(decoderDaemonSet({ name: 'decoder', ns: n, pool: pool.name, image: 'registry.local/decoder:2' }));
    const g = await waitState(n, 'Stalled', 40_000);
    assert.equal(g.status?.cause, 'TargetShrank');
    assert.equal(g.status?.rollout?.desiredAtStart, 3);
    assert.equal(g.status?.desired, 2);
    // The node did not change since the rollout started: the new template stopped tolerating it.
    assert.deepEqual(g.status?.rollout?.leftNodes, [
      { node: victim, reason: 'untolerated taint dedicated=gpu:NoExecute', nodeChanged: false },
    ]);
    assert.equal(g.status?.owner, 'Revision');
    assert.match(g.status?.message ?? '', new RegExp(`DESIRED dropped from 3 to 2: ${victim}`));
  });

  it('a nodeSelector that matches nothing gives DESIRED 0 and NoNodesMatched', async () => {
    const n = ns.selector;
    await rollOut(n, pools.selector, 'registry.local/decoder:1');
    await apply(guard('decoder', n, 'decoder', TIMING));
    await waitState(n, 'Healthy');
    await apply(
      decoderDaemonSet({
        name: 'decoder',
        ns: n,
        pool: pools.selector.name,
        image: 'registry.local/decoder:1',
        nodeSelector: { accelerator: 'none-such' },
      }),
    );
    const g = await waitState(n, 'Stalled', 40_000);
    assert.equal(g.status?.cause, 'NoNodesMatched');
    assert.equal(g.status?.desired, 0);
    await waitFor(async () => (await eventsFor(n, 'DaemonSet', 'decoder')).some((e) => e.reason === 'NoNodesMatched'), {
      timeoutMs: 15_000,
      describe: 'NoNodesMatched event',
    });
  });

  it('a missing target is a condition; deleting and recreating the DaemonSet starts over', async () => {
    const n = ns.missing;
    await apply(guard('decoder', n, 'decoder', TIMING));
    let g = await waitState(n, 'Unknown');
    const ready = g.status?.conditions?.find((c) => c.type === 'Ready');
    assert.deepEqual([ready?.status, ready?.reason], ['False', 'TargetNotFound']);
    await rollOut(n, pools.missing, 'registry.local/decoder:1');
    g = await waitState(n, 'Healthy');
    await kubectl(['delete', 'ds', 'decoder', '--wait=true'], { ns: n });
    g = await waitState(n, 'Unknown');
    assert.equal(g.status?.desired, 0);
    await rollOut(n, pools.missing, 'registry.local/decoder:1');
    await waitState(n, 'Healthy');
    const evs = await eventsFor(n, 'RolloutGuard', 'decoder');
    assert.equal(evs.filter((e) => e.reason === 'TargetNotFound').length, 2, 'one TargetNotFound per disappearance');
    assert.ok(evs.some((e) => e.reason === 'TargetFound'));
    assert.ok(op.pid !== undefined, 'the operator is still running');
  });
});
