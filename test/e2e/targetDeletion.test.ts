/**
 * End to end on the shared local control plane: a guard whose DaemonSet, or whose namespace, is being
 * deleted judges nothing and does nothing. A dying DaemonSet stops rolling (its controller leaves an
 * object with a deletionTimestamp alone) and its pods go, which judged as a rollout reads as a stall.
 *
 * - A DaemonSet deleted in the middle of a broken rollout (a finalizer keeps it, as any finalizer of
 *   a real cluster would): TargetDeleting, never Suspect or Stalled, no undo though the guard has Undo.
 * - The namespace deleted under a guard that has just undone a broken rollout (finalizers keep the
 *   guard and the DaemonSet while the namespace controller deletes the pods): TargetDeleting, and from
 *   the deletion on never Suspect, Stalled or RollingBack again; the Events the API server refuses in a
 *   terminating namespace are not offered again.
 *
 * "Never" is read from the operator's own record of every state transition of the guard (its `state
 * transition` log line), over the whole window from the delete request on, not from samples of the
 * status. The guard's Events cannot tell it there: a terminating namespace refuses new Events, and the
 * namespace controller deletes the old ones.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { holdsFor, kubectl, waitFor } from '../support/cluster.js';
import { GuardSuite, type GuardObj } from '../support/guards.js';

const UNDO = { suspectAfterSeconds: 3, progressDeadlineSeconds: 8, onStall: { action: 'Undo' } };
const HOLD = 'rollout-guard.test/hold';
const SCENARIOS = ['dsgone', 'nsgone'] as const;
const suite = new GuardSuite('del', SCENARIOS);
const { read, ns } = suite;

const readyReason = (g: GuardObj): string | undefined => g.status?.conditions?.find((c) => c.type === 'Ready')?.reason;
const judged = (g: GuardObj): boolean => ['Suspect', 'Stalled', 'Failed', 'RollingBack'].includes(g.status?.state ?? '');
const finalizers = (kind: string, n: string, list: string[]): Promise<unknown> =>
  kubectl(['patch', kind, 'decoder', '--type=merge', '-p', JSON.stringify({ metadata: { finalizers: list } })], { ns: n });

/** The states guard `n/decoder` moved to, per the operator's log, in its lines from index `from` on. */
function transitionsFrom(from: number, n: string): string[] {
  return suite.op.logs.slice(from).flatMap((l) => {
    try {
      const j = JSON.parse(l) as { msg?: string; guard?: string; to?: string };
      return j.msg === 'state transition' && j.guard === `${n}/decoder` ? [String(j.to)] : [];
    } catch {
      return [];
    }
  });
}

describe('a target being deleted: a condition, no verdict, no action', { concurrency: true }, () => {
  before(() => suite.setUp());
  after(async () => {
    // Let the held objects go, whatever a case left behind, so that the namespaces can be removed.
    for (const s of SCENARIOS) {
      for (const kind of ['ds', 'rolloutguard']) await finalizers(kind, ns[s], []).catch(() => undefined);
    }
    await suite.tearDown();
  });

  it('a DaemonSet deleted mid-way through a broken rollout: TargetDeleting, never Stalled, not undone', async () => {
    const { n } = await suite.guarded('dsgone', UNDO);
    await finalizers('ds', n, [HOLD]);
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: n });
    await read.waitGuard(n, (g) => (g.status?.blockedNodes ?? []).some((b) => b.reason === 'ImagePullBackOff'), 'the broken pod named');
    const deleted = suite.op.logs.length;
    await kubectl(['delete', 'ds', 'decoder', '--wait=false'], { ns: n });
    const g = await read.waitGuard(n, (x) => readyReason(x) === 'TargetDeleting', 'Ready=False TargetDeleting');
    assert.equal(g.status?.state, 'Unknown', JSON.stringify(g.status));
    assert.match(g.status?.message ?? '', /DaemonSet decoder is being deleted since .*acts on nothing/);
    assert.equal(g.status?.undoPlan, undefined);
    // Past the deadline (8 s) with room to spare: no verdict, no undo of the DaemonSet going away.
    await holdsFor(
      async () => {
        const now = await read.guard(n);
        return !judged(now) && now.status?.lastUndo === undefined && (await read.image(n)) === 'registry.local/decoder:2-broken';
      },
      { durationMs: 14_000, describe: 'no verdict, no undo' },
    );
    const said = await read.reasons(n, 'RolloutGuard');
    assert.ok(said.includes('TargetDeleting'), said.join(','));
    assert.ok(!said.some((r) => ['RolloutStalled', 'UndoStarted'].includes(r)), said.join(','));
    const moved = transitionsFrom(deleted, n);
    assert.ok(moved.includes('Unknown'), `the record of the window is not empty: ${moved.join(',')}`);
    assert.deepEqual(
      moved.filter((to) => judged({ status: { state: to } })),
      [],
      'no verdict from the delete request on',
    );
  });

  it('the namespace deleted under a guard that undid a rollout: TargetDeleting, never Suspect, Stalled or RollingBack again, refused Events not offered again', async () => {
    const { n } = await suite.guarded('nsgone', UNDO);
    const good = await read.image(n);
    // First the guard undoes a broken rollout: it has been Suspect, Stalled and RollingBack before the deletion.
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: n });
    const undone = await read.waitGuard(n, (x) => x.status?.state === 'RolledBack', 'RolledBack after its undo', 120_000);
    assert.equal(undone.status?.lastUndo?.result, 'Complete', JSON.stringify(undone.status?.lastUndo));
    assert.equal(await read.image(n), good, 'the template restored');
    await suite.read.availableOn(n, suite.pools.nsgone.nodes.length);
    const story = ['RolloutSuspect', 'RolloutStalled', 'UndoStarted', 'UndoComplete'];
    const told = await waitFor(
      async () => {
        const r = await read.reasons(n, 'RolloutGuard');
        return story.every((x) => r.includes(x)) ? r : undefined;
      },
      { timeoutMs: 30_000, describe: `the undo told in Events: ${story.join(', ')}` },
    );
    assert.equal(told.filter((r) => r === 'RolloutSuspect').length, 1, told.join(','));
    await finalizers('ds', n, [HOLD]);
    await finalizers('rolloutguard', n, [HOLD]);
    const deleted = suite.op.logs.length;
    await kubectl(['delete', 'namespace', n, '--wait=false']);
    const g = await read.waitGuard(n, (x) => readyReason(x) === 'TargetDeleting', 'Ready=False TargetDeleting');
    assert.equal(g.status?.state, 'Unknown', JSON.stringify(g.status));
    // The namespace controller deletes the pods; the DaemonSet, being deleted, makes no new ones. The
    // undo on record stays the one made before the deletion.
    await holdsFor(
      async () => {
        const now = await read.guard(n);
        return !judged(now) && now.status?.lastUndo?.at === undone.status?.lastUndo?.at;
      },
      { durationMs: 14_000, describe: 'no verdict, no other undo while the namespace terminates' },
    );
    const lines = suite.op.logs.filter((l) => l.includes(n));
    const refused = lines.filter((l) => l.includes('its namespace is being terminated'));
    assert.equal(refused.length, 1, `one refusal noted, then nothing offered again:\n${lines.slice(-10).join('\n')}`);
    assert.ok(!lines.some((l) => l.includes('event not recorded yet')), 'no refused Event is retried');
    // Every transition from the delete request on, as the operator made it: to Unknown (TargetDeleting), never a verdict.
    const moved = transitionsFrom(deleted, n);
    assert.ok(moved.includes('Unknown'), `the record of the window is not empty: ${moved.join(',')}`);
    assert.deepEqual(
      moved.filter((to) => judged({ status: { state: to } })),
      [],
      'never Suspect, Stalled or RollingBack from the delete request on',
    );
    // The one Event the API server refused (and the operator named) is not a verdict either.
    assert.doesNotMatch(refused[0] ?? '', /"reason":"(RolloutSuspect|RolloutStalled|RollbackStalled|RevisionFailed|UndoStarted)"/);
  });
});
