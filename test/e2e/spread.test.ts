/**
 * End to end on the shared local control plane: a revision that passes readiness and then crashes
 * (kwok image marker `crashafter`: Ready 1–3 s after start, a crash about 5 s later, again and again).
 * The DaemonSet controller sees each pod available and moves on; the guard must give its verdict from
 * the crashes, and with Undo contain the revision to the nodes it already reached.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import { holdsFor, kubectl, kubectlJson } from '../support/cluster.js';
import { GuardSuite, type GuardObj } from '../support/guards.js';

interface PodItem {
  metadata: { labels: Record<string, string> };
  spec: { nodeName?: string };
  status?: { containerStatuses?: Array<{ restartCount: number; lastState?: { terminated?: { finishedAt?: string; reason?: string } } }> };
}

const NODES = 12;
const SCENARIOS = ['undo', 'report', 'bake'] as const;
const suite = new GuardSuite('spread', SCENARIOS, (s) => (s === 'bake' ? 3 : NODES));
const { read } = suite;
const getGuard = (n: string): Promise<GuardObj> => read.guard(n);
const image = (n: string): Promise<string> => read.image(n);
const reasons = (n: string, kind: string): Promise<string[]> => read.reasons(n, kind);
const waitGuard = (n: string, pred: (g: GuardObj) => boolean, what: string, timeoutMs = 90_000): Promise<GuardObj> =>
  read.waitGuard(n, pred, what, timeoutMs);

async function setup(s: (typeof SCENARIOS)[number], spec: Record<string, unknown>): Promise<{ n: string; goodHash: string }> {
  const { n, g } = await suite.guarded(s, spec);
  return { n, goodHash: g.status!.currentRevision!.hash };
}

/**
 * Watches which nodes ever ran a pod of a revision other than `goodHash`, and the earliest crash of one,
 * by listing pods every 200 ms until `stop` is called: a measurement of the blast radius, not a wait.
 */
function spreadMeter(n: string, goodHash: string): { stop: () => Promise<{ reached: Set<string>; firstCrashAt?: number }> } {
  const reached = new Set<string>();
  let firstCrashAt: number | undefined;
  let running = true;
  const loop = (async () => {
    while (running) {
      const pods = (await kubectlJson<{ items: PodItem[] }>(['get', 'pods', '-l', 'app=decoder'], { ns: n })).items;
      for (const p of pods) {
        if (p.metadata.labels['controller-revision-hash'] === goodHash || !p.spec.nodeName) continue;
        reached.add(p.spec.nodeName);
        for (const c of p.status?.containerStatuses ?? []) {
          const at = c.lastState?.terminated?.finishedAt ? Date.parse(c.lastState.terminated.finishedAt) : undefined;
          if (at !== undefined && (firstCrashAt === undefined || at < firstCrashAt)) firstCrashAt = at;
        }
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return firstCrashAt === undefined ? { reached } : { reached, firstCrashAt };
    },
  };
}

describe('a revision that passes readiness and then crashes (12 nodes, maxUnavailable 1)', { concurrency: true }, () => {
  before(() => suite.setUp());
  after(() => suite.tearDown());

  it('Undo: the undo comes at the first verdict, before the broken revision reaches every node; every node ends on one generation', async (t: TestContext) => {
    // A deadline far away: the verdict must come from the crashes, not the clock.
    const { n, goodHash } = await setup('undo', { suspectAfterSeconds: 300, progressDeadlineSeconds: 600, onStall: { action: 'Undo' } });
    const meter = spreadMeter(n, goodHash);
    const changedAt = Date.now();
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-crashafter'], { ns: n });
    const failed = await waitGuard(n, (x) => x.status?.lastUndo !== undefined, 'the undo', 120_000);
    const undoAt = Date.parse(failed.status!.lastUndo!.at);
    await waitGuard(n, (x) => x.status?.state === 'RolledBack', 'RolledBack', 120_000);
    const { reached, firstCrashAt } = await meter.stop();
    t.diagnostic(
      `broken revision reached ${reached.size} of ${NODES} nodes; first crash → undo ${firstCrashAt ? ((undoAt - firstCrashAt) / 1000).toFixed(1) : '?'} s; image change → undo ${((undoAt - changedAt) / 1000).toFixed(1)} s`,
    );
    assert.ok(reached.size < NODES, `contained: the broken revision reached ${reached.size} of ${NODES} nodes`);
    assert.ok(firstCrashAt !== undefined, 'a crash was seen');
    assert.ok(undoAt - firstCrashAt < 20_000, `undo ${undoAt - firstCrashAt} ms after the first crash`);
    assert.equal(await image(n), 'registry.local/decoder:1');
    const g = await getGuard(n);
    assert.equal(g.status?.currentRevision?.hash, goodHash, 'every node back on the original generation');
    const evs = await reasons(n, 'DaemonSet');
    assert.ok(evs.includes('RevisionFailed'), evs.join(', '));
    assert.equal(evs.filter((r) => r === 'UndoStarted').length, 1);
    assert.ok(!evs.includes('RolloutComplete'), 'the broken rollout was never announced complete');
    const pods = (await kubectlJson<{ items: PodItem[] }>(['get', 'pods', '-l', 'app=decoder'], { ns: n })).items;
    assert.deepEqual([...new Set(pods.map((p) => p.metadata.labels['controller-revision-hash']))], [goodHash]);
  });

  it('Report: the verdict Failed comes within seconds of the second crash, not at the deadline; nothing is changed', async (t: TestContext) => {
    const { n, goodHash } = await setup('report', { suspectAfterSeconds: 300, progressDeadlineSeconds: 600 });
    const meter = spreadMeter(n, goodHash);
    const changedAt = Date.now();
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-crashafter'], { ns: n });
    const g = await waitGuard(n, (x) => x.status?.state === 'Failed', 'Failed', 120_000);
    const failedAt = Date.parse(g.status!.rollout!.failedAt!);
    const { firstCrashAt } = await meter.stop();
    const second = g.status!.rollout!.failures!.nodes.map((f) => Date.parse(f.at)).sort((a, b) => a - b)[1]!;
    t.diagnostic(
      `image change → Failed ${((failedAt - changedAt) / 1000).toFixed(1)} s; second crash → Failed ${((failedAt - second) / 1000).toFixed(1)} s; first crash at +${firstCrashAt ? ((firstCrashAt - changedAt) / 1000).toFixed(1) : '?'} s`,
    );
    assert.ok(failedAt - changedAt < 60_000, 'long before the 600 s deadline');
    assert.ok(failedAt - second < 5_000, `the verdict ${failedAt - second} ms after the crash that crossed the threshold`);
    assert.equal(g.status?.cause, 'CrashLoop');
    assert.equal(g.status?.owner, 'Revision');
    assert.match(g.status?.message ?? '', /Would restore revision 1/);
    assert.equal(await image(n), 'registry.local/decoder:2-crashafter', 'Report changes nothing');
  });

  it('a revision that restarts once on one node during the bake and is fine after does not trip the default threshold', async () => {
    // restartonce: only the pod on the node whose name ends in -1 crashes, once, ~5 s after Ready.
    const { n } = await setup('bake', {
      suspectAfterSeconds: 60,
      progressDeadlineSeconds: 120,
      bakeSeconds: 25,
      onStall: { action: 'Undo' },
    });
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-restartonce'], { ns: n });
    const baking = await waitGuard(
      n,
      (x) => x.status?.conditions?.some((c) => c.type === 'Progressing' && c.reason === 'Baking') === true,
      'baking',
      60_000,
    );
    assert.equal(baking.status?.state, 'Progressing');
    await waitGuard(
      n,
      (x) => (x.status?.rollout?.failures?.count ?? 0) >= 1 || x.status?.state === 'Healthy',
      'the one restart seen (or the bake over)',
      60_000,
    );
    const done = await waitGuard(
      n,
      (x) => x.status?.state === 'Healthy' && x.status.currentRevision?.revision === 2,
      'Healthy after the bake',
      90_000,
    );
    assert.equal(done.status?.lastUndo, undefined);
    await holdsFor(async () => (await image(n)) === 'registry.local/decoder:2-restartonce', { durationMs: 3_000, describe: 'no undo' });
    const evs = await reasons(n, 'RolloutGuard');
    assert.ok(evs.includes('RolloutBaking') && evs.includes('RolloutComplete'), evs.join(', '));
    assert.ok(!evs.includes('RevisionFailed'));
  });
});
