/**
 * The verdict phase on what a workload's own spec and controller say (decide/workloadWord.ts), through
 * decide over passes of a Deployment's rollout: a pause by its spec is Healthy with a line saying so and
 * never a stall, however long; its own ProgressDeadlineExceeded makes the verdict Stalled before the
 * guard's deadline, and the message says which deadline fired; under Recreate a stall is said to be an
 * outage. Each case has its control: the same passes without the fact read otherwise.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GuardStatus } from '../../../src/api/types.js';
import type { Observation, TargetView } from '../../../src/domain/observation.js';
import { HASH, T0, dsView, imagePullPod, policy, rev, run, sec } from '../../support/fixtures.js';
import { outageNote } from '../../../src/domain/decide/workloadWord.js';
import { OLD_PODS, podUnit, rollingToB, settledOnA } from '../../support/deploymentRollout.js';

const PAUSE =
  'spec.paused is true (kubectl rollout pause): the Deployment controller rolls nothing out until kubectl rollout resume deployment/decoder -n default';
const GUARD = policy({ targetRef: { kind: 'Deployment', name: 'decoder' }, suspectAfterSeconds: 120, progressDeadlineSeconds: 600 });

/** The new pod that does not pull, beside the three old ones. */
const stuck = [...OLD_PODS, podUnit('web-b-1', imagePullPod(HASH.B))];

/** The states of a guard that sees A settle, then B start, then `later` passes (each at its time, in seconds after the start). */
function states(later: ReadonlyArray<[number, Observation]>): GuardStatus[] {
  const steps = [
    { obs: settledOnA(), at: T0 },
    { obs: rollingToB(stuck), at: T0 + sec(10) },
    ...later.map(([s, obs]) => ({ obs, at: T0 + sec(10 + s) })),
  ];
  return run(steps, { policy: GUARD }).map((d) => d.status);
}

describe('verdict: a pause by the workload spec', () => {
  const paused = (target: Partial<TargetView> = {}): Observation => rollingToB(stuck, { pausedBySpec: PAUSE, ...target });

  it('is Healthy with the pause said, and never Suspect or Stalled however long it lasts', () => {
    const passes: Array<[number, Observation]> = [60, 200, 700, 5000].map((s) => [s, paused()]);
    for (const s of states(passes).slice(2)) {
      assert.equal(s.state, 'Healthy', s.message);
      assert.equal(
        s.message,
        `Paused on the way to revision 2 (${HASH.B}): 1/3 pods updated, 3/3 available; ${PAUSE}. A configured wait, not a stall`,
      );
      assert.equal(s.cause, '');
    }
  });

  it('control: the same passes without the pause are Suspect, then Stalled', () => {
    const passes: Array<[number, Observation]> = [60, 200, 700].map((s) => [s, rollingToB(stuck)]);
    assert.deepEqual(
      states(passes).map((s) => s.state),
      ['Healthy', 'Progressing', 'Progressing', 'Suspect', 'Stalled'],
    );
  });

  it('resumed, the rollout is judged again from the resume: the time paused is not time without progress', () => {
    const passes: Array<[number, Observation]> = [
      [60, paused()],
      [5000, paused()],
      [5010, rollingToB(stuck)],
      [5010 + 130, rollingToB(stuck)],
      [5010 + 610, rollingToB(stuck)],
    ];
    assert.deepEqual(
      states(passes).map((s) => s.state),
      ['Healthy', 'Progressing', 'Healthy', 'Healthy', 'Progressing', 'Suspect', 'Stalled'],
    );
  });

  it('paused before its changed template has a revision: Healthy, never said to be on the way to the revision the pods already run', () => {
    const waiting = settledOnA({ pausedBySpec: PAUSE, templateAwaitsResume: true, generation: 2, observedGeneration: 2, updated: 0 });
    const passes: Array<[number, Observation]> = [60, 700].map((s) => [s, waiting]);
    const steps = [{ obs: settledOnA(), at: T0 }, ...passes.map(([s, obs]) => ({ obs, at: T0 + sec(10 + s) }))];
    for (const s of run(steps, { policy: GUARD })
      .map((d) => d.status)
      .slice(1)) {
      assert.equal(s.state, 'Healthy', s.message);
      assert.match(
        s.message ?? '',
        /^Paused before its changed template rolls out \(no revision for it yet; the pods run revision 1 /,
        s.message,
      );
      assert.doesNotMatch(s.message ?? '', /on the way to revision 1/, s.message);
    }
  });

  it('settled and paused: Healthy, with a line saying it is paused', () => {
    const [s] = run([{ obs: settledOnA({ pausedBySpec: PAUSE }), at: T0 }], { policy: GUARD }).map((d) => d.status);
    assert.equal(s!.state, 'Healthy');
    assert.ok(s!.message!.endsWith(`; paused: ${PAUSE}`), s!.message);
  });
});

describe("verdict: the workload's own deadline exceeded", () => {
  const exceeded = { seconds: 30, message: 'ReplicaSet "decoder-bbb222" has timed out progressing.', since: '2025-01-01T00:00:40.000Z' };

  it("is Stalled before the guard's deadline, saying which deadline fired, in the controller's words", () => {
    const [, , , s] = states([
      [20, rollingToB(stuck)],
      [35, rollingToB(stuck, { ownDeadlineExceeded: exceeded })],
    ]);
    assert.equal(s!.state, 'Stalled');
    assert.equal(s!.cause, 'ImagePullFailure');
    assert.ok(
      s!.message!.startsWith(
        `The Deployment's own progressDeadlineSeconds (30s) fired: its controller reports Progressing=False, ProgressDeadlineExceeded since ${exceeded.since}: "${exceeded.message}"; before the guard's progressDeadlineSeconds (10m). Rollout to revision 2 (${HASH.B}) has made no progress for 30s: `,
      ),
      s!.message,
    );
  });

  it("says the guard's deadline passed too when it has", () => {
    const [, , s] = states([[700, rollingToB(stuck, { ownDeadlineExceeded: exceeded })]]);
    assert.equal(s!.state, 'Stalled');
    assert.match(
      s!.message!,
      /ProgressDeadlineExceeded.*; the guard's progressDeadlineSeconds \(10m\) has passed too\. Rollout to .* has made no progress for 10m/,
    );
  });

  it('control: without it, the same pass is Progressing', () => {
    const [, , , s] = states([
      [20, rollingToB(stuck)],
      [35, rollingToB(stuck)],
    ]);
    assert.equal(s!.state, 'Progressing');
  });

  it('is not read while the controller has not observed the generation (its condition describes the one before)', () => {
    const [, , s] = states([[35, rollingToB(stuck, { generation: 3, ownDeadlineExceeded: exceeded })]]);
    assert.notEqual(s!.state, 'Stalled', s!.message);
  });
});

describe('verdict: a stall under Recreate', () => {
  // Every old pod is gone before a new one starts: only new pods, none available.
  const outage = (strategy: TargetView['strategy']): Observation =>
    rollingToB(
      ['web-b-1', 'web-b-2', 'web-b-3'].map((n) => podUnit(n, imagePullPod(HASH.B))),
      { strategy, current: 3, updated: 3, ready: 0, available: 0, outdated: 0 },
    );
  const OUTAGE =
    'The Deployment uses the Recreate strategy: every old pod was removed before any new one started, so this is an outage, not a partial rollout (0/3 available).';

  it('is said to be an outage, when Suspect and when Stalled', () => {
    const [, , , suspect, stalled] = states([
      [20, outage('Recreate')],
      [150, outage('Recreate')],
      [720, outage('Recreate')],
    ]);
    assert.equal(suspect!.state, 'Suspect');
    assert.ok(suspect!.message!.endsWith(OUTAGE), suspect!.message);
    assert.equal(stalled!.state, 'Stalled');
    assert.ok(stalled!.message!.includes(OUTAGE), stalled!.message);
  });

  it('control: a rolling update stalled the same way says no outage, nor does a Recreate rollout still progressing', () => {
    const [, , , , rollingStall] = states([
      [20, outage('RollingUpdate')],
      [150, outage('RollingUpdate')],
      [720, outage('RollingUpdate')],
    ]);
    assert.equal(rollingStall!.state, 'Stalled');
    assert.ok(!rollingStall!.message!.includes('outage'), rollingStall!.message);
    const [, , progressing] = states([[20, outage('Recreate')]]);
    assert.equal(progressing!.state, 'Progressing');
    assert.ok(!progressing!.message!.includes('outage'), progressing!.message);
  });

  it('outageNote: only for Recreate, only when Suspect or Stalled, only while replicas are missing', () => {
    const view = (strategy: TargetView['strategy'], available: number): TargetView => dsView({ kind: 'Deployment', strategy, available });
    const cases: Array<[TargetView, GuardStatus['state'], boolean]> = [
      [view('Recreate', 0), 'Stalled', true],
      [view('Recreate', 2), 'Suspect', true],
      [view('Recreate', 3), 'Stalled', false],
      [view('Recreate', 0), 'Progressing', false],
      [view('RollingUpdate', 0), 'Stalled', false],
      [view('OnDelete', 0), 'Stalled', false],
    ];
    for (const [target, state, said] of cases)
      assert.equal(outageNote(target, state!) !== '', said, `${target.strategy} ${target.available}/3 ${String(state)}`);
  });
});

describe("verdict: the controller's status behind its own pods", () => {
  // The new ReplicaSet's pod already fails, while the cached Deployment still reports the old
  // observedGeneration: the controller has acted; its status (or the cache of it) is behind.
  const behind = (units: Parameters<typeof rollingToB>[0]): Observation => rollingToB(units, { observedGeneration: 1 });
  /** The guard's status after it saw A settled, then the change with its pods and the controller's status behind. */
  const after = (units: Parameters<typeof rollingToB>[0]): GuardStatus =>
    run(
      [
        { obs: settledOnA(), at: T0 },
        { obs: behind(units), at: T0 + sec(10) },
      ],
      { policy: GUARD },
    ).at(-1)!.status;

  it('names a definite cause of the new pods at once, still waiting on the controller, never a verdict', () => {
    const waiting = after(stuck);
    assert.equal(waiting.state, 'Progressing');
    assert.match(waiting.message!, /^Waiting for the Deployment controller to observe generation 2/);
    assert.equal(waiting.cause, 'ImagePullFailure');
    assert.equal(waiting.owner, 'Revision');
  });

  it("control: B failing, then the template put back to A (a person's undo) the controller has not acted on: B's pod names nothing", () => {
    const seen = rollingToB(stuck, { generation: 3, observedGeneration: 2 });
    assert.ok(seen.kind === 'Target');
    const [, failing, waiting] = run(
      [
        { obs: settledOnA(), at: T0 },
        { obs: rollingToB(stuck), at: T0 + sec(10) },
        { obs: { ...seen, currentRevision: rev(HASH.A, 1) }, at: T0 + sec(20) },
      ],
      { policy: GUARD },
    ).map((d) => d.status);
    assert.equal(failing!.cause, 'ImagePullFailure');
    assert.match(waiting!.message!, /^Waiting for the Deployment controller to observe generation 3/);
    assert.equal(waiting!.cause ?? '', '');
    assert.equal(waiting!.owner ?? '', '');
  });

  it('control: with nothing definite yet (a pod still being created), no cause', () => {
    const creating = [...OLD_PODS, podUnit('web-b-1', { ...imagePullPod(HASH.B), waitingReason: 'ContainerCreating', waitingMessage: '' })];
    const waiting = after(creating);
    assert.equal(waiting.state, 'Progressing');
    assert.equal(waiting.cause ?? '', '');
    assert.equal(waiting.owner ?? '', '');
  });
});
