/**
 * End to end on the shared local control plane: a guard whose DaemonSet, or whose namespace, is being
 * deleted judges nothing and does nothing. A dying DaemonSet stops rolling (its controller leaves an
 * object with a deletionTimestamp alone) and its pods go, which judged as a rollout reads as a stall.
 *
 * - A DaemonSet deleted in the middle of a broken rollout (a finalizer keeps it, as any finalizer of
 *   a real cluster would): TargetDeleting, never Suspect or Stalled, no undo though the guard has Undo.
 * - The namespace deleted under a guard that has undone a rollout (finalizers keep the guard and the
 *   DaemonSet while the namespace controller deletes the pods): TargetDeleting, never Suspect, Stalled or
 *   RollingBack; the Events the API server refuses in a terminating namespace are not offered again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { holdsFor, kubectl } from '../support/cluster.js';
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
  });

  it('the namespace deleted under a guard: TargetDeleting, never Suspect, Stalled or RollingBack, refused Events not offered again', async () => {
    const { n } = await suite.guarded('nsgone', UNDO);
    await finalizers('ds', n, [HOLD]);
    await finalizers('rolloutguard', n, [HOLD]);
    await kubectl(['delete', 'namespace', n, '--wait=false']);
    const g = await read.waitGuard(n, (x) => readyReason(x) === 'TargetDeleting', 'Ready=False TargetDeleting');
    assert.equal(g.status?.state, 'Unknown', JSON.stringify(g.status));
    // The namespace controller deletes the pods; the DaemonSet, being deleted, makes no new ones.
    await holdsFor(async () => !judged(await read.guard(n)) && (await read.guard(n)).status?.lastUndo === undefined, {
      durationMs: 14_000,
      describe: 'no verdict, no undo while the namespace terminates',
    });
    const lines = suite.op.logs.filter((l) => l.includes(n));
    const refused = lines.filter((l) => l.includes('its namespace is being terminated'));
    assert.equal(refused.length, 1, `one refusal noted, then nothing offered again:\n${lines.slice(-10).join('\n')}`);
    assert.ok(!lines.some((l) => l.includes('event not recorded yet')), 'no refused Event is retried');
  });
});
