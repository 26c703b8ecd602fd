/**
 * decide(): simulated reconcile passes over a fake clock. Each case is a sequence of (observation, time)
 * steps fed through `run`, which hands decide its own previous status, as the reconciler does through
 * the API. Times are plain milliseconds; nothing sleeps.
 *
 * The worlds follow how the DaemonSet controller behaves: with maxSurge 0 one broken node blocks the
 * whole rollout; with maxSurge a node runs the old and the new pod at once; the counters describe
 * observedGeneration; a template that stops matching a node shrinks DESIRED; and an undo renumbers the
 * restored revision to max+1.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decide } from '../../../src/domain/decide/decide.js';
import { CACHE_WAIT_LIMIT_MS } from '../../../src/domain/decide/settle.js';
import { recordDryRun, recordUndoOutcome } from '../../../src/domain/undo.js';
import type { TargetView, NodeView, Observation, PodView, RevisionView } from '../../../src/domain/observation.js';
import type { Decision } from '../../../src/domain/decision.js';
import type { GuardStatus } from '../../../src/api/types.js';
import {
  HASH,
  T0,
  cond,
  condSummary,
  crashLoopPod,
  deadKubelet,
  deepFreeze,
  imagePullPod,
  iso,
  missingObs,
  node,
  nodesOn,
  notReadyPod,
  pod,
  policy,
  reasons,
  rev,
  roundTrip,
  run,
  sec,
  targetObs,
  unschedulablePod,
  unscheduledPod,
  withHealth,
  type RunOptions,
  type Step,
} from '../../support/fixtures.js';

// --- Worlds ---------------------------------------------------------------------------------------

const A1 = rev(HASH.A, 1);
const B2 = rev(HASH.B, 2);
/** Rollout start time in most timelines. */
const T1 = T0 + sec(60);

/** Revision 1 (A) fully rolled out on node-1..node-3, DaemonSet generation 1. */
function healthyA(target: Partial<TargetView> = {}): Observation {
  return targetObs({ nodes: nodesOn(HASH.A), revisions: [A1], target });
}

/** The template-2 DaemonSet: generation 2, observed, counters from `target`. */
function dsAt2(target: Partial<TargetView> = {}): Partial<TargetView> {
  return { generation: 2, observedGeneration: 2, templateGeneration: '2', images: [`registry.example/decoder:${HASH.B}`], ...target };
}

/**
 * The classic stall: 3 nodes, maxUnavailable 1, a broken image. node-1 and node-2 still run the old
 * revision; node-3's new pod is given by `node3` (ImagePullBackOff by default).
 * kubectl get ds: DESIRED 3 CURRENT 3 READY 2 UP-TO-DATE 1 AVAILABLE 2.
 */
function stallWorld(node3: PodView[] = [imagePullPod(HASH.B)], target: Partial<TargetView> = {}): Observation {
  return targetObs({
    nodes: [node('node-1', [pod({ hash: HASH.A })]), node('node-2', [pod({ hash: HASH.A })]), node('node-3', node3)],
    revisions: [A1, B2],
    target: dsAt2({ desired: 3, current: 3, ready: 2, updated: 1, available: 2, ...target }),
  });
}

/** Revision 2 (B) fully rolled out. */
function completeB(target: Partial<TargetView> = {}): Observation {
  return targetObs({ nodes: nodesOn(HASH.B), revisions: [A1, B2], target: dsAt2(target) });
}

/** Healthy on A, then the template changes to B and the world looks like `world` from T1 on. */
function fromHealthy(world: Observation, ...later: [number, Observation?][]): Step[] {
  return [{ obs: healthyA(), at: T0 }, { obs: world, at: T1 }, ...later.map(([dt, obs]) => ({ obs: obs ?? world, at: T1 + dt }))];
}

const last = (target: Decision[]): Decision => target[target.length - 1]!;

/**
 * The pass asks to be woken at a deadline `ms` from now: never before it, and at most a timer-skew
 * allowance (≤ 1 s) after it. The exact skew is decide's business.
 */
function wakesAt(d: Decision, ms: number): void {
  const r = d.requeueAfterMs;
  assert.ok(r !== undefined, 'a requeue is scheduled');
  assert.ok(r >= ms && r <= ms + 1000, `requeueAfterMs ${r} should be within [${ms}, ${ms + 1000}]`);
}
const UNDO = policy({ onStall: { action: 'Undo' } });

interface Case {
  name: string;
  steps: Step[];
  policy?: ReturnType<typeof policy>;
  initial?: GuardStatus;
  check: (d: Decision[]) => void;
}

function table(cases: Case[]): void {
  for (const tc of cases) {
    it(tc.name, () => {
      const opts: RunOptions = {};
      if (tc.policy) opts.policy = tc.policy;
      if (tc.initial) opts.initial = tc.initial;
      tc.check(run(tc.steps, opts));
    });
  }
}

const HEALTHY_CONDITIONS = {
  Ready: 'True/TargetHealthy',
  Progressing: 'True/RolloutComplete',
  Stalled: 'False/NotStalled',
  RolledBack: 'False/NoUndo',
};

// --- First sight --------------------------------------------------------------------------------

describe('decide: first sight', () => {
  table([
    {
      name: 'a complete DaemonSet is Healthy with all four conditions set, no rollout, no events',
      steps: [{ obs: healthyA(), at: T0 }],
      check: ([d]) => {
        const s = d!.status;
        assert.equal(s.state, 'Healthy');
        assert.equal(s.cause, '');
        assert.equal(s.rollout, undefined);
        assert.deepEqual(d!.events, []);
        assert.equal(d!.action, undefined);
        assert.equal(d!.requeueAfterMs, undefined);
        assert.deepEqual(condSummary(s), HEALTHY_CONDITIONS);
        for (const c of s.conditions!) {
          assert.equal(c.lastTransitionTime, iso(T0));
          assert.equal(c.observedGeneration, 1);
        }
        assert.equal(s.observedGeneration, 1);
        assert.deepEqual(s.currentRevision, { revision: 1, hash: HASH.A });
        assert.deepEqual(
          [s.desired, s.current, s.updated, s.ready, s.available, s.blockedNodeCount, s.emptyNodeCount],
          [3, 3, 3, 3, 3, 0, 0],
        );
        assert.deepEqual(s.generations, [
          { revision: 1, hash: HASH.A, images: [`registry.example/decoder:${HASH.A}`], nodes: 3, ready: 3 },
        ]);
        assert.equal(s.message, '3/3 nodes available on revision 1 (aaa111)');
      },
    },
    {
      name: "conditions carry the guard's own generation",
      steps: [{ obs: healthyA(), at: T0, policy: policy({}, 7) }],
      check: ([d]) => {
        assert.equal(d!.status.observedGeneration, 7);
        assert.ok(d!.status.conditions!.every((c) => c.observedGeneration === 7));
      },
    },
    {
      name: 'first sight mid-rollout starts tracking from the dominant other revision',
      steps: [{ obs: stallWorld(), at: T1 }],
      check: ([d]) => {
        const s = d!.status;
        assert.equal(s.state, 'Progressing');
        assert.deepEqual(reasons(d!), ['RolloutStarted']);
        assert.match(d!.events[0]!.note, /first observed now/);
        assert.deepEqual(s.rollout?.fromRevision, { revision: 1, hash: HASH.A });
        assert.deepEqual(s.rollout?.toRevision, { revision: 2, hash: HASH.B });
        assert.equal(s.rollout?.desiredAtStart, 3);
        assert.equal(s.rollout?.startedAt, iso(T1));
        wakesAt(d!, sec(120));
      },
    },
    {
      // Found by the property test (properties.test.ts): the key was written as `revision: undefined`,
      // so the status decided was not the status read back from the API server.
      name: 'first sight mid-rollout from a generation whose ControllerRevision is gone (history pruned): fromRevision names the hash alone, and the status is plain JSON',
      steps: [
        {
          obs: targetObs({
            nodes: [
              node('node-1', [pod({ hash: HASH.A })]),
              node('node-2', [pod({ hash: HASH.A })]),
              node('node-3', [imagePullPod(HASH.B)]),
            ],
            revisions: [B2],
            target: dsAt2({ ready: 2, updated: 1, available: 2 }),
          }),
          at: T1,
        },
      ],
      check: ([d]) => {
        const s = d!.status;
        assert.equal(s.state, 'Progressing');
        assert.deepEqual(s.rollout?.fromRevision, { hash: HASH.A });
        assert.ok(!('revision' in s.rollout.fromRevision), 'no key without a value');
        assert.deepEqual(s.rollout.toRevision, { revision: 2, hash: HASH.B });
        assert.deepEqual(roundTrip(s), s);
      },
    },
    {
      name: 'a DaemonSet that matches no node is flagged NoNodesMatched on first sight',
      steps: [{ obs: targetObs({ revisions: [A1], target: { desired: 0, current: 0, updated: 0, ready: 0, available: 0 } }), at: T0 }],
      check: ([d]) => {
        assert.equal(d!.status.state, 'Healthy');
        assert.equal(d!.status.cause, 'NoNodesMatched');
        assert.equal(cond(d!.status, 'Ready').status, 'False');
        assert.equal(cond(d!.status, 'Ready').reason, 'NoNodesMatched');
        assert.deepEqual(reasons(d!), ['NoNodesMatched']);
        assert.equal(d!.events[0]!.type, 'Warning');
      },
    },
  ]);
});

// --- Template change and the classic stall ---------------------------------------------------------

describe('decide: template change', () => {
  table([
    {
      name: 'a new current revision hash starts a rollout: Progressing, RolloutStarted, requeue at the suspect deadline (+ skew)',
      steps: fromHealthy(stallWorld()),
      check: (target) => {
        const d = target[1]!;
        const s = d.status;
        assert.equal(s.state, 'Progressing');
        assert.deepEqual(reasons(d), ['RolloutStarted']);
        assert.equal(d.events[0]!.type, 'Normal');
        assert.equal(d.events[0]!.onTarget, true);
        assert.match(d.events[0]!.note, /from revision 1 \(aaa111\) to revision 2 \(bbb222\)/);
        assert.deepEqual(s.rollout?.fromRevision, { revision: 1, hash: HASH.A });
        assert.deepEqual(s.rollout?.toRevision, { revision: 2, hash: HASH.B });
        assert.equal(s.rollout?.desiredAtStart, 3);
        assert.equal(s.rollout?.startedAt, iso(T1));
        assert.equal(s.rollout?.lastProgressAt, iso(T1));
        wakesAt(d, sec(120));
        assert.equal(d.action, undefined);
        assert.deepEqual(condSummary(s), {
          Ready: 'False/TargetUnhealthy',
          Progressing: 'True/NewRevisionRolling',
          Stalled: 'False/NotStalled',
          RolledBack: 'False/NoUndo',
        });
        // Ready flipped now; Progressing stayed True, so its transition time is the first pass's.
        assert.equal(cond(s, 'Ready').lastTransitionTime, iso(T1));
        assert.equal(cond(s, 'Progressing').lastTransitionTime, iso(T0));
      },
    },
    {
      name: 'a definitive failure is named before the deadline (early explanation)',
      steps: fromHealthy(stallWorld()),
      check: (target) => assert.equal(target[1]!.status.cause, 'ImagePullFailure'),
    },
    {
      name: 'an empty node mid-rollout is not a cause yet: the controller simply has not created the pod',
      steps: fromHealthy(stallWorld([], { current: 2, updated: 0, ready: 2, available: 2 })),
      check: (target) => {
        assert.equal(target[1]!.status.cause, '');
        assert.deepEqual(
          target[1]!.status.emptyNodes?.map((e) => e.node),
          ['node-3'],
        );
      },
    },
  ]);
});

describe('decide: the classic stall (maxUnavailable 1, broken image on node-3)', () => {
  const steps = fromHealthy(stallWorld(), [sec(119)], [sec(120)], [sec(599.999)], [sec(600)], [sec(600)], [sec(900)]);
  const target = run(steps);
  const [, started, before, suspect, almost, stalled, again, later] = target as [
    Decision,
    Decision,
    Decision,
    Decision,
    Decision,
    Decision,
    Decision,
    Decision,
  ];

  const timeline: { name: string; d: Decision; state: string; events: string[]; requeue: number | undefined }[] = [
    { name: 'rollout start', d: started, state: 'Progressing', events: ['RolloutStarted'], requeue: sec(120) },
    { name: '1 s before suspectAfter', d: before, state: 'Progressing', events: [], requeue: sec(1) },
    { name: 'at suspectAfter', d: suspect, state: 'Suspect', events: ['RolloutSuspect'], requeue: sec(480) },
    { name: '1 ms before the deadline', d: almost, state: 'Suspect', events: [], requeue: 1 },
    { name: 'exactly at progressDeadline', d: stalled, state: 'Stalled', events: ['RolloutStalled'], requeue: undefined },
    { name: 'the same pass repeated', d: again, state: 'Stalled', events: [], requeue: undefined },
    { name: '5 minutes later', d: later, state: 'Stalled', events: [], requeue: undefined },
  ];
  for (const tc of timeline) {
    it(`${tc.name}: ${tc.state}, events [${tc.events.join(', ')}]`, () => {
      assert.equal(tc.d.status.state, tc.state);
      assert.deepEqual(reasons(tc.d), tc.events);
      if (tc.requeue === undefined) assert.equal(tc.d.requeueAfterMs, undefined);
      else wakesAt(tc.d, tc.requeue);
    });
  }

  it('Suspect is a Warning and keeps Progressing=True (reason NoProgress), Stalled=False', () => {
    assert.equal(suspect.events[0]!.type, 'Warning');
    assert.deepEqual(condSummary(suspect.status), {
      Ready: 'False/TargetUnhealthy',
      Progressing: 'True/NoProgress',
      Stalled: 'False/NotStalled',
      RolledBack: 'False/NoUndo',
    });
    assert.match(cond(suspect.status, 'Stalled').message, /^suspect: /);
  });

  it('Stalled: conditions mirror a Deployment past its deadline, with the cause as reason', () => {
    const s = stalled.status;
    assert.equal(s.cause, 'ImagePullFailure');
    assert.deepEqual(condSummary(s), {
      Ready: 'False/ImagePullFailure',
      Progressing: 'False/ProgressDeadlineExceeded',
      Stalled: 'True/ImagePullFailure',
      RolledBack: 'False/NoUndo',
    });
    assert.equal(cond(s, 'Stalled').lastTransitionTime, iso(T1 + sec(600)));
    assert.equal(cond(s, 'Progressing').lastTransitionTime, iso(T1 + sec(600)));
    assert.equal(cond(s, 'Ready').lastTransitionTime, iso(T1));
  });

  it('Stalled: the Warning event and the message name node-3, both revisions and the cause', () => {
    const e = stalled.events[0]!;
    assert.equal(e.type, 'Warning');
    for (const text of [e.note, stalled.status.message!]) {
      assert.match(text, /node-3 ImagePullBackOff/);
      assert.match(text, /revision 2 \(bbb222\)/);
      assert.match(text, /revision 1 \(aaa111\)/);
      assert.match(text, /Cause ImagePullFailure/);
      assert.match(text, /no progress for 10m/);
    }
  });

  it('Stalled: the split shows 2 nodes on the old revision and 1 on the new, not ready; node-3 is blocked', () => {
    const s = stalled.status;
    assert.deepEqual(s.generations, [
      { revision: 2, hash: HASH.B, images: [`registry.example/decoder:${HASH.B}`], nodes: 1, ready: 0 },
      { revision: 1, hash: HASH.A, images: [`registry.example/decoder:${HASH.A}`], nodes: 2, ready: 2 },
    ]);
    assert.deepEqual(s.blockedNodes, [
      {
        node: 'node-3',
        pod: 'decoder-bbb222-node-3',
        revision: 2,
        hash: HASH.B,
        reason: 'ImagePullBackOff',
        message: 'Back-off pulling image "registry.example/decoder:bbb222"',
        owner: 'Revision',
        cause: 'ImagePullFailure',
      },
    ]);
    assert.equal(s.blockedNodeCount, 1);
    assert.deepEqual(s.emptyNodes, []);
    assert.deepEqual([s.desired, s.current, s.ready, s.updated, s.available], [3, 3, 2, 1, 2]);
  });

  it('a repeated pass with the same input and time yields the identical status', () => {
    assert.deepEqual(again.status, stalled.status);
    assert.equal(again.action, undefined);
  });

  it('the clock is never restarted while nothing moves', () => {
    for (const d of [before, suspect, almost, stalled, again, later]) assert.equal(d.status.rollout?.lastProgressAt, iso(T1));
  });

  it('every status survives a JSON round trip unchanged (it is what the API stores)', () => {
    for (const d of target) assert.deepEqual(roundTrip(d.status), d.status);
  });
});

// --- Progress --------------------------------------------------------------------------------------

describe('decide: progress resets the clock', () => {
  const suspectAt = sec(130);
  const resumeAt = sec(140);
  const signals: { name: string; after: Observation }[] = [
    { name: 'updatedNumberScheduled rises', after: stallWorld(undefined, { updated: 2 }) },
    { name: 'numberAvailable rises', after: stallWorld(undefined, { available: 3 }) },
    { name: 'numberReady rises', after: stallWorld(undefined, { ready: 3 }) },
    { name: 'the controller observes a newer generation', after: stallWorld(undefined, { generation: 3, observedGeneration: 3 }) },
    { name: 'a node reaches the target revision', after: stallWorld([pod({ hash: HASH.B })]) },
  ];
  table(
    signals.map((sg): Case => ({
      name: `${sg.name}: Suspect → Progressing with RolloutResumed, lastProgressAt = now`,
      steps: fromHealthy(stallWorld(), [suspectAt], [resumeAt, sg.after]),
      check: (target) => {
        assert.equal(target[2]!.status.state, 'Suspect');
        const d = target[3]!;
        assert.equal(d.status.state, 'Progressing');
        assert.deepEqual(reasons(d), ['RolloutResumed']);
        assert.equal(d.events[0]!.type, 'Normal');
        assert.equal(d.status.rollout?.lastProgressAt, iso(T1 + resumeAt));
        wakesAt(d, sec(120));
        assert.equal(cond(d.status, 'Progressing').reason, 'NewRevisionRolling');
      },
    })),
  );

  table([
    {
      name: 'progress after Stalled also resumes (RolloutResumed, Stalled=False)',
      steps: fromHealthy(stallWorld(), [sec(600)], [sec(700), stallWorld([pod({ hash: HASH.B })], { updated: 1, available: 3, ready: 3 })]),
      check: (target) => {
        assert.equal(target[2]!.status.state, 'Stalled');
        const d = target[3]!;
        assert.equal(d.status.state, 'Progressing');
        assert.deepEqual(reasons(d), ['RolloutResumed']);
        assert.equal(cond(d.status, 'Stalled').status, 'False');
        assert.equal(cond(d.status, 'Stalled').lastTransitionTime, iso(T1 + sec(700)));
        assert.equal(d.action, undefined);
      },
    },
    {
      name: 'progress while Progressing pushes the suspect deadline out without an event',
      steps: fromHealthy(
        stallWorld(),
        [sec(100), stallWorld(undefined, { updated: 2 })],
        [sec(200), stallWorld(undefined, { updated: 2 })],
      ),
      check: (target) => {
        assert.deepEqual(reasons(target[2]!), []);
        assert.equal(target[2]!.status.rollout?.lastProgressAt, iso(T1 + sec(100)));
        assert.equal(target[3]!.status.state, 'Progressing', '100 s after the last progress is not yet suspect');
        wakesAt(target[3]!, sec(20));
      },
    },
  ]);
});

describe('decide: what is not progress', () => {
  const dip = stallWorld(undefined, { available: 1, ready: 1 });
  const noProgress: { name: string; mid: Observation[] }[] = [
    { name: 'a counter dropping then returning to its previous maximum (flapping)', mid: [dip, stallWorld()] },
    { name: 'counters falling', mid: [dip, dip] },
    { name: 'updated falling and coming back', mid: [stallWorld(undefined, { updated: 0 }), stallWorld(undefined, { updated: 1 })] },
    {
      name: 'the broken pod restarting (restartCount grows)',
      mid: [stallWorld([crashLoopPod(HASH.B)]), stallWorld([{ ...crashLoopPod(HASH.B), restartCount: 9 }])],
    },
  ];
  table(
    noProgress.map((np): Case => ({
      name: `${np.name} does not reset the clock: Suspect at suspectAfter`,
      steps: fromHealthy(stallWorld(), [sec(60), np.mid[0]], [sec(100), np.mid[1]], [sec(120), np.mid[1]]),
      check: (target) => {
        for (const d of target.slice(2)) assert.equal(d.status.rollout?.lastProgressAt, iso(T1));
        assert.equal(last(target).status.state, 'Suspect');
        assert.ok(!target.slice(2).some((d) => reasons(d).includes('RolloutResumed')));
      },
    })),
  );
});

// --- Restart continuity -----------------------------------------------------------------------------

describe('decide: restart continuity', () => {
  table([
    {
      name: 'a fresh decide fed the persisted status (JSON round trip) continues the clock from rollout.lastProgressAt',
      steps: [
        { obs: healthyA(), at: T0 },
        { obs: stallWorld(), at: T1 },
        { obs: stallWorld(), at: T1 + sec(300), persist: (d) => roundTrip(d.status) },
        { obs: stallWorld(), at: T1 + sec(600) },
      ],
      check: (target) => {
        assert.equal(target[2]!.status.state, 'Suspect');
        const d = target[3]!;
        assert.equal(d.status.state, 'Stalled');
        assert.deepEqual(reasons(d), ['RolloutStalled']);
        assert.equal(d.status.rollout?.lastProgressAt, iso(T1));
        assert.equal(d.status.rollout?.startedAt, iso(T1));
      },
    },
    {
      name: 'a new leader 8 minutes in (persisted Suspect status) turns Stalled at the original deadline, not 10 minutes after it started',
      steps: [
        { obs: healthyA(), at: T0 },
        { obs: stallWorld(), at: T1, persist: (d) => roundTrip(d.status) },
        { obs: stallWorld(), at: T1 + sec(480), persist: (d) => roundTrip(d.status) },
        { obs: stallWorld(), at: T1 + sec(599), persist: (d) => roundTrip(d.status) },
        { obs: stallWorld(), at: T1 + sec(600) },
      ],
      check: (target) => {
        assert.equal(target[2]!.status.state, 'Suspect');
        wakesAt(target[3]!, sec(1));
        assert.equal(target[4]!.status.state, 'Stalled');
      },
    },
  ]);

  it('without the persisted status the clock would start over (what persistence protects against)', () => {
    const d = decide(stallWorld(), {}, policy(), T1 + sec(600));
    assert.equal(d.status.state, 'Progressing');
    assert.equal(d.status.rollout?.lastProgressAt, iso(T1 + sec(600)));
  });
});

// --- Completion ------------------------------------------------------------------------------------

describe('decide: completion', () => {
  table([
    {
      name: 'all nodes updated and available → Healthy with RolloutComplete; the next identical pass is silent',
      steps: fromHealthy(stallWorld(), [sec(200)], [sec(250), completeB()], [sec(260), completeB()]),
      check: (target) => {
        assert.equal(target[2]!.status.state, 'Suspect');
        const d = target[3]!;
        assert.equal(d.status.state, 'Healthy');
        assert.deepEqual(reasons(d), ['RolloutComplete']);
        assert.equal(d.events[0]!.type, 'Normal');
        assert.equal(d.status.rollout?.completedAt, iso(T1 + sec(250)));
        assert.equal(d.status.cause, '');
        assert.equal(d.requeueAfterMs, undefined);
        assert.deepEqual(condSummary(d.status), HEALTHY_CONDITIONS);
        assert.equal(cond(d.status, 'Ready').lastTransitionTime, iso(T1 + sec(250)));
        assert.deepEqual(d.status.blockedNodes, []);
        assert.deepEqual(d.status.currentRevision, { revision: 2, hash: HASH.B });
        const next = target[4]!;
        assert.equal(next.status.state, 'Healthy');
        assert.deepEqual(reasons(next), []);
        assert.deepEqual(next.status.rollout, d.status.rollout);
      },
    },
    {
      name: 'completion after Stalled clears the stall and the undo plan',
      steps: fromHealthy(stallWorld(), [sec(600)], [sec(700), completeB()]),
      check: (target) => {
        assert.equal(target[2]!.status.state, 'Stalled');
        assert.ok(target[2]!.status.undoPlan);
        const d = target[3]!;
        assert.equal(d.status.state, 'Healthy');
        assert.deepEqual(reasons(d), ['RolloutComplete']);
        assert.equal(d.status.undoPlan, undefined);
        assert.equal(d.action, undefined);
        assert.equal(cond(d.status, 'Stalled').status, 'False');
      },
    },
    {
      name: 'counters complete while the pod cache still shows the last new pod starting: Healthy, and no node listed as blocked',
      // The DaemonSet status (numberAvailable 3) arrived before the pod's own Ready update did: the pod
      // cache is one event behind. The verdict "all 3 nodes updated and available" must not list node-3.
      steps: fromHealthy(stallWorld(), [
        sec(10),
        targetObs({
          nodes: [node('node-1', [pod({ hash: HASH.B })]), node('node-2', [pod({ hash: HASH.B })]), node('node-3', [notReadyPod(HASH.B)])],
          revisions: [A1, B2],
          target: dsAt2(),
        }),
      ]),
      check: (target) => {
        assert.equal(target[1]!.status.blockedNodeCount, 1, 'while it rolls, the starting node is listed');
        const d = target[2]!;
        assert.equal(d.status.state, 'Healthy');
        assert.deepEqual(reasons(d), ['RolloutComplete']);
        assert.deepEqual(d.status.blockedNodes, []);
        assert.equal(d.status.blockedNodeCount, 0);
        assert.deepEqual(d.status.emptyNodes, []);
        assert.equal(d.status.emptyNodeCount, 0);
      },
    },
  ]);
});

describe('decide: a new or recreated DaemonSet with no ControllerRevision cached', () => {
  // The controller writes the revision before it reports the generation observed: an observed DaemonSet
  // with no cached revision is the revision cache one event behind, not a DaemonSet without a template.
  // Not observed, it is a DaemonSet the controller has not synced yet.
  const noRevisionYet = targetObs({ nodes: nodesOn(HASH.A), revisions: [], target: { generation: 1, observedGeneration: 1 } });

  it('is set aside, writing nothing, until the revision is cached', () => {
    const d = decide(noRevisionYet, {}, policy(), T0);
    assert.equal(d.deferred, true);
    assert.deepEqual(d.status, {});
    assert.deepEqual(d.events, []);
    const next = decide(healthyA(), d.status, policy(), T0 + 100);
    assert.equal(next.status.state, 'Healthy');
    assert.deepEqual(next.status.currentRevision, { revision: 1, hash: HASH.A });
  });

  it('is judged as it is once the wait reaches its limit', () => {
    const d = decide(noRevisionYet, {}, policy(), T0, { cacheWaitMs: CACHE_WAIT_LIMIT_MS });
    assert.equal(d.deferred, undefined);
    assert.equal(d.status.state, 'Healthy');
  });

  // Created a moment ago: the controller has not synced it yet (empty status, no revision, no pod).
  const notSyncedYet = targetObs({
    nodes: [node('node-1', []), node('node-2', [])],
    revisions: [],
    target: { generation: 1, observedGeneration: 0, desired: 0, current: 0, updated: 0, ready: 0, available: 0 },
  });

  it('not yet synced by its controller, it is judged at once and is not called healthy: nothing runs yet', () => {
    const d = decide(notSyncedYet, {}, policy(), T0);
    assert.equal(d.deferred, undefined, "the control plane's wait, not the caches': it is not set aside");
    assert.equal(d.status.state, 'Progressing');
    assert.match(
      d.status.message!,
      /^Waiting for the DaemonSet controller to sync DaemonSet \S+ \(generation 1\): no revision and no pod yet/,
    );
    assert.deepEqual(d.status.generations, []);
    const afterMissing = decide(missingObs(), {}, policy(), T0).status;
    const recreated = decide(notSyncedYet, afterMissing, policy(), T0 + 100);
    const ready = recreated.status.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'False');
    assert.notEqual(ready?.reason, 'TargetHealthy', 'the recreated target is not called healthy before its controller syncs it');
    assert.deepEqual(
      recreated.events.map((e) => e.reason),
      ['TargetFound'],
    );
  });

  it('its revision cached before the controller reports it observed (the controller writes the revision first): still not healthy', () => {
    const revisionFirst = targetObs({
      nodes: [node('node-1', []), node('node-2', [])],
      revisions: [A1],
      target: { generation: 1, observedGeneration: 0, desired: 0, current: 0, updated: 0, ready: 0, available: 0 },
    });
    const afterMissing = decide(missingObs(), {}, policy(), T0).status;
    const d = decide(revisionFirst, afterMissing, policy(), T0 + 100);
    assert.equal(d.status.state, 'Progressing');
    assert.match(d.status.message!, /^Waiting for the DaemonSet controller to sync DaemonSet \S+ \(generation 1\): no pod yet/);
    assert.notEqual(d.status.conditions?.find((c) => c.type === 'Ready')?.reason, 'TargetHealthy');
    assert.equal(d.action, undefined);
  });

  it("with the controller down, the unsynced DaemonSet's wait is timed from first sight: Suspect, then Stalled ControllerNotObserving, never undone", () => {
    const first = decide(notSyncedYet, {}, policy(), T0);
    assert.deepEqual(first.status.unobserved, { generation: 1, since: iso(T0) });
    const p = policy({ onStall: { action: 'Undo', delaySeconds: 0 } });
    const suspect = decide(notSyncedYet, first.status, p, T0 + p.spec.suspectAfterSeconds * 1000);
    assert.equal(suspect.status.state, 'Suspect');
    assert.equal(suspect.status.cause, 'ControllerNotObserving');
    const stalled = decide(notSyncedYet, suspect.status, p, T0 + p.spec.progressDeadlineSeconds * 1000);
    assert.equal(stalled.status.state, 'Stalled');
    assert.equal(stalled.status.owner, 'ControlPlane');
    assert.equal(stalled.action, undefined);
  });
});

describe('decide: a guard created between an undo of a stuck rollout and its controller observing the undo', () => {
  // The guard was deleted mid-rollback and created again at once: the undo's template (generation 3)
  // is not observed yet, so the highest revision cached is still the broken one (B, revision 2) and the
  // counters are generation 2's, with node-3 waiting on B's image. Nothing is tracked for a new guard.
  const record = { from: HASH.B, to: HASH.A, at: iso(T0), guard: 'default/decoder' };
  const undoAt3 = { generation: 3, templateGeneration: '3', images: [`registry.example/decoder:${HASH.A}`], undoRecord: record };
  const undoneNotObserved = stallWorld(undefined, { ...undoAt3, observedGeneration: 2 });
  const A3 = rev(HASH.A, 3);
  const rollingBack = targetObs({
    nodes: [node('node-1', [pod({ hash: HASH.A })]), node('node-2', [pod({ hash: HASH.A })]), node('node-3', [notReadyPod(HASH.A)])],
    revisions: [A3, B2],
    target: { ...undoAt3, observedGeneration: 3, desired: 3, current: 3, updated: 3, ready: 2, available: 2 },
  });
  const restored = targetObs({ nodes: nodesOn(HASH.A), revisions: [A3, B2], target: { ...undoAt3, observedGeneration: 3 } });
  const target = run(
    [
      { obs: undoneNotObserved, at: T1 },
      { obs: rollingBack, at: T1 + sec(1) },
      { obs: restored, at: T1 + sec(5) },
    ],
    { policy: UNDO, initial: {} },
  );
  const [first, back, done] = target as [Decision, Decision, Decision];

  it('is not called healthy on the broken revision: it waits on the controller and says what the last observed generation showed', () => {
    assert.equal(first.status.state, 'Progressing');
    assert.match(
      first.status.message!,
      /^Waiting for the DaemonSet controller to observe generation 3 \(observed 2\); at generation 2, 1\/3 nodes were updated to revision 2 \(\w+\) and 2\/3 available$/,
    );
    const ready = first.status.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'False');
    assert.notEqual(ready?.reason, 'TargetHealthy');
    assert.deepEqual(first.status.unobserved, { generation: 3, since: iso(T1) });
    assert.equal(first.action, undefined);
  });

  it('once observed it follows the rollback and settles on the restored revision; nothing is undone', () => {
    assert.equal(back.status.rollout?.rollback, true);
    assert.deepEqual(back.status.currentRevision, { revision: 3, hash: HASH.A });
    assert.notEqual(back.status.state, 'Healthy');
    assert.ok(done.status.state === 'Healthy' || done.status.state === 'RolledBack', done.status.state);
    assert.deepEqual(done.status.currentRevision, { revision: 3, hash: HASH.A });
    assert.deepEqual(
      target.map((d) => d.action),
      [undefined, undefined, undefined],
    );
  });

  // Observed this time, but the restored revision's renumbering (A: 1 → 3) is not cached yet: the newest
  // cached revision is B, whose stored template is not the live one. Without the digests a new guard has
  // no earlier pair to tell this by, and the counters (every node updated) would make B look complete.
  const withDigest = (r: RevisionView, digest: string): RevisionView => ({ ...r, templateDigest: digest });
  const staleRevisions = targetObs({
    nodes: nodesOn(HASH.A),
    revisions: [withDigest(A1, 'tplA'), withDigest(B2, 'tplB')],
    target: { ...undoAt3, observedGeneration: 3, templateDigest: 'tplA' },
  });
  const caughtUp = targetObs({
    nodes: nodesOn(HASH.A),
    revisions: [withDigest(A3, 'tplA'), withDigest(B2, 'tplB')],
    target: { ...undoAt3, observedGeneration: 3, templateDigest: 'tplA' },
  });

  it('observed, with the newest cached revision storing another template than the live one: set aside, never Healthy on it', () => {
    const d = decide(staleRevisions, {}, UNDO, T1);
    assert.equal(d.deferred, true);
    assert.deepEqual(d.status, {});
    const next = decide(caughtUp, d.status, UNDO, T1 + 100);
    assert.equal(next.deferred, undefined);
    assert.deepEqual(next.status.currentRevision, { revision: 3, hash: HASH.A });
    assert.ok(next.status.state === 'Healthy' || next.status.state === 'RolledBack', next.status.state);
    const atLimit = decide(staleRevisions, {}, UNDO, T1, { cacheWaitMs: CACHE_WAIT_LIMIT_MS });
    assert.equal(atLimit.deferred, undefined, 'a disagreement that never resolves cannot freeze the guard');
  });

  it('a new guard on an unobserved spec change whose last observed generation is on every node is Healthy, as before', () => {
    const d = decide(healthyA({ generation: 2, observedGeneration: 1 }), {}, UNDO, T1);
    assert.equal(d.status.state, 'Healthy');
    assert.equal(d.status.message, 'Waiting for the DaemonSet controller to observe generation 2');
  });
});

describe('decide: settled counters and a pod cache one event behind them', () => {
  // The DaemonSet's status (every node updated, ready, available) arrived before node-3's pod's own
  // Ready update: the pods say node-3 is still starting. With no rollout followed the counters are the
  // word, as they are when the pods are not cached at all.
  const podsBehind = targetObs({
    nodes: [node('node-1', [pod({ hash: HASH.A })]), node('node-2', [pod({ hash: HASH.A })]), node('node-3', [notReadyPod(HASH.A)])],
    revisions: [A1],
  });

  it('a first sight (a new or recreated DaemonSet) is Healthy with every node ready and none blocked', () => {
    const d = decide(podsBehind, {}, policy(), T0);
    assert.equal(d.status.state, 'Healthy');
    assert.deepEqual(
      d.status.generations?.map((g) => [g.hash, g.nodes, g.ready]),
      [[HASH.A, 3, 3]],
    );
    assert.deepEqual(d.status.blockedNodes, []);
    assert.equal(d.status.blockedNodeCount, 0);
  });

  it('a Healthy guard stays as it was: the lagging pod changes nothing it writes', () => {
    const healthy = decide(healthyA(), {}, policy(), T0).status;
    const d = decide(podsBehind, healthy, policy(), T0 + sec(1));
    assert.deepEqual(d.status, healthy);
    assert.deepEqual(d.events, []);
  });

  /** Template B on every node by the counters; node-3's new pod still starting in the pod cache. */
  const podsBehindB = targetObs({
    nodes: [node('node-1', [pod({ hash: HASH.B })]), node('node-2', [pod({ hash: HASH.B })]), node('node-3', [notReadyPod(HASH.B)])],
    revisions: [A1, B2],
    target: dsAt2(),
  });

  it("the pass that completes a rollout reports the counters' split, the basis of its verdict", () => {
    const d = last(run(fromHealthy(stallWorld(), [sec(10), podsBehindB])));
    assert.equal(d.status.state, 'Healthy');
    assert.deepEqual(
      d.status.generations?.map((g) => [g.hash, g.nodes, g.ready]),
      [[HASH.B, 3, 3]],
    );
    assert.equal(d.status.blockedNodeCount, 0);
  });

  it('while a rollout is followed and not complete (baking) the pods stay the word: counters may still describe the old template', () => {
    const d = last(run(fromHealthy(stallWorld(), [sec(10), podsBehindB]), { policy: policy({ bakeSeconds: 600 }) }));
    assert.equal(d.status.state, 'Progressing');
    assert.equal(d.status.blockedNodeCount, 1);
    assert.deepEqual(
      d.status.blockedNodes?.map((b) => b.node),
      ['node-3'],
    );
    assert.equal(d.status.generations?.find((g) => g.hash === HASH.B)?.ready, 2);
  });
});

// --- Stale DaemonSet status ------------------------------------------------------------------------

describe('decide: DaemonSet status not yet observed (observedGeneration < generation)', () => {
  /** Template 2 recorded (revision B exists) but the controller has not synced: counters still describe A. */
  const stale = targetObs({
    nodes: nodesOn(HASH.A),
    revisions: [A1, B2],
    target: { generation: 2, observedGeneration: 1, templateGeneration: '2' },
  });

  table([
    {
      name: 'complete-looking stale counters never make it Healthy or Stalled before the deadline; it waits',
      steps: fromHealthy(stale, [sec(300)], [sec(599)], [sec(600)]),
      check: (target) => {
        const [, start, mid, almost, deadline] = target;
        for (const d of [start!, mid!, almost!]) {
          assert.equal(d.status.state, 'Progressing');
          assert.match(d.status.message!, /Waiting for the DaemonSet controller to observe generation 2 \(observed 1\)/);
          assert.ok(d.requeueAfterMs! > 0);
        }
        assert.deepEqual(reasons(start!), ['RolloutStarted']);
        wakesAt(start!, sec(600)); // until the deadline, not the suspect time
        assert.deepEqual(reasons(mid!), []);
        assert.equal(deadline!.status.state, 'Stalled');
        assert.match(deadline!.status.message!, /^The DaemonSet controller has not observed generation 2 for 10m\./);
      },
    },
    {
      name: 'a non-template spec edit (generation bump, same revision) stays Healthy and silent while unobserved',
      steps: [
        { obs: healthyA(), at: T0 },
        { obs: healthyA({ generation: 2, observedGeneration: 1 }), at: T1 },
        { obs: healthyA({ generation: 2, observedGeneration: 2 }), at: T1 + sec(2) },
      ],
      check: (target) => {
        assert.equal(target[1]!.status.state, 'Healthy');
        assert.equal(target[1]!.status.message, 'Waiting for the DaemonSet controller to observe generation 2');
        assert.deepEqual(reasons(target[1]!), []);
        assert.equal(target[1]!.status.rollout, undefined);
        assert.equal(target[2]!.status.state, 'Healthy');
        assert.deepEqual(reasons(target[2]!), []);
      },
    },
    {
      name: 'stale counters are not high-water marks: once observed, updated rising from 0 is progress',
      steps: [
        { obs: healthyA(), at: T0 },
        { obs: stale, at: T1 },
        // Observed: node-3's old pod was deleted, updated drops to 0.
        { obs: stallWorld([], { current: 2, updated: 0, ready: 2, available: 2 }), at: T1 + sec(10) },
        // The new pod exists on node-3 but is not ready yet: updated 1.
        { obs: stallWorld([notReadyPod(HASH.B)], { updated: 1 }), at: T1 + sec(100) },
        { obs: stallWorld([notReadyPod(HASH.B)], { updated: 1 }), at: T1 + sec(200) },
      ],
      check: (target) => {
        assert.equal(target[2]!.status.rollout?.lastProgressAt, iso(T1 + sec(10)));
        assert.equal(target[3]!.status.rollout?.lastProgressAt, iso(T1 + sec(100)));
        assert.equal(target[4]!.status.state, 'Progressing');
      },
    },
    {
      name: "a generation pushed while the last rollout bakes past its deadline: timed from when it was first seen, not from that rollout's last progress",
      steps: (() => {
        const baking = policy({ bakeSeconds: 180 });
        const unobserved = targetObs({
          nodes: nodesOn(HASH.B),
          revisions: [A1, B2],
          target: dsAt2({ generation: 3, observedGeneration: 2, templateGeneration: '3' }),
        });
        const seen = T1 + sec(150);
        return [
          { obs: healthyA(), at: T0, policy: baking },
          { obs: completeB(), at: T1, policy: baking },
          // The bake runs on (180 s); its last progress (T1) is 150 s old, past the 60 s deadline.
          { obs: unobserved, at: seen, policy: policy({ bakeSeconds: 180, suspectAfterSeconds: 30, progressDeadlineSeconds: 60 }) },
          {
            obs: unobserved,
            at: seen + sec(29),
            policy: policy({ bakeSeconds: 180, suspectAfterSeconds: 30, progressDeadlineSeconds: 60 }),
          },
          {
            obs: unobserved,
            at: seen + sec(30),
            policy: policy({ bakeSeconds: 180, suspectAfterSeconds: 30, progressDeadlineSeconds: 60 }),
          },
          {
            obs: unobserved,
            at: seen + sec(60),
            policy: policy({ bakeSeconds: 180, suspectAfterSeconds: 30, progressDeadlineSeconds: 60 }),
          },
        ];
      })(),
      check: (target) => {
        const [, baking, first, almost, suspect, deadline] = target;
        assert.ok(baking!.status.rollout?.updatedAt !== undefined && baking!.status.rollout.completedAt === undefined, 'baking');
        // Until the deadline it waits on the controller, as for any generation not observed yet.
        for (const d of [first!, almost!, suspect!]) {
          assert.equal(d.status.state, 'Progressing', d.status.message);
          assert.match(d.status.message!, /^Waiting for the DaemonSet controller to observe generation 3 \(observed 2\)/);
          assert.ok(!reasons(d).includes('RolloutStalled') && !reasons(d).includes('RolloutSuspect'), reasons(d).join());
        }
        wakesAt(first!, sec(60));
        assert.equal(deadline!.status.state, 'Stalled');
        assert.match(deadline!.status.message!, /^The DaemonSet controller has not observed generation 3 for 60s\./);
      },
    },
    {
      name: 'a steady-state shrink is not reported from unobserved counters',
      steps: [
        { obs: healthyA(), at: T0 },
        { obs: healthyA({ generation: 2, observedGeneration: 1, desired: 2, current: 2, updated: 2, ready: 2, available: 2 }), at: T1 },
      ],
      check: (target) => assert.ok(!reasons(target[1]!).includes('DesiredShrank')),
    },
  ]);
});

// --- Causes ---------------------------------------------------------------------------------------

describe('decide: the cause at the deadline', () => {
  const cases: { name: string; node3: PodView[]; cause: string; early: string; blocked?: string; empty?: string }[] = [
    {
      name: 'ImagePullBackOff',
      node3: [imagePullPod(HASH.B)],
      cause: 'ImagePullFailure',
      early: 'ImagePullFailure',
      blocked: 'ImagePullBackOff',
    },
    {
      name: 'ErrImagePull',
      node3: [pod({ hash: HASH.B, waitingReason: 'ErrImagePull', waitingMessage: 'not found' })],
      cause: 'ImagePullFailure',
      early: 'ImagePullFailure',
      blocked: 'ErrImagePull',
    },
    {
      name: 'a crash-looping container',
      node3: [crashLoopPod(HASH.B)],
      cause: 'CrashLoop',
      early: 'CrashLoop',
      blocked: 'CrashLoopBackOff',
    },
    {
      name: "Pending Unschedulable 'Insufficient cpu'",
      node3: [unschedulablePod(HASH.B, '0/3 nodes are available: 1 Insufficient cpu. preemption: 0/3 nodes are available.')],
      cause: 'InsufficientResources',
      early: 'InsufficientResources',
      blocked: 'Unschedulable',
    },
    {
      name: 'Pending Unschedulable for another reason',
      node3: [unschedulablePod(HASH.B, "0/3 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules.")],
      cause: 'Unschedulable',
      early: 'Unschedulable',
      blocked: 'Unschedulable',
    },
    { name: 'running but never ready', node3: [notReadyPod(HASH.B)], cause: 'NotReady', early: '', blocked: 'NotReady' },
    { name: 'an eligible node with no pod', node3: [], cause: 'Unknown', early: '', empty: 'NoPod' },
    {
      name: 'an old pod still terminating',
      node3: [pod({ hash: HASH.A, deleting: true })],
      cause: 'Unknown',
      early: '',
      empty: 'Terminating',
    },
  ];
  for (const tc of cases) {
    it(`${tc.name} → ${tc.cause} (early: '${tc.early}')`, () => {
      const target = run(fromHealthy(stallWorld(tc.node3), [sec(600)]));
      assert.equal(target[1]!.status.cause, tc.early);
      const s = target[2]!.status;
      assert.equal(s.state, 'Stalled');
      assert.equal(s.cause, tc.cause);
      assert.equal(cond(s, 'Stalled').reason, tc.cause);
      assert.deepEqual(
        s.blockedNodes?.map((b) => b.reason),
        tc.blocked ? [tc.blocked] : [],
      );
      assert.deepEqual(
        s.emptyNodes?.map((e) => `${e.node}:${e.reason}`),
        tc.empty ? [`node-3:${tc.empty}`] : [],
      );
      assert.match(s.message!, /node-3/);
    });
  }

  // A batch of new pods fails at different moments: the first definite failure is the explanation, even
  // while more nodes of the batch are still starting (NotReady) or have no pod yet (Unknown).
  const batch = (first: PodView, starting: number, noPod: number): Observation =>
    targetObs({
      nodes: [
        node('node-1', [first]),
        ...Array.from({ length: starting }, (_, i) =>
          node(`node-s${i + 1}`, [pod({ hash: HASH.B, phase: 'Pending', ready: false, waitingReason: 'ContainerCreating' })]),
        ),
        ...Array.from({ length: noPod }, (_, i) => node(`node-e${i + 1}`, [])),
        node('node-old', [pod({ hash: HASH.A })]),
      ],
      revisions: [A1, B2],
      target: dsAt2({ desired: 2 + starting + noPod, current: 1 + starting, ready: 1, updated: 1 + starting, available: 1 }),
    });
  const earlyCases: { name: string; obs: Observation; cause: string; owner: string }[] = [
    {
      name: '1 ImagePullBackOff beside 4 pods still starting',
      obs: batch(imagePullPod(HASH.B), 4, 0),
      cause: 'ImagePullFailure',
      owner: 'Revision',
    },
    {
      name: '1 crash loop beside 2 starting and 2 nodes without a pod yet',
      obs: batch(crashLoopPod(HASH.B), 2, 2),
      cause: 'CrashLoop',
      owner: 'Revision',
    },
    {
      name: 'only pods still starting: nothing named yet',
      obs: batch(pod({ hash: HASH.B, phase: 'Pending', ready: false, waitingReason: 'ContainerCreating' }), 4, 0),
      cause: '',
      owner: '',
    },
  ];
  it('a wide batch: the failing node is listed though 24 nodes that are merely starting sort before it by name', () => {
    const wide = targetObs({
      nodes: [
        ...Array.from({ length: 24 }, (_, i) =>
          node(`node-a${String(i + 1).padStart(2, '0')}`, [
            pod({ hash: HASH.B, phase: 'Pending', ready: false, waitingReason: 'ContainerCreating' }),
          ]),
        ),
        node('node-z', [imagePullPod(HASH.B)]),
        node('node-old', [pod({ hash: HASH.A })]),
      ],
      revisions: [A1, B2],
      target: dsAt2({ desired: 26, current: 25, ready: 1, updated: 25, available: 1 }),
    });
    const s = run(fromHealthy(wide))[1]!.status;
    assert.equal(s.cause, 'ImagePullFailure');
    assert.equal(s.blockedNodeCount, 25);
    assert.equal(s.blockedNodes?.length, 20, 'the list is capped');
    assert.equal(s.blockedNodes?.[0]?.node, 'node-z', 'the failure comes first');
    assert.equal(s.blockedNodes?.[0]?.reason, 'ImagePullBackOff');
  });

  for (const tc of earlyCases) {
    it(`early explanation: ${tc.name} → '${tc.cause}'`, () => {
      const target = run(fromHealthy(tc.obs));
      const s = target[1]!.status;
      assert.equal(s.state, 'Progressing');
      assert.equal(s.cause, tc.cause);
      assert.equal(s.owner ?? '', tc.owner);
    });
  }

  it('maxSurge: a node with the old ready pod and a broken new pod is blocked, not empty; counted once, by its newest pod', () => {
    const surge = targetObs({
      nodes: [
        node('node-1', [pod({ hash: HASH.A })]),
        node('node-2', [pod({ hash: HASH.A })]),
        node('node-3', [pod({ hash: HASH.A }), { ...imagePullPod(HASH.B), createdAt: iso(T1) }]),
      ],
      revisions: [A1, B2],
      target: dsAt2({ desired: 3, current: 3, updated: 0, ready: 3, available: 3 }),
    });
    const target = run(fromHealthy(surge, [sec(600)]));
    const s = target[2]!.status;
    assert.equal(s.state, 'Stalled');
    assert.equal(s.cause, 'ImagePullFailure');
    assert.deepEqual(
      s.blockedNodes?.map((b) => b.node),
      ['node-3'],
    );
    assert.deepEqual(s.emptyNodes, []);
    assert.deepEqual(
      s.generations?.map((g) => [g.hash, g.nodes, g.ready]),
      [
        [HASH.B, 1, 0],
        [HASH.A, 2, 2],
      ],
      'three nodes: 1 on revision 2, 2 on revision 1',
    );
    assert.match(s.message ?? '', /1 node on revision 2 \([a-z0-9]+\), 2 nodes on revision 1/);
  });
});

// --- DESIRED shrink ------------------------------------------------------------------------------

describe('decide: DESIRED shrink', () => {
  const taint = 'untolerated taint dedicated=infra:NoExecute';
  /** Template B dropped a toleration: node-3 left the targets, the rest rolled out. Counters look complete. */
  const shrunk = (leftNodes = [{ node: 'node-3', reason: taint }]): Observation =>
    targetObs({
      nodes: [node('node-1', [pod({ hash: HASH.B })]), node('node-2', [pod({ hash: HASH.B })]), node('node-3', [], false, taint)],
      revisions: [A1, B2],
      leftNodes,
      target: dsAt2({ desired: 2, current: 2, updated: 2, ready: 2, available: 2 }),
    });
  const noneMatch = targetObs({
    nodes: [],
    revisions: [A1, B2],
    target: dsAt2({ desired: 0, current: 0, updated: 0, ready: 0, available: 0 }),
  });

  table([
    {
      name: 'during a template rollout: never Healthy, DesiredShrank names the node, TargetShrank after the deadline',
      steps: fromHealthy(shrunk(), [sec(120), shrunk([])], [sec(600), shrunk([])], [sec(700), shrunk([])]),
      check: (target) => {
        const [, start, suspect, stalled, later] = target;
        assert.equal(start!.status.state, 'Progressing');
        assert.deepEqual(reasons(start!), ['RolloutStarted', 'DesiredShrank']);
        const shrank = start!.events[1]!;
        assert.equal(shrank.type, 'Warning');
        assert.match(shrank.note, /DESIRED dropped from 3 to 2/);
        assert.match(shrank.note, /node-3 \(untolerated taint dedicated=infra:NoExecute\)/);
        assert.equal(start!.status.rollout?.desiredAtStart, 3);
        assert.deepEqual(start!.status.rollout?.leftNodes, [{ node: 'node-3', reason: taint }]);
        assert.equal(suspect!.status.state, 'Suspect');
        assert.equal(stalled!.status.state, 'Stalled');
        assert.equal(stalled!.status.cause, 'TargetShrank');
        assert.equal(cond(stalled!.status, 'Stalled').reason, 'TargetShrank');
        assert.deepEqual(reasons(stalled!), ['RolloutStalled']);
        // The left node is remembered in status even though later observations no longer list it.
        assert.match(
          stalled!.status.message!,
          /DESIRED dropped from 3 to 2: node-3 \(untolerated taint dedicated=infra:NoExecute\) left the targets/,
        );
        assert.deepEqual(reasons(later!), []);
        assert.equal(later!.status.state, 'Stalled');
      },
    },
    {
      name: 'by a dead node while the new image cannot be pulled on a Ready node: Stalled on the image, the dead node named as the node',
      steps: (() => {
        const unreachable = 'untolerated taint node.kubernetes.io/unreachable:NoSchedule';
        const world = (left: { node: string; reason: string; nodeChanged: boolean }[]): Observation =>
          targetObs({
            nodes: [
              withHealth(node('node-1', [], false, unreachable), deadKubelet()),
              node('node-2', [pod({ hash: HASH.A })]),
              node('node-3', [imagePullPod(HASH.B)]),
            ],
            revisions: [A1, B2],
            leftNodes: left,
            target: dsAt2({ desired: 2, current: 2, ready: 1, updated: 1, available: 1 }),
          });
        return fromHealthy(world([{ node: 'node-1', reason: unreachable, nodeChanged: true }]), [sec(600), world([])]);
      })(),
      check: (target) => {
        const progressing = target[1]!.status;
        assert.equal(progressing.cause, 'ImagePullFailure', 'named while it progresses, not TargetShrank');
        assert.equal(progressing.owner, 'Revision');
        const s = target[2]!.status;
        assert.equal(s.state, 'Stalled');
        assert.equal(s.cause, 'ImagePullFailure');
        assert.equal(s.owner, 'Revision');
        assert.deepEqual(
          s.emptyNodes?.map((e) => [e.node, e.owner, e.cause]),
          [['node-1', 'Node', 'NodeNotReady']],
        );
        assert.match(s.message!, /node-3 ImagePullBackOff/);
        assert.match(
          s.message!,
          /DESIRED dropped from 3 to 2: node-1 \(untolerated taint node\.kubernetes\.io\/unreachable:NoSchedule\) left the targets/,
        );
      },
    },
    {
      name: 'to zero during a rollout: NoNodesMatched event and cause, no DesiredShrank',
      steps: fromHealthy(noneMatch, [sec(600)]),
      check: (target) => {
        assert.deepEqual(reasons(target[1]!), ['RolloutStarted', 'NoNodesMatched']);
        assert.equal(target[1]!.events[1]!.type, 'Warning');
        assert.notEqual(target[1]!.status.state, 'Healthy');
        const s = target[2]!.status;
        assert.equal(s.state, 'Stalled');
        assert.equal(s.cause, 'NoNodesMatched');
        assert.match(s.message!, /DESIRED dropped from 3 to 0/);
      },
    },
    {
      name: 'in steady state (no template change): DesiredShrank event only, still Healthy, once',
      steps: [
        { obs: healthyA(), at: T0 },
        {
          obs: targetObs({
            nodes: [...nodesOn(HASH.A, 2), node('node-3', [], false, taint)],
            revisions: [A1],
            leftNodes: [{ node: 'node-3', reason: taint }],
            target: { desired: 2, current: 2, updated: 2, ready: 2, available: 2 },
          }),
          at: T1,
        },
        {
          obs: targetObs({
            nodes: [...nodesOn(HASH.A, 2), node('node-3', [], false, taint)],
            revisions: [A1],
            target: { desired: 2, current: 2, updated: 2, ready: 2, available: 2 },
          }),
          at: T1 + sec(30),
        },
      ],
      check: (target) => {
        const d = target[1]!;
        assert.equal(d.status.state, 'Healthy');
        assert.deepEqual(reasons(d), ['DesiredShrank']);
        assert.match(d.events[0]!.note, /DESIRED dropped from 3 to 2: node-3/);
        assert.equal(d.status.rollout, undefined);
        assert.deepEqual(condSummary(d.status), HEALTHY_CONDITIONS);
        assert.deepEqual(reasons(target[2]!), []);
      },
    },
  ]);
});

// --- Target missing, OnDelete, suspend ---------------------------------------------------------------

describe('decide: target missing', () => {
  table([
    {
      name: 'Unknown with Ready=False TargetNotFound, event once; TargetFound when it appears',
      steps: [
        { obs: missingObs(), at: T0 },
        { obs: missingObs(), at: T0 + sec(30) },
        { obs: healthyA(), at: T0 + sec(60) },
        { obs: healthyA(), at: T0 + sec(90) },
      ],
      check: ([missing, again, found, after]) => {
        assert.equal(missing!.status.state, 'Unknown');
        assert.deepEqual(condSummary(missing!.status), {
          Ready: 'False/TargetNotFound',
          Progressing: 'Unknown/TargetNotFound',
          Stalled: 'Unknown/TargetNotFound',
          RolledBack: 'False/NoUndo',
        });
        assert.deepEqual(reasons(missing!), ['TargetNotFound']);
        assert.equal(missing!.events[0]!.type, 'Warning');
        assert.equal(missing!.events[0]!.onTarget, false, 'there is no DaemonSet to mirror the event on');
        assert.match(missing!.status.message!, /DaemonSet decoder not found/);
        assert.equal(missing!.requeueAfterMs, undefined);
        assert.deepEqual(reasons(again!), []);
        assert.deepEqual(again!.status, missing!.status);
        assert.deepEqual(reasons(found!), ['TargetFound']);
        assert.equal(found!.events[0]!.type, 'Normal');
        assert.equal(found!.status.state, 'Healthy');
        assert.equal(cond(found!.status, 'Ready').status, 'True');
        assert.deepEqual(reasons(after!), []);
      },
    },
    {
      name: 'a target deleted mid-rollout drops the rollout but keeps the undo record',
      steps: [...fromHealthy(stallWorld(), [sec(600)]), { obs: missingObs(), at: T1 + sec(700) }],
      policy: UNDO,
      check: (target) => {
        assert.ok(target[2]!.status.lastUndo);
        const s = target[3]!.status;
        assert.equal(s.state, 'Unknown');
        assert.equal(s.rollout, undefined);
        assert.equal(s.currentRevision, undefined);
        assert.deepEqual(s.lastUndo, target[2]!.status.lastUndo);
        assert.equal(target[3]!.action, undefined);
      },
    },
  ]);
});

describe('decide: target being deleted', () => {
  const deleting = (by: 'Target' | 'Namespace'): Observation => ({ kind: 'TargetDeleting', targetName: 'decoder', by, since: iso(T1) });
  table([
    {
      name: 'a DaemonSet deleted mid-rollout past its deadline: Unknown with Ready=False TargetDeleting, no stall, no undo, one Normal Event',
      steps: [...fromHealthy(stallWorld()), { obs: deleting('Target'), at: T1 + sec(600) }, { obs: deleting('Target'), at: T1 + sec(700) }],
      policy: UNDO,
      check: (target) => {
        const d = target[2]!;
        assert.equal(d.status.state, 'Unknown');
        assert.equal(d.action, undefined, 'no action of any kind');
        assert.equal(cond(d.status, 'Ready').reason, 'TargetDeleting');
        assert.equal(cond(d.status, 'Stalled').status, 'Unknown');
        assert.deepEqual(reasons(d), ['TargetDeleting']);
        assert.equal(d.events[0]!.type, 'Normal');
        assert.equal(d.events[0]!.onTarget, false, 'nothing is written on a DaemonSet being deleted');
        assert.match(d.status.message!, /DaemonSet decoder is being deleted since .*acts on nothing/);
        assert.equal(d.status.undoPlan, undefined);
        assert.equal(d.status.owner, undefined);
        assert.deepEqual(reasons(target[3]!), [], 'said once');
        assert.equal(target[3]!.action, undefined);
      },
    },
    {
      name: 'a namespace terminating after an undo: the undo record stays, nothing goes back to RollingBack, no action',
      steps: [...fromHealthy(stallWorld(), [sec(600)]), { obs: deleting('Namespace'), at: T1 + sec(700) }],
      policy: UNDO,
      check: (target) => {
        assert.equal(target[2]!.action?.kind, 'Undo');
        const d = target[3]!;
        assert.deepEqual(d.status.lastUndo, target[2]!.status.lastUndo);
        assert.equal(d.status.state, 'Unknown');
        assert.equal(d.action, undefined);
        assert.match(d.status.message!, /the namespace of DaemonSet decoder is being terminated/);
      },
    },
  ]);
});

describe('decide: OnDelete strategy', () => {
  table([
    {
      name: 'Unknown with Ready=False OnDeleteStrategy, Warning once, no rollout tracked',
      steps: [
        { obs: healthyA(), at: T0 },
        { obs: stallWorld(undefined, { strategy: 'OnDelete' }), at: T1 },
        { obs: stallWorld(undefined, { strategy: 'OnDelete' }), at: T1 + sec(900) },
      ],
      check: ([, d, again]) => {
        assert.equal(d!.status.state, 'Unknown');
        assert.deepEqual(condSummary(d!.status), {
          Ready: 'False/OnDeleteStrategy',
          Progressing: 'Unknown/OnDeleteStrategy',
          Stalled: 'Unknown/OnDeleteStrategy',
          RolledBack: 'False/NoUndo',
        });
        assert.deepEqual(reasons(d!), ['OnDeleteStrategy']);
        assert.equal(d!.status.rollout, undefined);
        assert.equal(d!.requeueAfterMs, undefined);
        assert.equal(again!.status.state, 'Unknown', 'no deadline applies: never Stalled');
        assert.deepEqual(reasons(again!), []);
        assert.equal(again!.action, undefined);
      },
    },
  ]);
});

describe('decide: suspend', () => {
  const suspended = policy({ suspend: true, onStall: { action: 'Undo' } });
  table([
    {
      name: 'Suspended: no events, no action, no requeue; resuming restarts the clock',
      policy: UNDO,
      steps: [
        ...fromHealthy(stallWorld(), [sec(300)]),
        { obs: stallWorld(), at: T1 + sec(400), policy: suspended },
        { obs: stallWorld(), at: T1 + sec(2000), policy: suspended },
        { obs: stallWorld(), at: T1 + sec(3000) },
        { obs: stallWorld(), at: T1 + sec(3600) },
      ],
      check: (target) => {
        const [, , suspect, s1, s2, resumed, stalled] = target;
        assert.equal(suspect!.status.state, 'Suspect');
        for (const d of [s1!, s2!]) {
          assert.equal(d.status.state, 'Suspended');
          assert.deepEqual(d.events, []);
          assert.equal(d.action, undefined);
          assert.equal(d.requeueAfterMs, undefined);
          assert.deepEqual(condSummary(d.status), {
            Ready: 'False/Suspended',
            Progressing: 'Unknown/Suspended',
            Stalled: 'Unknown/Suspended',
            RolledBack: 'False/NoUndo',
          });
        }
        assert.equal(resumed!.status.state, 'Progressing');
        assert.equal(resumed!.status.rollout?.lastProgressAt, iso(T1 + sec(3000)));
        assert.deepEqual(reasons(resumed!), []);
        assert.equal(resumed!.action, undefined);
        wakesAt(resumed!, sec(120));
        assert.equal(stalled!.status.state, 'Stalled', 'the deadline counts from the resume');
        assert.ok(stalled!.action, 'and then the undo proceeds');
      },
    },
    {
      name: 'suspend also holds a due undo',
      policy: suspended,
      steps: [
        { obs: healthyA(), at: T0, policy: UNDO },
        { obs: stallWorld(), at: T1, policy: UNDO },
        { obs: stallWorld(), at: T1 + sec(600) },
      ],
      check: (target) => {
        assert.equal(target[2]!.status.state, 'Suspended');
        assert.equal(target[2]!.action, undefined);
        assert.equal(target[2]!.status.lastUndo, undefined);
      },
    },
  ]);
});

// --- Undo mode --------------------------------------------------------------------------------------

describe('decide: onStall.action Undo', () => {
  /** After the undo: template A again, its revision renumbered to max+1 = 3, node-3's pod given by `node3`. */
  const A3 = rev(HASH.A, 3);
  const rollbackWorld = (node3: PodView[], target: Partial<TargetView> = {}): Observation =>
    targetObs({
      nodes: [node('node-1', [pod({ hash: HASH.A })]), node('node-2', [pod({ hash: HASH.A })]), node('node-3', node3)],
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
        ...target,
      },
    });
  const rolledBack = rollbackWorld([pod({ hash: HASH.A })], { updated: 3, ready: 3, available: 3 });
  const applied = (d: Decision): GuardStatus => recordUndoOutcome(d.status, { kind: 'Applied' }, T1 + sec(601), 1).status;
  const stallSteps = fromHealthy(stallWorld(), [sec(600)]);
  const storeView: Partial<TargetView> = { kind: 'StatefulSet', name: 'store', waitsOnUnreadyPods: true };
  /** A StatefulSet's unit: ordinal `i`, named, like its pod, store-i. */
  const ordinal = (i: number, p: PodView): NodeView => ({ ...node(`store-${i}`, [{ ...p, name: `store-${i}` }]), ordinal: i });
  /** The classic stall on StatefulSet `store`: store-0 and store-1 on revision 1, store-2's new pod cannot pull its image. */
  const storeStall = targetObs({
    nodes: [ordinal(0, pod({ hash: HASH.A })), ordinal(1, pod({ hash: HASH.A })), ordinal(2, imagePullPod(HASH.B))],
    revisions: [A1, B2],
    target: dsAt2({ ...storeView, desired: 3, current: 3, ready: 2, updated: 1, available: 2 }),
  });
  const storeHealthy = targetObs({
    nodes: [0, 1, 2].map((i) => ordinal(i, pod({ hash: HASH.A }))),
    revisions: [A1],
    target: storeView,
  });
  const statefulSetStallSteps: Step[] = [
    { obs: storeHealthy, at: T0 },
    { obs: storeStall, at: T1 },
    { obs: storeStall, at: T1 + sec(600) },
  ];
  /** What Report mode would have a person run: the revert, then the pod OrderedReady never replaces. */
  const STORE_COMMANDS = 'kubectl rollout undo statefulset/store -n default --to-revision=1, then kubectl delete pod store-2 -n default';

  table([
    {
      name: 'Stalled → Undo action and lastUndo Pending in the same decision',
      policy: UNDO,
      steps: stallSteps,
      check: (target) => {
        const d = target[2]!;
        assert.equal(d.status.state, 'Stalled');
        assert.deepEqual(reasons(d), ['RolloutStalled']);
        assert.deepEqual(d.action, {
          kind: 'Undo',
          fromHash: HASH.B,
          toHash: HASH.A,
          toRevisionName: 'decoder-aaa111',
          expectedUid: 'uid-decoder',
          expectedTemplateGeneration: '2',
          record: { from: HASH.B, to: HASH.A, at: iso(T1 + sec(600)), guard: 'default/decoder' },
        });
        assert.deepEqual(d.status.lastUndo, {
          at: iso(T1 + sec(600)),
          fromHash: HASH.B,
          fromRevision: 2,
          toHash: HASH.A,
          toRevision: 1,
          toRevisionName: 'decoder-aaa111',
          result: 'Pending',
          message: 'undo decided: restore revision 1 (aaa111) on 1 node(s); the new revision fails on node-3',
        });
        assert.equal(cond(d.status, 'RolledBack').status, 'False');
        assert.equal(cond(d.status, 'RolledBack').reason, 'UndoStarted');
      },
    },
    {
      name: 'lastUndo Pending and the world unchanged → the same action again (a retry, not a new record)',
      policy: UNDO,
      steps: [...stallSteps, { obs: stallWorld(), at: T1 + sec(630) }],
      check: (target) => {
        assert.deepEqual(target[3]!.action, target[2]!.action);
        assert.deepEqual(target[3]!.status.lastUndo, target[2]!.status.lastUndo);
        assert.deepEqual(reasons(target[3]!), []);
      },
    },
    {
      name: 'delaySeconds: no action until stalledAt + delay; requeue points there',
      policy: policy({ onStall: { action: 'Undo', delaySeconds: 300 } }),
      steps: fromHealthy(stallWorld(), [sec(600)], [sec(899)], [sec(900)]),
      check: (target) => {
        const [, , stalled, almost, due] = target;
        assert.equal(stalled!.status.state, 'Stalled');
        assert.equal(stalled!.action, undefined);
        assert.equal(stalled!.status.lastUndo, undefined);
        wakesAt(stalled!, sec(300));
        assert.match(stalled!.status.message!, /Undo to revision 1 \(aaa111\) in 5m unless the template changes\./);
        assert.equal(almost!.action, undefined);
        wakesAt(almost!, sec(1));
        assert.equal(due!.action?.kind, 'Undo');
        assert.equal(due!.status.lastUndo?.result, 'Pending');
        assert.deepEqual(reasons(due!), []);
      },
    },
    {
      name: 'undo opt-out annotation → no action, UndoSkipped once',
      policy: UNDO,
      steps: fromHealthy(stallWorld(undefined, { undoOptOut: true }), [sec(600)], [sec(700)]),
      check: (target) => {
        assert.equal(target[2]!.action, undefined);
        assert.deepEqual(reasons(target[2]!), ['RolloutStalled', 'UndoSkipped']);
        assert.match(target[2]!.events[1]!.note, /rolloutguard\.dev\/undo=disabled/);
        assert.match(target[2]!.status.message!, /Undo not possible: the DaemonSet is annotated rolloutguard\.dev\/undo=disabled\./);
        assert.equal(target[2]!.status.lastUndo, undefined);
        assert.equal(target[3]!.action, undefined);
        assert.deepEqual(reasons(target[3]!), []);
      },
    },
    {
      name: 'the revision to restore is no longer in history → no action, UndoSkipped once',
      policy: UNDO,
      steps: fromHealthy(targetObs({ ...stallObsParts(), revisions: [B2] }), [sec(600)], [sec(700)], [sec(800)]),
      check: (target) => {
        assert.equal(target[2]!.action, undefined);
        assert.deepEqual(reasons(target[2]!), ['RolloutStalled', 'UndoSkipped']);
        assert.match(target[2]!.status.message!, /no longer in the DaemonSet's history/);
        assert.equal(target[2]!.status.undoPlan, undefined);
        for (const d of target.slice(3)) {
          assert.equal(d.action, undefined);
          assert.deepEqual(reasons(d), []);
        }
      },
    },
    {
      name: 'the starting revision is unknown (first seen mid-rollout, no older pods) → no action, UndoSkipped once',
      policy: UNDO,
      steps: [
        { obs: targetObs({ ...stallObsParts(), nodes: [...nodesOn(HASH.B, 2), node('node-3', [imagePullPod(HASH.B)])] }), at: T1 },
        {
          obs: targetObs({ ...stallObsParts(), nodes: [...nodesOn(HASH.B, 2), node('node-3', [imagePullPod(HASH.B)])] }),
          at: T1 + sec(600),
        },
        {
          obs: targetObs({ ...stallObsParts(), nodes: [...nodesOn(HASH.B, 2), node('node-3', [imagePullPod(HASH.B)])] }),
          at: T1 + sec(700),
        },
      ],
      check: (target) => {
        assert.equal(target[0]!.status.rollout?.fromRevision, undefined);
        assert.equal(target[1]!.status.state, 'Stalled');
        assert.equal(target[1]!.action, undefined);
        assert.deepEqual(reasons(target[1]!), ['RolloutStalled', 'UndoSkipped']);
        assert.deepEqual(reasons(target[2]!), []);
      },
    },
    {
      name: 'a crash between the patch and the status write: lastUndo Pending, world already restored → Applied, no new action',
      policy: UNDO,
      steps: [...stallSteps, { obs: rollbackWorld([imagePullPod(HASH.B)]), at: T1 + sec(640) }],
      check: (target) => {
        const d = target[3]!;
        assert.equal(d.action, undefined);
        assert.equal(d.status.lastUndo?.result, 'Applied');
        assert.match(d.status.lastUndo.message, /confirmed by observation/);
        assert.equal(d.status.lastUndo?.at, target[2]!.status.lastUndo?.at);
        assert.deepEqual(reasons(d), ['UndoStarted']);
        assert.equal(d.status.state, 'RollingBack');
        assert.equal(d.status.rollout?.rollback, true);
        assert.equal(cond(d.status, 'RolledBack').status, 'True', 'the DaemonSet runs the restored template');
      },
    },
    {
      name: 'lastUndo Pending and the template moved to a third hash → UndoSkipped, lastUndo Failed, no action',
      policy: UNDO,
      steps: [
        ...stallSteps,
        {
          obs: targetObs({
            nodes: [node('node-1', [pod({ hash: HASH.A })]), node('node-2', [pod({ hash: HASH.A })]), node('node-3', [])],
            revisions: [A1, B2, rev(HASH.C, 3)],
            target: { generation: 3, observedGeneration: 3, templateGeneration: '3', current: 2, updated: 0, ready: 2, available: 2 },
          }),
          at: T1 + sec(640),
        },
      ],
      check: (target) => {
        const d = target[3]!;
        assert.equal(d.action, undefined);
        assert.equal(d.status.lastUndo?.result, 'Failed');
        assert.deepEqual(reasons(d), ['UndoSkipped', 'RolloutStarted']);
        assert.equal(d.events[0]!.type, 'Warning');
        assert.match(d.events[0]!.note, /hash ccc333|revision 3 \(ccc333\)/);
        assert.equal(d.status.state, 'Progressing');
        assert.deepEqual(d.status.rollout?.toRevision, { revision: 3, hash: HASH.C });
        assert.equal(cond(d.status, 'RolledBack').reason, 'UndoFailed');
      },
    },
    {
      name: 'a failed undo is not retried and is not reported as a repeated broken revision',
      policy: UNDO,
      steps: [
        { obs: healthyA(), at: T0 },
        { obs: stallWorld(), at: T1 },
        {
          obs: stallWorld(),
          at: T1 + sec(600),
          persist: (d) =>
            recordUndoOutcome(d.status, { kind: 'Failed', detail: 'daemonsets.apps "decoder" is forbidden' }, T1 + sec(601), 1).status,
        },
        { obs: stallWorld(), at: T1 + sec(660) },
        { obs: stallWorld(), at: T1 + sec(720) },
      ],
      check: (target) => {
        assert.equal(target[2]!.action?.kind, 'Undo');
        for (const d of target.slice(3)) {
          assert.equal(d.action, undefined);
          assert.equal(d.status.state, 'Stalled');
          assert.equal(d.status.lastUndo?.result, 'Failed');
          assert.equal(d.status.repeatedRevision, undefined);
          assert.ok(!reasons(d).includes('RepeatedBrokenRevision'));
          assert.ok(!reasons(d).includes('UndoSkipped'), 'recordUndoOutcome already reported the failure');
          assert.match(d.status.message!, /Undo not possible: .*failed/);
        }
      },
    },
    {
      name: 'a StatefulSet whose guard says Undo: the stall is undone, as a DaemonSet is',
      policy: UNDO,
      steps: statefulSetStallSteps,
      check: (target) => {
        const d = target[2]!;
        assert.equal(d.status.state, 'Stalled');
        assert.equal(d.action?.kind, 'Undo');
        assert.equal(d.status.undoSkipped, undefined);
        assert.equal(d.status.undoPlan?.toHash, HASH.A);
      },
    },
    {
      name: 'the same StatefulSet under Report is not refused: the commands are its sentence, and the dry run is asked',
      steps: statefulSetStallSteps,
      check: (target) => {
        const d = target[2]!;
        assert.equal(d.status.undoSkipped, undefined);
        assert.equal(d.action?.kind, 'DryRunUndo');
        assert.ok(d.status.message!.includes(`Would restore revision 1 (aaa111) on 1 pod: ${STORE_COMMANDS}`), d.status.message);
      },
    },
    {
      name: 'a DaemonSet whose guard says Undo: the stall is undone',
      policy: UNDO,
      steps: stallSteps,
      check: (target) => {
        const d = target[2]!;
        assert.equal(d.action?.kind, 'Undo');
        assert.equal(d.status.undoSkipped, undefined);
      },
    },
  ]);

  describe('the full cycle: stall → undo → RollingBack → RolledBack → the broken template re-applied', () => {
    const B4 = rev(HASH.B, 4);
    const A3only = rev(HASH.A, 3);
    const reapplied = targetObs({
      nodes: [node('node-1', [pod({ hash: HASH.A })]), node('node-2', [pod({ hash: HASH.A })]), node('node-3', [imagePullPod(HASH.B)])],
      revisions: [A3only, B4],
      target: { generation: 4, observedGeneration: 4, templateGeneration: '4', desired: 3, current: 3, updated: 1, ready: 2, available: 2 },
    });
    const R = T1 + sec(700); // the rollback is first observed
    const G = R + sec(300); // GitOps re-applies B
    const target = run(
      [
        { obs: healthyA(), at: T0 },
        { obs: stallWorld(), at: T1 },
        { obs: stallWorld(), at: T1 + sec(600), persist: applied },
        { obs: rollbackWorld([imagePullPod(HASH.B)]), at: R },
        { obs: rolledBack, at: R + sec(30) },
        { obs: rolledBack, at: R + sec(60) },
        { obs: reapplied, at: G },
        { obs: reapplied, at: G + sec(600) },
        { obs: reapplied, at: G + sec(700) },
      ],
      { policy: UNDO },
    );
    const [, , stalled, rollingBack, done, stillDone, again, stalledAgain, later] = target;

    it('the stall decides the undo', () => assert.equal(stalled!.action?.kind, 'Undo'));

    it('the restored hash starts a rollback rollout: RollingBack, no RolloutStarted, no new action', () => {
      assert.equal(rollingBack!.status.state, 'RollingBack');
      assert.equal(rollingBack!.status.rollout?.rollback, true);
      assert.deepEqual(rollingBack!.status.rollout?.toRevision, { revision: 3, hash: HASH.A });
      assert.deepEqual(rollingBack!.status.rollout?.fromRevision, { revision: 2, hash: HASH.B });
      assert.deepEqual(reasons(rollingBack!), []);
      assert.equal(rollingBack!.action, undefined);
      assert.equal(rollingBack!.status.lastUndo?.result, 'Applied');
      assert.equal(cond(rollingBack!.status, 'Progressing').reason, 'NewRevisionRolling');
      assert.ok(rollingBack!.requeueAfterMs! > 0);
    });

    it('one generation again → RolledBack with UndoComplete, lastUndo Complete, RolledBack=True', () => {
      const s = done!.status;
      assert.equal(s.state, 'RolledBack');
      assert.deepEqual(reasons(done!), ['UndoComplete']);
      assert.equal(done!.events[0]!.type, 'Normal');
      assert.equal(s.lastUndo?.result, 'Complete');
      assert.deepEqual(condSummary(s), {
        Ready: 'True/TargetHealthy',
        Progressing: 'True/RolloutComplete',
        Stalled: 'False/NotStalled',
        RolledBack: 'True/UndoApplied',
      });
      assert.equal(stillDone!.status.state, 'RolledBack');
      assert.deepEqual(reasons(stillDone!), []);
      assert.match(stillDone!.status.message!, /^Rolled back to revision 3 \(aaa111\)/);
    });

    it('the broken revision applied again starts a normal rollout, RolledBack turns False', () => {
      assert.equal(again!.status.state, 'Progressing');
      assert.deepEqual(reasons(again!), ['RolloutStarted']);
      assert.equal(again!.status.rollout?.rollback, undefined);
      assert.equal(cond(again!.status, 'RolledBack').status, 'False');
    });

    it('when it stalls again: no second undo, RepeatedBrokenRevision once, status.repeatedRevision set', () => {
      assert.equal(stalledAgain!.status.state, 'Stalled');
      assert.equal(stalledAgain!.action, undefined);
      assert.deepEqual(reasons(stalledAgain!), ['RolloutStalled', 'RepeatedBrokenRevision']);
      assert.equal(stalledAgain!.status.repeatedRevision, HASH.B);
      assert.match(stalledAgain!.status.message!, /already undone once/);
      assert.equal(later!.action, undefined);
      assert.deepEqual(reasons(later!), []);
      assert.equal(later!.status.repeatedRevision, HASH.B);
    });

    it('every status survives a JSON round trip unchanged', () => {
      for (const d of target) assert.deepEqual(roundTrip(d.status), d.status);
    });
  });

  table([
    {
      name: 'a stalled rollback → Stalled with RollbackStalled, never another Undo action',
      policy: UNDO,
      steps: [
        ...stallSteps.slice(0, 2),
        { obs: stallWorld(), at: T1 + sec(600), persist: applied },
        { obs: rollbackWorld([]), at: T1 + sec(700) },
        { obs: rollbackWorld([]), at: T1 + sec(1300) },
        { obs: rollbackWorld([]), at: T1 + sec(1900) },
      ],
      check: (target) => {
        assert.equal(target[3]!.status.state, 'RollingBack');
        const d = target[4]!;
        assert.equal(d.status.state, 'Stalled');
        assert.deepEqual(reasons(d), ['RollbackStalled']);
        assert.equal(d.events[0]!.type, 'Warning');
        assert.equal(d.action, undefined);
        assert.equal(d.status.lastUndo?.result, 'RollbackStalled');
        assert.equal(cond(d.status, 'RolledBack').reason, 'RollbackStalled');
        assert.equal(cond(d.status, 'Stalled').status, 'True');
        assert.equal(target[5]!.action, undefined);
        assert.deepEqual(reasons(target[5]!), []);
      },
    },
    {
      name: 'a rollback that progresses again after stalling resumes as RollingBack and completes as RolledBack',
      policy: UNDO,
      steps: [
        ...stallSteps.slice(0, 2),
        { obs: stallWorld(), at: T1 + sec(600), persist: applied },
        { obs: rollbackWorld([]), at: T1 + sec(700) },
        { obs: rollbackWorld([]), at: T1 + sec(1300) },
        { obs: rolledBack, at: T1 + sec(1400) },
      ],
      check: (target) => {
        assert.equal(target[4]!.status.state, 'Stalled');
        assert.equal(target[5]!.status.state, 'RolledBack');
        assert.deepEqual(reasons(target[5]!), ['UndoComplete']);
        assert.equal(target[5]!.status.lastUndo?.result, 'Complete');
      },
    },
  ]);
});

/** The pieces of the stall world, for variants that replace one of them. */
function stallObsParts(): { nodes: NodeView[]; revisions: RevisionView[]; target: Partial<TargetView> } {
  const o = stallWorld();
  if (o.kind !== 'Target') throw new Error('unreachable');
  return { nodes: o.nodes, revisions: o.revisions, target: o.target };
}

// --- Report mode ------------------------------------------------------------------------------------

describe('decide: onStall.action Report', () => {
  const accepted = (d: Decision): GuardStatus => recordDryRun(d.status, { kind: 'Accepted' });
  table([
    {
      name: 'Stalled → one DryRunUndo per broken revision; the message says what would be restored',
      steps: [
        ...fromHealthy(stallWorld()),
        { obs: stallWorld(), at: T1 + sec(600), persist: accepted },
        { obs: stallWorld(), at: T1 + sec(700) },
        { obs: stallWorld(), at: T1 + sec(800) },
      ],
      check: (target) => {
        const d = target[2]!;
        assert.deepEqual(d.action, { kind: 'DryRunUndo', toRevisionName: 'decoder-aaa111', toHash: HASH.A, forHash: HASH.B });
        assert.deepEqual(d.status.undoPlan, {
          toRevision: 1,
          toHash: HASH.A,
          toRevisionName: 'decoder-aaa111',
          nodes: 1,
          dryRun: 'NotRun',
          forHash: HASH.B,
        });
        assert.match(d.status.message!, /Would restore revision 1 \(aaa111\) on 1 node\(s\) \(onStall\.action is Report\)\./);
        assert.equal(d.status.lastUndo, undefined);
        assert.deepEqual(reasons(d), ['RolloutStalled']);
        for (const later of target.slice(3)) {
          assert.equal(later.action, undefined);
          assert.equal(later.status.undoPlan?.dryRun, 'Accepted');
          assert.deepEqual(reasons(later), []);
        }
      },
    },
    {
      name: 'the next broken revision gets its own dry run',
      steps: [
        ...fromHealthy(stallWorld()),
        { obs: stallWorld(), at: T1 + sec(600), persist: accepted },
        { obs: completeB(), at: T1 + sec(700) },
        {
          obs: targetObs({
            nodes: [
              node('node-1', [pod({ hash: HASH.B })]),
              node('node-2', [pod({ hash: HASH.B })]),
              node('node-3', [imagePullPod(HASH.C)]),
            ],
            revisions: [A1, B2, rev(HASH.C, 3)],
            target: { generation: 3, observedGeneration: 3, templateGeneration: '3', updated: 1, ready: 2, available: 2 },
          }),
          at: T1 + sec(800),
        },
        {
          obs: targetObs({
            nodes: [
              node('node-1', [pod({ hash: HASH.B })]),
              node('node-2', [pod({ hash: HASH.B })]),
              node('node-3', [imagePullPod(HASH.C)]),
            ],
            revisions: [A1, B2, rev(HASH.C, 3)],
            target: { generation: 3, observedGeneration: 3, templateGeneration: '3', updated: 1, ready: 2, available: 2 },
          }),
          at: T1 + sec(1400),
        },
      ],
      check: (target) => {
        assert.equal(target[3]!.status.undoPlan, undefined, 'completion clears the plan');
        const d = target[5]!;
        assert.equal(d.status.state, 'Stalled');
        assert.deepEqual(d.action, { kind: 'DryRunUndo', toRevisionName: 'decoder-bbb222', toHash: HASH.B, forHash: HASH.C });
        assert.equal(d.status.undoPlan?.dryRun, 'NotRun');
      },
    },
    {
      name: 'nothing to restore → no dry run and no promise in the message',
      steps: fromHealthy(targetObs({ ...stallObsParts(), revisions: [B2] }), [sec(600)]),
      check: (target) => {
        assert.equal(target[2]!.status.state, 'Stalled');
        assert.equal(target[2]!.action, undefined);
        assert.doesNotMatch(target[2]!.status.message!, /Would restore/);
        assert.deepEqual(reasons(target[2]!), ['RolloutStalled']);
      },
    },
  ]);
});

// --- Requeue -------------------------------------------------------------------------------------

describe('decide: requeueAfterMs is never ≤ 0', () => {
  const DAY = sec(86400);
  const cases: { name: string; steps: Step[]; policy?: ReturnType<typeof policy> }[] = [
    { name: 'the clock jumps back a day mid-rollout', steps: fromHealthy(stallWorld(), [sec(100)], [-DAY]) },
    { name: 'the clock jumps back a day while Suspect', steps: fromHealthy(stallWorld(), [sec(300)], [sec(300) - DAY]) },
    { name: 'the clock jumps ten years forward', steps: fromHealthy(stallWorld(), [sec(10)], [3650 * DAY]) },
    { name: 'exactly at a deadline', steps: fromHealthy(stallWorld(), [sec(120)], [sec(600)]) },
    {
      name: 'the clock jumps back inside an undo delay',
      steps: fromHealthy(stallWorld(), [sec(600)], [sec(500)], [sec(899.9995)]),
      policy: policy({ onStall: { action: 'Undo', delaySeconds: 300 } }),
    },
    {
      name: 'waiting for an unobserved generation while the clock runs backwards',
      steps: fromHealthy(stallWorld(undefined, { observedGeneration: 1 }), [-DAY], [sec(599.9999)]),
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const target = tc.policy ? run(tc.steps, { policy: tc.policy }) : run(tc.steps);
      const requeues = target.map((d) => d.requeueAfterMs).filter((r): r is number => r !== undefined);
      assert.ok(requeues.length > 0, 'the timeline schedules at least one wake-up');
      for (const r of requeues) {
        assert.ok(Number.isFinite(r), `finite: ${r}`);
        assert.ok(r >= 100, `positive and not a spin: ${r}`);
      }
    });
  }
});

// --- Cross-cutting properties ----------------------------------------------------------------------

describe('decide: properties', () => {
  it('never mutates the observation or the previous status', () => {
    const [, , stalled] = run(fromHealthy(stallWorld(), [sec(600)]), { policy: UNDO });
    const prev = deepFreeze(structuredClone(stalled!.status));
    const obs = deepFreeze(stallWorld());
    const copy = structuredClone(prev);
    assert.doesNotThrow(() => decide(obs, prev, UNDO, T1 + sec(700)));
    assert.deepEqual(prev, copy);
  });

  it('status lists are capped at 20 entries while the counts stay exact', () => {
    const many = targetObs({
      nodes: Array.from({ length: 30 }, (_, i) => node(`node-${String(i).padStart(2, '0')}`, [imagePullPod(HASH.B)])),
      revisions: [A1, B2],
      target: dsAt2({ desired: 30, current: 30, updated: 30, ready: 0, available: 0 }),
    });
    const [, d] = run([
      { obs: healthyA(), at: T0 },
      { obs: many, at: T1 },
    ]);
    assert.equal(d!.status.blockedNodes?.length, 20);
    assert.equal(d!.status.blockedNodeCount, 30);
    assert.equal(d!.status.blockedNodes?.[0]?.node, 'node-00');
  });

  it('event notes fit the 1 kB events.k8s.io limit', () => {
    const longMsg = 'x'.repeat(400);
    const noisy = targetObs({
      nodes: Array.from({ length: 10 }, (_, i) =>
        node(`node-${i}`, [pod({ hash: HASH.B, waitingReason: 'ImagePullBackOff', waitingMessage: longMsg })]),
      ),
      revisions: [A1, B2],
      target: dsAt2({ desired: 10, current: 10, updated: 10, ready: 0, available: 0 }),
    });
    const target = run(fromHealthy(noisy, [sec(120)], [sec(600)]));
    const notes = target.flatMap((d) => d.events.map((e) => e.note));
    assert.ok(notes.length >= 3);
    for (const n of notes) assert.ok(n.length <= 1000, `note of ${n.length} chars`);
  });
});

describe('decide: a scheduled undo (delaySeconds) pre-empted by a template change', () => {
  const C3 = rev(HASH.C, 3);
  const fixedByHuman = targetObs({
    nodes: [node('node-1', [pod({ hash: HASH.A })]), node('node-2', [pod({ hash: HASH.A })]), node('node-3', [])],
    revisions: [A1, B2, C3],
    target: { generation: 3, observedGeneration: 3, templateGeneration: '3', current: 2, updated: 0, ready: 2, available: 2 },
  });
  table([
    {
      name: 'Undo mode: UndoSkipped (cancelled) and RolloutStarted, no action, no undo record',
      policy: policy({ onStall: { action: 'Undo', delaySeconds: 300 } }),
      steps: fromHealthy(stallWorld(), [sec(600)], [sec(700), fixedByHuman]),
      check: (target) => {
        assert.equal(target[2]!.status.state, 'Stalled');
        const d = target[3]!;
        assert.deepEqual(reasons(d), ['UndoSkipped', 'RolloutStarted']);
        assert.match(d.events[0]!.note, /cancelled/);
        assert.equal(d.action, undefined);
        assert.equal(d.status.lastUndo, undefined);
        assert.equal(d.status.state, 'Progressing');
      },
    },
    {
      name: 'the change seen before the controller observes it: still Stalled, the generation named, then the cancellation announced',
      policy: policy({ onStall: { action: 'Undo', delaySeconds: 300 } }),
      steps: fromHealthy(
        stallWorld(),
        [sec(600)],
        // The template changed (generation 3) and the controller has not observed it yet.
        [sec(699), stallWorld(undefined, { generation: 3, templateGeneration: '3' })],
        [sec(700), fixedByHuman],
      ),
      check: (target) => {
        const waiting = target[3]!;
        assert.equal(waiting.status.state, 'Stalled', waiting.status.message);
        assert.match(waiting.status.message!, /^The DaemonSet controller has not observed generation 3 yet\. Rollout to revision 2/);
        assert.deepEqual(reasons(waiting), []);
        const d = target[4]!;
        assert.deepEqual(reasons(d), ['UndoSkipped', 'RolloutStarted']);
        assert.match(d.events[0]!.note, /cancelled/);
        assert.equal(d.status.lastUndo, undefined);
      },
    },
    {
      name: 'Report mode: just RolloutStarted',
      steps: fromHealthy(stallWorld(), [sec(600)], [sec(700), fixedByHuman]),
      check: (target) => assert.deepEqual(reasons(target[3]!), ['RolloutStarted']),
    },
  ]);
});

describe('decide: dead nodes tainted unreachable before DESIRED drops', () => {
  it("a dead node that left the targets by its taint while DESIRED still counts it is named as the node's fault, never the control plane", () => {
    const dead = (name: string): NodeView =>
      withHealth(
        node(name, [pod({ hash: HASH.A, ready: false })], false, 'untolerated taint node.kubernetes.io/unreachable:NoSchedule'),
        deadKubelet(),
      );
    const fleet = (nodes: NodeView[], target: Partial<TargetView>): Observation => targetObs({ nodes, revisions: [A1, B2], target });
    const healthy4 = targetObs({
      nodes: nodesOn(HASH.A, 4),
      revisions: [A1],
      target: { desired: 4, current: 4, updated: 4, ready: 4, available: 4 },
    });
    const stuck = fleet(
      [node('node-1', [pod({ hash: HASH.A })]), node('node-2', [pod({ hash: HASH.A })]), dead('node-3'), dead('node-4')],
      dsAt2({ desired: 4, current: 4, updated: 0, ready: 2, available: 2 }),
    );
    const target = run([
      { obs: healthy4, at: T0 },
      { obs: stuck, at: T1 },
      { obs: stuck, at: T1 + sec(600) },
    ]);
    const d = last(target);
    assert.equal(d.status.state, 'Stalled', d.status.message);
    assert.equal(d.status.owner, 'Node', d.status.message);
    assert.equal(d.status.cause, 'NodeNotReady', d.status.message);
    assert.deepEqual(
      (d.status.blockedNodes ?? []).map((b) => b.node),
      ['node-3', 'node-4'],
    );
  });
});

describe('decide: pods lost after a completed undo', () => {
  it('a pod gone after RolledBack (a node lost, the namespace being deleted) is not the undo still converging: never RollingBack again', () => {
    const applied = (d: Decision): GuardStatus => recordUndoOutcome(d.status, { kind: 'Applied' }, T1 + sec(601), 1).status;
    const record = { from: HASH.B, to: HASH.A, at: iso(T1 + sec(600)), guard: 'default/decoder' };
    const restored = { generation: 3, observedGeneration: 3, templateGeneration: '3', undoRecord: record };
    const A3 = rev(HASH.A, 3);
    const back = targetObs({ nodes: nodesOn(HASH.A), revisions: [A3, B2], target: restored });
    const lost = targetObs({
      nodes: [node('node-1', [pod({ hash: HASH.A })]), node('node-2', [pod({ hash: HASH.A })]), node('node-3', [])],
      revisions: [A3, B2],
      target: { ...restored, current: 2, updated: 2, ready: 2, available: 2 },
    });
    const target = run(
      [
        { obs: healthyA(), at: T0 },
        { obs: stallWorld(), at: T1 },
        { obs: stallWorld(), at: T1 + sec(600), persist: applied },
        { obs: back, at: T1 + sec(610) },
        { obs: lost, at: T1 + sec(700) },
      ],
      { policy: UNDO },
    );
    assert.equal(target[3]!.status.state, 'RolledBack', target[3]!.status.message);
    const d = target[4]!;
    assert.notEqual(d.status.state, 'RollingBack', d.status.message);
    assert.equal(d.status.rollout?.rollback, undefined, JSON.stringify(d.status.rollout));
    assert.equal(d.action, undefined);
  });
});

describe('decide: the window between our undo and the controller picking it up', () => {
  it('right after our own undo, before the DaemonSet controller re-numbers the restored revision, the guard waits in RollingBack', () => {
    const applied = (d: Decision): GuardStatus => recordUndoOutcome(d.status, { kind: 'Applied' }, T1 + sec(601), 1).status;
    // Our patch is visible (generation 3, template generation 3) but the controller has not synced:
    // the highest ControllerRevision is still the broken one.
    const patchedNotSynced = stallWorld(undefined, { generation: 3, observedGeneration: 2, templateGeneration: '3' });
    const target = run(
      [
        { obs: healthyA(), at: T0 },
        { obs: stallWorld(), at: T1 },
        { obs: stallWorld(), at: T1 + sec(600), persist: applied },
        { obs: patchedNotSynced, at: T1 + sec(602) },
      ],
      { policy: UNDO },
    );
    const d = target[3]!;
    assert.equal(d.action, undefined);
    assert.equal(d.status.state, 'RollingBack');
    assert.deepEqual(reasons(d), []);
    assert.equal(d.status.repeatedRevision, undefined);
  });
});

describe('decide: the broken revision re-applied before any pass saw our undo take effect (a GitOps tool reverting it)', () => {
  // Found by the property test (properties.test.ts, "never Suspect or Stalled on a pass that shows
  // progress"). Between two passes the template went B → A (our undo) → B (re-applied): the controller
  // renumbered B to revision 4 (generation 4), so the current hash is the one undone. It was read as the
  // revision cache behind (the pass set aside for 30 s) and then as our undo not taking effect: RollingBack,
  // then Stalled ControllerNotActing with owner ControlPlane, while B rolled out node after node.
  const applied = (d: Decision): GuardStatus => recordUndoOutcome(d.status, { kind: 'Applied' }, T1 + sec(601), 1).status;
  const record = { from: HASH.B, to: HASH.A, at: iso(T1 + sec(600)), guard: 'default/decoder' };
  /** Generation 4 (B again, revision 4; A is revision 3 since the undo): node-1..node-k on B, node-3's B pod pulling or `done`. */
  const reapplied = (k: number, done = false): Observation =>
    targetObs({
      nodes: [
        node('node-1', [pod({ hash: k >= 1 ? HASH.B : HASH.A })]),
        node('node-2', [pod({ hash: k >= 2 ? HASH.B : HASH.A })]),
        node('node-3', [done ? pod({ hash: HASH.B }) : imagePullPod(HASH.B)]),
      ],
      revisions: [rev(HASH.A, 3), rev(HASH.B, 4)],
      target: {
        generation: 4,
        observedGeneration: 4,
        templateGeneration: '4',
        images: [`registry.example/decoder:${HASH.B}`],
        desired: 3,
        current: 3,
        updated: k + 1,
        ready: done ? 3 : 2,
        available: done ? 3 : 2,
        undoRecord: record,
      },
    });
  const target = run(
    [
      { obs: healthyA(), at: T0 },
      { obs: stallWorld(), at: T1 },
      { obs: stallWorld(), at: T1 + sec(600), persist: applied },
      { obs: reapplied(1), at: T1 + sec(605) },
      { obs: reapplied(2), at: T1 + sec(640) },
      { obs: reapplied(2), at: T1 + sec(1240) },
      { obs: reapplied(2, true), at: T1 + sec(1250) },
    ],
    { policy: UNDO },
  );
  const [, , undone, started, moving, stalled, done] = target as [Decision, Decision, Decision, Decision, Decision, Decision, Decision];

  it('revision 4 is a new rollout, seen at once: not the revision cache behind, not our undo in flight', () => {
    assert.equal(undone.action?.kind, 'Undo');
    assert.equal(started.deferred, undefined);
    assert.deepEqual(reasons(started), ['RolloutStarted']);
    assert.deepEqual(started.status.currentRevision, { revision: 4, hash: HASH.B });
    assert.deepEqual(started.status.rollout?.toRevision, { revision: 4, hash: HASH.B });
    assert.equal(started.status.templateGeneration, '4');
    assert.equal(started.status.state, 'Progressing');
  });

  it('while it moves it is Progressing, never RollingBack or Stalled ControllerNotActing', () => {
    assert.equal(moving.status.state, 'Progressing');
    assert.equal(moving.status.rollout?.lastProgressAt, iso(T1 + sec(640)));
  });

  it('when it stalls: Stalled on the evidence (ImagePullFailure, Revision), RepeatedBrokenRevision, AlreadyUndone, never a second undo', () => {
    assert.equal(stalled.status.state, 'Stalled');
    assert.equal(stalled.status.cause, 'ImagePullFailure');
    assert.equal(stalled.status.owner, 'Revision');
    assert.deepEqual(reasons(stalled), ['RolloutStalled', 'RepeatedBrokenRevision']);
    assert.equal(stalled.status.undoSkipped?.reason, 'AlreadyUndone');
    assert.equal(stalled.status.repeatedRevision, HASH.B);
    assert.equal(stalled.status.lastUndo?.result, 'Applied', 'the record of the one undo is kept, not turned into RollbackStalled');
    assert.deepEqual(
      target.slice(3).map((d) => d.action),
      [undefined, undefined, undefined, undefined],
    );
  });

  it('and it completes as any rollout does', () => {
    assert.equal(done.status.state, 'Healthy');
    assert.deepEqual(reasons(done), ['RolloutComplete']);
  });
});

describe('decide: undo that never takes effect, and nodes deleted from the cluster', () => {
  it('an applied undo the controller never picks up becomes RollbackStalled once, never a repeat or a second undo', () => {
    const applied = (d: Decision): GuardStatus => recordUndoOutcome(d.status, { kind: 'Applied' }, T1 + sec(601), 1).status;
    const patchedNotSynced = stallWorld(undefined, { generation: 3, observedGeneration: 2, templateGeneration: '3' });
    const target = run(
      [
        { obs: healthyA(), at: T0 },
        { obs: stallWorld(), at: T1 },
        { obs: stallWorld(), at: T1 + sec(600), persist: applied },
        { obs: patchedNotSynced, at: T1 + sec(600) + sec(601) },
        { obs: patchedNotSynced, at: T1 + sec(600) + sec(700) },
      ],
      { policy: UNDO },
    );
    const stalled = target[3]!;
    assert.equal(stalled.status.state, 'Stalled');
    assert.deepEqual(reasons(stalled), ['RollbackStalled']);
    assert.equal(stalled.status.lastUndo?.result, 'RollbackStalled');
    assert.equal(stalled.action, undefined);
    const later = target[4]!;
    assert.equal(later.action, undefined, 'not retried');
    assert.deepEqual(reasons(later), []);
    assert.equal(later.status.repeatedRevision, undefined, 'not mistaken for a re-applied revision');
  });

  it('nodes deleted mid-rollout lower the expected DESIRED instead of counting as a shrink', () => {
    const twoNodes = targetObs({
      nodes: [node('node-1', [pod({ hash: HASH.B })]), node('node-2', [pod({ hash: HASH.B })])],
      revisions: [A1, B2],
      target: dsAt2({ desired: 2, current: 2, ready: 2, updated: 2, available: 2 }),
      removedNodes: ['node-3'],
    });
    const target = run([
      { obs: healthyA(), at: T0 },
      { obs: stallWorld(), at: T1 },
      { obs: twoNodes, at: T1 + sec(5) },
    ]);
    const d = target[2]!;
    assert.equal(d.status.state, 'Healthy');
    assert.ok(!reasons(d).includes('DesiredShrank'));
    assert.ok(reasons(d).includes('RolloutComplete'));
  });
});

describe('decide: status writes are coalesced', () => {
  it('while Suspect or Stalled, passes that observe nothing new produce the same status as time goes on', () => {
    const target = run([
      { obs: healthyA(), at: T0 },
      { obs: stallWorld(), at: T1 },
      { obs: stallWorld(), at: T1 + sec(130) },
      { obs: stallWorld(), at: T1 + sec(400) },
      { obs: stallWorld(), at: T1 + sec(610) },
      { obs: stallWorld(), at: T1 + sec(900) },
    ]);
    assert.equal(target[2]!.status.state, 'Suspect');
    assert.deepEqual(target[3]!.status, target[2]!.status, 'Suspect: no rewrite');
    assert.equal(target[4]!.status.state, 'Stalled');
    assert.deepEqual(target[5]!.status, target[4]!.status, 'Stalled: no rewrite');
  });
});

describe('decide: the ControllerRevision cache behind the DaemonSet', () => {
  it("waits for the new revision instead of taking the new template's DESIRED as the starting point", () => {
    // The new template drops a toleration: the controller already shrank DESIRED to 2, but the new
    // revision has not reached the cache, so the highest revision is still A.
    const shrunkBeforeRevision = targetObs({
      nodes: [node('node-1', [pod({ hash: HASH.A })]), node('node-2', [pod({ hash: HASH.A })])],
      revisions: [A1],
      target: { generation: 2, observedGeneration: 2, templateGeneration: '2', desired: 2, current: 2, ready: 2, updated: 2, available: 2 },
    });
    const target = run([
      { obs: healthyA(), at: T0 },
      { obs: shrunkBeforeRevision, at: T1 },
      { obs: stallWorld(undefined, { desired: 2, current: 2, ready: 2, updated: 0, available: 2 }), at: T1 + sec(1) },
    ]);
    assert.deepEqual(target[1]!.events, [], 'nothing said while the revision is missing');
    assert.equal(target[1]!.status.desired, 3, 'the stored DESIRED is not overwritten');
    assert.ok((target[1]!.requeueAfterMs ?? 0) > 0);
    assert.equal(target[2]!.status.rollout?.desiredAtStart, 3, 'the rollout starts from the DESIRED before the template change');
  });
});

describe('decide: a revision that fails after its rollout completed', () => {
  /** Revision 2 on every node, node-3's container crash-looping (kubectl get ds: READY 2/3, UP-TO-DATE 3). */
  const crashAfterComplete = (): Observation =>
    targetObs({
      nodes: [
        node('node-1', [pod({ hash: HASH.B })]),
        node('node-2', [pod({ hash: HASH.B })]),
        node('node-3', [{ ...crashLoopPod(HASH.B), ready: false, available: false }]),
      ],
      revisions: [A1, B2],
      target: dsAt2({ desired: 3, current: 3, ready: 2, updated: 3, available: 2 }),
    });
  const target = run(fromHealthy(completeB(), [sec(10), crashAfterComplete()], [sec(10) + sec(601), crashAfterComplete()]), {
    policy: policy({ onStall: { action: 'Undo' }, bakeSeconds: 0 }),
  });
  const [, complete, , stalled] = target as [Decision, Decision, Decision, Decision];

  it('with no bake the rollout completes; the crash after it is judged, blamed on the revision, and not undone, saying why', () => {
    assert.equal(complete.status.state, 'Healthy');
    assert.equal(stalled.status.state, 'Stalled');
    assert.equal(stalled.status.cause, 'CrashLoop');
    assert.equal(stalled.action, undefined);
    assert.equal(stalled.status.undoSkipped?.reason, 'NoEarlierRevision');
    assert.match(
      stalled.status.undoSkipped?.message ?? '',
      /^the template did not change: .*revision 2 \([^)]+\) already ran on every node/,
    );
    assert.match(
      stalled.status.undoSkipped?.message ?? '',
      /kubectl rollout undo restores the one before it, and bakeSeconds keeps a rollout watched/,
    );
  });
});

describe('decide: a wide rollout whose new pods the scheduler has not reached yet', () => {
  // maxUnavailable 10 % of 300 nodes: 30 new pods at once. In a storm of new pods the scheduler reaches
  // them seconds apart; the first it refuses is on node-290, behind 29 it has not looked at yet.
  const msg = "0/300 nodes are available: 1 Insufficient cpu, 299 node(s) didn't satisfy plugin(s) [NodeAffinity].";
  const nodeName = (i: number): string => `node-${String(i).padStart(3, '0')}`;
  const wide = (refused: number): Observation => {
    const nodes = Array.from({ length: 300 }, (_, k) => {
      const i = k + 1;
      if (i <= 270) return node(nodeName(i), [pod({ hash: HASH.A })]);
      return node(nodeName(i), [i === refused ? unschedulablePod(HASH.B, msg) : unscheduledPod(HASH.B)]);
    });
    return targetObs({
      nodes,
      revisions: [A1, B2],
      target: dsAt2({ desired: 300, current: 300, ready: 270, updated: 30, available: 270 }),
    });
  };
  const healthy300 = targetObs({
    nodes: Array.from({ length: 300 }, (_, k) => node(nodeName(k + 1), [pod({ hash: HASH.A })])),
    revisions: [A1],
    target: { desired: 300, current: 300, ready: 300, updated: 300, available: 300 },
  });

  it('names the node the scheduler refused first, ahead of the pods it has not looked at, within the capped list', () => {
    const [, waiting, refused] = run([
      { obs: healthy300, at: T0 },
      { obs: wide(0), at: T1 },
      { obs: wide(290), at: T1 + sec(2) },
    ]);
    assert.equal(waiting!.status.blockedNodeCount, 30);
    assert.equal(waiting!.status.blockedNodes?.[0]?.cause, 'SchedulerNotActing', 'none refused yet: the waits are listed');
    const first = refused!.status.blockedNodes?.[0];
    assert.deepEqual(
      [first?.node, first?.reason, first?.cause],
      [nodeName(290), 'Unschedulable', 'InsufficientResources'],
      'the refusal heads the list, although 19 names before it would fill the cap',
    );
    assert.equal(refused!.status.blockedNodes?.length, 20);
  });
});
