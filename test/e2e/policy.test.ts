/**
 * End to end: RolloutGuardPolicy against the real control plane. A cluster-scoped policy keeps one
 * generated guard next to each DaemonSet (and, once targetKinds lists them, StatefulSet) it selects, follows label changes without restarts, leaves
 * hand-written guards alone, resolves overlaps deterministically, and is cleaned up by the garbage
 * collector when deleted.
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
import { settledSts, storeStatefulSet } from '../support/statefulSets.js';

interface GuardList {
  items: Array<{
    metadata: { name: string; namespace: string; labels?: Record<string, string> };
    spec: { targetRef: { kind: string; name: string }; progressDeadlineSeconds: number };
    status?: { state?: string; cause?: string };
  }>;
}
interface PolicyObj {
  status?: {
    matched?: number;
    matchedByKind?: Array<{ kind: string; matched: number }>;
    matchedDaemonSets?: number;
    matchedStatefulSets?: number;
    guards?: number;
    conflictCount?: number;
    conflicts?: Array<{ namespace: string; kind: string; name: string; daemonSet: string; reason: string; winner: string }>;
  };
}

describe('RolloutGuardPolicy end to end', () => {
  const cleanups: Array<() => Promise<void>> = [];
  let op: OperatorProcess;
  let pool: NodePool;
  let gpuA: string;
  let gpuB: string;
  let web: string;
  const policy = uniqueName('gpu-agents');
  const overlap = `zz-${uniqueName('overlap')}`;

  const ds = (ns: string, name: string, tier: string, extra: Record<string, unknown> = {}): Record<string, unknown> => {
    const m = decoderDaemonSet({ name, ns, pool: pool.name, image: 'registry.local/agent:1' }) as { metadata: Record<string, unknown> };
    m.metadata = { ...m.metadata, labels: { app: name, tier }, ...extra };
    return m;
  };
  const guardsIn = async (ns: string): Promise<GuardList['items']> =>
    (await kubectlJson<GuardList>(['get', 'rolloutguards'], { ns })).items;
  const targets = async (ns: string, policyName = policy): Promise<string[]> =>
    (await guardsIn(ns))
      .filter((g) => g.metadata.labels?.['rolloutguard.dev/policy'] === policyName)
      .map((g) => g.spec.targetRef.name)
      .sort();
  const policyStatus = async (name: string): Promise<PolicyObj['status']> =>
    (await kubectlJson<PolicyObj>(['get', 'rolloutguardpolicy', name])).status;

  before(async () => {
    await ensureCluster();
    await installCrds();
    pool = await createNodePool(uniqueName('pol'), 2);
    cleanups.push(pool.cleanup);
    for (const [prefix, team] of [
      ['pol-a', 'gpu'],
      ['pol-b', 'gpu'],
      ['pol-web', 'web'],
    ] as const) {
      const n = await createNamespace(prefix);
      cleanups.push(n.cleanup);
      await kubectl(['label', 'namespace', n.name, `team=${team}`]);
      if (prefix === 'pol-a') gpuA = n.name;
      else if (prefix === 'pol-b') gpuB = n.name;
      else web = n.name;
    }
    await apply(ds(gpuA, 'agent', 'node-agent'));
    await apply(ds(gpuA, 'app', 'app'));
    await apply(ds(gpuA, 'handwritten', 'node-agent'));
    await apply(ds(gpuB, 'agent2', 'node-agent'));
    await apply(ds(gpuB, 'ignored', 'node-agent', { annotations: { 'rolloutguard.dev/ignore': 'true' } }));
    await apply(ds(web, 'agent', 'node-agent'));
    await apply(guard('mine', gpuA, 'handwritten', { progressDeadlineSeconds: 900, suspectAfterSeconds: 60 }));
    op = await OperatorProcess.start({ namespaces: [gpuA, gpuB, web], policies: true });
  });

  after(async () => {
    if (op) await op.stop();
    await kubectl(['delete', 'rolloutguardpolicy', policy, overlap, '--ignore-not-found']).catch(() => undefined);
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it('guards exactly the selected DaemonSets; hand-written guards win and are left alone', async () => {
    await apply({
      apiVersion: 'rolloutguard.dev/v1alpha1',
      kind: 'RolloutGuardPolicy',
      metadata: { name: policy },
      spec: {
        namespaceSelector: { matchLabels: { team: 'gpu' } },
        selector: { matchLabels: { tier: 'node-agent' } },
        guard: { suspectAfterSeconds: 2, progressDeadlineSeconds: 5 },
      },
    });
    await waitFor(async () => (await targets(gpuA)).join() === 'agent' && (await targets(gpuB)).join() === 'agent2', {
      timeoutMs: 30_000,
      describe: 'generated guards',
    });
    assert.deepEqual(await targets(web), [], 'team=web is not selected');
    const hand = (await guardsIn(gpuA)).find((g) => g.metadata.name === 'mine')!;
    assert.equal(hand.spec.progressDeadlineSeconds, 900, 'the hand-written guard is untouched');
    const gen = (await guardsIn(gpuA)).find((g) => g.spec.targetRef.name === 'agent')!;
    assert.equal(gen.spec.progressDeadlineSeconds, 5);
    assert.ok(gen.metadata.name.length <= 63);
    const st = await waitFor(
      async () => {
        const s = await policyStatus(policy);
        return s?.guards === 2 ? s : undefined;
      },
      { timeoutMs: 20_000, describe: 'policy status' },
    );
    assert.equal(st.matchedDaemonSets, 3, 'agent, handwritten, agent2 (ignored is excluded)');
    assert.deepEqual(
      st.conflicts?.map((c) => [c.kind, c.name, c.daemonSet, c.reason]),
      [['DaemonSet', 'handwritten', 'handwritten', 'HandWrittenGuard']],
    );
    assert.deepEqual(st.matchedByKind, [{ kind: 'DaemonSet', matched: 3 }]);
    assert.equal(st.matched, 3);
    assert.equal(st.matchedStatefulSets, undefined, 'a policy choosing DaemonSets alone counts no StatefulSet');
    const { stdout } = await kubectl(['get', 'rgp', policy]);
    assert.match(stdout, /MATCHED\s+GUARDS\s+CONFLICTS\s+AGE/);
    assert.match(stdout, new RegExp(`${policy}\\s+3\\s+2\\s+1\\s`));
  });

  it('follows new DaemonSets, relabelled DaemonSets and relabelled namespaces without restarts', async () => {
    await apply(ds(gpuA, 'agent3', 'node-agent'));
    await waitFor(async () => (await targets(gpuA)).join() === 'agent,agent3', { timeoutMs: 30_000, describe: 'new DaemonSet guarded' });
    await kubectl(['label', 'ds', 'agent3', 'tier=app', '--overwrite'], { ns: gpuA });
    await waitFor(async () => (await targets(gpuA)).join() === 'agent', {
      timeoutMs: 30_000,
      describe: 'relabelled DaemonSet loses its guard',
    });
    await kubectl(['label', 'namespace', web, 'team=gpu', '--overwrite']);
    await waitFor(async () => (await targets(web)).join() === 'agent', {
      timeoutMs: 30_000,
      describe: 'relabelled namespace gains guards',
    });
    await kubectl(['label', 'namespace', web, 'team=web', '--overwrite']);
    await waitFor(async () => (await targets(web)).length === 0, { timeoutMs: 30_000, describe: 'and loses them again' });
  });

  it('a generated guard detects a stall exactly like a hand-written one', async () => {
    await kubectl(['set', 'image', 'ds/agent2', 'decoder=registry.local/agent:2-broken'], { ns: gpuB });
    const g = await waitFor(
      async () => (await guardsIn(gpuB)).find((x) => x.spec.targetRef.name === 'agent2' && x.status?.state === 'Stalled'),
      { timeoutMs: 40_000, describe: 'generated guard Stalled' },
    );
    assert.equal(g.status?.cause, 'ImagePullFailure');
  });

  it('two overlapping policies resolve deterministically and both report it', async () => {
    await apply({
      apiVersion: 'rolloutguard.dev/v1alpha1',
      kind: 'RolloutGuardPolicy',
      metadata: { name: overlap },
      spec: { selector: { matchLabels: { tier: 'node-agent' } } },
    });
    // The lexicographically smaller name wins every DaemonSet both select; the other takes the rest.
    await waitFor(async () => (await targets(web, overlap)).join() === 'agent', {
      timeoutMs: 30_000,
      describe: 'overlap policy guards team=web',
    });
    const mine = await waitFor(
      async () => {
        const s = await policyStatus(policy);
        return s?.conflicts?.some((c) => c.reason === 'OverlappingPolicy') ? s : undefined;
      },
      { timeoutMs: 20_000, describe: 'winner reports overlap' },
    );
    const theirs = await waitFor(
      async () => {
        const s = await policyStatus(overlap);
        return s?.conflicts?.some((c) => c.reason === 'OverlappingPolicy') ? s : undefined;
      },
      { timeoutMs: 20_000, describe: 'loser reports overlap' },
    );
    assert.ok(mine.conflicts!.filter((c) => c.reason === 'OverlappingPolicy').every((c) => c.winner === `rolloutguardpolicy/${policy}`));
    assert.ok(theirs.conflicts!.filter((c) => c.reason === 'OverlappingPolicy').every((c) => c.winner === `rolloutguardpolicy/${policy}`));
    assert.deepEqual(await targets(gpuA, overlap), [], 'no second guard for a DaemonSet the winner guards');
    assert.deepEqual(await targets(gpuA), ['agent']);
  });

  it('chooses StatefulSets only once targetKinds lists them, and forgets them when it stops', async () => {
    const sts = storeStatefulSet({ ns: gpuA, pool: pool.name, replicas: 2 });
    sts.metadata.labels = { tier: 'node-agent' };
    await apply(sts, gpuA);
    await settledSts(gpuA, 2);
    // A DaemonSet created after it: once its guard exists, the policy has planned with the StatefulSet there.
    await apply(ds(gpuA, 'agent5', 'node-agent'));
    await waitFor(async () => (await targets(gpuA)).includes('agent5'), { timeoutMs: 30_000, describe: 'agent5 guarded' });
    const kinds = async (): Promise<string[]> =>
      (await guardsIn(gpuA))
        .filter((g) => g.metadata.labels?.['rolloutguard.dev/policy'] === policy)
        .map((g) => `${g.spec.targetRef.kind}/${g.spec.targetRef.name}:${g.metadata.name}`)
        .sort();
    assert.deepEqual(
      await kinds(),
      [`DaemonSet/agent5:${policy}-agent5`, `DaemonSet/agent:${policy}-agent`],
      'DaemonSets alone by default',
    );

    await kubectl(['patch', 'rgp', policy, '--type=merge', '-p', '{"spec":{"targetKinds":["DaemonSet","StatefulSet"]}}']);
    await waitFor(async () => (await kinds()).includes(`StatefulSet/store:${policy}-store-sts`), {
      timeoutMs: 30_000,
      describe: 'a guard for the StatefulSet',
    });
    const st = await waitFor(
      async () => {
        const s = await policyStatus(policy);
        return s?.matchedStatefulSets === 1 ? s : undefined;
      },
      { timeoutMs: 20_000, describe: 'matchedStatefulSets 1' },
    );
    assert.equal(st.matched, (st.matchedDaemonSets ?? 0) + 1);
    assert.deepEqual(st.matchedByKind, [
      { kind: 'DaemonSet', matched: st.matchedDaemonSets },
      { kind: 'StatefulSet', matched: 1 },
    ]);
    const gen = await waitFor(
      async () => (await guardsIn(gpuA)).find((g) => g.metadata.name === `${policy}-store-sts` && g.status?.state === 'Healthy'),
      { timeoutMs: 40_000, describe: "the StatefulSet's guard Healthy" },
    );
    assert.equal(gen.spec.progressDeadlineSeconds, 5, "the policy's settings");
    const { stdout } = await kubectl(['get', 'rgp', policy, '-o', 'wide']);
    assert.match(stdout, /KINDS\s+MATCHED/);
    assert.match(stdout, /\["DaemonSet","StatefulSet"\]/);

    await kubectl(['patch', 'rgp', policy, '--type=json', '-p', '[{"op":"remove","path":"/spec/targetKinds"}]']);
    await waitFor(async () => !(await kinds()).some((k) => k.startsWith('StatefulSet/')), {
      timeoutMs: 30_000,
      describe: "the StatefulSet's guard deleted",
    });
    await kubectl(['delete', 'sts', 'store', '--wait=true'], { ns: gpuA });
  });

  it('deleting a policy removes only its guards', async () => {
    await kubectl(['delete', 'rolloutguardpolicy', overlap, '--wait=true']);
    await kubectl(['delete', 'rolloutguardpolicy', policy, '--wait=true']);
    await waitFor(
      async () => (await targets(gpuA)).length === 0 && (await targets(gpuB)).length === 0 && (await targets(web, overlap)).length === 0,
      {
        timeoutMs: 60_000,
        describe: 'generated guards garbage-collected',
      },
    );
    assert.deepEqual(
      (await guardsIn(gpuA)).map((g) => g.metadata.name),
      ['mine'],
      'the hand-written guard remains',
    );
  });
});
