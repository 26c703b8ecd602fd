/**
 * End to end: the operator process dies and comes back. The deadline clock lives in status, so a
 * restart neither resets it nor repeats an undo, even when the crash falls between the DaemonSet patch
 * and the status write.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createNamespace,
  createNodePool,
  daemonSetRow,
  decoderDaemonSet,
  ensureCluster,
  kubectl,
  kubectlJson,
  uniqueName,
  waitFor,
  type NodePool,
} from '../support/cluster.js';
import { GuardReader } from '../support/guards.js';
import { OperatorProcess, apply, guard, installCrds } from '../support/operator.js';
import { STATUS_LIST_CAP } from '../../src/domain/split.js';

interface GuardObj {
  status?: {
    state?: string;
    blockedNodeCount?: number;
    blockedNodes?: Array<{ node: string }>;
    rollout?: {
      lastProgressAt: string;
      startedAt: string;
      toRevision?: { revision: number };
      unavailableAtStart?: Array<{ node: string }>;
      unavailableAtStartUnlisted?: number;
    };
    lastUndo?: { result: string; message: string; fromHash: string };
    undoSkipped?: { reason: string; message: string };
  };
}

/**
 * The 'unlisted' pool: SICK + 2 nodes, the first SICK named "...-1", where a "sickon1" image crash-loops.
 * Two more sick nodes than the status lists name, so that two are only counted.
 */
const SICK = STATUS_LIST_CAP + 2;
const sickName = (pool: string, i: number): string =>
  i <= SICK ? `${pool}-s${String(i).padStart(String(SICK).length, '0')}-1` : `${pool}-${i}`;

const getGuard = (n: string): Promise<GuardObj & { status?: { announcements?: Array<{ id: string; reason: string }> } }> =>
  kubectlJson<GuardObj>(['get', 'rolloutguard', 'decoder'], { ns: n });
const waitState = (n: string, state: string, timeoutMs = 60_000): Promise<GuardObj> =>
  waitFor(
    async () => {
      const g = await getGuard(n);
      return g.status?.state === state ? g : undefined;
    },
    { timeoutMs, describe: `state ${state}` },
  );

const read = new GuardReader();
/** The reasons of the Events about `kind` `n/decoder`. */
const reasons = (n: string, kind: string): Promise<string[]> => read.reasons(n, kind);

describe('operator restarts', { concurrency: true }, () => {
  const cleanups: Array<() => Promise<void>> = [];
  const procs: OperatorProcess[] = [];
  let poolA: NodePool;
  let poolB: NodePool;
  let poolC: NodePool;
  let nsA: string;
  let nsB: string;
  let nsC: string;
  let poolD: NodePool;
  let nsD: string;

  before(async () => {
    await ensureCluster();
    await installCrds();
    const a = await createNamespace('restart-clock');
    const b = await createNamespace('restart-undo');
    const c = await createNamespace('restart-events');
    const d = await createNamespace('restart-unlisted');
    nsA = a.name;
    nsB = b.name;
    nsC = c.name;
    nsD = d.name;
    poolA = await createNodePool(uniqueName('r-clock'), 3);
    poolB = await createNodePool(uniqueName('r-undo'), 3);
    poolC = await createNodePool(uniqueName('r-events'), 3);
    poolD = await createNodePool(uniqueName('r-unlisted'), SICK + 2, { nameOf: sickName });
    cleanups.push(a.cleanup, b.cleanup, c.cleanup, d.cleanup, poolA.cleanup, poolB.cleanup, poolC.cleanup, poolD.cleanup);
  });

  after(async () => {
    for (const p of procs) await p.kill();
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it('a restart mid-stall continues the deadline clock from status', async () => {
    await apply(decoderDaemonSet({ name: 'decoder', ns: nsA, pool: poolA.name, image: 'registry.local/decoder:1' }));
    await kubectl(['rollout', 'status', 'ds/decoder', '--timeout=90s'], { ns: nsA });
    let op = await OperatorProcess.start({ namespaces: [nsA] });
    procs.push(op);
    await apply(guard('decoder', nsA, 'decoder', { suspectAfterSeconds: 4, progressDeadlineSeconds: 20 }));
    await waitState(nsA, 'Healthy');
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: nsA });
    const suspect = await waitState(nsA, 'Suspect', 30_000);
    const lastProgress = suspect.status!.rollout!.lastProgressAt;
    await op.kill();
    op = await OperatorProcess.start({ namespaces: [nsA] });
    procs.push(op);
    const stalled = await waitState(nsA, 'Stalled', 40_000);
    assert.equal(stalled.status?.rollout?.lastProgressAt, lastProgress, 'the clock was not reset by the restart');
    const deadline = Date.parse(lastProgress) + 20_000;
    assert.ok(Date.now() - deadline < 6_000, 'stalled on the original deadline');
    const evs = await reasons(nsA, 'RolloutGuard');
    assert.equal(evs.filter((r) => r === 'RolloutSuspect').length, 1, 'no duplicate Suspect event after restart');
    assert.equal(evs.filter((r) => r === 'RolloutStalled').length, 1);
  });

  it('killed between the undo patch and the status write: no second undo after restart', async () => {
    await apply(decoderDaemonSet({ name: 'decoder', ns: nsB, pool: poolB.name, image: 'registry.local/decoder:1' }));
    await kubectl(['rollout', 'status', 'ds/decoder', '--timeout=90s'], { ns: nsB });
    const crashing = await OperatorProcess.start({ namespaces: [nsB], failpoints: ['exit-after-undo-patch'] });
    procs.push(crashing);
    await apply(guard('decoder', nsB, 'decoder', { suspectAfterSeconds: 2, progressDeadlineSeconds: 5, onStall: { action: 'Undo' } }));
    await waitState(nsB, 'Healthy');
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: nsB });
    const code = await crashing.waitExit();
    assert.equal(code, 137, 'the failpoint killed the operator right after the patch');
    const mid = await getGuard(nsB);
    assert.equal(mid.status?.lastUndo?.result, 'Pending', 'the intent was recorded before acting, the outcome not yet');
    const ds = await kubectlJson<{ metadata: { annotations: Record<string, string> } }>(['get', 'ds', 'decoder'], { ns: nsB });
    const genAfterUndo = ds.metadata.annotations['deprecated.daemonset.template.generation'];

    const op = await OperatorProcess.start({ namespaces: [nsB] });
    procs.push(op);
    const done = await waitState(nsB, 'RolledBack', 60_000);
    assert.equal(done.status?.lastUndo?.result, 'Complete');
    const ds2 = await kubectlJson<{ metadata: { annotations: Record<string, string> } }>(['get', 'ds', 'decoder'], { ns: nsB });
    assert.equal(
      ds2.metadata.annotations['deprecated.daemonset.template.generation'],
      genAfterUndo,
      'the template was patched exactly once',
    );
    assert.deepEqual(await daemonSetRow(nsB, 'decoder'), { desired: 3, current: 3, ready: 3, upToDate: 3, available: 3 });
    const undoLogs = op.jsonLogs().filter((l) => l.msg === 'undo: intent recorded, patching DaemonSet');
    assert.equal(undoLogs.length, 0, 'the restarted operator never patched again');
  });

  it('killed between the status write and its Event: the next process announces it, once on the guard and once on the DaemonSet', async () => {
    await apply(decoderDaemonSet({ name: 'decoder', ns: nsC, pool: poolC.name, image: 'registry.local/decoder:1' }));
    await kubectl(['rollout', 'status', 'ds/decoder', '--timeout=90s'], { ns: nsC });
    const crashing = await OperatorProcess.start({ namespaces: [nsC], failpoints: ['exit-before-announcing=RolloutStalled'] });
    procs.push(crashing);
    await apply(guard('decoder', nsC, 'decoder', { suspectAfterSeconds: 2, progressDeadlineSeconds: 5 }));
    await waitState(nsC, 'Healthy');
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: nsC });
    assert.equal(await crashing.waitExit(), 137, 'the failpoint killed the operator right after writing Stalled');
    const mid = await getGuard(nsC);
    assert.equal(mid.status?.state, 'Stalled');
    assert.ok(
      mid.status?.announcements?.some((a) => a.reason === 'RolloutStalled'),
      'the Event waits in status',
    );
    const stalledCount = async (): Promise<[number, number]> => [
      (await reasons(nsC, 'RolloutGuard')).filter((r) => r === 'RolloutStalled').length,
      (await reasons(nsC, 'DaemonSet')).filter((r) => r === 'RolloutStalled').length,
    ];
    assert.deepEqual(await stalledCount(), [0, 0], 'not announced before the crash');

    const second = await OperatorProcess.start({ namespaces: [nsC] });
    procs.push(second);
    await waitFor(
      async () => {
        const [g, d] = await stalledCount();
        return g === 1 && d === 1;
      },
      { timeoutMs: 30_000, describe: 'RolloutStalled announced once on the guard and on the DaemonSet' },
    );
    assert.ok(second.jsonLogs().every((l) => l.msg !== 'event not recorded yet: it stays in status and is announced on a later pass'));
  });

  it('restarted between the last pass and a rollout, with more nodes failing than its status named: undo refused, UnavailableAtStartUnlisted', async () => {
    // Revision 1 crash-loops on SICK nodes (a node-local fault): the status names STATUS_LIST_CAP of them and counts SICK.
    await apply(decoderDaemonSet({ name: 'decoder', ns: nsD, pool: poolD.name, image: 'registry.local/decoder-sickon1:1' }));
    const first = await OperatorProcess.start({ namespaces: [nsD] });
    procs.push(first);
    await apply(guard('decoder', nsD, 'decoder', { suspectAfterSeconds: 3, progressDeadlineSeconds: 8, onStall: { action: 'Undo' } }));
    await waitFor(
      async () => {
        const g = await getGuard(nsD);
        return g.status?.blockedNodeCount === SICK && g.status.blockedNodes?.length === STATUS_LIST_CAP ? g : undefined;
      },
      { timeoutMs: 90_000, describe: `the ${SICK} sick nodes blocked on revision 1, ${STATUS_LIST_CAP} of them named` },
    );
    // The process that saw every sick node is gone before the rollout starts; the next one has only the status.
    await first.stop();
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder-sickon1:2'], { ns: nsD });
    await waitFor(
      async () => {
        const ds = await kubectlJson<{
          metadata: { generation: number };
          status: { observedGeneration?: number; updatedNumberScheduled?: number };
        }>(['get', 'ds', 'decoder'], { ns: nsD });
        return ds.status.observedGeneration === ds.metadata.generation && (ds.status.updatedNumberScheduled ?? 0) > 0;
      },
      { timeoutMs: 60_000, describe: 'the DaemonSet controller rolling revision 2' },
    );
    const second = await OperatorProcess.start({ namespaces: [nsD] });
    procs.push(second);
    const g = await waitFor(
      async () => {
        const x = await getGuard(nsD);
        return x.status?.rollout?.toRevision?.revision === 2 && x.status.undoSkipped !== undefined ? x : undefined;
      },
      { timeoutMs: 90_000, describe: 'a verdict on revision 2 with the undo skipped' },
    );
    assert.equal(g.status?.rollout?.unavailableAtStart?.length, STATUS_LIST_CAP, 'the nodes the status named');
    assert.equal(g.status?.rollout?.unavailableAtStartUnlisted, SICK - STATUS_LIST_CAP, 'the 2 it only counted');
    assert.equal(g.status?.undoSkipped?.reason, 'UnavailableAtStartUnlisted', JSON.stringify(g.status?.undoSkipped));
    assert.match(g.status?.undoSkipped?.message ?? '', /more than the guard recorded/);
    assert.equal(await read.image(nsD), 'registry.local/decoder-sickon1:2', 'not undone');
    await waitFor(async () => (await reasons(nsD, 'RolloutGuard')).includes('UndoSkipped'), {
      timeoutMs: 30_000,
      describe: 'an UndoSkipped Event',
    });
    assert.ok(!(await reasons(nsD, 'RolloutGuard')).includes('UndoStarted'), 'no undo');
    assert.equal(second.jsonLogs().filter((l) => l.msg === 'undo: intent recorded, patching DaemonSet').length, 0);
  });
});
