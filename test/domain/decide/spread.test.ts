/**
 * decide(): containing a revision that passes readiness and then crashes. Simulated passes over a fake
 * clock: the DaemonSet controller moves node after node (each new pod Ready at once), and the new
 * container crashes a few seconds after it started. The verdict comes from the crashes, not the deadline.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { recordUndoOutcome } from '../../../src/domain/undo.js';
import type { Decision } from '../../../src/domain/decision.js';
import type { NodeView, Observation, PodView } from '../../../src/domain/observation.js';
import {
  HASH,
  T0,
  cond,
  crashLoopPod,
  deadKubelet,
  iso,
  node,
  nodesOn,
  policy,
  pod,
  reasons,
  rev,
  run,
  sec,
  targetObs,
  withHealth,
  type Step,
} from '../../support/fixtures.js';

const A1 = rev(HASH.A, 1);
const B2 = rev(HASH.B, 2);
const T1 = T0 + sec(60);
const N = 12;
const names = Array.from({ length: N }, (_, i) => `node-${i + 1}`);

const onA = (): PodView => pod({ hash: HASH.A });
const onB = (): PodView => pod({ hash: HASH.B });
const crashedB = (restarts: number, at: number, reason = 'Error'): PodView =>
  pod({
    hash: HASH.B,
    restartCount: restarts,
    lastTermination: { container: 'decoder', reason, exitCode: reason === 'OOMKilled' ? 137 : 1, at: iso(at) },
  });

/**
 * The fleet `k` nodes into a rollout of B: nodes before `k` run B, the rest A; `crashes` maps a node
 * index to its B pod's restarts (crashed at `crashAt`). Counters as the controller reports them.
 */
function fleet(k: number, crashes: Record<number, number> = {}, crashAt = T1, reason = 'Error'): Observation {
  const nodes: NodeView[] = names.map((n, i) => node(n, [i < k ? (crashes[i] ? crashedB(crashes[i], crashAt, reason) : onB()) : onA()]));
  return targetObs({
    nodes,
    revisions: [A1, B2],
    target: {
      generation: 2,
      observedGeneration: 2,
      templateGeneration: '2',
      desired: N,
      current: N,
      ready: N,
      updated: k,
      available: N,
      images: [`registry.example/decoder:${HASH.B}`],
    },
  });
}
const healthyA = (): Observation =>
  targetObs({ nodes: nodesOn(HASH.A, N), revisions: [A1], target: { desired: N, current: N, ready: N, updated: N, available: N } });
const last = (target: Decision[]): Decision => target[target.length - 1]!;
const UNDO = policy({ onStall: { action: 'Undo' } });

describe('decide: a revision that passes readiness and then crashes (12 nodes, maxUnavailable 1)', () => {
  // Node i is updated at T1 + 3i s; each B container crashes 6 s after it started.
  const steps: Step[] = [
    { obs: healthyA(), at: T0 },
    { obs: fleet(1), at: T1 },
    { obs: fleet(2), at: T1 + sec(3) },
    { obs: fleet(3, { 0: 1 }, T1 + sec(6)), at: T1 + sec(6) },
    { obs: fleet(4, { 0: 1, 1: 1 }, T1 + sec(9)), at: T1 + sec(9) },
  ];
  const target = run(steps, { policy: UNDO });
  const [, start, , oneCrash, twoCrashes] = target as [Decision, Decision, Decision, Decision, Decision];

  it('one node crashing is not yet a verdict: still Progressing, the crash recorded', () => {
    assert.equal(start.status.state, 'Progressing');
    assert.equal(oneCrash.status.state, 'Progressing');
    assert.equal(oneCrash.status.rollout?.failures?.count, 1);
    assert.equal(oneCrash.action, undefined);
  });

  it('the second node crashing is the verdict Failed at once, 9 s in, long before the 600 s deadline', () => {
    const d = twoCrashes;
    assert.equal(d.status.state, 'Failed');
    assert.equal(d.status.cause, 'CrashLoop');
    assert.equal(d.status.owner, 'Revision');
    assert.deepEqual(reasons(d), ['RevisionFailed']);
    assert.equal(d.status.rollout?.failedAt, iso(T1 + sec(9)));
    assert.match(
      d.status.message!,
      /crashes after starting on 2 Ready nodes \(failedNodesThreshold 2\): node-1 \(1 restart, Error, first at/,
    );
    assert.match(d.status.message!, /It runs on 4 of 12 nodes/);
    assert.equal(cond(d.status, 'Progressing').reason, 'RevisionFailed');
    assert.equal(cond(d.status, 'Stalled').status, 'True');
    assert.equal(cond(d.status, 'Stalled').reason, 'CrashLoop');
  });

  it('with Undo the undo is made at the verdict, to the revision the rollout started from: the blast radius is 4 of 12 nodes', () => {
    const a = twoCrashes.action;
    assert.equal(a?.kind, 'Undo');
    assert.equal(a.kind === 'Undo' && a.toHash, HASH.A);
    assert.equal(twoCrashes.status.lastUndo?.result, 'Pending');
    assert.match(twoCrashes.status.lastUndo.message, /the new revision fails on node-1, node-2/);
  });

  it('with Report the verdict is the same and nothing is changed; the undo that would fix it is named', () => {
    const r = last(run(steps, { policy: policy() }));
    assert.equal(r.status.state, 'Failed');
    assert.equal(r.action?.kind, 'DryRunUndo');
    assert.match(r.status.message!, /Would restore revision 1/);
  });

  it('once applied, the undo converges as any other: RollingBack, and never a second undo of B', () => {
    const applied = run(
      [
        ...steps.slice(0, -1),
        { ...steps[steps.length - 1]!, persist: (d) => recordUndoOutcome(d.status, { kind: 'Applied' }, T1 + sec(9), 1).status },
        { obs: fleet(4, { 0: 2, 1: 2 }, T1 + sec(12)), at: T1 + sec(12) },
      ],
      { policy: UNDO },
    );
    const after = last(applied);
    assert.equal(after.status.state, 'RollingBack');
    assert.equal(after.action, undefined);
  });

  it('OOMKilled crashes name their own cause: the remedy is the memory limit', () => {
    const d = last(
      run([...steps.slice(0, 3), { obs: fleet(4, { 0: 1, 1: 1 }, T1 + sec(9), 'OOMKilled'), at: T1 + sec(9) }], { policy: UNDO }),
    );
    assert.equal(d.status.state, 'Failed');
    assert.equal(d.status.cause, 'OOMKilled');
    assert.match(d.status.message!, /memory limit/);
  });

  it('failedNodesThreshold 1: the first crash is the verdict', () => {
    const d = run(steps.slice(0, 4), { policy: policy({ failedNodesThreshold: 1, onStall: { action: 'Undo' } }) })[3]!;
    assert.equal(d.status.state, 'Failed');
    assert.equal(d.action?.kind, 'Undo');
  });

  it('crashes on nodes that are down are not evidence against the revision', () => {
    const dead = (o: Observation): Observation => {
      if (o.kind !== 'Target') return o;
      return { ...o, nodes: o.nodes.map((n, i) => (i < 2 ? withHealth(n, deadKubelet()) : n)) };
    };
    const d = last(
      run([...steps.slice(0, 3), { obs: dead(steps[3]!.obs), at: T1 + sec(6) }, { obs: dead(steps[4]!.obs), at: T1 + sec(9) }], {
        policy: UNDO,
      }),
    );
    assert.notEqual(d.status.state, 'Failed');
    assert.equal(d.status.rollout?.failures, undefined);
    assert.equal(d.action, undefined);
  });

  it('a crash-looping pod that never became ready counts as evidence too (a restart is a restart)', () => {
    const world = (k: number): Observation => {
      const o = fleet(k);
      return o.kind === 'Target' ? { ...o, nodes: o.nodes.map((n, i) => (i < 2 ? node(n.node, [crashLoopPod(HASH.B)]) : n)) } : o;
    };
    const d = last(
      run(
        [
          { obs: healthyA(), at: T0 },
          { obs: world(2), at: T1 },
        ],
        { policy: UNDO },
      ),
    );
    assert.equal(d.status.state, 'Failed');
    assert.equal(d.status.rollout?.failures?.count, 2);
  });
});

describe('decide: the bake window (bakeSeconds 180)', () => {
  const BAKE = (extra: Parameters<typeof policy>[0] = {}) => policy({ bakeSeconds: 180, onStall: { action: 'Undo' }, ...extra });
  const done = (crashes: Record<number, number> = {}, crashAt = T1): Observation => fleet(N, crashes, crashAt);
  const TDONE = T1 + sec(40);
  const base: Step[] = [
    { obs: healthyA(), at: T0 },
    { obs: fleet(1), at: T1 },
    { obs: done(), at: TDONE },
  ];

  it('when the counters first look done, the rollout bakes: Progressing/Baking, RolloutBaking, not RolloutComplete, woken at the end', () => {
    const d = last(run(base, { policy: BAKE() }));
    assert.equal(d.status.state, 'Progressing');
    assert.equal(cond(d.status, 'Progressing').reason, 'Baking');
    assert.deepEqual(reasons(d), ['RolloutBaking']);
    assert.equal(d.status.rollout?.updatedAt, iso(TDONE));
    assert.equal(d.status.rollout?.completedAt, undefined);
    assert.match(d.status.message!, /baking until/);
    const r = d.requeueAfterMs!;
    assert.ok(r >= sec(180) && r <= sec(181), `requeue ${r}`);
  });

  it('a quiet bake ends Healthy with RolloutComplete at its end, not before', () => {
    const target = run([...base, { obs: done(), at: TDONE + sec(179) }, { obs: done(), at: TDONE + sec(180) }], { policy: BAKE() });
    assert.equal(target[3]!.status.state, 'Progressing');
    assert.deepEqual(reasons(target[3]!), []);
    assert.equal(target[4]!.status.state, 'Healthy');
    assert.deepEqual(reasons(target[4]!), ['RolloutComplete']);
  });

  it('crashes during the bake are a failure of this rollout: Failed, and the undo restores the revision it started from', () => {
    const d = last(run([...base, { obs: done({ 3: 1, 7: 1 }, TDONE + sec(60)), at: TDONE + sec(61) }], { policy: BAKE() }));
    assert.equal(d.status.state, 'Failed');
    assert.equal(d.action?.kind, 'Undo');
    assert.equal(d.action.kind === 'Undo' && d.action.toHash, HASH.A);
    assert.ok(!reasons(d).includes('RolloutComplete'));
  });

  it('one node restarting once during the bake, fine after, does not trip the default threshold (2 nodes): Healthy at the end', () => {
    const target = run(
      [
        ...base,
        { obs: done({ 5: 1 }, TDONE + sec(30)), at: TDONE + sec(31) },
        { obs: done({ 5: 1 }, TDONE + sec(30)), at: TDONE + sec(180) },
      ],
      { policy: BAKE() },
    );
    assert.equal(target[3]!.status.state, 'Progressing');
    assert.equal(target[3]!.status.rollout?.failures?.count, 1);
    assert.match(target[3]!.status.message!, /1 node\(s\) crashed so far, below failedNodesThreshold 2/);
    assert.equal(target[4]!.status.state, 'Healthy');
    assert.equal(target[4]!.action, undefined);
  });

  it('counters that fall back during the bake restart it when they are done again', () => {
    const back = fleet(N - 1);
    const target = run([...base, { obs: back, at: TDONE + sec(10) }, { obs: done(), at: TDONE + sec(20) }], { policy: BAKE() });
    assert.equal(target[3]!.status.rollout?.updatedAt, undefined);
    assert.equal(target[4]!.status.rollout?.updatedAt, iso(TDONE + sec(20)));
  });

  it('bakeSeconds 0: complete as soon as the counters say so', () => {
    const d = last(run(base, { policy: BAKE({ bakeSeconds: 0 }) }));
    assert.equal(d.status.state, 'Healthy');
    assert.deepEqual(reasons(d), ['RolloutComplete']);
  });

  it("the guard's own undo converging does not bake: RolledBack as soon as one generation again", () => {
    const steps: Step[] = [
      { obs: healthyA(), at: T0 },
      { obs: fleet(4, { 0: 1, 1: 1 }, T1), at: T1, persist: (d) => recordUndoOutcome(d.status, { kind: 'Applied' }, T1, 1).status },
      {
        obs: targetObs({
          nodes: nodesOn(HASH.A, N),
          revisions: [B2, rev(HASH.A, 3)],
          target: {
            generation: 3,
            observedGeneration: 3,
            templateGeneration: '3',
            desired: N,
            current: N,
            ready: N,
            updated: N,
            available: N,
          },
        }),
        at: T1 + sec(5),
      },
    ];
    const d = last(run(steps, { policy: BAKE() }));
    assert.equal(d.status.state, 'RolledBack');
  });
});

describe('decide: a revision that keeps crashing after its rollout completed, up between two crashes', () => {
  // bakeSeconds 0 and Report: the rollout completes at once. Then, every 10 s, the pods crash one node
  // after the other (node-k at +2k s) and are all up again at +8 s: the counters complete between two
  // crashes.
  const REPORT = policy({ bakeSeconds: 0, failedNodesThreshold: 2 });
  const three = ['node-1', 'node-2', 'node-3'];
  const crashAt = (cycle: number, k: number): number => T1 + sec(10 * cycle + 2 * k);
  /** Cycle `cycle` with nodes 1..`down` crashed (their crash `cycle`), the others up after crash `cycle - 1`. */
  const fleet = (cycle: number, down: number): Observation =>
    targetObs({
      nodes: three.map((n, i) => {
        const k = i + 1;
        const restarts = k <= down ? cycle : cycle - 1;
        const last =
          restarts > 0 ? { lastTermination: { container: 'c', reason: 'Error', exitCode: 1, at: iso(crashAt(restarts, k)) } } : {};
        const p = k <= down ? { ...crashLoopPod(HASH.B), restartCount: restarts } : pod({ hash: HASH.B, restartCount: restarts });
        return node(n, [{ ...p, name: `p-${n}`, ...last }]);
      }),
      revisions: [A1, B2],
      target: {
        generation: 2,
        observedGeneration: 2,
        templateGeneration: '2',
        ...(down > 0 ? { ready: 3 - down, available: 3 - down } : {}),
      },
    });
  const steps: Step[] = [
    { obs: targetObs({ nodes: nodesOn(HASH.A, 3), revisions: [A1] }), at: T0 },
    { obs: fleet(1, 0), at: T1 },
  ];
  const CYCLES = 5;
  for (let c = 1; c <= CYCLES; c++) {
    for (const down of [1, 2, 3]) steps.push({ obs: fleet(c, down), at: crashAt(c, down) + sec(1) });
    steps.push({ obs: fleet(c + 1, 0), at: crashAt(c, 0) + sec(8) });
  }
  // Quiet from the last crash on: 9 minutes later still Failed, 10 minutes later complete.
  const last = crashAt(CYCLES, 3);
  steps.push({ obs: fleet(CYCLES + 1, 0), at: last + sec(540) }, { obs: fleet(CYCLES + 1, 0), at: last + sec(600) });
  const ds = run(steps, { policy: REPORT });
  const cycles = ds.slice(2, 2 + 4 * CYCLES);
  const [almost, quiet] = ds.slice(2 + 4 * CYCLES) as [Decision, Decision];
  const failedFrom = cycles.findIndex((d) => d.status.state === 'Failed');

  it('Failed from the second crashed node on, and Failed while its pods are up between crashes: one RevisionFailed, no RolloutComplete', () => {
    assert.equal(ds[1]!.status.state, 'Healthy');
    assert.ok(failedFrom >= 0 && failedFrom <= 2, `Failed at the second crashed node: ${cycles.map((d) => d.status.state).join(',')}`);
    assert.deepEqual(
      cycles.slice(failedFrom).map((d) => d.status.state),
      Array<string>(cycles.length - failedFrom).fill('Failed'),
    );
    const said = cycles.flatMap(reasons);
    assert.equal(said.filter((r) => r === 'RevisionFailed').length, 1, said.join(','));
    assert.ok(!said.includes('RolloutComplete'), said.join(','));
    const upAgain = cycles[3]!;
    assert.match(upAgain.status.message!, /Its pods are up again; it stays Failed until .*, 10m without a crash/);
    assert.ok((upAgain.requeueAfterMs ?? 0) > sec(590), 'looked at again when the quiet window ends');
  });

  it('Healthy only once it has run 10 minutes without a crash', () => {
    assert.equal(almost.status.state, 'Failed');
    assert.equal(quiet.status.state, 'Healthy');
    assert.deepEqual(reasons(quiet), ['RolloutComplete']);
  });
});
