/**
 * The benchmark (`npm run bench`) at its smoke size, so it cannot rot: it runs end to end against the
 * real control plane and produces a well-formed result in which every rollout that should stall did.
 *
 * Nothing here asserts on a duration or a target being met: this machine is shared with the other
 * suites, and the bench's figures are measurements to read, not pass/fail criteria.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BenchResults } from '../../bench/report.js';
import { PART_NAMES } from '../../bench/explanationParts.js';
import { ensureCluster } from '../support/cluster.js';
import { ROOT } from '../support/operator.js';

function runBench(out: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'dist/bench/bench.js'), '--smoke', '--out', out], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

const finite = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);

describe('npm run bench -- --smoke', () => {
  let out: string;
  let results: BenchResults;
  let output: string;

  before(
    async () => {
      await ensureCluster();
      out = await mkdtemp(join(tmpdir(), 'rg-bench-'));
      const r = await runBench(out);
      output = r.output;
      assert.equal(r.code, 0, `bench exited ${r.code}:\n${output.slice(-4000)}`);
      const files = await readdir(out);
      const json = files.find((f) => f.endsWith('-smoke.json'));
      assert.ok(json, `no results file in ${files.join(', ')}`);
      results = JSON.parse(await readFile(join(out, json), 'utf8')) as BenchResults;
    },
    { timeout: 300_000 },
  );

  after(async () => {
    if (out) await rm(out, { recursive: true, force: true });
  });

  it('records the machine, the versions and the parameters it ran with', () => {
    assert.equal(results.schema, 'rollout-guard-bench/v1');
    assert.ok(results.machine.nproc > 0 && results.machine.memoryGiB > 0 && results.machine.cpuModel && results.machine.node);
    assert.ok(results.versions.K8S_VERSION && results.versions.KWOK_VERSION && results.versions.serverVersion);
    assert.equal(results.params.smoke, true);
  });

  it('every rollout that should stall was reported Stalled with its cause; the healthy ones completed', () => {
    assert.equal(results.sizes.length, 1);
    const s = results.sizes[0]!;
    assert.ok(s.verdict.expectedStalls >= 2, 'the smoke size has a broken and an exhausted rollout');
    assert.deepEqual(s.verdict.missedStalls, []);
    assert.equal(s.verdict.stalled, s.verdict.expectedStalls);
    assert.equal(s.verdict.operatorExitCode, 0, 'the operator exits 0 on SIGTERM');
    for (const g of s.guards) {
      if (g.category === 'broken') assert.equal(g.cause, 'ImagePullFailure', g.name);
      if (g.category === 'exhausted') assert.equal(g.cause, 'InsufficientResources', g.name);
      if (g.category === 'healthy') assert.equal(g.finalState, 'Healthy', g.name);
    }
  });

  it('has every figure: detection, explanation, API load, cost, the alert comparison', () => {
    const s = results.sizes[0]!;
    const n = s.verdict.expectedStalls;
    const { operatorHistogram, ...detection } = s.detection;
    const { waves, fromPodS, fromFailureS, nodeNamedFromFailureS, fleetFromFailureS, wavesFromFailureS } = s.explanation;
    for (const [name, summary] of Object.entries({ ...detection, fleetFromFailureS })) {
      assert.ok(
        summary.count === n && finite(summary.p50) && finite(summary.p99) && finite(summary.max),
        `${name}: ${JSON.stringify(summary)}`,
      );
    }
    // Explanation waves: the failing DaemonSets restored and broken again until the size has the
    // explanations it asks for (--min-explanations, 4 in the smoke run), each one measured.
    assert.ok(waves.count >= 1, 'the smoke run needs at least one wave for its 4 explanations');
    assert.deepEqual(waves.unexplained, [], 'every wave explained every failing DaemonSet');
    assert.equal(waves.samples.length, waves.count * n);
    assert.equal(wavesFromFailureS.count, waves.count * n);
    // The operator timed each write that newly named a failing node, by part.
    const parts = s.explanation.operator;
    assert.ok(parts.total.count >= n + waves.count * n, `one timed write per explanation at least: ${JSON.stringify(parts)}`);
    for (const part of [parts.queue, parts.pass, parts.write]) assert.equal(part.count, parts.total.count);
    for (const [name, summary] of Object.entries({ fromPodS, fromFailureS, nodeNamedFromFailureS })) {
      assert.ok(
        summary.count === n + waves.count * n && summary.count >= Number(results.params.minExplanations) && finite(summary.p99),
        `${name}: ${JSON.stringify(summary)}`,
      );
    }
    assert.equal(operatorHistogram.count, n, 'the operator observed each detection in its histogram');
    assert.ok(s.api.watchesOpened >= 5, 'one watch per informer');
    assert.ok(finite(s.api.steadyNonWatch) && s.api.steadySeconds > 0);
    assert.ok(s.api.rolloutTotal > 0 && (s.api.rollout['PATCH rolloutguards/status'] ?? 0) > 0);
    assert.ok(
      s.guards.every((g) => g.statusWrites > 0),
      'every guard wrote its rollout',
    );
    assert.ok(s.cost.rssMiB.peak > 0 && s.cost.cpuSeconds.total > 0 && s.cost.reconcile.count > 0);
    assert.ok(s.cost.cache.bytesPerPod > 0 && s.cost.cache.bytesPerNode > 0);
    assert.equal(s.alert.alertFiresAfterS.count, n, 'the alert is evaluated for every stalled DaemonSet');
    // Its `for: 15m` alone puts it at least 15 minutes after the rollout started.
    assert.ok((s.alert.alertFiresAfterS.p50 ?? 0) >= 15 * 60);
    assert.equal(s.alert.falseFirings, 0);
    // Pods cached only for what rolls: none idle, one DaemonSet's while it rolls alone, released after.
    const pc = s.podCache;
    assert.equal(pc.idleOne.podsCached, 0, 'one idle guard caches no pod');
    assert.equal(pc.idleAll.podsCached, 0, 'every guard idle: no pod cached');
    // Each idle point says where its RSS lives: the V8 heap (its spaces within it), external memory, the rest.
    for (const p of [pc.idleOne, pc.idleAll]) {
      const b = p.breakdownMiB;
      assert.ok(b, 'an idle point has its RSS breakdown');
      assert.ok(b.heapTotal > 0 && b.newSpace > 0 && b.oldSpace > 0 && b.newSpace + b.oldSpace <= b.heapTotal + 0.1, JSON.stringify(b));
      assert.ok(
        Math.abs(b.heapTotal + b.external + b.outsideHeap - p.rssMiB) <= 0.3,
        `heap + external + the rest is the RSS: ${JSON.stringify(b)} vs ${p.rssMiB}`,
      );
    }
    assert.ok(
      pc.single.peak.podsCached >= s.nodes && pc.single.peak.podsCached <= 2 * s.nodes,
      `one DaemonSet rolling cached ${pc.single.peak.podsCached} pods on ${s.nodes} nodes`,
    );
    assert.ok(finite(pc.single.releasedAfterS), 'its pods were released after the rollout');
    assert.ok(pc.fleet.peak.podsCached > pc.single.peak.podsCached, 'all rolling caches more than one rolling');
    assert.deepEqual(s.verdict.singleFalse, [], 'the healthy single rollout was never Suspect or Stalled');
    assert.equal(s.verdict.undos, 0, 'guards that only report never undo');
  });

  it('contained a revision that crashes after readiness: undone before it ran on every node, every node back on the original revision', () => {
    const c = results.sizes[0]!.containment;
    assert.ok(c, 'the containment scenario ran');
    assert.equal(c.error, undefined, c.error);
    assert.equal(c.rolledBack, true, `ended ${JSON.stringify(c.final)}`);
    assert.equal(c.final.state, 'RolledBack');
    assert.equal(c.final.nodesOnOriginal, c.nodes);
    assert.equal(c.final.otherPods, 0);
    // The undo came before the broken revision ran on every node of its pool.
    assert.ok(c.reachedNodes > 0 && c.reachedNodes < c.nodes, `ran on ${c.reachedNodes} of ${c.nodes} nodes`);
    assert.equal(c.contained, true);
    assert.ok(c.crashedNodes >= c.failedNodesThreshold, `crashed on ${c.crashedNodes} nodes`);
    const t = c.timeline;
    for (const [k, v] of Object.entries({
      firstCrash: t.firstCrashS,
      failed: t.failedS,
      undo: t.undoS,
      rolledBack: t.rolledBackS,
      oneGeneration: t.oneGenerationS,
    }))
      assert.ok(finite(v), `${k}: ${v}`);
    // finishedAt has whole seconds, so the first crash may read up to 1 s before it happened, never after.
    assert.ok(t.firstCrashS! <= t.failedS! && t.failedS! <= t.undoS! && t.undoS! <= t.rolledBackS!, JSON.stringify(t));
    for (const [k, v] of Object.entries({
      firstCrashToFailedS: c.firstCrashToFailedS,
      failedToUndoS: c.failedToUndoS,
      undoToRolledBackS: c.undoToRolledBackS,
      firstCrashToUndoS: c.firstCrashToUndoS,
    })) {
      assert.ok(finite(v) && v! >= 0, `${k}: ${v}`);
    }
    assert.ok(c.events.revisionFailed.length > 0 && c.events.undoStarted.length > 0, JSON.stringify(c.events));
    assert.equal(c.states.at(-1), 'RolledBack', c.states.join(' → '));
    assert.ok(!c.states.includes('Stalled'), 'the verdict came from the crashes, not the deadline');
  });

  it('accounts for every explanation part by part: the operator’s write found for each, the parts adding up to the sample', () => {
    const s = results.sizes[0]!;
    const t = s.tail;
    assert.equal(t.samples, s.explanation.fromFailureS.count);
    assert.equal(t.accounted, t.samples, 'each sample joined to the operator’s explaining write by its resourceVersion');
    for (const part of PART_NAMES) assert.equal(t.parts[part].count, t.samples, JSON.stringify(t.parts));
    const sumOfMeans = PART_NAMES.reduce((a, part) => a + (t.parts[part].mean ?? 0), 0);
    assert.ok(
      Math.abs(sumOfMeans - (s.explanation.fromFailureS.mean ?? NaN)) < 0.01,
      `the parts add up to the samples: ${sumOfMeans} against ${s.explanation.fromFailureS.mean}`,
    );
    assert.ok(t.parts.operatorEventLag.count > 0, 'the operator stamped the failures its watch delivered with their writes');
    assert.ok((t.watchDelivery.pods?.count ?? 0) > 0, `the operator timed its pod watches: ${JSON.stringify(t.watchDelivery)}`);
    assert.ok(t.benchWatchDelivery.count > 0);
    assert.ok(t.podWatches.opened > 0 && t.podWatches.ended > 0, JSON.stringify(t.podWatches));
    assert.ok(s.explanation.operator.fromEvent.count > 0, 'the operator timed its writes from the failing pod’s event');
  });

  it('ran a StatefulSet size: every failing StatefulSet Stalled with its cause and explained, no false verdict', () => {
    const [z] = results.statefulSets ?? [];
    assert.ok(z, 'the smoke run has a StatefulSet size');
    const v = z.verdict;
    assert.ok(v.expectedStalls >= 2, 'a broken and an exhausted StatefulSet');
    assert.equal(v.stalled, v.expectedStalls);
    assert.deepEqual([v.missed, v.wrongCause, v.suspectHealthy, v.stalledHealthy], [[], [], [], []]);
    assert.equal(v.undos, 0, 'guards that only report never undo');
    assert.equal(
      z.explanation.fromFailureS.count,
      v.expectedStalls,
      `one first explanation per failing StatefulSet: ${v.unexplained.join(' | ')}`,
    );
    assert.equal(z.tail.accounted, z.tail.samples);
    assert.equal(z.detection.count, v.expectedStalls);
    assert.ok(finite(z.api.steadyNonWatch) && z.cost.rssMiB.peak > 0 && z.cost.statusPatch.count > 0);
  });

  it('ran a Deployment size: every failing Deployment Stalled with its cause and explained, the settled ones untouched, its targets judged', () => {
    const [z] = results.deployments ?? [];
    assert.ok(z, 'the smoke run has a Deployment size');
    const v = z.verdict;
    assert.ok(z.rolling.broken >= 1 && z.rolling.exhausted >= 1 && z.rolling.healthy >= 1, JSON.stringify(z.rolling));
    assert.equal(v.stalled, v.expectedStalls);
    assert.deepEqual([v.missed, v.wrongCause, v.suspectHealthy, v.stalledHealthy, v.settledDisturbed], [[], [], [], [], []]);
    assert.equal(v.undos, 0, 'guards that only report never undo');
    assert.equal(z.explanation.fromFailureS.count, v.expectedStalls, 'one first explanation per failing Deployment');
    assert.equal(z.detection.count, v.expectedStalls);
    assert.equal(z.idle.all.podsCached, 0, 'no pod of a settled Deployment is cached');
    assert.ok(z.idle.all.replicaSetsCached >= z.deployments, 'every ReplicaSet is cached');
    assert.ok(z.cost.podsCachedPeak > 0, 'the rolling ones’ pods are cached while they roll');
    assert.ok(finite(z.api.steadyNonWatch) && z.cost.rssMiB.peak > 0 && z.cost.rssMiB.limit > 0 && z.cost.statusPatchServer.count > 0);
    const judged = results.targets.filter((t) => t.target.startsWith('Deployments: '));
    assert.equal(judged.length, 5, JSON.stringify(judged));
    for (const t of judged) assert.match(t.measured, /Deployments: /);
  });

  it("reports the Warning-Event informers' objects from the operator's metrics, and their weight", () => {
    const e = results.sizes[0]!.cost.events;
    assert.ok(e, 'events cost measured');
    for (const k of ['events-daemonsets', 'events-pods'] as const) {
      const o = e.objects[k];
      assert.ok(finite(o.afterRollout) && finite(o.end) && o.peak >= Math.max(o.afterRollout, o.end), `${k}: ${JSON.stringify(o)}`);
    }
    // The broken image's pods carry kwok's Warning `Failed` (ErrImagePull) Events: the pod informer holds them.
    assert.ok(e.objects['events-pods'].end > 0, JSON.stringify(e.objects));
    assert.ok(e.bytesPerEvent > 0 && e.cacheKiB > 0 && e.namespaceEvents >= e.objects['events-pods'].end);
  });

  it('ran the reconcile micro-benchmark, wrote the plot and printed the table', async () => {
    const m = results.micro.find((x) => x.dsNodes === 1000 && x.clusterNodes === 1000 && x.scenario === 'rollout');
    assert.ok(m && finite(m.passMs.p99) && m.state === 'Stalled' && m.blockedNodeCount === 100, JSON.stringify(m));
    // The dashboard's render of the same change: one cell per node, each at least its unit and state.
    assert.ok(m.dashboard && finite(m.dashboard.renderMs.p99) && m.dashboard.bytes > 1000 * 40, JSON.stringify(m.dashboard));
    // Detection, explanation, false verdicts, idle memory, rolling memory, polling, coalescing, memory
    // growth, containment, and the micro-benchmark's reconcile target; and the Deployment size's five.
    assert.equal(results.targets.length, 15);
    for (const name of ['first explanation', 'no false verdicts', 'idle guarded DaemonSets', 'follows the rolling DaemonSets']) {
      assert.ok(
        results.targets.some((t) => t.target.includes(name)),
        `a target about ${name}`,
      );
    }
    assert.ok(results.targets.every((t) => t.measured.length > 0));
    const svg = (await readdir(out)).find((f) => f.endsWith('-smoke.svg'));
    assert.ok(svg);
    assert.match(await readFile(join(out, svg), 'utf8'), /^<svg [^>]*>[\s\S]*<polyline[\s\S]*<\/svg>\n$/);
    assert.match(output, /Detection and explanation/);
    assert.match(output, /Containment: a revision that passes readiness/);
    assert.match(output, /Watching Warning Events/);
    assert.match(output, /Targets/);
    assert.match(output, /^Deployments: first explanation and detection/m);
  });
});
