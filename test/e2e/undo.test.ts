/**
 * End to end: onStall.action Undo against the real control plane. The guard restores the revision the
 * rollout started from, at most once per broken revision, never over a person's change, never when
 * opted out or suspended, and never twice across a crash.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
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
  type NodePool,
} from '../support/cluster.js';
import { OperatorProcess, apply, guard, installCrds } from '../support/operator.js';
import { CACHES_DISAGREE_MSG } from '../../src/reconcile/reconciler.js';

interface GuardObj {
  status?: {
    state?: string;
    cause?: string;
    message?: string;
    currentRevision?: { revision?: number; hash: string };
    generations?: Array<{ hash: string; nodes: number; ready: number }>;
    lastUndo?: { result: string; fromHash: string; toHash: string; toRevision?: number; message: string };
    undoPlan?: { toRevision?: number; toHash: string; nodes: number; dryRun?: string };
    repeatedRevision?: string;
    forcedRollback?: { forHash: string; evictions: unknown[] };
    conditions?: Array<{ type: string; status: string; reason: string }>;
  };
}
interface PodList {
  items: Array<{ metadata: { name: string; uid: string; labels: Record<string, string> }; spec: { nodeName?: string } }>;
}

const UNDO = { suspectAfterSeconds: 2, progressDeadlineSeconds: 5, onStall: { action: 'Undo' } };
const SCENARIOS = ['classic', 'surge', 'two', 'gitops', 'edit', 'optout', 'suspend', 'report'] as const;
type Scenario = (typeof SCENARIOS)[number];
const NODES: Partial<Record<Scenario, number>> = { two: 5 };

const ns = {} as Record<Scenario, string>;
const pools = {} as Record<Scenario, NodePool>;
const cleanups: Array<() => Promise<void>> = [];
let op: OperatorProcess;

const getGuard = (n: string): Promise<GuardObj> => kubectlJson<GuardObj>(['get', 'rolloutguard', 'decoder'], { ns: n });

async function waitGuard(n: string, pred: (g: GuardObj) => boolean, what: string, timeoutMs = 60_000): Promise<GuardObj> {
  let last: GuardObj | undefined;
  try {
    await waitFor(
      async () => {
        last = await getGuard(n);
        return pred(last);
      },
      { timeoutMs, describe: what },
    );
  } catch (e) {
    throw new Error(
      `${e instanceof Error ? e.message : String(e)}; last status: ${JSON.stringify(last?.status)}\n` +
        // This guard's own lines (the suite's eight guards share one operator), the last 60 of them.
        op.logs
          .filter((l) => l.includes(`"${n}/`))
          .slice(-60)
          .join('\n'),
    );
  }
  return last!;
}

async function reasons(n: string, kind: string): Promise<string[]> {
  const list = await kubectlJson<{ items: Array<{ reason: string }> }>(
    ['get', 'events', `--field-selector=involvedObject.kind=${kind},involvedObject.name=decoder`],
    { ns: n },
  );
  return list.items.map((e) => e.reason);
}

/** The messages of the Events about DaemonSet `n/decoder` with `reason`. */
async function dsEventMessages(n: string, reason: string): Promise<string[]> {
  const list = await kubectlJson<{ items: Array<{ reason: string; message?: string }> }>(
    ['get', 'events', `--field-selector=involvedObject.kind=DaemonSet,involvedObject.name=decoder,reason=${reason}`],
    { ns: n },
  );
  return list.items.map((e) => e.message ?? '');
}

async function pods(n: string): Promise<PodList['items']> {
  return (await kubectlJson<PodList>(['get', 'pods', '-l', 'app=decoder'], { ns: n })).items;
}

async function setup(
  s: Scenario,
  extra: Partial<Parameters<typeof decoderDaemonSet>[0]> = {},
  spec: Record<string, unknown> = UNDO,
): Promise<string> {
  const n = ns[s];
  await apply(decoderDaemonSet({ name: 'decoder', ns: n, pool: pools[s].name, image: 'registry.local/decoder:1', ...extra }));
  await kubectl(['rollout', 'status', 'ds/decoder', '--timeout=90s'], { ns: n });
  await apply(guard('decoder', n, 'decoder', spec));
  await waitGuard(n, (g) => g.status?.state === 'Healthy', 'Healthy');
  return n;
}

async function templateGeneration(n: string): Promise<string> {
  const ds = await kubectlJson<{ metadata: { annotations: Record<string, string> } }>(['get', 'ds', 'decoder'], { ns: n });
  return ds.metadata.annotations['deprecated.daemonset.template.generation'] ?? '';
}

describe('undo end to end', { concurrency: true }, () => {
  before(async () => {
    await ensureCluster();
    await installCrds();
    for (const s of SCENARIOS) {
      const n = await createNamespace(`undo-${s}`);
      ns[s] = n.name;
      cleanups.push(n.cleanup);
      const pool = await createNodePool(uniqueName(`u-${s}`), NODES[s] ?? 3);
      pools[s] = pool;
      cleanups.push(pool.cleanup);
    }
    op = await OperatorProcess.start({ namespaces: SCENARIOS.map((s) => ns[s]) });
  });

  after(async () => {
    const disagreements = op ? op.jsonLogs().filter((l) => l.msg === CACHES_DISAGREE_MSG) : [];
    if (op) await op.stop();
    // The wait for the two caches is one watch event long; a relist would mean the pairing misfired.
    assert.deepEqual(disagreements, [], 'the DaemonSet and revision caches always agreed within 10 s');
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it('the classic stall is undone: every node back on the original revision, one generation, no pod evicted', async () => {
    const n = await setup('classic');
    const before = await getGuard(n);
    const originalHash = before.status!.currentRevision!.hash;
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: n });
    // The pod of the broken revision, pulling forever: the one the undo leaves on the undone revision.
    const broken = await waitFor(
      async () => {
        const b = (await pods(n)).filter((p) => p.metadata.labels['controller-revision-hash'] !== originalHash);
        return b.length > 0 ? b.map((p) => p.metadata.name) : undefined;
      },
      { timeoutMs: 60_000, describe: 'a pod of the broken revision' },
    );
    const g = await waitGuard(n, (x) => x.status?.state === 'RolledBack', 'RolledBack', 90_000);
    assert.equal(g.status?.lastUndo?.result, 'Complete');
    assert.equal(g.status?.lastUndo?.toHash, originalHash);
    assert.equal(g.status?.currentRevision?.hash, originalHash);
    assert.equal(g.status?.generations?.length, 1);
    assert.equal(g.status?.conditions?.find((c) => c.type === 'RolledBack')?.status, 'True');
    assert.deepEqual(await daemonSetRow(n, 'decoder'), { desired: 3, current: 3, ready: 3, upToDate: 3, available: 3 });
    const hashes = new Set((await pods(n)).map((p) => p.metadata.labels['controller-revision-hash']));
    assert.deepEqual([...hashes], [originalHash]);
    // kubectl's history agrees: the restored revision is now the newest (revision 3), the broken one is 2.
    const { stdout: hist } = await kubectl(['rollout', 'history', 'ds/decoder'], { ns: n });
    assert.match(hist, /^2\s/m);
    assert.match(hist, /^3\s/m);
    assert.doesNotMatch(hist, /^1\s/m, 'revision 1 was renumbered to 3 by the undo, as kubectl rollout undo does');
    const evs = await reasons(n, 'DaemonSet');
    for (const r of ['RolloutStalled', 'UndoStarted', 'UndoComplete']) assert.ok(evs.includes(r), `${r} on the DaemonSet`);
    assert.equal(evs.filter((r) => r === 'UndoStarted').length, 1);
    // A DaemonSet's controller replaces the pods of an undone revision itself: the guard never evicts one
    // (the forced rollback is a StatefulSet's, under OrderedReady), and records nothing of one.
    assert.equal(g.status?.forcedRollback, undefined, JSON.stringify(g.status?.forcedRollback));
    for (const kind of ['DaemonSet', 'RolloutGuard']) {
      const said = await reasons(n, kind);
      assert.ok(!said.some((r) => r === 'PodEvicted' || r === 'EvictionRefused'), `${kind}: ${said.join(',')}`);
    }
    assert.deepEqual(
      op.logs.filter((l) => l.includes(`"${n}/`) && l.includes('forced rollback: eviction')),
      [],
      'no eviction asked of the API server',
    );
    // Each pod left on the undone revision was deleted by the DaemonSet controller, which says so.
    const deleted = await dsEventMessages(n, 'SuccessfulDelete');
    for (const name of broken)
      assert.ok(deleted.includes(`Deleted pod: ${name}`), `${name} deleted by its controller: ${deleted.join('; ')}`);
  });

  it('maxSurge 1: the surge pod is removed and the old pods were never interrupted', async () => {
    const n = await setup('surge', { maxSurge: 1, maxUnavailable: 0 });
    const oldUids = new Set((await pods(n)).map((p) => p.metadata.uid));
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: n });
    // During the stall the old pods stay: no node is empty.
    const stalled = await waitGuard(n, (x) => ['Stalled', 'RollingBack', 'RolledBack'].includes(x.status?.state ?? ''), 'Stalled', 60_000);
    assert.ok(stalled.status);
    await waitGuard(n, (x) => x.status?.state === 'RolledBack', 'RolledBack', 90_000);
    const after = await pods(n);
    assert.equal(after.length, 3, 'the surge pod is gone');
    assert.deepEqual(new Set(after.map((p) => p.metadata.uid)), oldUids, 'the same old pods ran throughout');
  });

  it('maxUnavailable 2 on 5 nodes: both blocked nodes recover', async () => {
    const n = await setup('two', { maxUnavailable: 2 });
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: n });
    const stalled = await waitGuard(
      n,
      (x) => x.status?.state === 'Stalled' || x.status?.state === 'RollingBack' || x.status?.state === 'RolledBack',
      'stalled',
      60_000,
    );
    assert.ok(stalled.status);
    await waitGuard(n, (x) => x.status?.state === 'RolledBack', 'RolledBack', 90_000);
    assert.deepEqual(await daemonSetRow(n, 'decoder'), { desired: 5, current: 5, ready: 5, upToDate: 5, available: 5 });
  });

  it('a broken template re-applied after the undo (GitOps) is reported, never undone twice', async () => {
    const n = await setup('gitops');
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: n });
    const first = await waitGuard(n, (x) => x.status?.state === 'RolledBack', 'RolledBack', 90_000);
    const brokenHash = first.status!.lastUndo!.fromHash;
    const genAfterUndo = await templateGeneration(n);
    // The GitOps tool puts the broken template back.
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: n });
    const g = await waitGuard(
      n,
      (x) => x.status?.state === 'Stalled' && x.status.repeatedRevision === brokenHash,
      'Stalled, repeated',
      60_000,
    );
    assert.match(g.status?.message ?? '', /already undone once/);
    await waitFor(async () => (await reasons(n, 'RolloutGuard')).includes('RepeatedBrokenRevision'), {
      timeoutMs: 15_000,
      describe: 'RepeatedBrokenRevision event',
    });
    // And it stays that way: no second undo.
    const genBroken = await templateGeneration(n);
    assert.equal(Number(genBroken), Number(genAfterUndo) + 1);
    await holdsFor(async () => (await templateGeneration(n)) === genBroken && (await getGuard(n)).status?.state === 'Stalled', {
      durationMs: 8_000,
      describe: 'no second undo',
    });
    assert.equal((await reasons(n, 'RolloutGuard')).filter((r) => r === 'UndoStarted').length, 1);
  });

  it('a template edit after the stall was detected cancels the scheduled undo (UndoSkipped)', async () => {
    const n = await setup('edit', {}, { ...UNDO, onStall: { action: 'Undo', delaySeconds: 600 } });
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: n });
    const g = await waitGuard(n, (x) => x.status?.state === 'Stalled', 'Stalled', 60_000);
    assert.match(g.status?.message ?? '', /Undo to revision 1 \(\w+\) in \d+m/);
    // A person fixes forward before the undo runs.
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:3'], { ns: n });
    const done = await waitGuard(n, (x) => x.status?.state === 'Healthy', 'Healthy on the fix', 60_000);
    assert.equal(done.status?.lastUndo, undefined, 'no undo was made');
    await waitFor(async () => (await reasons(n, 'DaemonSet')).includes('UndoSkipped'), {
      timeoutMs: 15_000,
      describe: 'UndoSkipped event',
    });
  });

  it('the opt-out annotation is honoured', async () => {
    const n = await setup('optout');
    await kubectl(['annotate', 'ds/decoder', 'rolloutguard.dev/undo=disabled'], { ns: n });
    const gen = await templateGeneration(n);
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: n });
    const g = await waitGuard(n, (x) => x.status?.state === 'Stalled', 'Stalled', 60_000);
    assert.match(g.status?.message ?? '', /rolloutguard\.dev\/undo=disabled/);
    await holdsFor(
      async () => (await getGuard(n)).status?.state === 'Stalled' && (await templateGeneration(n)) === String(Number(gen) + 1),
      { durationMs: 6_000, describe: 'no undo' },
    );
    await waitFor(async () => (await reasons(n, 'RolloutGuard')).includes('UndoSkipped'), {
      timeoutMs: 10_000,
      describe: 'UndoSkipped event',
    });
  });

  it('suspend: true observes and does nothing; resuming restarts the clock and the guard acts', async () => {
    const n = await setup('suspend');
    await kubectl(['patch', 'rolloutguard', 'decoder', '--type=merge', '-p', '{"spec":{"suspend":true}}'], { ns: n });
    const g0 = await waitGuard(n, (x) => x.status?.state === 'Suspended', 'Suspended');
    assert.equal(g0.status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'Suspended');
    const before = await templateGeneration(n);
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: n });
    await holdsFor(
      async () => (await getGuard(n)).status?.state === 'Suspended' && (await templateGeneration(n)) === String(Number(before) + 1),
      { durationMs: 9_000, describe: 'still suspended, no undo' },
    );
    await kubectl(['patch', 'rolloutguard', 'decoder', '--type=merge', '-p', '{"spec":{"suspend":false}}'], { ns: n });
    const resumed = Date.now();
    await waitGuard(n, (x) => x.status?.state === 'RolledBack', 'RolledBack after resuming', 90_000);
    assert.ok(Date.now() - resumed >= 5_000, 'the deadline counted from the resume, not from before the suspension');
  });

  it('Report mode says what an undo would do, validated by a server-side dry run, and changes nothing', async () => {
    const n = await setup('report', {}, { suspectAfterSeconds: 2, progressDeadlineSeconds: 5 });
    const before = await templateGeneration(n);
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: n });
    const g = await waitGuard(
      n,
      (x) => x.status?.state === 'Stalled' && x.status.undoPlan?.dryRun === 'Accepted',
      'Stalled with an accepted dry run',
      60_000,
    );
    assert.match(g.status?.message ?? '', /Would restore revision 1 \(\w+\) on 1 node/);
    assert.equal(g.status?.undoPlan?.toRevision, 1);
    assert.equal(await templateGeneration(n), String(Number(before) + 1), 'the dry run persisted nothing');
  });
});
