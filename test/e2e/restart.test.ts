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
import { OperatorProcess, apply, guard, installCrds } from '../support/operator.js';

interface GuardObj {
  status?: {
    state?: string;
    rollout?: { lastProgressAt: string; startedAt: string };
    lastUndo?: { result: string; message: string; fromHash: string };
  };
}

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

async function reasons(n: string, kind: string): Promise<string[]> {
  const list = await kubectlJson<{ items: Array<{ reason: string }> }>(
    ['get', 'events', `--field-selector=involvedObject.kind=${kind},involvedObject.name=decoder`],
    { ns: n },
  );
  return list.items.map((e) => e.reason);
}

describe('operator restarts', { concurrency: true }, () => {
  const cleanups: Array<() => Promise<void>> = [];
  const procs: OperatorProcess[] = [];
  let poolA: NodePool;
  let poolB: NodePool;
  let poolC: NodePool;
  let nsA: string;
  let nsB: string;
  let nsC: string;

  before(async () => {
    await ensureCluster();
    await installCrds();
    const a = await createNamespace('restart-clock');
    const b = await createNamespace('restart-undo');
    const c = await createNamespace('restart-events');
    nsA = a.name;
    nsB = b.name;
    nsC = c.name;
    poolA = await createNodePool(uniqueName('r-clock'), 3);
    poolB = await createNodePool(uniqueName('r-undo'), 3);
    poolC = await createNodePool(uniqueName('r-events'), 3);
    cleanups.push(a.cleanup, b.cleanup, c.cleanup, poolA.cleanup, poolB.cleanup, poolC.cleanup);
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
});
