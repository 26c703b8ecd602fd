/**
 * The pods a StatefulSet rollout leaves on a revision it superseded, through decide: under OrderedReady
 * the controller waits for such a pod to become Ready and never replaces it (kubernetes#67250 holds for
 * every new revision, not only the old one), so a fix pushed forward, or a second broken push, stays
 * stuck on it. The pod is the rollout's own leftover: judged by what it shows, never its node's fault
 * while the node is Ready; the new revision is not blamed (it was never tried); a Report guard names the
 * delete that lets the rollout go on, and an Undo guard evicts it once the rollout is Stalled, then
 * judges the new revision by what it does. Plus a fast-check property over generated leftovers.
 *
 * Each case runs one timeline: revision 1 (A) on every ordinal; revision 2 (B) pushed, store-2 fails on
 * it; revision 3 (C) pushed 4 s later, observed, store-2 still on B; then the passes past the deadline.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { recordEviction } from '../../../src/domain/eviction.js';
import { recordUndoOutcome } from '../../../src/domain/undo.js';
import type { NodeView, Observation, PodView } from '../../../src/domain/observation.js';
import type { Decision } from '../../../src/domain/decision.js';
import type { GuardSpec, GuardStatus } from '../../../src/api/types.js';
import { check } from '../../support/fastCheck.js';
import {
  HASH,
  T0,
  crashLoopPod,
  imagePullPod,
  notReadyPod,
  pod,
  policy,
  rev,
  run,
  sec,
  targetObs,
  unschedulablePod,
  type Step,
  ordinal,
  store,
} from '../../support/fixtures.js';

const A1 = rev(HASH.A, 1);
const B2 = rev(HASH.B, 2);
const C3 = rev(HASH.C, 3);
const A4 = rev(HASH.A, 4);
const PUSH_B = T0 + sec(60);
const PUSH_C = PUSH_B + sec(4);
const SUSPECT = 6;
const DEADLINE = 15;

const on = (hash: string) => (i: number) => ordinal(i, pod({ hash }));

/** The StatefulSet at `generation`, observed, with `ready` of 3 Ready and `updated` on the update revision. */
const world = (units: NodeView[], generation: number, revisions: ReturnType<typeof rev>[], updated: number, ready = 2): Observation =>
  targetObs({
    nodes: units,
    revisions,
    target: store({
      generation,
      observedGeneration: generation,
      templateGeneration: String(generation),
      desired: 3,
      current: 3,
      ready,
      updated,
      available: ready,
    }),
  });

const healthy = world([0, 1, 2].map(on(HASH.A)), 1, [A1], 3, 3);
const brokenB = (leftover: PodView = imagePullPod(HASH.B)): Observation =>
  world([on(HASH.A)(0), on(HASH.A)(1), ordinal(2, leftover)], 2, [A1, B2], 1);
/** Revision 3 pushed and observed; store-2 still on B (the controller waits for it). */
const pushedC = (leftover: PodView = imagePullPod(HASH.B), units?: NodeView[]): Observation =>
  world(units ?? [on(HASH.A)(0), on(HASH.A)(1), ordinal(2, leftover)], 3, [A1, B2, C3], 0);

type Stall = Partial<GuardSpec['onStall']>;
const guardPolicy = (onStall: Stall) =>
  policy({ targetRef: { kind: 'StatefulSet', name: 'store' }, suspectAfterSeconds: SUSPECT, progressDeadlineSeconds: DEADLINE, onStall });

/** The timeline up to `stalledAt` (the deadline after revision 3 was pushed), then `extra`. */
function timeline(onStall: Stall, leftover?: PodView, extra: Step[] = [], units?: NodeView[]): Decision[] {
  const c = pushedC(leftover, units);
  return run(
    [
      { obs: healthy, at: T0 },
      { obs: brokenB(leftover), at: PUSH_B },
      { obs: c, at: PUSH_C },
      { obs: c, at: PUSH_C + sec(SUSPECT) },
      { obs: c, at: PUSH_C + sec(DEADLINE) },
      ...extra,
    ],
    { policy: guardPolicy(onStall) },
  );
}
const STALLED = 4;

describe('a StatefulSet pod left on a superseded revision', () => {
  it('the rollout tracks revision 3 from revision 1, revision 2 superseded', () => {
    const d = timeline({ action: 'Report' })[2]!;
    assert.equal(d.status.rollout?.toRevision.revision, 3);
    assert.equal(d.status.rollout?.fromRevision?.revision, 1);
    assert.deepEqual(
      d.status.rollout?.superseded?.map((r) => r.revision),
      [2],
    );
  });

  it('Report: Stalled on the leftover, blamed on what it shows (never its Ready node), the delete named, no undo offered', () => {
    const d = timeline({ action: 'Report' })[STALLED]!;
    assert.equal(d.status.state, 'Stalled');
    assert.equal(d.status.cause, 'ImagePullFailure');
    assert.equal(d.status.owner, 'Revision', d.status.message);
    const message = d.status.message ?? '';
    assert.match(message, /waits for store-2 ImagePullBackOff .*, left on a superseded revision, to become Ready/);
    assert.match(message, /store-2 is left not Ready on a revision this rollout superseded/);
    assert.match(message, /the new revision has not been tried yet/);
    assert.match(message, /kubectl delete pod store-2 -n default/);
    assert.doesNotMatch(message, /ran before the rollout reached/);
    assert.equal(d.status.undoSkipped?.reason, 'NotTheRevision');
    assert.match(d.status.undoSkipped?.message ?? '', /revision 3 \(ccc333\) has not been tried: store-2 is left not Ready/);
    assert.equal(d.action, undefined);
  });

  it('Report: the message says the pod stays on the superseded revision and the command lets the rollout go on', () => {
    const d = timeline({ action: 'Report' })[STALLED]!;
    assert.match(
      d.status.message ?? '',
      /store-2 is still on superseded revision 2 \(bbb222\) and not Ready: under OrderedReady the StatefulSet controller will not replace it, so revision 3 \(ccc333\) is never tried; kubectl delete pod store-2 -n default lets the rollout go on\./,
    );
  });

  it('Undo: not before the deadline; at the stall, the leftover is evicted, not the template undone', () => {
    const ds = timeline({ action: 'Undo' });
    for (const d of ds.slice(0, STALLED)) assert.equal(d.action, undefined, JSON.stringify(d.action));
    const d = ds[STALLED]!;
    assert.deepEqual(d.action, { kind: 'Evict', pod: 'store-2', uid: 'uid-2', forHash: HASH.B });
    assert.equal(d.status.lastUndo, undefined);
    assert.deepEqual(
      d.status.forcedRollback?.evictions.map((e) => [e.pod, e.result]),
      [['store-2', 'Requested']],
    );
    assert.match(d.status.message ?? '', /Forced rollback: evicting store-2, not Ready on superseded revision 2 \(bbb222\)/);
    assert.match(d.status.message ?? '', /Not undoing: revision 3 \(ccc333\) has not been tried/);
    // The eviction's outcome, as reconcile records it, says where the pod was left and where it comes back.
    const evicted = recordEviction(d.status, 'store-2', 'uid-2', { kind: 'Evicted' }, PUSH_C + sec(DEADLINE + 1), 'StatefulSet');
    assert.match(
      evicted.events[0]?.note ?? '',
      /^Evicted store-2: it was not Ready on superseded revision 2 \(bbb222\), and under OrderedReady the StatefulSet controller does not replace a pod that never became Ready; it recreates it on revision 3 \(ccc333\)$/,
    );
  });

  it('Undo, a fix pushed forward: once evicted, store-2 comes up on revision 3 and the rollout completes with no undo', () => {
    const fixed = world([on(HASH.A)(0), on(HASH.A)(1), ordinal(2, pod({ hash: HASH.C }), { uid: 'uid-2b' })], 3, [A1, B2, C3], 1, 3);
    const done = world(
      [0, 1, 2].map((i) => ordinal(i, pod({ hash: HASH.C }), { uid: `uid-${i}c` })),
      3,
      [A1, B2, C3],
      3,
      3,
    );
    const ds = timeline({ action: 'Undo' }, undefined, [
      { obs: fixed, at: PUSH_C + sec(DEADLINE + 2) },
      { obs: done, at: PUSH_C + sec(DEADLINE + 8) },
    ]);
    const last = ds[ds.length - 1]!;
    assert.equal(last.status.state, 'Healthy', last.status.message);
    assert.equal(last.status.currentRevision?.revision, 3);
    assert.equal(last.status.lastUndo, undefined);
    assert.ok(
      ds.every((d) => d.action?.kind !== 'Undo'),
      'never an undo',
    );
  });

  it('Undo, two broken pushes: once evicted, store-2 fails on revision 3 too, and one undo goes straight to revision 1', () => {
    const failsOnC = world([on(HASH.A)(0), on(HASH.A)(1), ordinal(2, imagePullPod(HASH.C), { uid: 'uid-2b' })], 3, [A1, B2, C3], 1);
    const evictedAt = PUSH_C + sec(DEADLINE);
    const ds = timeline({ action: 'Undo' }, undefined, [
      { obs: failsOnC, at: evictedAt + sec(2) },
      { obs: failsOnC, at: evictedAt + sec(2 + DEADLINE) },
    ]);
    const progressed = ds[STALLED + 1]!;
    assert.equal(progressed.status.state, 'Progressing', progressed.status.message);
    const d = ds[ds.length - 1]!;
    assert.equal(d.status.state, 'Stalled', d.status.message);
    assert.equal(d.status.owner, 'Revision');
    assert.equal(d.action?.kind, 'Undo', JSON.stringify(d.status.undoSkipped));
    assert.equal(d.action?.kind === 'Undo' && d.action.toHash, HASH.A, 'straight to revision 1, not the superseded revision 2');
    assert.equal(d.status.lastUndo?.toRevision, 1);
    assert.equal(ds.filter((x) => x.action?.kind === 'Undo').length, 1);
  });

  it('Undo, two broken pushes: after the undo, the pod left on revision 3 is evicted in turn and the rollback completes', () => {
    const failsOnC = world([on(HASH.A)(0), on(HASH.A)(1), ordinal(2, imagePullPod(HASH.C), { uid: 'uid-2b' })], 3, [A1, B2, C3], 1);
    const evictedAt = PUSH_C + sec(DEADLINE);
    const undoAt = evictedAt + sec(2 + DEADLINE);
    const undone = world([on(HASH.A)(0), on(HASH.A)(1), ordinal(2, imagePullPod(HASH.C), { uid: 'uid-2b' })], 4, [A4, B2, C3], 2);
    const back = world([0, 1, 2].map(on(HASH.A)), 4, [A4, B2, C3], 3, 3);
    const ds = timeline({ action: 'Undo' }, undefined, [
      {
        obs: failsOnC,
        at: evictedAt + sec(2),
      },
      {
        obs: failsOnC,
        at: undoAt,
        persist: (x) => recordUndoOutcome(x.status, { kind: 'Applied' }, undoAt, 1).status,
      },
      {
        obs: undone,
        at: undoAt + sec(1),
        persist: (x) => recordEviction(x.status, 'store-2', 'uid-2b', { kind: 'Evicted' }, undoAt + sec(1), 'StatefulSet').status,
      },
      { obs: back, at: undoAt + sec(8) },
    ]);
    const evict = ds[ds.length - 2]!;
    assert.deepEqual(evict.action, { kind: 'Evict', pod: 'store-2', uid: 'uid-2b', forHash: HASH.C });
    assert.match(evict.status.message ?? '', /not Ready on the undone revision 3 \(ccc333\)/);
    const last = ds[ds.length - 1]!;
    assert.equal(last.status.state, 'RolledBack', last.status.message);
    assert.equal(last.status.undoneRevisions?.length, 1);
  });

  it('Undo with forcedRollback off: no eviction, no undo, and the delete named', () => {
    const d = timeline({ action: 'Undo', forcedRollback: false })[STALLED]!;
    assert.equal(d.action, undefined);
    assert.equal(d.status.forcedRollback, undefined);
    assert.match(d.status.message ?? '', /kubectl delete pod store-2 -n default lets the rollout go on/);
  });

  it('under Parallel (the controller replaces it itself): nothing held, nothing evicted', () => {
    const c = world([on(HASH.A)(0), on(HASH.A)(1), ordinal(2, imagePullPod(HASH.B))], 3, [A1, B2, C3], 0);
    const parallel = { ...c, target: { ...(c as Extract<Observation, { kind: 'Target' }>).target, waitsOnUnreadyPods: false } };
    const ds = run(
      [
        { obs: healthy, at: T0 },
        { obs: brokenB(), at: PUSH_B },
        { obs: parallel, at: PUSH_C },
        { obs: parallel, at: PUSH_C + sec(DEADLINE) },
      ],
      { policy: guardPolicy({ action: 'Undo' }) },
    );
    assert.ok(ds.every((d) => d.action?.kind !== 'Evict'));
    assert.doesNotMatch(ds[3]!.status.message ?? '', /superseded revision/);
  });

  it("a leftover whose node is down is its node's fault, and is not evicted", () => {
    const down: NodeView = { ...ordinal(2, imagePullPod(HASH.B)), health: { ready: 'Unknown', reason: 'NodeStatusUnknown' } };
    const d = timeline({ action: 'Undo' }, undefined, [], [on(HASH.A)(0), on(HASH.A)(1), down])[STALLED]!;
    assert.equal(d.status.owner, 'Node', d.status.message);
    assert.notEqual(d.action?.kind, 'Evict');
  });

  it('a pod that failed on the revision the rollout started from is still its node’s (nothing superseded about it)', () => {
    const sick = ordinal(2, crashLoopPod(HASH.A));
    const c = world([on(HASH.A)(0), on(HASH.A)(1), sick], 3, [A1, B2, C3], 0);
    const ds = run(
      [
        { obs: world([on(HASH.A)(0), on(HASH.A)(1), sick], 1, [A1], 3, 2), at: T0 },
        { obs: world([on(HASH.A)(0), on(HASH.A)(1), sick], 2, [A1, B2], 0), at: PUSH_B },
        { obs: c, at: PUSH_C },
        { obs: c, at: PUSH_C + sec(DEADLINE) },
      ],
      { policy: guardPolicy({ action: 'Undo' }) },
    );
    const d = ds[3]!;
    assert.equal(d.status.owner, 'Node', d.status.message);
    assert.match(d.status.message ?? '', /ran before the rollout reached it/);
    assert.notEqual(d.action?.kind, 'Evict');
  });
});

describe('a pod left on a superseded revision (fast-check)', () => {
  /*
   * Whatever the leftover shows (an image that does not pull, a crash loop, a readiness that fails, a pod
   * the scheduler cannot place), whichever ordinal it is and however many revisions the rollout superseded,
   * on any pass from the push on: while its node is Ready, no pass names it (or the rollout) as the node's
   * fault, and a guard that would act never undoes the template on its account.
   */
  it('is never a node’s fault while its node is Ready, and never undone on its account', () => {
    const failures: Array<(hash: string) => PodView> = [
      imagePullPod,
      crashLoopPod,
      notReadyPod,
      (h) => unschedulablePod(h, '0/3 nodes are available: 3 Insufficient cpu.'),
    ];
    check(
      fc.record({
        failure: fc.integer({ min: 0, max: failures.length - 1 }),
        stuckOrdinal: fc.integer({ min: 0, max: 2 }),
        gaps: fc.array(fc.integer({ min: 1, max: 2 * DEADLINE }), { minLength: 2, maxLength: 8 }),
        action: fc.constantFrom('Report', 'Undo'),
      }),
      100,
      ({ failure, stuckOrdinal, gaps, action }) => {
        const leftover = failures[failure]!(HASH.B);
        const units = [0, 1, 2].map((i) => (i === stuckOrdinal ? ordinal(i, leftover) : on(HASH.A)(i)));
        const c = world(units, 3, [A1, B2, C3], 0);
        let at = PUSH_C;
        const steps: Step[] = [
          { obs: healthy, at: T0 },
          { obs: world(units, 2, [A1, B2], 0), at: PUSH_B },
          { obs: c, at: PUSH_C },
          ...gaps.map((g) => ({ obs: c, at: (at += sec(g)) })),
        ];
        const ds = run(steps, { policy: guardPolicy({ action: action }) });
        ds.forEach((d, i) => {
          const s: GuardStatus = d.status;
          const where = `pass #${i} (${String(s.state)}): ${String(s.message)}`;
          assert.notEqual(s.owner, 'Node', where);
          for (const b of s.blockedNodes ?? []) assert.notEqual(b.owner, 'Node', where);
          assert.notEqual(d.action?.kind, 'Undo', where);
        });
      },
    );
  });
});
