/**
 * End to end, on the shared local control plane, with onStall.action Undo everywhere: the guard undoes
 * only a revision the evidence blames. Each case asserts the DaemonSet's template afterwards and the
 * Events. (Dead kubelets and a paused controller-manager need a private control plane: see
 * controlPlaneFaults.test.ts.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decoderDaemonSet, holdsFor, kubectl, kubectlJson, waitFor } from '../support/cluster.js';
import { GuardSuite, type EventItem, type GuardObj } from '../support/guards.js';
import { apply, guard } from '../support/operator.js';
import { slimDaemonSet, slimRevision } from '../../src/k8s/slim.js';

const UNDO = { suspectAfterSeconds: 2, progressDeadlineSeconds: 5, onStall: { action: 'Undo' } };
const SCENARIOS = ['minready', 'taint', 'twoguards', 'owned', 'recreate', 'crashloop'] as const;
const suite = new GuardSuite('attr', SCENARIOS);
const { read, ns, pools } = suite;
const getGuard = (n: string, name = 'decoder'): Promise<GuardObj> => read.guard(n, name);
const getDs = (n: string): Promise<{ metadata: { uid: string; annotations?: Record<string, string> } }> =>
  kubectlJson(['get', 'ds', 'decoder'], { ns: n });
const image = (n: string): Promise<string> => read.image(n);
const waitGuard = (n: string, pred: (g: GuardObj) => boolean, what: string, timeoutMs = 60_000, name = 'decoder'): Promise<GuardObj> =>
  read.waitGuard(n, pred, what, timeoutMs, name);
const events = (n: string, kind: string, name = 'decoder'): Promise<EventItem[]> => read.events(n, kind, name);
const reasons = (n: string, kind: string, name = 'decoder'): Promise<string[]> => read.reasons(n, kind, name);
const setup = async (
  s: (typeof SCENARIOS)[number],
  extra: Partial<Parameters<typeof decoderDaemonSet>[0]> = {},
  spec: Record<string, unknown> = UNDO,
): Promise<string> => (await suite.guarded(s, spec, extra)).n;

describe('attribution end to end: undo only a broken revision', { concurrency: true }, () => {
  before(() => suite.setUp());
  after(() => suite.tearDown());

  it('minReadySeconds 12 with a deadline of 10: a configured wait, never a stall; ends Healthy with DeadlineTooShort shown', async () => {
    const n = await setup(
      'minready',
      { minReadySeconds: 12 },
      { suspectAfterSeconds: 4, progressDeadlineSeconds: 10, onStall: { action: 'Undo' } },
    );
    const g0 = await waitGuard(
      n,
      (g) => g.status?.conditions?.some((c) => c.type === 'DeadlineTooShort' && c.status === 'True') === true,
      'DeadlineTooShort',
    );
    assert.match(g0.status!.conditions!.find((c) => c.type === 'DeadlineTooShort')!.message, /minReadySeconds 12/);
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2'], { ns: n });
    // Every node waits 12 s after Ready: the rollout takes over 36 s, three times the deadline.
    const seen = new Set<string>();
    await waitFor(
      async () => {
        const g = await getGuard(n);
        seen.add(g.status?.state ?? '');
        return g.status?.state === 'Healthy' && g.status.currentRevision?.revision === 2;
      },
      { timeoutMs: 150_000, intervalMs: 250, describe: 'Healthy on revision 2' },
    );
    assert.ok(!seen.has('Suspect') && !seen.has('Stalled') && !seen.has('RollingBack'), `states seen: ${[...seen].join(', ')}`);
    assert.equal(await image(n), 'registry.local/decoder:2', 'the good revision stays');
    const evs = await reasons(n, 'RolloutGuard');
    for (const r of ['RolloutSuspect', 'RolloutStalled', 'UndoStarted']) assert.ok(!evs.includes(r), `no ${r}: ${evs.join(', ')}`);
    assert.ok(evs.includes('RolloutComplete'));
    assert.ok(evs.includes('DeadlineNotAboveMinReadySeconds'));
  });

  it('a node tainted NoExecute mid-rollout of a good image: no undo, the node is blamed', async () => {
    const n = await setup('taint', { minReadySeconds: 3 });
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2'], { ns: n });
    const victim = pools.taint.nodes[2]!;
    await kubectl(['taint', 'node', victim, 'maintenance=now:NoExecute']);
    // Either the rollout finishes on the two remaining nodes and DESIRED shrank (a stall blamed on the
    // node), or it finished before the taint took effect: either way the good revision stays.
    const g = await waitGuard(
      n,
      (x) =>
        (x.status?.state === 'Stalled' && x.status.cause === 'TargetShrank') ||
        (x.status?.state === 'Healthy' && x.status.currentRevision?.revision === 2),
      'settled',
      90_000,
    );
    if (g.status?.state === 'Stalled') {
      assert.equal(g.status.owner, 'Node');
      assert.equal(g.status.undoSkipped?.reason, 'NotTheRevision');
      assert.match(g.status.message ?? '', new RegExp(victim));
      await waitFor(async () => (await reasons(n, 'DaemonSet')).includes('UndoSkipped'), { timeoutMs: 15_000, describe: 'UndoSkipped' });
    }
    await holdsFor(async () => (await image(n)) === 'registry.local/decoder:2' && (await getGuard(n)).status?.lastUndo === undefined, {
      durationMs: 6_000,
      describe: 'no undo',
    });
    assert.ok(!(await reasons(n, 'DaemonSet')).includes('UndoStarted'));
  });

  it('two guards on one DaemonSet with a broken image: exactly one UndoStarted, the other shows Conflict', async () => {
    const n = await setup('twoguards');
    await apply(guard('second', n, 'decoder', UNDO));
    const second = await waitGuard(n, (g) => g.status?.state === 'Conflict', 'Conflict', 30_000, 'second');
    assert.equal(second.status?.inCharge, 'decoder');
    assert.match(second.status?.message ?? '', /RolloutGuard decoder is in charge/);
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: n });
    await waitGuard(n, (g) => g.status?.state === 'RolledBack', 'RolledBack', 90_000);
    assert.equal(await image(n), 'registry.local/decoder:1');
    const onDs = await reasons(n, 'DaemonSet');
    assert.equal(onDs.filter((r) => r === 'UndoStarted').length, 1, onDs.join(', '));
    assert.equal((await getGuard(n, 'second')).status?.state, 'Conflict');
    assert.ok((await reasons(n, 'RolloutGuard', 'second')).includes('Conflict'));
    assert.ok(!(await reasons(n, 'RolloutGuard', 'second')).includes('UndoStarted'));
    // The guard in charge leaves: the other takes over.
    await kubectl(['delete', 'rolloutguard', 'decoder', '--wait=true'], { ns: n });
    await waitGuard(n, (g) => g.status?.state === 'Healthy', 'second guard in charge', 30_000, 'second');
  });

  it('a DaemonSet owned by another controller is never undone; the owner is named', async () => {
    const n = ns.owned;
    // The owner: any object with a UID will do for the API (a ConfigMap stands in for an operator's CR).
    await kubectl(['create', 'configmap', 'cluster-policy'], { ns: n });
    const cm = await kubectlJson<{ metadata: { uid: string } }>(['get', 'configmap', 'cluster-policy'], { ns: n });
    const ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'cluster-policy', uid: cm.metadata.uid, controller: true }];
    await setup('owned', { ownerReferences });
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: n });
    const g = await waitGuard(n, (x) => x.status?.state === 'Stalled' && x.status.undoSkipped !== undefined, 'Stalled, undo skipped');
    assert.equal(g.status?.undoSkipped?.reason, 'OwnedByController');
    assert.match(g.status?.message ?? '', /managed by ConfigMap\/cluster-policy/);
    assert.equal(g.status?.owner, 'Revision', 'the revision is at fault; the owner is where to roll back');
    await holdsFor(async () => (await image(n)) === 'registry.local/decoder:2-broken', { durationMs: 6_000, describe: 'no undo' });
    const evs = await events(n, 'DaemonSet');
    assert.ok(
      evs.some((e) => e.reason === 'UndoSkipped' && /ConfigMap\/cluster-policy/.test(e.message ?? e.note ?? '')),
      JSON.stringify(evs),
    );
    assert.ok(!evs.some((e) => e.reason === 'UndoStarted'));
  });

  it('a guard deleted and recreated during RollingBack: no second or inverted undo', async () => {
    // minReadySeconds slows the rollback down enough to catch it midway.
    const n = await setup('recreate', { minReadySeconds: 4 });
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns: n });
    const rolling = await waitGuard(n, (g) => g.status?.state === 'RollingBack', 'RollingBack', 60_000);
    const brokenHash = rolling.status!.lastUndo!.fromHash;
    await kubectl(['delete', 'rolloutguard', 'decoder', '--wait=true'], { ns: n });
    const rec = JSON.parse((await getDs(n)).metadata.annotations?.['rolloutguard.dev/last-undo'] ?? '{}') as { from?: string };
    assert.equal(rec.from, brokenHash, 'the undo is recorded on the DaemonSet');
    await apply(guard('decoder', n, 'decoder', UNDO));
    const g = await waitGuard(
      n,
      (x) => x.status?.state === 'Healthy' || x.status?.state === 'RolledBack',
      'settled on the restored revision',
      90_000,
    );
    assert.notEqual(g.status?.currentRevision?.hash, brokenHash);
    assert.equal(await image(n), 'registry.local/decoder:1');
    await holdsFor(async () => (await image(n)) === 'registry.local/decoder:1', {
      durationMs: 5_000,
      describe: 'the restored template stays',
    });
    assert.equal((await reasons(n, 'DaemonSet')).filter((r) => r === 'UndoStarted').length, 1);
  });

  it('the classic crash-loop undo still works: the revision is blamed on Ready nodes and undone once', async () => {
    const n = await setup('crashloop');
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-crashloop'], { ns: n });
    await waitGuard(n, (g) => g.status?.state === 'RolledBack', 'RolledBack', 90_000);
    assert.equal(await image(n), 'registry.local/decoder:1');
    const evs = await events(n, 'DaemonSet');
    const stalled = evs.find((e) => e.reason === 'RolloutStalled');
    assert.match(stalled?.message ?? stalled?.note ?? '', /the revision is at fault/);
    assert.equal(evs.filter((e) => e.reason === 'UndoStarted').length, 1);
    // The guard tells the current revision from a stale cache by the template digest: on the live
    // objects, the restored (renumbered, newest) revision stores exactly the DaemonSet's template, and
    // the broken one does not.
    const ds = slimDaemonSet(await kubectlJson(['get', 'ds', 'decoder'], { ns: n }));
    const revs = (await kubectlJson<{ items: unknown[] }>(['get', 'controllerrevisions'], { ns: n })).items
      .map(slimRevision)
      .sort((a, b) => b.revision - a.revision);
    assert.deepEqual(
      revs.map((r) => r.revision),
      [3, 2],
    );
    assert.match(ds.spec.templateDigest ?? '', /^[0-9a-f]{16}$/);
    assert.equal(revs[0]!.templateDigest, ds.spec.templateDigest, 'the newest revision stores the live template');
    assert.notEqual(revs[1]!.templateDigest, ds.spec.templateDigest);
  });
});
