/**
 * decide() judging by comparison: would the previous revision fail the same way, on this node, now?
 * Timelines through `run` (fake clock, each pass gets the status the previous one decided), all with
 * onStall.action Undo, so that every row states whether the undo is made.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { recordAdmission } from '../../../src/domain/compare.js';
import { recordUndoOutcome } from '../../../src/domain/undo.js';
import type { Decision } from '../../../src/domain/decision.js';
import type { GuardStatus, TemplateFacets } from '../../../src/api/types.js';
import type { NodeView, PodView, RevisionView } from '../../../src/domain/observation.js';
import {
  HASH,
  T0,
  health,
  imagePullPod,
  iso,
  node,
  pod,
  policy,
  reasons,
  rev,
  run,
  sec,
  targetObs,
  unschedulablePod,
  withHealth,
  type Step,
} from '../../support/fixtures.js';
import { podUnit, rollingToB } from '../../support/deploymentRollout.js';

const T1 = T0 + sec(60);
const UNDO = policy({ onStall: { action: 'Undo' } });
const facets = (o: Partial<TemplateFacets> = {}): TemplateFacets => ({
  hostPorts: [],
  requests: { cpu: 0.1, memory: 64 * 2 ** 20 },
  security: 's1',
  ...o,
});
const withFacets = (r: RevisionView, f: TemplateFacets): RevisionView => ({ ...r, facets: f });
const ready = (name: string, pods: PodView[]): NodeView => withHealth(node(name, pods), health());
const undos = (target: readonly Decision[]): Decision[] => target.filter((d) => d.action?.kind === 'Undo');
const dsAt = (g: number, o: Record<string, unknown> = {}) => ({
  generation: g,
  observedGeneration: g,
  templateGeneration: String(g),
  ...o,
});

/** What act + persist store after an Undo: the outcome Applied. Other decisions are stored as decided. */
const persistUndo = (d: Decision): GuardStatus =>
  d.action?.kind === 'Undo' ? recordUndoOutcome(d.status, { kind: 'Applied' }, Date.parse(d.action.record.at) + 1000, 1).status : d.status;

/** Healthy on A (revisions as given) at T0, then `world` at T1 and at each later offset. */
function timeline(revsA: RevisionView[], world: (at: number) => ReturnType<typeof targetObs>, offsets: number[]): Step[] {
  const healthy = targetObs({ nodes: ['node-1', 'node-2', 'node-3'].map((n) => ready(n, [pod({ hash: HASH.A })])), revisions: revsA });
  return [{ obs: healthy, at: T0 }, ...[0, ...offsets].map((dt) => ({ obs: world(T1 + dt), at: T1 + dt, persist: persistUndo }))];
}

describe('decide by comparison: a surge pod that can never fit', () => {
  const FREE_PORTS =
    "0/7 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 6 node(s) didn't match Pod's node affinity/selector.";
  const surgeWorld = (fromF: TemplateFacets, toF: TemplateFacets, message: string) => (): ReturnType<typeof targetObs> =>
    targetObs({
      nodes: [
        ready('node-1', [pod({ hash: HASH.A }), unschedulablePod(HASH.B, message)]),
        ready('node-2', [pod({ hash: HASH.A })]),
        ready('node-3', [pod({ hash: HASH.A })]),
      ],
      revisions: [withFacets(rev(HASH.A, 1), fromF), withFacets(rev(HASH.B, 2), toF)],
      target: dsAt(2, { updated: 0, available: 3, ready: 3 }),
    });
  const cases = [
    {
      name: 'the same hostPort in both templates: Configuration, the port named, no undo',
      from: facets({ hostPorts: ['8080/TCP'] }),
      to: facets({ hostPorts: ['8080/TCP'] }),
      message: FREE_PORTS,
      owner: 'Configuration',
      comparison: /same hostPort 8080\/TCP and would not fit either: maxSurge with a hostPort cannot surge/,
      undo: false,
    },
    {
      name: 'a hostPort the new revision added: Revision, undone',
      from: facets(),
      to: facets({ hostPorts: ['9090/TCP'] }),
      message: FREE_PORTS,
      owner: 'Revision',
      comparison: /added hostPort 9090\/TCP/,
      undo: true,
    },
    {
      name: 'Insufficient cpu for the surge pod, requests unchanged: Configuration, no undo',
      from: facets(),
      to: facets(),
      message: '0/7 nodes are available: 1 Insufficient cpu.',
      owner: 'Configuration',
      comparison: /requests the same \(cpu 100m\) and would not fit beside the old pod either/,
      undo: false,
    },
    {
      name: 'Insufficient cpu with requests raised by the revision: Revision, undone',
      from: facets(),
      to: facets({ requests: { cpu: 2, memory: 64 * 2 ** 20 } }),
      message: '0/7 nodes are available: 1 Insufficient cpu.',
      owner: 'Revision',
      comparison: /raises its requests \(cpu 100m → 2\)/,
      undo: true,
    },
  ] as const;
  for (const tc of cases) {
    it(tc.name, () => {
      const revsA = [withFacets(rev(HASH.A, 1), tc.from)];
      const target = run(timeline(revsA, surgeWorld(tc.from, tc.to, tc.message), [sec(700), sec(701)]), { policy: UNDO });
      const stalled = target[2]!;
      assert.equal(stalled.status.state, 'Stalled');
      assert.equal(stalled.status.owner, tc.owner);
      const b = stalled.status.blockedNodes?.find((x) => x.node === 'node-1');
      assert.equal(b?.owner, tc.owner);
      assert.match(b?.comparison ?? '', tc.comparison);
      assert.match(stalled.status.message ?? '', tc.comparison, 'the stall sentence says which comparison decided');
      assert.equal(undos(target).length, tc.undo ? 1 : 0);
      if (!tc.undo) assert.equal(stalled.status.undoSkipped?.reason, 'NotTheRevision');
    });
  }
  it('without the templates facets (an older cache), the symptom alone decides, as before', () => {
    const world = surgeWorld(facets(), facets(), FREE_PORTS)();
    const noFacets = (): ReturnType<typeof targetObs> =>
      ({ ...world, revisions: [rev(HASH.A, 1), rev(HASH.B, 2)] }) as ReturnType<typeof targetObs>;
    const target = run(timeline([rev(HASH.A, 1)], noFacets, [sec(700)]), { policy: UNDO });
    assert.equal(target[2]!.status.owner, 'Revision');
    assert.equal(target[2]!.status.blockedNodes?.[0]?.comparison, undefined);
  });
});

describe('decide by comparison: a node that was broken before the rollout', () => {
  const crashing = (hash: string): PodView =>
    pod({ hash, ready: false, waitingReason: 'CrashLoopBackOff', waitingMessage: 'back-off', restartCount: 4 });
  /** Before the rollout: node-1's old pod already crash-loops (the guard follows it as a rollout in place). */
  const before = targetObs({
    nodes: [ready('node-1', [crashing(HASH.A)]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', [pod({ hash: HASH.A })])],
    revisions: [rev(HASH.A, 1)],
    target: { available: 2, ready: 2 },
  });
  const after = (newOn1: PodView) =>
    targetObs({
      nodes: [ready('node-1', [newOn1]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', [pod({ hash: HASH.A })])],
      revisions: [rev(HASH.A, 1), rev(HASH.B, 2)],
      target: dsAt(2, { updated: 1, available: 2, ready: 2 }),
    });
  const steps = (newOn1: PodView): Step[] => [
    { obs: before, at: T0 },
    { obs: after(newOn1), at: T1 },
    { obs: after(newOn1), at: T1 + sec(700) },
  ];

  it('the new pod crashes there the same way: Node (pre-existing), no undo, and no crash evidence counted', () => {
    const target = run(steps(crashing(HASH.B)), { policy: UNDO });
    const stalled = target[2]!;
    assert.deepEqual(target[1]!.status.rollout?.unavailableAtStart, [{ node: 'node-1', cause: 'CrashLoop' }]);
    assert.equal(stalled.status.state, 'Stalled');
    assert.equal(stalled.status.owner, 'Node');
    assert.match(
      stalled.status.blockedNodes?.[0]?.comparison ?? '',
      /already failing on this node before the rollout started \(CrashLoop\)/,
    );
    assert.equal(stalled.status.rollout?.failures, undefined, 'a crash where the old revision crashed too is not evidence');
    assert.equal(undos(target).length, 0);
    assert.equal(stalled.status.undoSkipped?.reason, 'NotTheRevision');
  });

  it('the new pod fails there otherwise (its image does not pull): the revision, undone', () => {
    const target = run(steps(imagePullPod(HASH.B)), { policy: UNDO });
    assert.equal(target[2]!.status.owner, 'Revision');
    assert.match(target[2]!.status.blockedNodes?.[0]?.comparison ?? '', /fails its own way/);
    assert.equal(undos(target).length, 1);
  });

  it('the same crash on a node where the old revision ran fine (a node class it breaks on): the revision, undone', () => {
    const healthyBefore = targetObs({
      nodes: ['node-1', 'node-2', 'node-3'].map((n) => ready(n, [pod({ hash: HASH.A })])),
      revisions: [rev(HASH.A, 1)],
    });
    const target = run([{ obs: healthyBefore, at: T0 }, ...steps(crashing(HASH.B)).slice(1)], { policy: UNDO });
    assert.equal(target[2]!.status.owner, 'Revision');
    assert.equal(undos(target).length, 1);
  });
});

describe('decide by comparison: a Deployment whose old pods were broken before the rollout (its units are pods, named anew)', () => {
  const crashing = (hash: string): PodView =>
    pod({ hash, ready: false, waitingReason: 'CrashLoopBackOff', waitingMessage: 'back-off', restartCount: 4 });
  /** Pod `name` as the unit of a Deployment, on Ready node `host`. */
  const on = (name: string, p: PodView, host: string): NodeView => withHealth({ ...podUnit(name, p), host }, health());
  const DEPLOY = { kind: 'Deployment', templateGeneration: undefined } as const;
  const oldPods = (p: () => PodView): NodeView[] => [1, 2, 3].map((i) => on(`web-a-${i}`, p(), `node-${i}`));
  /** Revision A's three pods, one per node, as `p` makes them; then B's surge pod on node-1 beside them. */
  const steps = (p: () => PodView, surge: PodView): Step[] => {
    const failing = p().ready === false;
    const counts = failing ? { available: 0, ready: 0 } : {};
    const before = targetObs({ target: { ...DEPLOY, ...counts }, revisions: [rev(HASH.A, 1)], nodes: oldPods(p) });
    const after = rollingToB([...oldPods(p), on('web-b-1', surge, 'node-1')], counts);
    return [
      { obs: before, at: T0 },
      { obs: after, at: T1 },
      { obs: after, at: T1 + sec(700) },
    ];
  };

  it('the surge pod crashes on a node where an old pod crashed the same way: Node, by the node, no crash evidence, no undo proposed', () => {
    const target = run(steps(() => crashing(HASH.A), { ...crashing(HASH.B), name: 'web-b-1' }));
    const stalled = target[2]!;
    assert.deepEqual(
      target[1]!.status.rollout?.unavailableAtStart?.map((u) => [u.node, u.host, u.cause]),
      [
        ['web-a-1', 'node-1', 'CrashLoop'],
        ['web-a-2', 'node-2', 'CrashLoop'],
        ['web-a-3', 'node-3', 'CrashLoop'],
      ],
    );
    assert.equal(stalled.status.state, 'Stalled');
    assert.equal(stalled.status.owner, 'Node', stalled.status.message);
    assert.match(
      stalled.status.blockedNodes?.[0]?.comparison ?? '',
      /already failing on this node before the rollout started \(CrashLoop\)/,
    );
    assert.equal(stalled.status.rollout?.failures, undefined, 'a crash where the old revision crashed too is not evidence');
    // No undo proposed: the guard says why, and names no command to make one.
    assert.equal(stalled.status.undoSkipped?.reason, 'NotTheRevision', JSON.stringify(stalled.status.undoSkipped));
    assert.match(stalled.status.message ?? '', /an undo would not help/);
    assert.doesNotMatch(stalled.status.message ?? '', /kubectl rollout undo/);
  });

  it('the same crash where the old pods ran fine: the revision', () => {
    const target = run(steps(() => pod({ hash: HASH.A }), { ...crashing(HASH.B), name: 'web-b-1' }));
    assert.equal(target[1]!.status.rollout?.unavailableAtStart, undefined);
    assert.equal(target[2]!.status.owner, 'Revision', target[2]!.status.message);
  });
});

describe('decide by comparison: more nodes broken before the rollout than a status list names', () => {
  const crashing = (hash: string): PodView =>
    pod({ hash, ready: false, waitingReason: 'CrashLoopBackOff', waitingMessage: 'back-off', restartCount: 4 });
  const names = Array.from({ length: 30 }, (_, i) => `node-${String(i + 1).padStart(2, '0')}`);
  /** 25 of 30 Ready nodes crash-loop revision 1's pod (a node-local fault, such as a driver the pod needs). */
  const broken = new Set(names.slice(0, 25));
  const before = targetObs({
    nodes: names.map((n) => ready(n, [broken.has(n) ? crashing(HASH.A) : pod({ hash: HASH.A })])),
    revisions: [rev(HASH.A, 1)],
    target: { desired: 30, current: 30, updated: 30, available: 5, ready: 5 },
  });
  /** Revision 2: the controller replaced the unavailable old pods first, and the new ones crash there the same way. */
  const after = targetObs({
    nodes: names.map((n) => ready(n, [broken.has(n) ? crashing(HASH.B) : pod({ hash: HASH.A })])),
    revisions: [rev(HASH.A, 1), rev(HASH.B, 2)],
    target: dsAt(2, { desired: 30, current: 30, updated: 25, available: 5, ready: 5 }),
  });
  const steps: Step[] = [
    { obs: before, at: T0 },
    { obs: before, at: T0 + sec(10) },
    { obs: after, at: T1 },
    { obs: after, at: T1 + sec(700) },
  ];

  it('every one of them is evidence for the nodes, not against the revision: no crash counted, no undo', () => {
    const target = run(steps, { policy: UNDO, remember: true });
    assert.equal(target[1]!.status.blockedNodes?.length, 20, 'the status names 20 of the 25');
    assert.equal(target[1]!.status.blockedNodeCount, 25);
    assert.equal(target[1]!.blocked?.length, 25, 'the pass found all 25');
    const rollout = target[2]!.status.rollout;
    assert.deepEqual(
      rollout?.unavailableAtStart?.map((u) => u.node),
      [...broken],
      'all 25 recorded, past the display cap',
    );
    assert.equal(rollout?.unavailableAtStartUnlisted, undefined);
    const stalled = target[3]!;
    assert.equal(stalled.status.state, 'Stalled');
    assert.equal(stalled.status.rollout?.failures, undefined, 'a crash where the old revision crashed too is not evidence');
    assert.equal(stalled.status.owner, 'Node');
    assert.equal(undos(target).length, 0);
    assert.equal(stalled.status.undoSkipped?.reason, 'NotTheRevision');
  });

  it('without the earlier pass (the operator restarted): the 5 unnamed are unlisted, and the guard says it will not undo', () => {
    const target = run(steps, { policy: UNDO });
    const rollout = target[2]!.status.rollout;
    assert.equal(rollout?.unavailableAtStart?.length, 20);
    assert.equal(rollout?.unavailableAtStartUnlisted, 5);
    // The 5 unnamed nodes' crashes count against the revision, as the evidence has it: Failed at once.
    const failed = target[2]!;
    assert.equal(failed.status.state, 'Failed');
    assert.equal(failed.status.owner, 'Revision');
    assert.equal(failed.status.rollout?.failures?.count, 5);
    assert.equal(undos(target).length, 0, 'but not undone');
    assert.equal(failed.status.undoSkipped?.reason, 'UnavailableAtStartUnlisted');
    assert.match(
      failed.status.undoSkipped?.message ?? '',
      /unavailable on 25 nodes when the rollout started, 5 more than the guard recorded/,
    );
    assert.ok(
      failed.events.some((e) => e.reason === 'UndoSkipped' && /undo by hand if the revision is at fault/.test(e.note)),
      'an UndoSkipped Event says why and who should act',
    );
    assert.equal(target[3]!.status.undoSkipped?.reason, 'UnavailableAtStartUnlisted', 'and it stays refused');
  });

  it('past the evidence cap of 100 nodes, the rest are unlisted even with the earlier pass', () => {
    const many = Array.from({ length: 130 }, (_, i) => `n-${String(i + 1).padStart(3, '0')}`);
    const obsOf = (hash: string, revisions: RevisionView[], t: Record<string, unknown>) =>
      targetObs({
        nodes: many.map((n, i) => ready(n, [i < 110 ? crashing(hash) : pod({ hash: HASH.A })])),
        revisions,
        target: t,
      });
    const counters = { desired: 130, current: 130, available: 20, ready: 20 };
    const target = run(
      [
        { obs: obsOf(HASH.A, [rev(HASH.A, 1)], { ...counters, updated: 130 }), at: T0 },
        { obs: obsOf(HASH.B, [rev(HASH.A, 1), rev(HASH.B, 2)], dsAt(2, { ...counters, updated: 110 })), at: T1 },
      ],
      { policy: UNDO, remember: true },
    );
    const rollout = target[1]!.status.rollout;
    assert.equal(rollout?.unavailableAtStart?.length, 100);
    assert.equal(rollout?.unavailableAtStartUnlisted, 10);
  });
});

describe('decide by comparison: a revision that takes its own node down', () => {
  const down = (since: number): ReturnType<typeof health> =>
    health({
      ready: 'False',
      reason: 'KubeletNotReady',
      message: 'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady',
      since: iso(since),
    });
  /** The new pod starts on `n` at `created`; the node turns NotReady `after` ms later. */
  const knocked = (n: string, created: number, after: number): NodeView =>
    withHealth(node(n, [pod({ hash: HASH.B, createdAt: iso(created), ready: false })]), down(created + after));
  const world = (nodes: NodeView[]) =>
    targetObs({ nodes, revisions: [rev(HASH.A, 1), rev(HASH.B, 2)], target: dsAt(2, { updated: 2, available: 1, ready: 1 }) });
  /** Healthy on A, then the template change seen at T1 (before any new pod), then `w` at each time. */
  const steps = (w: ReturnType<typeof targetObs>, ...at: number[]): Step[] => [
    {
      obs: targetObs({ nodes: ['node-1', 'node-2', 'node-3'].map((n) => ready(n, [pod({ hash: HASH.A })])), revisions: [rev(HASH.A, 1)] }),
      at: T0,
    },
    {
      obs: targetObs({
        nodes: ['node-1', 'node-2', 'node-3'].map((n) => ready(n, [pod({ hash: HASH.A })])),
        revisions: [rev(HASH.A, 1), rev(HASH.B, 2)],
        target: dsAt(2, { updated: 0 }),
      }),
      at: T1,
    },
    ...at.map((a) => ({ obs: w, at: a })),
  ];

  it("two updated nodes turn NotReady right after the new pod started, the old revision's node stays Ready: Failed, the revision, undone at once", () => {
    const w = world([
      knocked('node-1', T1 + sec(1), sec(4)),
      knocked('node-2', T1 + sec(10), sec(3)),
      ready('node-3', [pod({ hash: HASH.A })]),
    ]);
    const target = run(steps(w, T1 + sec(20)), { policy: UNDO });
    const d = target[2]!;
    assert.equal(d.status.state, 'Failed');
    assert.equal(d.status.cause, 'NodeNotReady');
    assert.equal(d.status.owner, 'Revision');
    assert.match(d.status.message ?? '', /takes its own node down/);
    assert.equal(d.action?.kind, 'Undo');
    assert.deepEqual(
      d.status.blockedNodes?.map((b) => b.node),
      ['node-1', 'node-2'],
      'both nodes it took down are named',
    );
    for (const b of d.status.blockedNodes) assert.match(b.comparison ?? '', /the new revision takes its own node down/);
  });

  it('two nodes taken down and one crash beside them: NodeNotReady, and the nodes down counted as two, not as the three failures', () => {
    const crashed = ready('node-3', [
      pod({
        hash: HASH.B,
        ready: false,
        restartCount: 1,
        createdAt: iso(T1 + sec(2)),
        lastTermination: { container: 'decoder', reason: 'Error', exitCode: 1, at: iso(T1 + sec(12)) },
      }),
    ]);
    const w = world([knocked('node-1', T1 + sec(1), sec(4)), knocked('node-2', T1 + sec(10), sec(3)), crashed]);
    const d = run(steps(w, T1 + sec(20)), { policy: UNDO })[2]!;
    assert.equal(d.status.state, 'Failed');
    assert.equal(d.status.cause, 'NodeNotReady');
    assert.equal(d.status.rollout?.failures?.count, 3);
    assert.match(d.status.message ?? '', /takes its own node down: 2 nodes turned NotReady right after its pod started there/);
    assert.match(d.status.message ?? '', /node-3 \(1 restart, Error/);
  });

  it('one such node only: the node is blamed for now, and the status says one more would blame the revision', () => {
    const w = world([
      knocked('node-1', T1 + sec(1), sec(4)),
      ready('node-2', [pod({ hash: HASH.A })]),
      ready('node-3', [pod({ hash: HASH.A })]),
    ]);
    const target = run(steps(w, T1 + sec(20), T1 + sec(700)), { policy: UNDO });
    const d = target[3]!;
    assert.equal(d.status.state, 'Stalled');
    assert.equal(d.status.owner, 'Node');
    assert.match(d.status.blockedNodes?.[0]?.comparison ?? '', /one node is not enough to blame the revision \(failedNodesThreshold 2\)/);
    assert.equal(undos(target).length, 0);
  });

  it('a node still on the old revision falls too: the fleet, not the revision; no undo', () => {
    const oldDown = withHealth(node('node-3', [pod({ hash: HASH.A, ready: false })]), down(T1 + sec(12)));
    const w = world([knocked('node-1', T1 + sec(1), sec(4)), knocked('node-2', T1 + sec(10), sec(3)), oldDown]);
    const target = run(steps(w, T1 + sec(20), T1 + sec(700)), { policy: UNDO });
    assert.notEqual(target[2]!.status.state, 'Failed');
    assert.equal(target[3]!.status.owner, 'Node');
    assert.equal(undos(target).length, 0);
  });

  it('a node that turned NotReady long after the new pod started is not read as its doing', () => {
    const w = world([
      knocked('node-1', T1 + sec(1), sec(600)),
      knocked('node-2', T1 + sec(2), sec(600)),
      ready('node-3', [pod({ hash: HASH.A })]),
    ]);
    const target = run(steps(w, T1 + sec(620)), { policy: UNDO });
    assert.notEqual(target[2]!.status.state, 'Failed');
    assert.notEqual(target[2]!.action?.kind, 'Undo');
  });
});

describe('decide by comparison: two broken revisions pushed in a row', () => {
  const C3 = rev(HASH.C, 3);
  const healthy = targetObs({
    nodes: ['node-1', 'node-2', 'node-3'].map((n) => ready(n, [pod({ hash: HASH.A })])),
    revisions: [rev(HASH.A, 1)],
  });
  const onB = targetObs({
    nodes: [ready('node-1', [pod({ hash: HASH.A })]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', [imagePullPod(HASH.B)])],
    revisions: [rev(HASH.A, 1), rev(HASH.B, 2)],
    target: dsAt(2, { updated: 1, available: 2 }),
  });
  const onC = targetObs({
    nodes: [ready('node-1', [pod({ hash: HASH.A })]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', [imagePullPod(HASH.C)])],
    revisions: [rev(HASH.A, 1), rev(HASH.B, 2), C3],
    target: dsAt(3, { updated: 1, available: 2 }),
  });
  const target = run(
    [
      { obs: healthy, at: T0 },
      { obs: onB, at: T1 },
      { obs: onB, at: T1 + sec(200) },
      { obs: onC, at: T1 + sec(300) },
      { obs: onC, at: T1 + sec(1000), persist: persistUndo },
      { obs: onC, at: T1 + sec(1001) },
    ],
    { policy: UNDO },
  );

  it('the second rollout starts from the last revision that ran on every node, and says so', () => {
    const start = target[3]!;
    assert.deepEqual(start.status.rollout?.fromRevision, { revision: 1, hash: HASH.A });
    assert.deepEqual(start.status.rollout?.superseded, [{ revision: 2, hash: HASH.B }]);
    assert.match(
      start.events.find((e) => e.reason === 'RolloutStarted')?.note ?? '',
      /supersedes revision 2 \(bbb222\), which never reached every node: an undo would restore revision 1/,
    );
  });

  it('one undo, straight to revision 1', () => {
    const u = undos(target);
    assert.equal(u.length, 1);
    assert.equal(u[0]!.action?.kind === 'Undo' && u[0]!.action.toHash, HASH.A);
    assert.match(
      u[0]!.status.lastUndo?.message ?? '',
      /restore revision 1 \(aaa111\) \(the last revision that ran on every node: revision 2 \(bbb222\) never did\)/,
    );
  });
});

describe('decide by comparison: a person undoes the rollout while the guard reports', () => {
  const A3 = rev(HASH.A, 3);
  const healthy = targetObs({
    nodes: ['node-1', 'node-2', 'node-3'].map((n) => ready(n, [pod({ hash: HASH.A })])),
    revisions: [rev(HASH.A, 1)],
  });
  const onB = targetObs({
    nodes: [ready('node-1', [pod({ hash: HASH.A })]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', [imagePullPod(HASH.B)])],
    revisions: [rev(HASH.A, 1), rev(HASH.B, 2)],
    target: dsAt(2, { updated: 1, available: 2 }),
  });
  // kubectl rollout undo: the template is A again, renumbered 3; node-3's broken pod is being replaced.
  const undone = targetObs({
    nodes: [ready('node-1', [pod({ hash: HASH.A })]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', [])],
    revisions: [A3, rev(HASH.B, 2)],
    target: dsAt(3, { updated: 2, available: 2, templateGeneration: '3' }),
  });
  const back = targetObs({
    nodes: ['node-1', 'node-2', 'node-3'].map((n) => ready(n, [pod({ hash: HASH.A })])),
    revisions: [A3, rev(HASH.B, 2)],
    target: dsAt(3),
  });
  const REPORT_THEN = policy({ onStall: { action: 'Undo', delaySeconds: 300 } });
  const target = run(
    [
      { obs: healthy, at: T0 },
      { obs: onB, at: T1 },
      { obs: onB, at: T1 + sec(700) },
      { obs: undone, at: T1 + sec(720) },
      { obs: undone, at: T1 + sec(2000) },
      { obs: back, at: T1 + sec(2001) },
    ],
    { policy: REPORT_THEN },
  );

  it('the guard follows: the rollout is marked restored, never undone, never Stalled for it', () => {
    assert.equal(target[2]!.status.state, 'Stalled');
    assert.equal(target[3]!.status.rollout?.restored, true);
    assert.match(
      target[3]!.events.find((e) => e.reason === 'RolloutStarted')?.note ?? '',
      /a person or tool undid the rollout; following it/,
    );
    assert.equal(undos(target).length, 0);
    assert.ok(reasons(target[3]!).includes('UndoSkipped'), 'the scheduled undo is cancelled, and said so');
    assert.equal(target[3]!.status.state, 'Progressing', 'no longer Stalled: the restored revision rolls out');
    assert.equal(target[4]!.action, undefined, 'the restored rollout, stuck on a node with no pod, is never undone in turn');
    assert.equal(target[5]!.status.state, 'Healthy');
  });
});

describe('decide by comparison: admission refuses the new pods', () => {
  const PSA =
    'Error creating: pods "decoder-x" is forbidden: violates PodSecurity "baseline:latest": privileged (container "decoder" must not set securityContext.privileged=true)';
  const refused = (at: number) =>
    targetObs({
      nodes: [ready('node-1', [pod({ hash: HASH.A })]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', [])],
      revisions: [
        withFacets(rev(HASH.A, 1), facets()),
        withFacets(rev(HASH.B, 2), facets({ security: 's2', serviceAccountName: 'agent' })),
      ],
      target: dsAt(2, { updated: 0, available: 2, ready: 2, current: 2, warning: { reason: 'FailedCreate', message: PSA, at: iso(at) } }),
    });
  const answer =
    (result: 'Accepted' | 'Refused' | 'NotVerified') =>
    (d: Decision): GuardStatus =>
      d.action?.kind === 'CompareAdmission'
        ? recordAdmission(
            d.status,
            d.action.revisionName,
            d.action.forHash,
            { result, message: result === 'Refused' ? '"pods is forbidden: violates PodSecurity"' : 'x' },
            iso(T1 + sec(2)),
          )
        : d.action?.kind === 'Undo'
          ? recordUndoOutcome(d.status, { kind: 'Applied' }, T1 + sec(800), 1).status
          : d.status;
  const steps = (result: 'Accepted' | 'Refused' | 'NotVerified'): Step[] =>
    timeline([rev(HASH.A, 1)], refused, [sec(1), sec(700), sec(701)]).map((s, i) => (i === 0 ? s : { ...s, persist: answer(result) }));

  it('the first pass that sees the refusal asks for a dry run of a pod of the previous revision on the empty node', () => {
    const target = run(steps('Accepted'), { policy: UNDO });
    assert.deepEqual(target[1]!.action, { kind: 'CompareAdmission', revisionName: 'decoder-aaa111', forHash: HASH.B, node: 'node-3' });
    assert.equal(target.filter((d) => d.action?.kind === 'CompareAdmission').length, 1, 'once per broken revision');
  });

  it('the old pod is admitted: only the new template is refused; the revision, undone', () => {
    const target = run(steps('Accepted'), { policy: UNDO });
    const stalled = target[3]!;
    assert.equal(stalled.status.owner, 'Revision');
    assert.match(
      stalled.status.emptyNodes?.[0]?.comparison ?? '',
      /is admitted \(server-side dry run\): only the new template is refused \(it changed: serviceAccountName default → agent; securityContext, host namespaces or volume types changed\)/,
    );
    assert.equal(undos(target).length, 1);
  });

  it('the old pod is refused too: the policy blocks the rollout, Configuration, no undo', () => {
    const target = run(steps('Refused'), { policy: UNDO });
    const stalled = target[3]!;
    assert.equal(stalled.status.state, 'Stalled');
    assert.equal(stalled.status.owner, 'Configuration');
    assert.match(stalled.status.emptyNodes?.[0]?.comparison ?? '', /is refused too .* an undo cannot help/);
    assert.equal(undos(target).length, 0);
    assert.equal(stalled.status.undoSkipped?.reason, 'NotTheRevision');
  });

  it('not verified (no right to create pods): said, and no undo on the refusal alone', () => {
    const target = run(steps('NotVerified'), { policy: UNDO });
    assert.equal(target[3]!.status.owner, 'Unknown');
    assert.match(target[3]!.status.emptyNodes?.[0]?.comparison ?? '', /not verified/);
    assert.equal(undos(target).length, 0);
  });

  it('no previous revision to try (its ControllerRevision pruned): no dry run asked for, nothing shown as pending', () => {
    const pruned = (at: number) => ({ ...refused(at), revisions: [rev(HASH.B, 2)] }) as ReturnType<typeof targetObs>;
    const target = run(timeline([rev(HASH.A, 1)], pruned, [sec(700)]), { policy: UNDO });
    for (const d of target) assert.notEqual(d.action?.kind, 'CompareAdmission');
    assert.equal(target[2]!.status.emptyNodes?.[0]?.comparison, undefined);
    assert.equal(target[2]!.status.undoSkipped?.reason, 'RevisionGone');
  });

  it('no undo before the comparison is known, even past the deadline', () => {
    const target = run(timeline([rev(HASH.A, 1)], refused, [sec(700), sec(701)]), { policy: UNDO });
    assert.equal(target[2]!.status.state, 'Stalled');
    assert.equal(target[2]!.action?.kind, 'CompareAdmission');
    assert.match(target[2]!.status.message ?? '', /Comparing with revision 1 .* before any undo/);
    assert.equal(undos(target).length, 0);
  });
});

describe('decide by comparison: the previous revision fails now too', () => {
  const broken = (hash: string): PodView => pod({ hash, ready: false, waitingReason: 'CrashLoopBackOff', restartCount: 3 });
  const world = () =>
    targetObs({
      nodes: [ready('node-1', [broken(HASH.A)]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', [imagePullPod(HASH.B)])],
      revisions: [rev(HASH.A, 1), rev(HASH.B, 2)],
      target: dsAt(2, { updated: 1, available: 1 }),
    });

  it('an old pod that ran at the start crash-loops now: PreviousRevisionFails, no undo', () => {
    const target = run(
      timeline(
        [rev(HASH.A, 1)],
        () =>
          targetObs({
            nodes: [
              ready('node-1', [pod({ hash: HASH.A })]),
              ready('node-2', [pod({ hash: HASH.A })]),
              ready('node-3', [imagePullPod(HASH.B)]),
            ],
            revisions: [rev(HASH.A, 1), rev(HASH.B, 2)],
            target: dsAt(2, { updated: 1, available: 2 }),
          }),
        [],
      ).concat([{ obs: world(), at: T1 + sec(700) }]),
      { policy: UNDO },
    );
    const stalled = target[2]!;
    assert.equal(stalled.status.state, 'Stalled');
    assert.equal(stalled.status.owner, 'Revision');
    assert.equal(stalled.status.undoSkipped?.reason, 'PreviousRevisionFails');
    assert.match(stalled.status.undoSkipped?.message ?? '', /revision 1 \(aaa111\) fails too, now, on node-1/);
    assert.equal(undos(target).length, 0);
  });
});

describe('property: never an undo when the previous revision fails the same way on the same node', () => {
  const crashing = (hash: string, restarts: number): PodView =>
    pod({ hash, ready: false, waitingReason: 'CrashLoopBackOff', waitingMessage: 'back-off', restartCount: restarts });
  const FREE_PORTS = "0/9 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.";
  it('holds for random fleets, failures, surge pods and timelines', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 6 }),
        fc.array(fc.constantFrom('broken-before', 'old', 'new', 'surge-port'), { minLength: 6, maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom<'Undo' | 'Report'>('Undo', 'Report'),
        (count, kinds, gaps, restarts, action) => {
          const names = Array.from({ length: count }, (_, i) => `node-${i + 1}`);
          const kind = (i: number): string => kinds[i] ?? 'old';
          const port = facets({ hostPorts: ['8080/TCP'] });
          const revs = [withFacets(rev(HASH.A, 1), port), withFacets(rev(HASH.B, 2), port)];
          const before = targetObs({
            nodes: names.map((n, i) => ready(n, [kind(i) === 'broken-before' ? crashing(HASH.A, restarts) : pod({ hash: HASH.A })])),
            revisions: [revs[0]!],
            target: {
              desired: count,
              current: count,
              updated: count,
              ready: count - kinds.slice(0, count).filter((k) => k === 'broken-before').length,
              available: count - kinds.slice(0, count).filter((k) => k === 'broken-before').length,
            },
          });
          const during = targetObs({
            nodes: names.map((n, i) =>
              ready(
                n,
                kind(i) === 'broken-before'
                  ? [crashing(HASH.B, restarts)]
                  : kind(i) === 'new'
                    ? [pod({ hash: HASH.B })]
                    : kind(i) === 'surge-port'
                      ? [pod({ hash: HASH.A }), unschedulablePod(HASH.B, FREE_PORTS)]
                      : [pod({ hash: HASH.A })],
              ),
            ),
            revisions: revs,
            target: dsAt(2, {
              desired: count,
              current: count,
              updated: kinds.slice(0, count).filter((k) => k === 'new' || k === 'broken-before').length,
              available: count - 1,
              ready: count - 1,
            }),
          });
          let at = T1;
          const steps: Step[] = [
            { obs: before, at: T0 },
            { obs: during, at: T1, persist: persistUndo },
          ];
          for (const g of gaps) {
            at += sec(g);
            steps.push({ obs: during, at, persist: persistUndo });
          }
          const target = run(steps, { policy: policy({ onStall: { action } }) });
          for (const d of target) assert.notEqual(d.action?.kind, 'Undo', JSON.stringify(d.status.blockedNodes));
        },
      ),
      { numRuns: 300, seed: 26 },
    );
  });
});

describe('decide: an undo that did not help', () => {
  const A3 = rev(HASH.A, 3);
  const crashed = (hash: string): PodView =>
    pod({
      hash,
      ready: false,
      waitingReason: 'CrashLoopBackOff',
      restartCount: 2,
      lastTermination: { container: 'decoder', reason: 'Error', exitCode: 1, at: iso(T1 + sec(705)) },
    });
  const healthy = targetObs({
    nodes: ['node-1', 'node-2', 'node-3'].map((n) => ready(n, [pod({ hash: HASH.A })])),
    revisions: [rev(HASH.A, 1)],
  });
  const stuck = targetObs({
    nodes: [ready('node-1', [pod({ hash: HASH.A })]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', [imagePullPod(HASH.B)])],
    revisions: [rev(HASH.A, 1), rev(HASH.B, 2)],
    target: dsAt(2, { updated: 1, available: 2 }),
  });
  // The undo restored A (renumbered 3), and A's new pods crash on two nodes.
  const restoredCrashing = targetObs({
    nodes: [ready('node-1', [crashed(HASH.A)]), ready('node-2', [crashed(HASH.A)]), ready('node-3', [pod({ hash: HASH.A })])],
    revisions: [A3, rev(HASH.B, 2)],
    target: dsAt(3, { updated: 3, available: 1, ready: 1 }),
  });
  const countersDone = targetObs({
    nodes: [ready('node-1', [crashed(HASH.A)]), ready('node-2', [crashed(HASH.A)]), ready('node-3', [pod({ hash: HASH.A })])],
    revisions: [A3, rev(HASH.B, 2)],
    target: dsAt(3),
  });
  const target = run(
    [
      { obs: healthy, at: T0 },
      { obs: stuck, at: T1 },
      { obs: stuck, at: T1 + sec(700), persist: persistUndo },
      { obs: restoredCrashing, at: T1 + sec(710) },
      { obs: restoredCrashing, at: T1 + sec(720) },
      { obs: countersDone, at: T1 + sec(730) },
    ],
    { policy: UNDO },
  );

  it('is detected after the fact: Failed (on evidence), RollbackStalled said once, lastUndo RollbackStalled, never retried', () => {
    assert.equal(undos(target).length, 1);
    const d = target[3]!;
    assert.equal(d.status.state, 'Failed');
    assert.match(d.status.message ?? '', /The undo did not help: the restored revision 3 \(aaa111\) fails too on 2 nodes/);
    assert.deepEqual(reasons(d), ['RollbackStalled']);
    assert.equal(d.status.lastUndo?.result, 'RollbackStalled');
    assert.equal(target[4]!.events.length, 0, 'said once');
    for (const x of target.slice(3)) assert.notEqual(x.action?.kind, 'Undo');
  });

  it('is never called RolledBack, even when the counters look complete', () => {
    for (const x of target.slice(3)) assert.notEqual(x.status.state, 'RolledBack');
    assert.ok(!target.slice(3).some((x) => reasons(x).includes('UndoComplete')));
    assert.equal(target[5]!.status.conditions?.find((c) => c.type === 'RolledBack')?.reason, 'RollbackStalled');
  });
});
