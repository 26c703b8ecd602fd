/**
 * decide() with attribution: timelines through `run` (fake clock, plain ms; each pass gets the status
 * the previous one decided) with onStall.action Undo, checking that a stall is always reported, that its
 * owner is named, and that only a stall the evidence blames on the new revision, on a Ready node, is
 * undone. Every other stall says why it is not undone (status.undoSkipped, one UndoSkipped Event).
 *
 * The last block is a property check: seeded random sequences of observations from a few worlds.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decide } from '../../../src/domain/decide/decide.js';
import type { GuardPolicy } from '../../../src/domain/decide/pass.js';
import { recordUndoOutcome } from '../../../src/domain/undo.js';
import type { DaemonSetUndoRecord, GuardStatus } from '../../../src/api/types.js';
import type { TargetView, GuardPeer, NodeView, Observation, PodView } from '../../../src/domain/observation.js';
import type { NodeHealth } from '../../../src/api/objects.js';
import type { Decision } from '../../../src/domain/decision.js';
import {
  DS_NAME,
  HASH,
  T0,
  cond,
  crashLoopPod,
  deadKubelet,
  deepFreeze,
  deletingPod,
  health,
  imagePullPod,
  iso,
  node,
  notReadyPod,
  pod,
  policy,
  reasons,
  rev,
  roundTrip,
  run,
  sec,
  targetObs,
  unscheduledPod,
  waitingOutMinReadyPod,
  withHealth,
  type Step,
  type TargetObsOptions,
} from '../../support/fixtures.js';

// --- Worlds ---------------------------------------------------------------------------------------

const A1 = rev(HASH.A, 1);
const B2 = rev(HASH.B, 2);
/** Revision A after an undo: the DaemonSet controller renumbers the restored revision to max+1. */
const A3 = rev(HASH.A, 3);
/** The template changes to B at T1 in most timelines. */
const T1 = T0 + sec(60);
const UNDO = policy({ onStall: { action: 'Undo' } });
const REPORT = policy({ onStall: { action: 'Report' } });

/** A Ready node running `pods`. */
const ready = (name: string, pods: PodView[]): NodeView => withHealth(node(name, pods), health());
/** A node with `h` as its health. */
const sick = (name: string, pods: PodView[], h: NodeHealth): NodeView => withHealth(node(name, pods), h);

/** Revision 1 (A) fully rolled out on three Ready nodes. */
function healthyA(target: Partial<TargetView> = {}, extra: Partial<TargetObsOptions> = {}): Observation {
  return targetObs({
    nodes: [ready('node-1', [pod({ hash: HASH.A })]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', [pod({ hash: HASH.A })])],
    revisions: [A1],
    target,
    ...extra,
  });
}

/** The DaemonSet at template 2 (revision B), observed, counters from `target`. */
function dsAt2(target: Partial<TargetView> = {}): Partial<TargetView> {
  return { generation: 2, observedGeneration: 2, templateGeneration: '2', images: [`registry.example/decoder:${HASH.B}`], ...target };
}

/** A rollout to B with the given nodes. */
function rolloutB(nodes: NodeView[], target: Partial<TargetView> = {}, extra: Partial<TargetObsOptions> = {}): Observation {
  return targetObs({ nodes, revisions: [A1, B2], target: dsAt2(target), ...extra });
}

/** The classic stall: node-1 and node-2 on A, node-3's new pod given by `node3` (ImagePullBackOff). */
function stallB(
  node3: PodView[] = [imagePullPod(HASH.B)],
  target: Partial<TargetView> = {},
  extra: Partial<TargetObsOptions> = {},
): Observation {
  return rolloutB(
    [ready('node-1', [pod({ hash: HASH.A })]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', node3)],
    { ready: 2, updated: 1, available: 2, ...target },
    extra,
  );
}

/** Revision B fully rolled out. */
function completeB(target: Partial<TargetView> = {}): Observation {
  return rolloutB(
    [ready('node-1', [pod({ hash: HASH.B })]), ready('node-2', [pod({ hash: HASH.B })]), ready('node-3', [pod({ hash: HASH.B })])],
    target,
  );
}

/** Healthy on A at T0, then `world` from T1 on, and again at each offset from T1 (with its own world if given). */
function fromHealthy(world: Observation, ...later: [number, Observation?][]): Step[] {
  return [{ obs: healthyA(), at: T0 }, { obs: world, at: T1 }, ...later.map(([dt, obs]) => ({ obs: obs ?? world, at: T1 + dt }))];
}

/** What act + persist store after an Undo: the outcome Applied. Other decisions are stored as decided. */
const persistUndo = (d: Decision): GuardStatus =>
  d.action?.kind === 'Undo' ? recordUndoOutcome(d.status, { kind: 'Applied' }, Date.parse(d.action.record.at) + 1000, 1).status : d.status;

const count = (target: readonly Decision[], reason: string): number =>
  target.reduce((n, d) => n + reasons(d).filter((r) => r === reason).length, 0);
const undos = (target: readonly Decision[]): Decision[] => target.filter((d) => d.action?.kind === 'Undo');

/** What every refused undo looks like at the stall: reported, refused, said once, nothing done. */
function assertRefusedAtStall(d: Decision, reason: string, pattern: RegExp): void {
  assert.equal(d.status.state, 'Stalled');
  assert.equal(d.action, undefined);
  assert.equal(d.status.undoSkipped?.reason, reason);
  assert.match(d.status.undoSkipped.message, pattern);
  assert.deepEqual(reasons(d), ['RolloutStalled', 'UndoSkipped']);
  const skipped = d.events[1]!;
  assert.equal(skipped.type, 'Warning');
  assert.equal(skipped.onTarget, true, 'mirrored on the DaemonSet');
  assert.match(skipped.note, pattern);
  assert.equal(d.status.lastUndo, undefined);
  assert.equal(cond(d.status, 'RolledBack').status, 'False');
  assert.equal(cond(d.status, 'RolledBack').reason, 'UndoSkipped');
  assert.match(cond(d.status, 'RolledBack').message, new RegExp(`^${reason}: `));
}

// --- A node dies mid-rollout of a good image -------------------------------------------------------------

describe('decide: a kubelet stops mid-rollout of a good image', () => {
  /** node-1 and node-2 run B fine; node-3's kubelet is gone, its old pod stuck Terminating, no new pod. */
  const deadWorld = rolloutB(
    [
      ready('node-1', [pod({ hash: HASH.B })]),
      ready('node-2', [pod({ hash: HASH.B })]),
      sick('node-3', [deletingPod(HASH.A, T1 - sec(30))], deadKubelet()),
    ],
    { current: 3, ready: 2, updated: 2, available: 2 },
  );
  const target = run(fromHealthy(deadWorld, [sec(120)], [sec(600)], [sec(700)], [sec(1800)], [sec(3600)]), { policy: UNDO, initial: {} });
  const [, start, suspect, stalled, ...later] = target as [Decision, Decision, Decision, Decision, ...Decision[]];

  it('no pass ever plans an action', () => {
    for (const d of target) assert.equal(d.action, undefined);
  });

  it('the node fault is named from the start (early explanation), the revision never', () => {
    assert.equal(start.status.state, 'Progressing');
    assert.deepEqual(reasons(start), ['RolloutStarted']);
    assert.equal(start.status.cause, 'NodeNotReady');
    assert.equal(start.status.owner, 'Node');
    for (const d of target.slice(1)) assert.notEqual(d.status.owner, 'Revision');
  });

  it('Suspect at suspectAfter, owned by the node', () => {
    assert.equal(suspect.status.state, 'Suspect');
    assert.deepEqual(reasons(suspect), ['RolloutSuspect']);
    assert.equal(suspect.status.cause, 'NodeNotReady');
    assert.equal(suspect.status.owner, 'Node');
    assert.equal(suspect.status.undoSkipped, undefined, 'nothing is refused before the stall');
  });

  it('Stalled at the deadline: cause NodeNotReady, owner Node, the undo refused as NotTheRevision', () => {
    assert.equal(stalled.status.cause, 'NodeNotReady');
    assert.equal(stalled.status.owner, 'Node');
    assertRefusedAtStall(stalled, 'NotTheRevision', /an undo would not help/);
    assert.match(stalled.status.undoSkipped!.message, /blamed on the nodes \(NodeNotReady: node-3\)/);
    assert.equal(cond(stalled.status, 'Stalled').status, 'True');
    assert.equal(cond(stalled.status, 'Stalled').reason, 'NodeNotReady');
    assert.match(cond(stalled.status, 'Ready').message, /NodeNotReady, Node at fault/);
  });

  it('the status message names node-3, says what its node reports, and that an undo would not help', () => {
    const m = stalled.status.message!;
    assert.match(m, /node-3/);
    assert.match(m, /Kubelet stopped posting node status\./);
    assert.match(m, /an undo would not help/);
    assert.match(m, /Not undoing: /);
    assert.doesNotMatch(m, /new revision itself fails/);
  });

  it('node-3 is listed empty, owned by the node', () => {
    assert.deepEqual(stalled.status.emptyNodes, [
      {
        node: 'node-3',
        reason: 'Terminating',
        message: 'node is Unknown (Kubelet stopped posting node status.); the old pod is terminating and no new pod exists yet',
        owner: 'Node',
        cause: 'NodeNotReady',
      },
    ]);
    assert.deepEqual(stalled.status.blockedNodes, []);
  });

  it('exactly one UndoSkipped Event over the whole timeline; later passes are silent and stay Stalled', () => {
    assert.equal(count(target, 'UndoSkipped'), 1);
    assert.equal(count(target, 'RolloutStalled'), 1);
    for (const d of later) {
      assert.equal(d.status.state, 'Stalled');
      assert.deepEqual(reasons(d), []);
      assert.equal(d.status.owner, 'Node');
      assert.equal(d.status.undoSkipped?.reason, 'NotTheRevision');
      assert.deepEqual(d.status, stalled.status, 'nothing new observed: nothing rewritten');
    }
  });

  it('Report mode refuses the same way, without an Event and without a dry run', () => {
    const rs = run(fromHealthy(deadWorld, [sec(600)], [sec(700)]), { policy: REPORT });
    for (const d of rs) assert.equal(d.action, undefined);
    assert.equal(rs[2]!.status.undoSkipped?.reason, 'NotTheRevision');
    assert.deepEqual(reasons(rs[2]!), ['RolloutStalled']);
    assert.doesNotMatch(rs[2]!.status.message!, /Would restore/);
  });
});

describe("decide: other node faults at the deadline are the node's, never undone", () => {
  const cases: { name: string; node3: NodeView; cause: string }[] = [
    {
      name: 'Ready False, its new pod marked not ready',
      node3: sick('node-3', [notReadyPod(HASH.B)], health({ ready: 'False', reason: 'KubeletNotReady', message: 'PLEG is not healthy' })),
      cause: 'NodeNotReady',
    },
    {
      name: 'tainted unreachable, its new pod crash-looping',
      node3: sick('node-3', [crashLoopPod(HASH.B)], health({ unreachable: true })),
      cause: 'NodeNotReady',
    },
    {
      name: 'Ready Unknown, its new pod last seen ImagePullBackOff',
      node3: sick('node-3', [imagePullPod(HASH.B)], deadKubelet()),
      cause: 'NodeNotReady',
    },
    {
      name: 'DiskPressure, its new pod unable to pull',
      node3: sick('node-3', [imagePullPod(HASH.B)], health({ pressure: ['DiskPressure'] })),
      cause: 'NodePressure',
    },
    {
      name: 'Ready, the old pod Terminating past its grace period',
      node3: ready('node-3', [deletingPod(HASH.A, T1 - sec(1))]),
      cause: 'PodTerminating',
    },
  ];
  for (const tc of cases) {
    it(`${tc.name} → Stalled ${tc.cause}, owner Node, NotTheRevision, no action`, () => {
      const world = rolloutB([ready('node-1', [pod({ hash: HASH.B })]), ready('node-2', [pod({ hash: HASH.B })]), tc.node3], {
        ready: 2,
        updated: 3,
        available: 2,
      });
      const target = run(fromHealthy(world, [sec(600)], [sec(900)]), { policy: UNDO });
      const d = target[2]!;
      assert.equal(d.status.cause, tc.cause);
      assert.equal(d.status.owner, 'Node');
      assertRefusedAtStall(d, 'NotTheRevision', /blamed on the nodes/);
      assert.equal(undos(target).length, 0);
      assert.deepEqual(reasons(target[3]!), []);
    });
  }
});

describe('decide: the revision fails on a Ready node while another node is dead', () => {
  /** node-1 on B; node-2's kubelet stopped (its B pod marked not ready); node-3 Ready, B's image cannot be pulled. */
  const world = rolloutB(
    [
      ready('node-1', [pod({ hash: HASH.B })]),
      sick('node-2', [notReadyPod(HASH.B)], deadKubelet()),
      ready('node-3', [imagePullPod(HASH.B)]),
    ],
    { ready: 1, updated: 3, available: 1 },
  );
  const target = run(
    [...fromHealthy(world, [sec(300)]), { obs: world, at: T1 + sec(600), persist: persistUndo }, { obs: world, at: T1 + sec(700) }],
    { policy: UNDO },
  );
  const [, start, suspect, stalled, after] = target as [Decision, Decision, Decision, Decision, Decision];

  it('the revision is named from the start, on the evidence of the Ready node', () => {
    assert.equal(start.status.owner, 'Revision');
    assert.equal(start.status.cause, 'ImagePullFailure');
    assert.equal(suspect.status.state, 'Suspect');
    assert.equal(suspect.status.owner, 'Revision');
  });

  it('at the deadline: Stalled ImagePullFailure, owner Revision, nothing refused, the undo planned', () => {
    assert.equal(stalled.status.state, 'Stalled');
    assert.equal(stalled.status.cause, 'ImagePullFailure');
    assert.equal(stalled.status.owner, 'Revision');
    assert.equal(stalled.status.undoSkipped, undefined);
    assert.deepEqual(reasons(stalled), ['RolloutStalled']);
    assert.deepEqual(stalled.action, {
      kind: 'Undo',
      fromHash: HASH.B,
      toHash: HASH.A,
      toRevisionName: `${DS_NAME}-${HASH.A}`,
      expectedUid: 'uid-decoder',
      expectedTemplateGeneration: '2',
      record: { from: HASH.B, to: HASH.A, at: iso(T1 + sec(600)), guard: `default/${DS_NAME}` },
    });
  });

  it('the undo record names the Ready node as the evidence, not the dead one', () => {
    const m = stalled.status.lastUndo?.message ?? '';
    assert.match(m, /the new revision fails on node-3$/);
    assert.doesNotMatch(m, /node-2/);
    assert.match(stalled.status.message!, /fails on Ready node node-3/);
  });

  it('per-node owners: node-3 the revision, listed first as its pod failed of its own; node-2 the node', () => {
    assert.deepEqual(
      stalled.status.blockedNodes?.map((b) => [b.node, b.owner, b.cause]),
      [
        ['node-3', 'Revision', 'ImagePullFailure'],
        ['node-2', 'Node', 'NodeNotReady'],
      ],
    );
  });

  it('once applied, the next pass waits for the rollback instead of undoing again', () => {
    assert.equal(after.action, undefined);
    assert.equal(after.status.state, 'RollingBack');
    assert.equal(after.status.undoSkipped, undefined);
  });
});

// --- minReadySeconds longer than the deadline ---------------------------------------------------------------

describe('decide: a kubelet slow to remove an old pod past its grace period (a fleet-wide rollout on busy nodes)', () => {
  /** node-1 on B, node-2 on A waiting its turn, node-3's old pod Terminating: its grace period ended at T1 + 10 s. */
  const terminating = rolloutB(
    [
      ready('node-1', [pod({ hash: HASH.B })]),
      ready('node-2', [pod({ hash: HASH.A })]),
      ready('node-3', [deletingPod(HASH.A, T1 + sec(10))]),
    ],
    {
      ready: 1,
      updated: 1,
      available: 1,
    },
  );
  /** The kubelet has removed it at last; the DaemonSet controller has not created the new pod yet. */
  const removed = rolloutB([ready('node-1', [pod({ hash: HASH.B })]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', [])], {
    ready: 1,
    updated: 1,
    available: 1,
  });
  /** The new pod runs on node-3. */
  const created = rolloutB(
    [ready('node-1', [pod({ hash: HASH.B })]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', [pod({ hash: HASH.B })])],
    {
      ready: 2,
      updated: 2,
      available: 2,
    },
  );

  it('the removal is progress: no Suspect in the moment between the old pod going and the new one coming, 125 s after the last other progress', () => {
    const target = run(fromHealthy(terminating, [sec(100)], [sec(125), removed], [sec(126), created]), { policy: UNDO });
    assert.deepEqual(
      target.slice(1).map((d) => d.status.state),
      ['Progressing', 'Progressing', 'Progressing', 'Progressing'],
    );
    assert.equal(target[2]!.status.emptyNodes?.[0]?.owner, 'Node', "past its grace period, the old pod is the kubelet's to remove");
    assert.equal(target[3]!.status.rollout?.lastProgressAt, iso(T1 + sec(125)));
    assert.equal(target[3]!.status.rollout?.progress.oldGone, 2);
    assert.equal(count(target, 'RolloutSuspect'), 0);
  });

  it('counted once: with nothing moving after the removal, Suspect at suspectAfter and Stalled at the deadline, both from the removal', () => {
    const target = run(fromHealthy(terminating, [sec(125), removed], [sec(244)], [sec(246)], [sec(724)], [sec(726)]), { policy: REPORT });
    assert.deepEqual(
      target.slice(2).map((d) => d.status.state),
      ['Progressing', 'Progressing', 'Suspect', 'Suspect', 'Stalled'],
    );
  });

  it('a status written without the mark: the first pass sets it as a baseline, not as progress', () => {
    const withoutMark = (d: Decision): GuardStatus => {
      const st = structuredClone(d.status);
      if (st.rollout) delete st.rollout.progress.oldGone;
      return st;
    };
    const target = run(
      [
        { obs: healthyA(), at: T0 },
        { obs: removed, at: T1, persist: withoutMark },
        { obs: removed, at: T1 + sec(30) },
      ],
      { policy: REPORT },
    );
    assert.equal(target[2]!.status.rollout?.lastProgressAt, iso(T1));
    assert.equal(target[2]!.status.rollout?.progress.oldGone, 2);
  });
});

describe('decide: a controller-manager syncing from a stale revision cache numbers the new revision like the old one', () => {
  /** The classic stall on B, whose revision the controller numbered `n`: 1, the number A holds, then 2 once its cache caught up. */
  const stallAs = (n: number): Observation => {
    const b = rev(HASH.B, n);
    return targetObs({
      nodes: [ready('node-1', [pod({ hash: HASH.A })]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', [imagePullPod(HASH.B)])],
      revisions: [A1, b],
      // gather takes the revision storing the live template (reconcile/gather.ts), not the first of a tie
      currentRevision: b,
      target: dsAt2({ ready: 2, updated: 1, available: 2 }),
    });
  };
  const target = run(fromHealthy(stallAs(1), [sec(60), stallAs(2)], [sec(601), stallAs(2)]), { policy: UNDO });
  const [, started, renumbered, stalled] = target as [Decision, Decision, Decision, Decision];

  it('the rollout to B starts once, and the renumbering is neither a new rollout nor a cache to wait for', () => {
    assert.deepEqual(started.status.rollout?.toRevision, { hash: HASH.B, revision: 1 });
    assert.equal(renumbered.deferred, undefined);
    assert.deepEqual(renumbered.status.currentRevision, { hash: HASH.B, revision: 2 });
    assert.equal(renumbered.status.rollout?.startedAt, iso(T1));
    assert.equal(renumbered.status.rollout?.lastProgressAt, iso(T1));
    assert.equal(count(target, 'RolloutStarted'), 1);
  });

  it('at the deadline: Stalled on the revision, and the one undo goes back to A', () => {
    assert.equal(stalled.status.state, 'Stalled');
    assert.equal(stalled.status.owner, 'Revision');
    assert.deepEqual(stalled.action?.kind === 'Undo' ? [stalled.action.fromHash, stalled.action.toHash] : [], [HASH.B, HASH.A]);
    assert.equal(undos(target).length, 1);
  });
});

describe('decide: minReadySeconds 12 with progressDeadlineSeconds 10 (each node waits 12 s by design)', () => {
  const P10 = policy({ progressDeadlineSeconds: 10, suspectAfterSeconds: 5, onStall: { action: 'Undo' } });
  const minReady = { minReadySeconds: 12 };
  /**
   * The rollout `t` seconds after T1: node k (1-based) got its new pod at 12·(k-1) s, Ready at once,
   * and counts available 12 s later; nodes not reached yet still run A.
   */
  function world(t: number): Observation {
    const done = Math.min(3, Math.floor(t / 12));
    const nodes = [1, 2, 3].map((k) => {
      const name = `node-${k}`;
      const since = T1 + sec(12 * (k - 1));
      if (k <= done) return ready(name, [pod({ hash: HASH.B, readySince: iso(since) })]);
      if (k === done + 1) return ready(name, [waitingOutMinReadyPod(HASH.B, since)]);
      return ready(name, [pod({ hash: HASH.A })]);
    });
    return rolloutB(nodes, { ...minReady, updated: Math.min(3, done + 1), ready: 3, available: done === 3 ? 3 : 2 });
  }
  const schedules: { name: string; at: number[] }[] = [
    { name: 'a pass every second', at: Array.from({ length: 41 }, (_, i) => i) },
    { name: 'a pass at every requeue (5.1 s)', at: [0, 5.1, 10.2, 15.3, 20.4, 25.5, 30.6, 35.7, 36, 40.8] },
    { name: 'a pass only when a pod changes', at: [0, 12, 24, 36] },
    { name: 'a pass just before each node becomes available', at: [0, 11.999, 12, 23.999, 24, 35.999, 36] },
  ];
  for (const sc of schedules) {
    it(`${sc.name}: never Suspect or Stalled, ends Healthy, DeadlineTooShort True throughout`, () => {
      const target = run([{ obs: healthyA(minReady), at: T0 }, ...sc.at.map((t) => ({ obs: world(t), at: T1 + sec(t) }))], { policy: P10 });
      for (const [i, d] of target.entries()) {
        assert.ok(d.status.state === 'Healthy' || d.status.state === 'Progressing', `pass ${i}: ${d.status.state}`);
        assert.equal(d.action, undefined);
        assert.equal(d.status.undoSkipped, undefined);
        const c = cond(d.status, 'DeadlineTooShort');
        assert.equal(c.status, 'True');
        assert.equal(c.reason, 'DeadlineNotAboveMinReadySeconds');
      }
      assert.equal(count(target, 'RolloutSuspect'), 0);
      assert.equal(count(target, 'RolloutStalled'), 0);
      assert.equal(count(target, 'RolloutStarted'), 1);
      assert.equal(count(target, 'RolloutComplete'), 1);
      assert.equal(count(target, 'DeadlineNotAboveMinReadySeconds'), 1, 'the misconfiguration is said once, on the first pass');
      assert.deepEqual(reasons(target[0]!), ['DeadlineNotAboveMinReadySeconds']);
      const end = target[target.length - 1]!;
      assert.equal(end.status.state, 'Healthy');
      assert.equal(end.status.rollout?.completedAt, iso(T1 + sec(36)));
    });
  }

  it('while a node waits: Progressing, no cause and no owner, the node owned by ConfiguredWait, the wait said in the message', () => {
    const target = run(
      [
        { obs: healthyA(minReady), at: T0 },
        { obs: world(0), at: T1 },
        { obs: world(9), at: T1 + sec(9) },
      ],
      { policy: P10 },
    );
    const d = target[2]!;
    assert.equal(d.status.state, 'Progressing');
    assert.equal(d.status.cause, '');
    assert.equal(d.status.owner, undefined);
    assert.deepEqual(
      d.status.blockedNodes?.map((b) => [b.node, b.owner, b.cause, b.message]),
      [['node-1', 'ConfiguredWait', 'MinReadySeconds', 'ready, waiting out minReadySeconds 12 (3s left)']],
    );
    assert.match(d.status.message!, /\(minReadySeconds 12: a configured wait, not a stall\)/);
    assert.ok(d.requeueAfterMs !== undefined && d.requeueAfterMs <= sec(6), 'looks again within suspectAfterSeconds');
  });

  it('the DeadlineTooShort Warning names both settings', () => {
    const [first] = run([{ obs: healthyA(minReady), at: T0 }], { policy: P10 });
    const e = first!.events[0]!;
    assert.equal(e.type, 'Warning');
    assert.match(e.note, /progressDeadlineSeconds 10 is not longer than the DaemonSet's minReadySeconds 12/);
  });

  const settings: { name: string; deadline: number; minReadySeconds: number; present: boolean }[] = [
    { name: 'deadline 10 < minReadySeconds 12', deadline: 10, minReadySeconds: 12, present: true },
    { name: 'deadline 12 = minReadySeconds 12 (not longer)', deadline: 12, minReadySeconds: 12, present: true },
    { name: 'deadline 13 > minReadySeconds 12', deadline: 13, minReadySeconds: 12, present: false },
    { name: 'minReadySeconds 0', deadline: 10, minReadySeconds: 0, present: false },
  ];
  for (const s of settings) {
    it(`${s.name}: DeadlineTooShort ${s.present ? 'True' : 'absent'}`, () => {
      const [d] = run([{ obs: healthyA({ minReadySeconds: s.minReadySeconds }), at: T0 }], {
        policy: policy({ progressDeadlineSeconds: s.deadline, suspectAfterSeconds: 5 }),
      });
      assert.equal(
        d!.status.conditions?.some((c) => c.type === 'DeadlineTooShort'),
        s.present,
      );
    });
  }

  it('raising progressDeadlineSeconds above minReadySeconds removes the condition; lowering it again brings it back, with its Warning', () => {
    const fixed = policy({ progressDeadlineSeconds: 13, suspectAfterSeconds: 5, onStall: { action: 'Undo' } }, 2);
    const broken = policy({ progressDeadlineSeconds: 10, suspectAfterSeconds: 5, onStall: { action: 'Undo' } }, 3);
    const target = run(
      [
        { obs: healthyA(minReady), at: T0 },
        { obs: world(40), at: T1 + sec(40) },
        { obs: world(40), at: T1 + sec(50), policy: fixed },
        { obs: world(40), at: T1 + sec(60), policy: fixed },
        { obs: world(40), at: T1 + sec(70), policy: broken },
      ],
      { policy: P10 },
    );
    assert.equal(cond(target[1]!.status, 'DeadlineTooShort').status, 'True');
    for (const d of [target[2]!, target[3]!]) {
      assert.ok(!d.status.conditions?.some((c) => c.type === 'DeadlineTooShort'), 'removed, not set False');
      assert.deepEqual(reasons(d), []);
    }
    assert.equal(cond(target[4]!.status, 'DeadlineTooShort').status, 'True');
    assert.equal(cond(target[4]!.status, 'DeadlineTooShort').lastTransitionTime, iso(T1 + sec(70)));
    assert.deepEqual(reasons(target[4]!), ['DeadlineNotAboveMinReadySeconds']);
  });
});

// --- The control plane ---------------------------------------------------------------------------------

describe('decide: the DaemonSet controller never observes the new generation', () => {
  /** Template 2 written (generation 2), the controller down: observedGeneration 1, no revision for it. */
  const unobserved = healthyA({
    generation: 2,
    observedGeneration: 1,
    templateGeneration: '2',
    images: [`registry.example/decoder:${HASH.B}`],
  });
  const started = rolloutB(
    [ready('node-1', [pod({ hash: HASH.B })]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', [pod({ hash: HASH.A })])],
    { updated: 1 },
  );
  const target = run(
    [
      { obs: healthyA(), at: T0 },
      { obs: unobserved, at: T1 },
      { obs: unobserved, at: T1 + sec(119) },
      { obs: unobserved, at: T1 + sec(120) },
      { obs: unobserved, at: T1 + sec(600) },
      { obs: unobserved, at: T1 + sec(900) },
      { obs: started, at: T1 + sec(1000) },
      { obs: completeB(), at: T1 + sec(1030) },
    ],
    { policy: UNDO },
  );
  const [, first, almost, suspect, stalled, later, resumed, done] = target;

  const timeline: { name: string; d: () => Decision; state: string; cause: string; owner: string | undefined; events: string[] }[] = [
    { name: 'first seen', d: () => first!, state: 'Healthy', cause: '', owner: undefined, events: [] },
    { name: '1 s before suspectAfter', d: () => almost!, state: 'Healthy', cause: '', owner: undefined, events: [] },
    {
      name: 'at suspectAfter',
      d: () => suspect!,
      state: 'Suspect',
      cause: 'ControllerNotObserving',
      owner: 'ControlPlane',
      events: ['RolloutSuspect'],
    },
    {
      name: 'at the deadline',
      d: () => stalled!,
      state: 'Stalled',
      cause: 'ControllerNotObserving',
      owner: 'ControlPlane',
      events: ['RolloutStalled', 'UndoSkipped'],
    },
    {
      name: 'later, still unobserved',
      d: () => later!,
      state: 'Stalled',
      cause: 'ControllerNotObserving',
      owner: 'ControlPlane',
      events: [],
    },
    {
      name: 'observed with the new revision',
      d: () => resumed!,
      state: 'Progressing',
      cause: '',
      owner: undefined,
      events: ['RolloutStarted'],
    },
    { name: 'every node on B', d: () => done!, state: 'Healthy', cause: '', owner: undefined, events: ['RolloutComplete'] },
  ];
  for (const tc of timeline) {
    it(`${tc.name}: ${tc.state}${tc.cause ? ` ${tc.cause}, owner ${tc.owner}` : ''}, events [${tc.events.join(', ')}], no action`, () => {
      const d = tc.d();
      assert.equal(d.status.state, tc.state);
      assert.equal(d.status.cause, tc.cause);
      assert.equal(d.status.owner || undefined, tc.owner);
      assert.deepEqual(reasons(d), tc.events);
      assert.equal(d.action, undefined);
      // There is no new revision and so no rollout to undo: while Stalled, the refusal says so.
      if (tc.state === 'Stalled') assert.equal(d.status.undoSkipped?.reason, 'NotTheRevision');
      else assert.equal(d.status.undoSkipped, undefined);
      assert.equal(d.status.lastUndo, undefined);
    });
  }

  it('the wait is timed in status.unobserved from when it was first seen, and cleared once observed', () => {
    for (const d of [first!, almost!, suspect!, stalled!, later!]) assert.deepEqual(d.status.unobserved, { generation: 2, since: iso(T1) });
    assert.equal(resumed!.status.unobserved, undefined);
    assert.equal(first!.status.rollout, undefined, 'no rollout without a revision');
  });

  it('the stall says the control plane is at fault and an undo would not help; conditions carry the cause', () => {
    assert.match(stalled!.status.message!, /has not observed generation 2 \(observed 1\)/);
    assert.match(stalled!.status.message!, /kube-controller-manager/);
    assert.match(stalled!.status.message!, /an undo would not help/);
    assert.equal(cond(stalled!.status, 'Stalled').status, 'True');
    assert.equal(cond(stalled!.status, 'Stalled').reason, 'ControllerNotObserving');
    assert.equal(cond(stalled!.status, 'Progressing').reason, 'ProgressDeadlineExceeded');
  });

  it('once observed, the rollout runs from A to B and its clock starts then', () => {
    assert.deepEqual(resumed!.status.rollout?.fromRevision, { revision: 1, hash: HASH.A });
    assert.deepEqual(resumed!.status.rollout?.toRevision, { revision: 2, hash: HASH.B });
    assert.equal(resumed!.status.rollout?.startedAt, iso(T1 + sec(1000)));
    assert.equal(cond(resumed!.status, 'Stalled').status, 'False');
    assert.equal(done!.status.rollout?.completedAt, iso(T1 + sec(1030)));
  });
});

describe('decide: observed, incomplete, and the controller replaces no pod', () => {
  /** Template 2 observed, revision B current, but every node still runs A and nothing is blocked. */
  const idle = rolloutB(
    [ready('node-1', [pod({ hash: HASH.A })]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', [pod({ hash: HASH.A })])],
    { updated: 0 },
  );
  const target = run(fromHealthy(idle, [sec(119)], [sec(120)], [sec(600)], [sec(700)]), { policy: UNDO });
  const [, start, before, suspect, stalled, later] = target;

  it('Progressing at first, with nothing named: waiting for the controller is not yet a fault', () => {
    for (const d of [start!, before!]) {
      assert.equal(d.status.state, 'Progressing');
      assert.equal(d.status.cause, '');
      assert.equal(d.status.owner, undefined);
    }
    assert.deepEqual(reasons(start!), ['RolloutStarted']);
  });

  it('Suspect at suspectAfter: ControllerNotActing, owner ControlPlane', () => {
    assert.equal(suspect!.status.state, 'Suspect');
    assert.equal(suspect!.status.cause, 'ControllerNotActing');
    assert.equal(suspect!.status.owner, 'ControlPlane');
    assert.deepEqual(reasons(suspect!), ['RolloutSuspect']);
  });

  it('Stalled at the deadline: ControllerNotActing, owner ControlPlane, no undo (NotTheRevision)', () => {
    assert.equal(stalled!.status.cause, 'ControllerNotActing');
    assert.equal(stalled!.status.owner, 'ControlPlane');
    assertRefusedAtStall(stalled!, 'NotTheRevision', /blamed on the control plane \(ControllerNotActing\).*an undo would not help/);
    assert.match(stalled!.status.message!, /No node is blocked/);
    assert.deepEqual(stalled!.status.blockedNodes, []);
    assert.deepEqual(stalled!.status.emptyNodes, []);
  });

  it('later passes: silent, no action', () => {
    assert.equal(later!.status.state, 'Stalled');
    assert.deepEqual(reasons(later!), []);
    assert.equal(undos(target).length, 0);
  });
});

// --- Several guards on one DaemonSet -----------------------------------------------------------------------

describe('decide: two guards target the same DaemonSet', () => {
  const self: GuardPeer = { name: DS_NAME, createdAt: iso(T0 - sec(3600)) };
  const older: GuardPeer = { name: 'a', createdAt: iso(T0 - sec(7200)) };
  const both = [older, self];

  describe('an older guard is in charge', () => {
    const target = run(
      [
        { obs: healthyA({}, { guards: both }), at: T0 },
        { obs: stallB(undefined, {}, { guards: both }), at: T1 },
        { obs: stallB(undefined, {}, { guards: both }), at: T1 + sec(600) },
        { obs: stallB(undefined, {}, { guards: both }), at: T1 + sec(1200) },
        // The other guard is deleted: this one judges from here on.
        { obs: stallB(undefined, {}, { guards: [self] }), at: T1 + sec(1300) },
        { obs: stallB(), at: T1 + sec(1899) },
        { obs: stallB(), at: T1 + sec(1900) },
      ],
      { policy: UNDO },
    );
    const conflict = target.slice(0, 4);
    const [takeover, almost, stalled] = target.slice(4) as [Decision, Decision, Decision];

    it('state Conflict, naming the guard in charge, on every pass; no action even past the deadline', () => {
      for (const d of conflict) {
        assert.equal(d.status.state, 'Conflict');
        assert.equal(d.status.inCharge, 'a');
        assert.equal(d.status.cause, '');
        assert.ok(!d.status.owner);
        assert.equal(d.status.undoSkipped, undefined);
        assert.equal(d.status.rollout, undefined);
        assert.equal(d.action, undefined);
        assert.equal(d.requeueAfterMs, undefined);
        assert.match(d.status.message!, /RolloutGuard a is in charge of DaemonSet decoder \(the oldest of 2 guards targeting it\)/);
        assert.equal(cond(d.status, 'Ready').reason, 'Conflict');
        assert.equal(cond(d.status, 'Stalled').status, 'Unknown');
      }
    });

    it('one Conflict Event, a Warning mirrored on the DaemonSet', () => {
      assert.deepEqual(reasons(conflict[0]!), ['Conflict']);
      assert.equal(conflict[0]!.events[0]!.type, 'Warning');
      assert.equal(conflict[0]!.events[0]!.onTarget, true);
      assert.equal(count(target, 'Conflict'), 1);
    });

    it('when the other guard disappears, this one judges: the rollout is tracked from A, its clock starting then', () => {
      assert.equal(takeover.status.state, 'Progressing');
      assert.equal(takeover.status.inCharge, undefined);
      assert.deepEqual(reasons(takeover), ['RolloutStarted']);
      assert.deepEqual(takeover.status.rollout?.fromRevision, { revision: 1, hash: HASH.A });
      assert.equal(takeover.status.rollout?.lastProgressAt, iso(T1 + sec(1300)));
      assert.equal(almost.status.state, 'Suspect');
    });

    it('and a stall blamed on the revision is undone as usual', () => {
      assert.equal(stalled.status.state, 'Stalled');
      assert.equal(stalled.status.owner, 'Revision');
      assert.equal(stalled.status.cause, 'ImagePullFailure');
      assert.equal(stalled.status.undoSkipped, undefined);
      assert.deepEqual(reasons(stalled), ['RolloutStalled']);
      assert.equal(stalled.action?.kind, 'Undo');
      assert.equal(undos(target).length, 1);
    });
  });

  const who: { name: string; guards: GuardPeer[] | undefined; conflict: boolean }[] = [
    { name: 'an older guard', guards: [self, older], conflict: true },
    {
      name: 'a guard created at the same instant whose name sorts first',
      guards: [self, { name: 'a', createdAt: self.createdAt }],
      conflict: true,
    },
    { name: 'a newer guard', guards: [{ name: 'b', createdAt: iso(T0) }, self], conflict: false },
    {
      name: 'a guard created at the same instant whose name sorts after',
      guards: [self, { name: 'zz', createdAt: self.createdAt }],
      conflict: false,
    },
    { name: 'only this guard', guards: [self], conflict: false },
    { name: 'no guard list (not known)', guards: undefined, conflict: false },
  ];
  for (const tc of who) {
    it(`with ${tc.name}: ${tc.conflict ? 'Conflict' : 'this guard is in charge'}`, () => {
      const extra: Partial<TargetObsOptions> = tc.guards ? { guards: tc.guards } : {};
      const target = run(
        [
          { obs: healthyA({}, extra), at: T0 },
          { obs: stallB(undefined, {}, extra), at: T1 },
          { obs: stallB(undefined, {}, extra), at: T1 + sec(600) },
        ],
        { policy: UNDO },
      );
      if (tc.conflict) {
        for (const d of target) assert.equal(d.status.state, 'Conflict');
        assert.equal(undos(target).length, 0);
      } else {
        assert.equal(target[2]!.status.state, 'Stalled');
        assert.equal(target[2]!.action?.kind, 'Undo');
      }
    });
  }
});

// --- Refusals that are not about attribution ---------------------------------------------------------------

describe('decide: a DaemonSet owned by another controller', () => {
  const owner = { kind: 'ClusterPolicy', name: 'cluster-policy' };
  const target = run(
    [
      { obs: healthyA({ owner }), at: T0 },
      { obs: stallB(undefined, { owner }), at: T1 },
      { obs: stallB(undefined, { owner }), at: T1 + sec(600) },
      { obs: stallB(undefined, { owner }), at: T1 + sec(700) },
    ],
    { policy: UNDO },
  );
  const stalled = target[2]!;

  it('Stalled with the revision at fault, yet no action: undoSkipped OwnedByController names ClusterPolicy/cluster-policy', () => {
    assert.equal(stalled.status.cause, 'ImagePullFailure');
    assert.equal(stalled.status.owner, 'Revision');
    assertRefusedAtStall(stalled, 'OwnedByController', /ClusterPolicy\/cluster-policy/);
    assert.match(stalled.status.undoSkipped!.message, /would revert an undo: roll back there/);
    assert.match(stalled.status.message!, /Not undoing: the DaemonSet is managed by ClusterPolicy\/cluster-policy/);
  });

  it('no pass acts; the refusal is said once', () => {
    assert.equal(undos(target).length, 0);
    assert.equal(count(target, 'UndoSkipped'), 1);
    assert.deepEqual(reasons(target[3]!), []);
    assert.equal(target[3]!.status.undoSkipped?.reason, 'OwnedByController');
  });
});

describe("decide: a fresh guard first sees a DaemonSet midway through another guard's undo", () => {
  /** Another guard undid B (restoring A, renumbered to revision 3) and recorded it on the DaemonSet. */
  const record: DaemonSetUndoRecord = { from: HASH.B, to: HASH.A, at: iso(T1 - sec(30)), guard: 'default/old' };
  /** node-1 back on A, node-2 still on B waiting its turn, node-3 as given. */
  const midRollback = (node3: PodView[], target: Partial<TargetView> = {}): Observation =>
    targetObs({
      nodes: [ready('node-1', [pod({ hash: HASH.A })]), ready('node-2', [pod({ hash: HASH.B })]), ready('node-3', node3)],
      revisions: [A3, B2],
      target: {
        generation: 3,
        observedGeneration: 3,
        templateGeneration: '3',
        desired: 3,
        current: 3,
        updated: 2,
        ready: 2,
        available: 2,
        undoRecord: record,
        ...target,
      },
    });
  const cases: { name: string; world: Observation; owner: string; cause: string }[] = [
    {
      name: 'A itself crash-looping on Ready node-3 (evidence against A)',
      world: midRollback([crashLoopPod(HASH.A)], { available: 1 }),
      owner: 'Revision',
      cause: 'CrashLoop',
    },
    {
      name: 'no node blocked, the controller idle',
      world: midRollback([pod({ hash: HASH.A })], { updated: 2, available: 3, ready: 3 }),
      owner: 'ControlPlane',
      cause: 'ControllerNotActing',
    },
  ];
  for (const tc of cases) {
    it(`${tc.name}: tracked as a rollback from B to A, and its stall is never undone back to B`, () => {
      const steps: Step[] = [0, 120, 600, 700, 1800].map((s) => ({ obs: tc.world, at: T1 + sec(s), persist: persistUndo }));
      const target = run(steps, { policy: UNDO, initial: {} });
      const [first, suspect, stalled, ...later] = target as [Decision, Decision, Decision, ...Decision[]];
      assert.equal(first.status.state, 'RollingBack');
      assert.equal(first.status.rollout?.rollback, true);
      assert.deepEqual(first.status.rollout?.fromRevision, { revision: 2, hash: HASH.B });
      assert.deepEqual(first.status.rollout?.toRevision, { revision: 3, hash: HASH.A });
      assert.equal(suspect.status.state, 'Suspect');
      assert.equal(stalled.status.state, 'Stalled');
      assert.equal(stalled.status.cause, tc.cause);
      assert.equal(stalled.status.owner, tc.owner);
      assert.deepEqual(reasons(stalled), ['RollbackStalled'], 'the undo itself stalled: said once, not retried');
      assert.equal(stalled.status.undoSkipped, undefined);
      for (const d of target) {
        assert.equal(d.action, undefined);
        assert.equal(d.status.undoPlan, undefined, 'no plan to restore B');
        assert.equal(d.status.lastUndo, undefined, 'this guard made no undo');
      }
      for (const d of later) {
        assert.equal(d.status.state, 'Stalled');
        assert.deepEqual(reasons(d), []);
      }
    });
  }

  it('Report mode: no dry run of an undo back to B either', () => {
    const target = run(
      [0, 600, 700].map((s) => ({ obs: cases[0]!.world, at: T1 + sec(s) })),
      { policy: REPORT },
    );
    for (const d of target) assert.equal(d.action, undefined);
    assert.equal(target[1]!.status.state, 'Stalled');
  });
});

// --- DESIRED shrinks mid-rollout ---------------------------------------------------------------------------

describe('decide: a node leaves the targets mid-rollout of a good image (DESIRED 3 → 2)', () => {
  const taint = 'untolerated taint example.com/maintenance=true:NoExecute';
  const midway = rolloutB(
    [ready('node-1', [pod({ hash: HASH.B })]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', [pod({ hash: HASH.A })])],
    { updated: 1 },
  );
  /** B rolled out on node-1 and node-2; node-3 no longer a target. gather reports the departure once. */
  const shrunk = (leftNodes: { node: string; reason: string; nodeChanged?: boolean }[]): Observation =>
    rolloutB(
      [
        ready('node-1', [pod({ hash: HASH.B })]),
        ready('node-2', [pod({ hash: HASH.B })]),
        withHealth(node('node-3', [], false, taint), health()),
      ],
      { desired: 2, current: 2, updated: 2, ready: 2, available: 2 },
      { leftNodes },
    );

  const cases: { name: string; nodeChanged: boolean; owner: 'Node' | 'Revision' }[] = [
    { name: 'someone tainted node-3 NoExecute (the node changed)', nodeChanged: true, owner: 'Node' },
    { name: 'the template stopped tolerating node-3 (the node did not change)', nodeChanged: false, owner: 'Revision' },
  ];
  for (const tc of cases) {
    describe(tc.name, () => {
      const target = run(
        [
          { obs: healthyA(), at: T0 },
          { obs: midway, at: T1 },
          { obs: shrunk([{ node: 'node-3', reason: taint, nodeChanged: tc.nodeChanged }]), at: T1 + sec(30) },
          { obs: shrunk([]), at: T1 + sec(150) },
          { obs: shrunk([]), at: T1 + sec(630), persist: persistUndo },
          { obs: shrunk([]), at: T1 + sec(700) },
        ],
        { policy: UNDO },
      );
      const [, , left, suspect, stalled, later] = target;

      it(`DesiredShrank names node-3; TargetShrank with owner ${tc.owner} from then on`, () => {
        assert.deepEqual(reasons(left!), ['DesiredShrank']);
        assert.match(
          left!.events[0]!.note,
          /DESIRED dropped from 3 to 2: node-3 \(untolerated taint example\.com\/maintenance=true:NoExecute\)/,
        );
        assert.deepEqual(left!.status.rollout?.leftNodes, [{ node: 'node-3', reason: taint, nodeChanged: tc.nodeChanged }]);
        for (const d of [left!, suspect!, stalled!]) {
          assert.equal(d.status.cause, 'TargetShrank');
          assert.equal(d.status.owner, tc.owner);
        }
        assert.equal(suspect!.status.state, 'Suspect');
        assert.equal(stalled!.status.state, 'Stalled');
      });

      if (tc.owner === 'Node') {
        it('at the deadline: no undo, NotTheRevision; the message says the node changed', () => {
          assertRefusedAtStall(stalled!, 'NotTheRevision', /blamed on the nodes \(TargetShrank\)/);
          assert.match(stalled!.status.message!, /node-3 .* changed during the rollout/);
          assert.equal(undos(target).length, 0);
          assert.deepEqual(reasons(later!), []);
        });
      } else {
        it('at the deadline: the undo is planned, the departed node is the evidence', () => {
          assert.equal(stalled!.status.undoSkipped, undefined);
          assert.deepEqual(reasons(stalled!), ['RolloutStalled']);
          assert.equal(stalled!.action?.kind, 'Undo');
          assert.deepEqual(stalled!.action?.kind === 'Undo' ? [stalled!.action.fromHash, stalled!.action.toHash] : [], [HASH.B, HASH.A]);
          assert.match(stalled!.status.lastUndo?.message ?? '', /fails on node-3$/);
          assert.match(stalled!.status.message!, /The new template is at fault/);
          assert.equal(later!.action, undefined, 'applied once, not again');
          assert.equal(undos(target).length, 1);
        });
      }
    });
  }
});

// --- Regressions from the attribution review ---------------------------------------------------------------

describe('decide: regressions from the attribution review', () => {
  const selfGuard: GuardPeer = { name: DS_NAME, createdAt: iso(T0 - sec(3600)) };
  const olderGuard: GuardPeer = { name: 'a', createdAt: iso(T0 - sec(7200)) };
  /** node-1 and node-2 run B fine; node-3's kubelet is gone, its old pod stuck Terminating, no new pod. */
  const deadNode3 = (extra: Partial<TargetObsOptions> = {}): Observation =>
    rolloutB(
      [
        ready('node-1', [pod({ hash: HASH.B })]),
        ready('node-2', [pod({ hash: HASH.B })]),
        sick('node-3', [deletingPod(HASH.A, T1 - sec(30))], deadKubelet()),
      ],
      { current: 3, ready: 2, updated: 2, available: 2 },
      extra,
    );

  describe('1. a temporary Conflict does not lose the rollout, nor so the undo', () => {
    const target = run(
      [
        { obs: healthyA(), at: T0 },
        { obs: stallB(), at: T1 },
        { obs: stallB(undefined, {}, { guards: [olderGuard, selfGuard] }), at: T1 + sec(100) },
        { obs: stallB(undefined, {}, { guards: [selfGuard] }), at: T1 + sec(200) },
        { obs: stallB(), at: T1 + sec(800) },
      ],
      { policy: UNDO },
    );
    const [, start, conflict, back, stalled] = target as [Decision, Decision, Decision, Decision, Decision];

    it('Conflict → back in charge → still stalled at T1+800s: Undo to A (fromRevision kept), no NoEarlierRevision, no "being placed on nodes" RolloutStarted', () => {
      assert.equal(conflict.status.state, 'Conflict');
      assert.equal(back.status.state, 'Progressing');
      assert.deepEqual(back.status.rollout?.fromRevision, { revision: 1, hash: HASH.A });
      assert.equal(back.status.rollout?.lastProgressAt, iso(T1 + sec(200)), 'the clock does not run while not judging');
      assert.equal(stalled.status.state, 'Stalled');
      assert.equal(stalled.status.owner, 'Revision');
      assert.deepEqual(stalled.status.rollout?.fromRevision, { revision: 1, hash: HASH.A });
      assert.deepEqual(stalled.action, {
        kind: 'Undo',
        fromHash: HASH.B,
        toHash: HASH.A,
        toRevisionName: `${DS_NAME}-${HASH.A}`,
        expectedUid: 'uid-decoder',
        expectedTemplateGeneration: '2',
        record: { from: HASH.B, to: HASH.A, at: iso(T1 + sec(800)), guard: `default/${DS_NAME}` },
      });
      for (const d of target) assert.notEqual(d.status.undoSkipped?.reason, 'NoEarlierRevision');
      assert.equal(count(target, 'RolloutStarted'), 1, 'only the template change at T1 starts a rollout');
      assert.deepEqual(reasons(start), ['RolloutStarted']);
      for (const d of target) for (const e of d.events) assert.doesNotMatch(e.note, /being placed on nodes/);
    });

    it('the Conflict status keeps status.rollout and clears what it no longer judges (blocked/empty nodes, undoSkipped, undoPlan)', () => {
      assert.ok(start.status.blockedNodes!.length > 0, 'the pass before named node-3');
      assert.deepEqual(conflict.status.rollout, start.status.rollout);
      assert.deepEqual(conflict.status.blockedNodes, []);
      assert.equal(conflict.status.blockedNodeCount, 0);
      assert.deepEqual(conflict.status.emptyNodes, []);
      assert.equal(conflict.status.emptyNodeCount, 0);
      assert.equal(conflict.status.undoSkipped, undefined);
      assert.equal(conflict.status.undoPlan, undefined);
      assert.ok(!conflict.status.owner);
    });

    const before: {
      name: string;
      world: (extra?: Partial<TargetObsOptions>) => Observation;
      pol: GuardPolicy;
      had: (s: GuardStatus) => boolean;
    }[] = [
      {
        name: 'a refused stall (dead kubelet on node-3, undoSkipped NotTheRevision)',
        world: (e) => deadNode3(e),
        pol: UNDO,
        had: (s) => s.undoSkipped?.reason === 'NotTheRevision' && s.emptyNodes!.length === 1,
      },
      {
        name: 'a stall in Report mode (undoPlan shown)',
        world: (e) => stallB(undefined, {}, e),
        pol: REPORT,
        had: (s) => s.undoPlan !== undefined && s.blockedNodes!.length === 1,
      },
    ];
    for (const tc of before) {
      it(`Conflict entered from ${tc.name}: rollout kept, nodes, undoSkipped and undoPlan cleared`, () => {
        const rs = run(
          [
            { obs: healthyA(), at: T0 },
            { obs: tc.world(), at: T1 },
            { obs: tc.world(), at: T1 + sec(600) },
            { obs: tc.world({ guards: [olderGuard, selfGuard] }), at: T1 + sec(700) },
          ],
          { policy: tc.pol },
        );
        const [, , stall, c] = rs as [Decision, Decision, Decision, Decision];
        assert.equal(stall.status.state, 'Stalled');
        assert.ok(tc.had(stall.status), 'the stall set what the Conflict must clear');
        assert.equal(c.status.state, 'Conflict');
        assert.deepEqual(c.status.rollout, stall.status.rollout);
        assert.deepEqual(c.status.blockedNodes, []);
        assert.deepEqual(c.status.emptyNodes, []);
        assert.equal(c.status.undoSkipped, undefined);
        assert.equal(c.status.undoPlan, undefined);
        assert.equal(c.action, undefined);
      });
    }
  });

  it('2. a shrink does not hide a failing revision: node-2 ImagePullBackOff on B (Ready), node-3 tainted away → owner Revision, Undo at the deadline, node-2 named', () => {
    const taint = 'untolerated taint example.com/maintenance=true:NoExecute';
    const failing = (): NodeView[] => [ready('node-1', [pod({ hash: HASH.B })]), ready('node-2', [imagePullPod(HASH.B)])];
    const before = rolloutB([...failing(), ready('node-3', [pod({ hash: HASH.A })])], { updated: 2, ready: 2, available: 2 });
    const shrunk = (leftNodes: { node: string; reason: string; nodeChanged: boolean }[]): Observation =>
      rolloutB(
        [...failing(), withHealth(node('node-3', [], false, taint), health())],
        { desired: 2, current: 2, updated: 2, ready: 1, available: 1 },
        { leftNodes },
      );
    const target = run(
      [
        { obs: healthyA(), at: T0 },
        { obs: before, at: T1 },
        { obs: shrunk([{ node: 'node-3', reason: taint, nodeChanged: true }]), at: T1 + sec(30) },
        { obs: shrunk([]), at: T1 + sec(150) },
        { obs: shrunk([]), at: T1 + sec(600) },
      ],
      { policy: UNDO },
    );
    const [, , left, suspect, stalled] = target as [Decision, Decision, Decision, Decision, Decision];
    assert.deepEqual(reasons(left), ['DesiredShrank']);
    for (const d of [left, suspect, stalled]) assert.equal(d.status.owner, 'Revision');
    assert.equal(suspect.status.state, 'Suspect');
    assert.equal(stalled.status.state, 'Stalled');
    assert.equal(stalled.status.undoSkipped, undefined);
    assert.deepEqual(reasons(stalled), ['RolloutStalled']);
    assert.equal(stalled.action?.kind, 'Undo');
    assert.deepEqual(stalled.action?.kind === 'Undo' ? [stalled.action.fromHash, stalled.action.toHash] : [], [HASH.B, HASH.A]);
    assert.match(stalled.status.lastUndo?.message ?? '', /fails on node-2$/);
    assert.match(stalled.status.message!, /node-2/);
    assert.match(stalled.events[0]!.note, /node-2/);
    assert.equal(undos(target).length, 1);
  });

  it('3. a termination grace period longer than the deadlines is a configured wait: Progressing at +120 s, +600 s and +800 s, never Suspect or Stalled', () => {
    const world = rolloutB(
      [
        ready('node-1', [pod({ hash: HASH.B })]),
        ready('node-2', [pod({ hash: HASH.B })]),
        ready('node-3', [deletingPod(HASH.A, T1 + sec(900))]),
      ],
      {
        ready: 2,
        updated: 2,
        available: 2,
      },
    );
    const target = run(fromHealthy(world, [sec(120)], [sec(600)], [sec(800)]), { policy: UNDO });
    for (const [i, d] of target.slice(1).entries()) {
      assert.equal(d.status.state, 'Progressing', `pass ${i + 1}`);
      assert.equal(d.action, undefined);
      assert.equal(d.status.undoSkipped, undefined);
      assert.deepEqual(
        d.status.emptyNodes?.map((e) => [e.node, e.owner, e.cause]),
        [['node-3', 'ConfiguredWait', 'PodTerminating']],
      );
      assert.match(d.status.message!, /a termination grace period: a configured wait, not a stall/);
    }
    assert.equal(count(target, 'RolloutSuspect'), 0);
    assert.equal(count(target, 'RolloutStalled'), 0);
  });

  it('4. readiness flapping under minReadySeconds 30 (restartCount growing) does not reset the clock: one RolloutStalled in 1500 s, no Stalled → Progressing after it (Report)', () => {
    const minReady = { minReadySeconds: 30 };
    /** node-3's B pod, `t` s after T1: crash-looping for 20 s, then Ready (not available) for 20 s, and so on. */
    const node3 = (t: number): PodView => {
      const restarts = 1 + Math.floor(t / 40);
      const window = Math.floor(t / 20);
      if (window % 2 === 0) return { ...crashLoopPod(HASH.B), restartCount: restarts };
      return pod({ hash: HASH.B, ready: true, available: false, readySince: iso(T1 + sec(20 * window)), restartCount: restarts });
    };
    const world = (t: number): Observation => {
      const p = node3(t);
      return stallB([p], { ...minReady, ready: p.ready ? 3 : 2 });
    };
    const target = run(
      [{ obs: healthyA(minReady), at: T0 }, ...Array.from({ length: 151 }, (_, k) => ({ obs: world(10 * k), at: T1 + sec(10 * k) }))],
      { policy: REPORT },
    );
    assert.equal(count(target, 'RolloutStalled'), 1);
    assert.equal(count(target, 'RolloutResumed'), 0);
    const first = target.findIndex((d) => d.status.state === 'Stalled');
    assert.ok(first > 0, 'the rollout stalls');
    assert.ok(first <= 1 + 63, `stalled by T1+630s (first at pass ${first})`);
    for (const [i, d] of target.slice(first).entries()) {
      assert.equal(d.status.state, 'Stalled', `pass ${first + i} (T1+${10 * (first + i - 1)}s)`);
      assert.equal(d.status.owner, 'Revision');
      assert.equal(d.status.cause, 'CrashLoop');
    }
  });

  it('5. the UndoSkipped Event note and status.undoSkipped.message name the node at fault (dead kubelet on node-3)', () => {
    const target = run(fromHealthy(deadNode3(), [sec(600)]), { policy: UNDO });
    const stalled = target[2]!;
    assert.deepEqual(reasons(stalled), ['RolloutStalled', 'UndoSkipped']);
    assert.match(stalled.events[1]!.note, /blamed on the nodes \(NodeNotReady: node-3\)/);
    assert.match(stalled.status.undoSkipped!.message, /blamed on the nodes \(NodeNotReady: node-3\)/);
  });

  it('6. the guard\'s own undo stalls with the restored revision failing: never "an undo would restore the previous one", but "never undoes its own undo"', () => {
    const record: DaemonSetUndoRecord = { from: HASH.B, to: HASH.A, at: iso(T1 + sec(600)), guard: `default/${DS_NAME}` };
    /** After the undo: A renumbered to revision 3, node-1 back on A, node-2 still on B, A crash-looping on Ready node-3. */
    const rollingBack = targetObs({
      nodes: [ready('node-1', [pod({ hash: HASH.A })]), ready('node-2', [pod({ hash: HASH.B })]), ready('node-3', [crashLoopPod(HASH.A)])],
      revisions: [A3, B2],
      target: { generation: 3, observedGeneration: 3, templateGeneration: '3', updated: 2, ready: 2, available: 1, undoRecord: record },
    });
    const target = run(
      [
        { obs: healthyA(), at: T0 },
        { obs: stallB(), at: T1 },
        { obs: stallB(), at: T1 + sec(600), persist: persistUndo },
        { obs: rollingBack, at: T1 + sec(610) },
        { obs: rollingBack, at: T1 + sec(730) },
        { obs: rollingBack, at: T1 + sec(1210) },
        { obs: rollingBack, at: T1 + sec(1300) },
      ],
      { policy: UNDO },
    );
    const [, , undone, rb, suspect, stalled, later] = target as [Decision, Decision, Decision, Decision, Decision, Decision, Decision];
    assert.equal(undone.action?.kind, 'Undo');
    assert.equal(rb.status.state, 'RollingBack');
    assert.equal(rb.status.rollout?.rollback, true);
    assert.equal(suspect.status.state, 'Suspect');
    assert.equal(stalled.status.state, 'Stalled');
    assert.equal(stalled.status.owner, 'Revision');
    assert.equal(stalled.status.cause, 'CrashLoop');
    assert.deepEqual(reasons(stalled), ['RollbackStalled']);
    assert.equal(undos(target).length, 1, 'the undo is never undone');
    for (const d of [suspect, stalled, later]) {
      assert.doesNotMatch(d.status.message!, /an undo would restore the previous one/);
      assert.match(d.status.message!, /the guard never undoes its own undo/);
    }
    assert.doesNotMatch(stalled.events[0]!.note, /an undo would restore the previous one/);
    assert.match(stalled.events[0]!.note, /The restored revision fails on node-3: the guard never undoes its own undo/);
  });

  it('7. a ControllerNotObserving stall (no rollout), Undo policy: undoSkipped NotTheRevision, one UndoSkipped Event on entering Stalled, none later', () => {
    const unobserved = healthyA({
      generation: 2,
      observedGeneration: 1,
      templateGeneration: '2',
      images: [`registry.example/decoder:${HASH.B}`],
    });
    const target = run(fromHealthy(unobserved, [sec(120)], [sec(600)], [sec(700)], [sec(1800)], [sec(3600)]), { policy: UNDO });
    const [, , suspect, stalled, ...later] = target as [Decision, Decision, Decision, Decision, ...Decision[]];
    assert.equal(suspect.status.state, 'Suspect');
    assert.equal(suspect.status.undoSkipped, undefined);
    assert.equal(stalled.status.state, 'Stalled');
    assert.equal(stalled.status.cause, 'ControllerNotObserving');
    assert.equal(stalled.status.rollout, undefined, 'no rollout: no revision for the new template');
    assert.equal(stalled.action, undefined);
    assert.equal(stalled.status.undoSkipped?.reason, 'NotTheRevision');
    assert.match(stalled.status.undoSkipped.message, /has not observed the new spec/);
    assert.deepEqual(reasons(stalled), ['RolloutStalled', 'UndoSkipped']);
    const skipped = stalled.events[1]!;
    assert.equal(skipped.type, 'Warning');
    assert.equal(skipped.onTarget, true);
    assert.match(skipped.note, /^Not undoing: the DaemonSet controller has not observed the new spec/);
    assert.equal(cond(stalled.status, 'RolledBack').reason, 'UndoSkipped');
    for (const d of later) {
      assert.equal(d.status.state, 'Stalled');
      assert.equal(d.status.undoSkipped?.reason, 'NotTheRevision');
      assert.deepEqual(reasons(d), []);
      assert.equal(d.action, undefined);
    }
    assert.equal(count(target, 'UndoSkipped'), 1);
  });
});

// --- Properties over generated timelines -------------------------------------------------------------------

/** mulberry32: a tiny deterministic PRNG, so every run checks the same sequences. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A world, given the undo record the DaemonSet carries (written with any undo the guard made). */
type World = { name: string; obs: (rec: DaemonSetUndoRecord | undefined) => Observation };
const withRecord = (o: Observation, rec: DaemonSetUndoRecord | undefined): Observation =>
  o.kind === 'Target' && rec ? { ...o, target: { ...o.target, undoRecord: { ...rec } } } : o;
const WORLDS: World[] = [
  { name: 'healthy A', obs: (r) => withRecord(healthyA(), r) },
  { name: 'B cannot pull on node-3', obs: (r) => withRecord(stallB(), r) },
  { name: 'B crash-loops on node-3', obs: (r) => withRecord(stallB([crashLoopPod(HASH.B)]), r) },
  {
    name: 'node-3 dead, B fine elsewhere',
    obs: (r) =>
      withRecord(
        rolloutB(
          [
            ready('node-1', [pod({ hash: HASH.B })]),
            ready('node-2', [pod({ hash: HASH.B })]),
            sick('node-3', [deletingPod(HASH.A, T0)], deadKubelet()),
          ],
          { ready: 2, updated: 2, available: 2 },
        ),
        r,
      ),
  },
  {
    name: 'node-2 dead, B cannot pull on Ready node-3',
    obs: (r) =>
      withRecord(
        rolloutB(
          [
            ready('node-1', [pod({ hash: HASH.B })]),
            sick('node-2', [notReadyPod(HASH.B)], deadKubelet()),
            ready('node-3', [imagePullPod(HASH.B)]),
          ],
          { ready: 1, updated: 3, available: 1 },
        ),
        r,
      ),
  },
  {
    name: 'controller idle, all on A',
    obs: (r) =>
      withRecord(
        rolloutB(
          [ready('node-1', [pod({ hash: HASH.A })]), ready('node-2', [pod({ hash: HASH.A })]), ready('node-3', [pod({ hash: HASH.A })])],
          { updated: 0 },
        ),
        r,
      ),
  },
  {
    name: 'controller not observing',
    obs: (r) => withRecord(healthyA({ generation: 2, observedGeneration: 1, templateGeneration: '2' }), r),
  },
  { name: 'scheduler not acting on node-3', obs: (r) => withRecord(stallB([unscheduledPod(HASH.B)]), r) },
  {
    name: 'B owned by ClusterPolicy, failing',
    obs: (r) => withRecord(stallB(undefined, { owner: { kind: 'ClusterPolicy', name: 'cluster-policy' } }), r),
  },
  { name: 'B complete', obs: (r) => withRecord(completeB(), r) },
  {
    name: 'rolling back to A (revision 3)',
    obs: (r) =>
      withRecord(
        targetObs({
          nodes: [
            ready('node-1', [pod({ hash: HASH.A })]),
            ready('node-2', [pod({ hash: HASH.A })]),
            ready('node-3', [imagePullPod(HASH.B)]),
          ],
          revisions: [A3, B2],
          target: { generation: 3, observedGeneration: 3, templateGeneration: '3', updated: 2, ready: 2, available: 2 },
        }),
        r,
      ),
  },
  {
    name: 'A (revision 3) failing on node-3',
    obs: (r) =>
      withRecord(
        targetObs({
          nodes: [
            ready('node-1', [pod({ hash: HASH.A })]),
            ready('node-2', [pod({ hash: HASH.B })]),
            ready('node-3', [crashLoopPod(HASH.A)]),
          ],
          revisions: [A3, B2],
          target: { generation: 3, observedGeneration: 3, templateGeneration: '3', updated: 2, ready: 2, available: 1 },
        }),
        r,
      ),
  },
  {
    name: 'node-3 tainted away',
    obs: (r) =>
      withRecord(
        rolloutB(
          [
            ready('node-1', [pod({ hash: HASH.B })]),
            ready('node-2', [pod({ hash: HASH.B })]),
            withHealth(node('node-3', [], false, 'untolerated taint'), health()),
          ],
          { desired: 2, current: 2, updated: 2, ready: 2, available: 2 },
          {
            leftNodes: [{ node: 'node-3', reason: 'untolerated taint', nodeChanged: true }],
          },
        ),
        r,
      ),
  },
  {
    name: 'B stopped tolerating node-3',
    obs: (r) =>
      withRecord(
        rolloutB(
          [
            ready('node-1', [pod({ hash: HASH.B })]),
            ready('node-2', [pod({ hash: HASH.B })]),
            withHealth(node('node-3', [], false, 'untolerated taint'), health()),
          ],
          { desired: 2, current: 2, updated: 2, ready: 2, available: 2 },
          {
            leftNodes: [{ node: 'node-3', reason: 'untolerated taint', nodeChanged: false }],
          },
        ),
        r,
      ),
  },
];
const STEPS_MS = [0, sec(1), sec(30), sec(120), sec(300), sec(600), sec(700)];

describe('decide: properties over generated timelines (seeded, deterministic)', () => {
  const SEQUENCES = 48;
  const LENGTH = 24;
  const totals = { undos: 0, refusedStalls: 0, passes: 0 };

  for (let seed = 1; seed <= SEQUENCES; seed++) {
    it(`sequence ${seed}: at most one Undo per broken hash, only for a Revision-owned stall, and decide is deterministic`, () => {
      const rnd = prng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
      const pol = seed % 3 === 0 ? policy({ onStall: { action: 'Undo', delaySeconds: 60 } }) : UNDO;
      let prev: GuardStatus = {};
      let rec: DaemonSetUndoRecord | undefined;
      let world = pick(WORLDS);
      let at = T0;
      const trail: string[] = [];
      const undoneFrom = new Map<string, number>();
      for (let i = 0; i < LENGTH; i++) {
        if (rnd() < 0.45) world = pick(WORLDS); // otherwise the world stays, so stalls can develop
        at += pick(STEPS_MS);
        const obs = world.obs(rec);
        trail.push(`+${(at - T0) / 1000}s ${world.name}`);
        const where = `seed ${seed}, pass ${i}:\n  ${trail.join('\n  ')}`;

        const d = decide(deepFreeze(structuredClone(obs)), deepFreeze(structuredClone(prev)), pol, at);
        const again = decide(deepFreeze(structuredClone(obs)), deepFreeze(structuredClone(prev)), pol, at);
        assert.deepEqual(again, d, `(c) not deterministic at ${where}`);
        assert.deepEqual(roundTrip(d.status), d.status, `status is not plain JSON at ${where}`);

        if (d.action?.kind === 'Undo') {
          assert.equal(d.status.owner, 'Revision', `(b) Undo with owner ${String(d.status.owner)} at ${where}`);
          assert.equal(d.status.state, 'Stalled', `Undo while ${String(d.status.state)} at ${where}`);
          const n = (undoneFrom.get(d.action.fromHash) ?? 0) + 1;
          undoneFrom.set(d.action.fromHash, n);
          assert.ok(n <= 1, `(a) second Undo of ${d.action.fromHash} at ${where}`);
          totals.undos++;
          rec = d.action.record; // written on the DaemonSet with the undo patch
        }
        if (d.status.state === 'Stalled' && d.status.undoSkipped) totals.refusedStalls++;
        totals.passes++;
        prev = persistUndo(d);
      }
    });
  }

  it('the generated timelines exercised both undos and refused stalls (the properties are not vacuous)', () => {
    assert.equal(totals.passes, SEQUENCES * LENGTH);
    assert.ok(totals.undos >= 5, `only ${totals.undos} undos`);
    assert.ok(totals.refusedStalls >= 5, `only ${totals.refusedStalls} refused stalls`);
  });
});

describe("decide: the operator's clock is off from the API server's", () => {
  const skewed = (o: Observation, ms: number): Observation => (o.kind === 'Target' ? { ...o, clockSkewMs: ms } : o);
  const target = run(
    [
      { obs: skewed(healthyA(), 42_000), at: T0 },
      { obs: skewed(stallB(), 42_000), at: T1 },
      { obs: skewed(stallB(), 42_000), at: T1 + sec(600) },
      { obs: skewed(stallB(), 42_000), at: T1 + sec(700) },
      // Time sync is repaired: the estimate falls within the bound.
      { obs: skewed(stallB(), 80), at: T1 + sec(760), persist: persistUndo },
    ],
    { policy: UNDO },
  );

  it('a stall blamed on the revision is reported, and its undo refused while the skew is past the bound: undoSkipped ClockSkew says by how much and who fixes it', () => {
    const stalled = target[2]!;
    assert.equal(stalled.status.owner, 'Revision');
    assertRefusedAtStall(stalled, 'ClockSkew', /42\.0 s behind the API server's \(bound 5 s\).*fix time sync on the operator's node/);
    assert.equal(undos(target.slice(0, 4)).length, 0);
    assert.equal(count(target, 'UndoSkipped'), 1, 'said once');
  });

  it('once the clocks agree again, the undo proceeds', () => {
    assert.equal(target[4]!.action?.kind, 'Undo');
  });

  it('a skew within the bound (4.9 s ahead) does not hold the undo back', () => {
    const within = run(
      [
        { obs: skewed(healthyA(), -4_900), at: T0 },
        { obs: skewed(stallB(), -4_900), at: T1 },
        { obs: skewed(stallB(), -4_900), at: T1 + sec(600) },
      ],
      { policy: UNDO },
    );
    assert.equal(within[2]!.action?.kind, 'Undo');
  });
});

describe("decide: a revision undone once is never undone again, even after another revision's undo", () => {
  /** The DaemonSet at `gen` with `revisions`, every node on `hash` except node-3, which runs `node3`. */
  const world = (
    gen: number,
    revisions: ReturnType<typeof rev>[],
    hash: string,
    node3: PodView[],
    target: Partial<TargetView> = {},
  ): Observation =>
    targetObs({
      nodes: [ready('node-1', [pod({ hash })]), ready('node-2', [pod({ hash })]), ready('node-3', node3)],
      revisions,
      target: { generation: gen, observedGeneration: gen, templateGeneration: String(gen), ...target },
    });
  const stuck = { ready: 2, updated: 1, available: 2 };
  const C4 = rev(HASH.C, 4);
  const A5 = rev(HASH.A, 5);
  const B6 = rev(HASH.B, 6);
  const recB: DaemonSetUndoRecord = { from: HASH.B, to: HASH.A, at: iso(T1 + sec(600)), guard: 'default/decoder', undone: [HASH.B] };

  /** B stalls and is undone; A comes back; C stalls and is undone; A comes back; B is applied again and stalls. */
  function timeline(recAfterC: DaemonSetUndoRecord): Step[] {
    const T2 = T1 + sec(1000);
    const T3 = T2 + sec(1000);
    return [
      { obs: healthyA(), at: T0 },
      { obs: stallB(), at: T1 },
      { obs: stallB(), at: T1 + sec(600), persist: persistUndo },
      { obs: world(3, [B2, A3], HASH.A, [pod({ hash: HASH.A })], { undoRecord: recB }), at: T1 + sec(620) },
      { obs: world(4, [B2, A3, C4], HASH.A, [imagePullPod(HASH.C)], { ...stuck, undoRecord: recB }), at: T2 },
      {
        obs: world(4, [B2, A3, C4], HASH.A, [imagePullPod(HASH.C)], { ...stuck, undoRecord: recB }),
        at: T2 + sec(600),
        persist: persistUndo,
      },
      { obs: world(5, [B2, C4, A5], HASH.A, [pod({ hash: HASH.A })], { undoRecord: recAfterC }), at: T2 + sec(620) },
      { obs: world(6, [C4, A5, B6], HASH.A, [imagePullPod(HASH.B)], { ...stuck, undoRecord: recAfterC }), at: T3 },
      { obs: world(6, [C4, A5, B6], HASH.A, [imagePullPod(HASH.B)], { ...stuck, undoRecord: recAfterC }), at: T3 + sec(600) },
      { obs: world(6, [C4, A5, B6], HASH.A, [imagePullPod(HASH.B)], { ...stuck, undoRecord: recAfterC }), at: T3 + sec(700) },
    ];
  }

  it('the same guard: B and C are each undone once; B applied again is refused (status.undoneRevisions), even with a DaemonSet record that names only C', () => {
    const onlyC: DaemonSetUndoRecord = { from: HASH.C, to: HASH.A, at: iso(T1 + sec(1600)), guard: 'default/decoder' };
    const target = run(timeline(onlyC), { policy: UNDO });
    assert.deepEqual(
      undos(target).map((d) => (d.action?.kind === 'Undo' ? d.action.fromHash : '')),
      [HASH.B, HASH.C],
    );
    const again = target[8]!;
    assert.equal(again.status.state, 'Stalled');
    assert.equal(again.action, undefined);
    assert.equal(again.status.undoSkipped?.reason, 'AlreadyUndone');
    assert.match(again.status.undoSkipped.message, /already undone by this guard/);
    assert.ok(reasons(again).includes('RepeatedBrokenRevision'));
    assert.deepEqual(again.status.undoneRevisions, [HASH.B, HASH.C]);
    assert.equal(target[9]!.action, undefined);
  });

  it('a fresh guard, with the DaemonSet record listing B among the undone: refused too', () => {
    const both: DaemonSetUndoRecord = { from: HASH.C, to: HASH.A, at: iso(T1 + sec(1600)), guard: 'default/old', undone: [HASH.B, HASH.C] };
    const steps = timeline(both).slice(7);
    const target = run(steps, { policy: UNDO, initial: {} });
    assert.equal(undos(target).length, 0);
    assert.equal(target[1]!.status.undoSkipped?.reason, 'AlreadyUndone');
    assert.match(target[1]!.status.undoSkipped.message, /already undone \(annotation on the DaemonSet\)/);
  });
});
