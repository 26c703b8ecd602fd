/**
 * End to end: a RolloutGuard with spec.selector against the real control plane. It keeps one generated
 * guard per DaemonSet (and, with targetKinds, StatefulSet) of its namespace that matches, owned by it;
 * follows relabelling; lists one record per workload with that guard's verdict; and its guards are garbage-collected with it. Without the
 * guard writes (policies off) it says so in its Ready condition.
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
import { OperatorProcess, apply, installCrds } from '../support/operator.js';
import { setStoreImage, settledSts, storeStatefulSet } from '../support/statefulSets.js';

const API = 'rolloutguard.dev/v1alpha1';

interface GuardObj {
  metadata: {
    name: string;
    uid: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{ kind: string; name: string; uid: string; controller?: boolean }>;
  };
  spec: { targetRef?: { kind: string; name: string }; progressDeadlineSeconds: number };
  status?: {
    state?: string;
    desired?: number;
    message?: string;
    workloads?: Array<{ kind: string; name: string; guard: string; state: string; cause?: string; owner?: string }>;
    daemonSets?: Array<{ daemonSet: string; guard: string; state: string; cause?: string; owner?: string }>;
    statefulSets?: Array<{ statefulSet: string; guard: string; state: string; cause?: string; owner?: string }>;
    conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
  };
}

describe('RolloutGuard spec.selector end to end', () => {
  const cleanups: Array<() => Promise<void>> = [];
  let op: OperatorProcess | undefined;
  let pool: NodePool;
  let ns: string;
  const parent = uniqueName('agents');

  const ds = (name: string, tier: string): Record<string, unknown> => {
    const m = decoderDaemonSet({ name, ns, pool: pool.name, image: 'registry.local/agent:1' }) as { metadata: Record<string, unknown> };
    m.metadata = { ...m.metadata, labels: { app: name, tier } };
    return m;
  };
  const selectorGuard = (name: string): Record<string, unknown> => ({
    apiVersion: API,
    kind: 'RolloutGuard',
    metadata: { name },
    spec: { selector: { matchLabels: { tier: 'sel-agent' } }, suspectAfterSeconds: 2, progressDeadlineSeconds: 5, bakeSeconds: 0 },
  });
  const guards = async (): Promise<GuardObj[]> => (await kubectlJson<{ items: GuardObj[] }>(['get', 'rolloutguards'], { ns })).items;
  const generated = async (of = parent): Promise<GuardObj[]> =>
    (await guards()).filter((g) => g.metadata.labels?.['rolloutguard.dev/selector-guard'] === of);
  const targets = async (): Promise<string> =>
    (await generated())
      .map((g) => g.spec.targetRef?.name ?? '')
      .sort()
      .join();
  const parentObj = (name = parent): Promise<GuardObj> => kubectlJson<GuardObj>(['get', 'rolloutguard', name], { ns });

  // A label no other suite's policy selects: policies run in this operator too (the guard writes come with them).
  before(async () => {
    await ensureCluster();
    await installCrds();
    pool = await createNodePool(uniqueName('sel'), 2);
    cleanups.push(pool.cleanup);
    const n = await createNamespace('sel');
    cleanups.push(n.cleanup);
    ns = n.name;
    await apply(ds('agent-a', 'sel-agent'), ns);
    await apply(ds('agent-b', 'sel-agent'), ns);
    await apply(ds('app', 'app'), ns);
    op = await OperatorProcess.start({ namespaces: [ns], policies: true });
  });

  after(async () => {
    if (op) await op.stop();
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it('selects 2 of 3 DaemonSets: 2 generated guards owned by it, and 2 records in its status', async () => {
    await apply(selectorGuard(parent), ns);
    await waitFor(async () => (await targets()) === 'agent-a,agent-b', { timeoutMs: 30_000, describe: 'generated guards' });
    const p = await parentObj();
    for (const g of await generated()) {
      assert.deepEqual(
        g.metadata.ownerReferences?.map((o) => [o.kind, o.name, o.uid, o.controller]),
        [['RolloutGuard', parent, p.metadata.uid, true]],
      );
      assert.equal(g.metadata.annotations?.['rolloutguard.dev/generated-by'], `rolloutguard/${parent}`);
      assert.equal(g.metadata.name, `${parent}-${g.spec.targetRef?.name}`);
      assert.equal(g.spec.progressDeadlineSeconds, 5, "the selector guard's settings are copied");
    }
    const st = await waitFor(
      async () => {
        const s = (await parentObj()).status;
        return s?.daemonSets?.length === 2 && s.daemonSets.every((d) => d.state === 'Healthy') ? s : undefined;
      },
      { timeoutMs: 40_000, describe: 'parent status with 2 Healthy records' },
    );
    assert.deepEqual(
      st.daemonSets?.map((d) => [d.daemonSet, d.guard]),
      [
        ['agent-a', `${parent}-agent-a`],
        ['agent-b', `${parent}-agent-b`],
      ],
    );
    // The list of every kind holds the same records, by kind and name.
    assert.deepEqual(
      st.workloads?.map((w) => [w.kind, w.name, w.guard, w.state]),
      [
        ['DaemonSet', 'agent-a', `${parent}-agent-a`, 'Healthy'],
        ['DaemonSet', 'agent-b', `${parent}-agent-b`, 'Healthy'],
      ],
    );
    assert.equal(st.desired, 2);
    assert.equal(st.state, 'Healthy');
    assert.equal(st.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  });

  it('a DaemonSet relabelled away loses its generated guard', async () => {
    await kubectl(['label', 'ds', 'agent-b', 'tier=app', '--overwrite'], { ns });
    await waitFor(async () => (await targets()) === 'agent-a', { timeoutMs: 30_000, describe: 'generated guard deleted' });
    await waitFor(async () => (await parentObj()).status?.daemonSets?.length === 1, { timeoutMs: 20_000, describe: 'one record left' });
  });

  it("a broken image on a selected DaemonSet: the parent's record shows Stalled with its cause", async () => {
    await kubectl(['set', 'image', 'ds/agent-a', 'decoder=registry.local/agent:2-broken'], { ns });
    const st = await waitFor(
      async () => {
        const s = (await parentObj()).status;
        return s?.daemonSets?.find((d) => d.daemonSet === 'agent-a')?.state === 'Stalled' ? s : undefined;
      },
      { timeoutMs: 60_000, describe: 'parent record Stalled' },
    );
    const rec = st.daemonSets?.find((d) => d.daemonSet === 'agent-a');
    assert.equal(rec?.cause, 'ImagePullFailure');
    assert.equal(st.state, 'Stalled', 'the worst record is the state of the selector guard');
    const { stdout } = await kubectl(['get', 'rolloutguard', parent], { ns });
    assert.match(stdout, new RegExp(`${parent}\\s+(<none>\\s+)?Stalled\\s+1\\s`));
  });

  it('targetKinds StatefulSet: a selected StatefulSet gets its own guard, listed in status.statefulSets, Stalled when broken', async () => {
    // The DaemonSet selector guard above never chooses it: it left targetKinds at its default.
    const sts = storeStatefulSet({ ns, pool: pool.name, replicas: 2 });
    sts.metadata.labels = { tier: 'sel-db' };
    await apply(sts, ns);
    await settledSts(ns, 2);
    const dbs = `${parent}-db`;
    const guard = selectorGuard(dbs) as { spec: Record<string, unknown> };
    guard.spec = { ...guard.spec, selector: { matchLabels: { tier: 'sel-db' } }, targetKinds: ['StatefulSet'] };
    await apply(guard, ns);
    const [child] = await waitFor(async () => ((await generated(dbs)).length === 1 ? generated(dbs) : undefined), {
      timeoutMs: 30_000,
      describe: 'a generated guard for the StatefulSet',
    });
    assert.equal(child?.metadata.name, `${dbs}-store-sts`);
    assert.deepEqual(child?.spec.targetRef, { kind: 'StatefulSet', name: 'store' });
    assert.deepEqual(
      (await generated()).map((g) => g.spec.targetRef?.kind),
      ['DaemonSet'],
      "the DaemonSet selector guard's guards are unchanged",
    );
    await waitFor(async () => (await parentObj(dbs)).status?.statefulSets?.[0]?.state === 'Healthy', {
      timeoutMs: 40_000,
      describe: 'the StatefulSet record Healthy',
    });
    await setStoreImage(ns, 'registry.local/store:2-broken');
    const st = await waitFor(
      async () => {
        const s = (await parentObj(dbs)).status;
        return s?.statefulSets?.[0]?.state === 'Stalled' ? s : undefined;
      },
      { timeoutMs: 60_000, describe: 'the StatefulSet record Stalled' },
    );
    assert.deepEqual(st.statefulSets?.[0], {
      statefulSet: 'store',
      guard: `${dbs}-store-sts`,
      state: 'Stalled',
      cause: 'ImagePullFailure',
      owner: 'Revision',
    });
    assert.equal(st.daemonSets?.length ?? 0, 0);
    assert.match(st.message ?? '', /guards 1 of 1 selected StatefulSet\(s\); worst: StatefulSet store Stalled \(ImagePullFailure\)/);
    await kubectl(['delete', 'rolloutguard', dbs, '--wait=true'], { ns });
  });

  it('deleting the selector guard garbage-collects its generated guards', async () => {
    await kubectl(['delete', 'rolloutguard', parent, '--wait=true'], { ns });
    await waitFor(async () => (await generated()).length === 0, { timeoutMs: 60_000, describe: 'generated guards garbage-collected' });
  });

  it('without guard writes (policies off) the selector guard reports Ready=False SelectorNeedsGuardWrites', async () => {
    await op?.stop();
    op = await OperatorProcess.start({ namespaces: [ns], policies: false });
    const name = uniqueName('nowrites');
    await apply(selectorGuard(name), ns);
    const ready = await waitFor(
      async () => (await parentObj(name)).status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'False'),
      { timeoutMs: 30_000, describe: 'Ready=False' },
    );
    assert.equal(ready.reason, 'SelectorNeedsGuardWrites');
    assert.match(ready.message, /needs create, patch and delete on rolloutguards in namespace/);
    assert.match(ready.message, /policies\.enabled=true/);
    assert.deepEqual(await generated(name), [], 'no guard generated');
    await kubectl(['delete', 'rolloutguard', name, '--wait=true'], { ns });
  });
});
