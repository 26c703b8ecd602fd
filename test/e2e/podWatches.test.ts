/**
 * End to end: daemon pods are cached only for DaemonSets that need them (runtime/podWatches.ts). Against
 * the real control plane, with the operator's own /metrics as the witness: a settled DaemonSet has no pod
 * watch; one that rolls gets one, named after it, holding its pods; the watch and its pods go once the
 * rollout is done and baked; a stall is still explained per node; a restart mid-stall watches again and
 * resumes from status.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createNamespace,
  createNodePool,
  decoderDaemonSet,
  ensureCluster,
  kubectl,
  waitFor,
  uniqueName,
  type NodePool,
} from '../support/cluster.js';
import { GuardReader, type GuardObj } from '../support/guards.js';
import { OperatorProcess, apply, guard, installCrds } from '../support/operator.js';

describe('pods are watched only where they are needed', () => {
  const cleanups: Array<() => Promise<void>> = [];
  let op: OperatorProcess | undefined;
  let ns: string;
  let pool: NodePool;

  before(async () => {
    await ensureCluster();
    await installCrds();
    const n = await createNamespace('podwatch');
    ns = n.name;
    pool = await createNodePool(uniqueName('podwatch'), 3);
    cleanups.push(n.cleanup, pool.cleanup);
  });

  after(async () => {
    await op?.kill();
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  const read = new GuardReader(undefined, () => op?.logs ?? []);
  const getGuard = (name: string): Promise<GuardObj> => read.guard(ns, name);
  const waitState = (name: string, state: string, timeoutMs = 60_000): Promise<GuardObj> =>
    read.waitGuard(ns, (g) => g.status?.state === state, `${name} ${state}`, timeoutMs, name);
  /** Pod watches of this test's namespace, by DaemonSet, with the objects each holds. */
  const podWatches = async (): Promise<Map<string, number>> => {
    const body = (await op!.get('/metrics')).body;
    const out = new Map<string, number>();
    const re = new RegExp(`^rollout_guard_informer_objects\\{resource="pods",namespace="${ns}",daemonset="([^"]+)"\\} (\\d+)$`, 'gm');
    for (const m of body.matchAll(re)) out.set(m[1]!, Number(m[2]));
    return out;
  };
  /** Collections the idle collector has run. */
  const idleCollections = async (): Promise<number> => {
    const m = /^rollout_guard_idle_collection_seconds_count (\d+)$/m.exec((await op!.get('/metrics')).body);
    return Number(m?.[1] ?? 0);
  };
  const podLists = async (): Promise<number> => {
    const body = (await op!.get('/metrics')).body;
    return [...body.matchAll(/^rollout_guard_api_requests_total\{verb="GET",resource="pods",code="200"\} (\d+)$/gm)].reduce(
      (a, m) => a + Number(m[1]),
      0,
    );
  };

  it('settled: no pod watch; rolling: one for that DaemonSet only; done: released; stalled: explained per node, and after a restart too', async () => {
    for (const name of ['agent-a', 'agent-b'])
      await apply(decoderDaemonSet({ name, ns, pool: pool.name, image: 'registry.local/agent:1' }));
    for (const name of ['agent-a', 'agent-b']) await kubectl(['rollout', 'status', `ds/${name}`, '--timeout=90s'], { ns });
    op = await OperatorProcess.start({ namespaces: [ns], extraArgs: ['--pod-cache-linger-ms=1000', '--idle-collect-after-ms=1000'] });
    for (const name of ['agent-a', 'agent-b'])
      await apply(guard(name, ns, name, { suspectAfterSeconds: 4, progressDeadlineSeconds: 15, bakeSeconds: 3 }));
    const healthy = await waitState('agent-a', 'Healthy');
    await waitState('agent-b', 'Healthy');
    assert.deepEqual(
      healthy.status?.generations?.map((g) => g.nodes),
      [3],
      'the generation map of a settled DaemonSet comes from its counters',
    );
    assert.deepEqual([...(await podWatches()).keys()], [], 'no pod of a settled DaemonSet is cached');
    assert.equal(await podLists(), 0, 'and none was ever listed');

    // A healthy rollout of agent-a: its pods, and only its, are watched while it rolls and bakes.
    const collectionsBefore = await idleCollections();
    await kubectl(['set', 'image', 'ds/agent-a', 'decoder=registry.local/agent:2'], { ns });
    const during = await waitFor(
      async () => {
        const w = await podWatches();
        return (w.get('agent-a') ?? 0) >= 3 ? w : undefined;
      },
      { timeoutMs: 30_000, describe: 'a pod watch for agent-a holding its pods' },
    );
    assert.equal(during.has('agent-b'), false, 'agent-b is not rolling: its pods are not cached');
    assert.ok((await podLists()) >= 1, 'the pods of agent-a were listed once it began to roll');
    // The rollout of the new revision: a guard whose first look tracked the v1 rollout to its end still
    // shows that one Healthy and completed until its next write.
    const v1 = healthy.status?.currentRevision?.hash;
    const done = await read.waitGuard(
      ns,
      (g) => g.status?.state === 'Healthy' && g.status.rollout?.completedAt !== undefined && g.status.rollout.toRevision?.hash !== v1,
      'agent-a rolled out and baked',
      60_000,
      'agent-a',
    );
    assert.deepEqual(
      done.status?.generations?.map((g) => [g.images, g.nodes]),
      [[['registry.local/agent:2'], 3]],
    );
    await waitFor(async () => ((await podWatches()).size === 0 ? true : undefined), {
      timeoutMs: 20_000,
      describe: 'the pod watch of agent-a released after the bake and the linger',
    });
    const after = await getGuard('agent-a');
    assert.deepEqual(after.status?.generations, done.status?.generations, 'dropping the pods changed nothing in status');
    // Idle again: after a quiet spell the idle collector (the process runs with --expose-gc, as the
    // image does) runs one collection.
    await waitFor(async () => ((await idleCollections()) > collectionsBefore ? true : undefined), {
      timeoutMs: 20_000,
      describe: 'one idle collection after the rollout',
    });

    // A broken rollout of agent-b: the blocked node is named from its pod.
    await kubectl(['set', 'image', 'ds/agent-b', 'decoder=registry.local/agent:2-broken'], { ns });
    const stalled = await waitState('agent-b', 'Stalled', 60_000);
    assert.equal(stalled.status?.blockedNodes?.[0]?.reason, 'ImagePullBackOff');
    assert.deepEqual([...(await podWatches()).keys()], ['agent-b']);

    // A restart mid-stall: the new process watches agent-b's pods again and keeps the verdict.
    await op.kill();
    op = await OperatorProcess.start({ namespaces: [ns], extraArgs: ['--pod-cache-linger-ms=1000'] });
    await waitFor(async () => ((await podWatches()).get('agent-b') ? true : undefined), {
      timeoutMs: 20_000,
      describe: 'agent-b watched again after the restart',
    });
    const again = await getGuard('agent-b');
    assert.equal(again.status?.state, 'Stalled');
    assert.equal(again.status?.rollout?.lastProgressAt, stalled.status?.rollout?.lastProgressAt, 'resumed from status, clock not reset');
    assert.equal((await podWatches()).has('agent-a'), false);
  });
});
