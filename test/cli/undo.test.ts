/**
 * `rollout-guard undo`: its arguments, and its refusals, which are decide's: the guard's spec in Undo
 * mode without delay over the guard's status, judged on fixture observations by the real decide.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SlimGuard } from '../../src/api/objects.js';
import type { GuardSpec, GuardStatus, TargetKind } from '../../src/api/types.js';
import { ExitCode } from '../../src/cli/command.js';
import { parseUndoArgs } from '../../src/cli/undo.js';
import { afterUndo, guardOf, judgeUndo, outcomeVerdict, undoSpec } from '../../src/cli/undoPlan.js';
import { decide } from '../../src/domain/decide/decide.js';
import type { Decision } from '../../src/domain/decision.js';
import type { NodeView, Observation } from '../../src/domain/observation.js';
import type { UndoOutcome } from '../../src/domain/undo.js';
import { UsageError } from '../../src/runtime/config.js';
import { DS_NAME, HASH, T0, missingObs, nodesOn, pod, sec, targetObs } from '../support/fixtures.js';
import { classicStall, p } from '../support/getViews.js';

const TARGET = { namespace: 'gpu-system', name: DS_NAME };
/** The guard's policy as undo judges it. */
const undoPolicy = { ...p, spec: undoSpec(p.spec) };

/** The decision a deadline after T0, over the status of a first pass at T0 (the guard's history). */
function judged(obs: Observation): Decision {
  const first: GuardStatus = decide(obs, {}, undoPolicy, T0).status;
  return decide(obs, first, undoPolicy, T0 + sec(61));
}

/** The status the operator (the guard's own spec) stored for the same history, at `at`. */
function operatorAt(obs: Observation, at: number): GuardStatus {
  const first: GuardStatus = decide(obs, {}, p, T0).status;
  return at === T0 ? first : decide(obs, first, p, at).status;
}
const operator = (obs: Observation): GuardStatus => operatorAt(obs, T0 + sec(61));

describe('parseUndoArgs', () => {
  it('a guard by rg/NAME or its bare name, a DaemonSet by ds/NAME; --dry-run', () => {
    assert.deepEqual(parseUndoArgs(['rg/decoder', '-n', 'gpu']), {
      kind: 'RolloutGuard',
      name: 'decoder',
      namespace: 'gpu',
      dryRun: false,
    });
    assert.deepEqual(parseUndoArgs(['decoder', '--dry-run']), { kind: 'RolloutGuard', name: 'decoder', dryRun: true });
    assert.deepEqual(parseUndoArgs(['ds/decoder', '--as', 'alice']), { kind: 'DaemonSet', name: 'decoder', dryRun: false, as: 'alice' });
  });
  it('a workload of any kind by any name kubectl takes for its resource', () => {
    for (const [target, kind] of [
      ['sts/store', 'StatefulSet'],
      ['statefulsets.apps/store', 'StatefulSet'],
      ['DaemonSet/store', 'DaemonSet'],
      ['deploy/store', 'Deployment'],
      ['deployments.apps/store', 'Deployment'],
    ])
      assert.deepEqual(parseUndoArgs([target!]), { kind, name: 'store', dryRun: false }, target);
  });
  const bad: Array<[string, string[], RegExp]> = [
    ['no target', [], /needs a target/],
    ['another kind', ['job/x'], /rg\/NAME, NAME or ds\/NAME/],
    ['an invalid name', ['rg/-x'], /not a valid name/],
    ['an unknown flag', ['rg/x', '--force'], /unknown flag --force/],
  ];
  for (const [what, args, re] of bad) {
    it(`usage error: ${what}`, () => {
      assert.throws(
        () => parseUndoArgs(args),
        (e: unknown) => e instanceof UsageError && re.test(e.message),
      );
    });
  }
});

describe('undoSpec', () => {
  it("is the guard's spec asking for the undo now", () => {
    const s = undoSpec({ ...p.spec, onStall: { action: 'Report', delaySeconds: 300, forcedRollback: true } });
    assert.deepEqual(s.onStall, { action: 'Undo', delaySeconds: 0, forcedRollback: true });
    assert.equal(s.progressDeadlineSeconds, p.spec.progressDeadlineSeconds);
  });
});

describe('judgeUndo: what decide plans', () => {
  it('a stall blamed on the revision: the undo, with the request the operator would send', () => {
    const obs = classicStall();
    const v = judgeUndo(obs, judged(obs), TARGET, operator(obs));
    assert.equal(v.kind, 'Undo', JSON.stringify(v));
    if (v.kind !== 'Undo') return;
    assert.equal(v.request.namespace, 'gpu-system');
    assert.equal(v.request.name, DS_NAME);
    assert.equal(v.request.fromHash, HASH.B);
    assert.equal(v.request.toHash, HASH.A);
    assert.equal(v.request.record?.from, HASH.B, 'the DaemonSet record is written in the same patch');
    assert.match(v.summary, /restore revision 1 \(aaa111\) in place of stalled revision 2 \(bbb222\)/);
  });

  it("this machine's clock ahead of the operator's: the command's decide says Stalled, the operator's status does not; refused", () => {
    const obs = classicStall();
    const cli = judged(obs);
    assert.equal(cli.action?.kind, 'Undo', 'the command alone would undo');
    const stored = operatorAt(obs, T0 + sec(30));
    assert.notEqual(stored.state, 'Stalled');
    const v = judgeUndo(obs, cli, TARGET, stored);
    assert.equal(v.kind, 'Refused');
    if (v.kind === 'Refused') {
      assert.equal(v.code, ExitCode.Refused);
      assert.match(
        v.message,
        /^undo refused \(NoOperatorVerdict\): the operator has not judged hash bbb222 stalled by the revision's own fault \(the guard's status says (Progressing|Suspect)/,
      );
    }
  });

  it('the operator blamed someone else, or judged another revision: refused, whatever the command finds', () => {
    const obs = classicStall();
    const stored = operator(obs);
    assert.equal(stored.state, 'Stalled');
    assert.equal(judgeUndo(obs, judged(obs), TARGET, stored).kind, 'Undo', 'with the operator verdict, the undo');
    const nodes = judgeUndo(obs, judged(obs), TARGET, { ...stored, owner: 'Node' });
    assert.equal(nodes.kind === 'Refused' && /NoOperatorVerdict.*owner Node/.test(nodes.message), true, JSON.stringify(nodes));
    const other = { ...stored, rollout: { ...stored.rollout!, toRevision: { revision: 3, hash: 'ccc333' } } };
    assert.equal(judgeUndo(obs, judged(obs), TARGET, other).kind, 'Refused');
  });

  it('a healthy rollout: nothing to undo, said with its state', () => {
    const obs = targetObs({ nodes: nodesOn(HASH.A) });
    const v = judgeUndo(obs, judged(obs), TARGET, operator(obs));
    assert.deepEqual(v, { kind: 'Refused', code: ExitCode.Refused, message: 'nothing to undo: the rollout is Healthy' });
  });

  it('a rollout still within its deadline: nothing to undo yet', () => {
    const obs = classicStall();
    const v = judgeUndo(obs, decide(obs, {}, undoPolicy, T0), TARGET, operatorAt(obs, T0));
    assert.equal(v.kind, 'Refused');
    if (v.kind === 'Refused') assert.match(v.message, /^nothing to undo: the rollout is (Progressing|Suspect)$/);
  });

  it('a DaemonSet that opted out: refused with the operator reason', () => {
    const base = classicStall();
    const obs: Observation = base.kind === 'Target' ? { ...base, target: { ...base.target, undoOptOut: true } } : base;
    const v = judgeUndo(obs, judged(obs), TARGET, operator(obs));
    assert.equal(v.kind, 'Refused');
    if (v.kind === 'Refused') {
      assert.equal(v.code, ExitCode.Refused);
      assert.match(v.message, /^undo refused \(OptedOut\): the DaemonSet is annotated rolloutguard\.dev\/undo=disabled$/);
    }
  });

  it('a revision undone once already (the record on the DaemonSet): refused, never twice', () => {
    const base = classicStall();
    const record = { from: HASH.B, to: HASH.A, at: new Date(T0).toISOString(), guard: 'gpu-system/other' };
    const obs: Observation = base.kind === 'Target' ? { ...base, target: { ...base.target, undoRecord: record } } : base;
    const v = judgeUndo(obs, judged(obs), TARGET, operator(obs));
    assert.equal(v.kind, 'Refused');
    if (v.kind === 'Refused') assert.match(v.message, /^undo refused \(AlreadyUndone\): .*never twice/);
  });

  it('a suspended guard acts on nothing', () => {
    const obs = classicStall();
    const pol = { ...undoPolicy, spec: { ...undoPolicy.spec, suspend: true } };
    const v = judgeUndo(obs, decide(obs, {}, pol, T0), TARGET, operatorAt(obs, T0));
    assert.equal(v.kind, 'Refused');
    if (v.kind === 'Refused') assert.match(v.message, /suspended/);
  });

  it('the DaemonSet is gone: not found', () => {
    const obs = missingObs();
    const v = judgeUndo(obs, decide(obs, {}, undoPolicy, T0), TARGET, operatorAt(obs, T0));
    assert.equal(v.kind === 'Refused' && v.code, ExitCode.NotFound);
  });
});

describe('outcomeVerdict: the undo port answers', () => {
  const cases: Array<[UndoOutcome, number, RegExp]> = [
    [{ kind: 'Applied' }, ExitCode.Ok, /^undone: restore/],
    [{ kind: 'AlreadyAtTarget' }, ExitCode.Ok, /already undone/],
    [{ kind: 'OptedOut' }, ExitCode.Refused, /OptedOut/],
    [{ kind: 'NotUndone', detail: 'the rollout completed' }, ExitCode.Refused, /refused: the rollout completed/],
    [{ kind: 'TemplateChanged', detail: 'template generation 2 became 3' }, ExitCode.Refused, /a person or tool is acting/],
    [{ kind: 'Failed', detail: 'forbidden' }, ExitCode.Failure, /^undo failed: forbidden/],
  ];
  for (const [o, code, re] of cases) {
    it(`${o.kind} → exit ${code}`, () => {
      const v = outcomeVerdict(o, 'restore revision 1');
      assert.equal(v.code, code);
      assert.match(v.message, re);
    });
  }
});

describe('guardOf', () => {
  const g = (name: string, target: string, created: string, deleting = false, kind: TargetKind = 'DaemonSet'): SlimGuard => ({
    metadata: { name, namespace: 'gpu', creationTimestamp: created, ...(deleting ? { deletionTimestamp: created } : {}) },
    spec: { targetRef: { kind, name: target } },
  });
  it('the oldest guard of the DaemonSet, then by name, not one being deleted, nor one of a StatefulSet of the same name', () => {
    const guards = [
      g('b', 'decoder', '2025-01-02T00:00:00Z'),
      g('a', 'decoder', '2025-01-02T00:00:00Z'),
      g('old', 'decoder', '2025-01-01T00:00:00Z', true),
      g('sts', 'decoder', '2024-01-01T00:00:00Z', false, 'StatefulSet'),
      g('z', 'other', '2024-01-01T00:00:00Z'),
    ];
    assert.equal(guardOf(guards, 'DaemonSet', 'decoder')?.metadata.name, 'a');
    assert.equal(guardOf(guards, 'StatefulSet', 'decoder')?.metadata.name, 'sts');
    assert.equal(guardOf(guards, 'DaemonSet', 'missing'), undefined);
  });
});

describe('afterUndo: what follows a StatefulSet template undo', () => {
  const ordinal = (i: number, hash: string, ready: boolean): NodeView => ({
    node: `store-${i}`,
    ordinal: i,
    eligible: true,
    pods: [{ ...pod({ hash }), name: `store-${i}`, ready, available: ready }],
  });
  const store = (podManagement: 'OrderedReady' | 'Parallel'): Extract<Observation, { kind: 'Target' }> =>
    targetObs({
      nodes: [ordinal(0, HASH.A, true), ordinal(1, HASH.B, false), ordinal(2, HASH.B, false)],
      target: { kind: 'StatefulSet', name: 'store', namespace: 'db', waitsOnUnreadyPods: podManagement === 'OrderedReady' },
    }) as Extract<Observation, { kind: 'Target' }>;
  const withStall = (action: 'Undo' | 'Report', forcedRollback = true): GuardSpec => ({
    ...p.spec,
    onStall: { action, delaySeconds: 0, forcedRollback },
  });

  it('an Undo guard: the operator evicts the stuck pods, highest ordinal first', () => {
    assert.equal(
      afterUndo(store('OrderedReady'), HASH.B, withStall('Undo')),
      'then the operator evicts store-2, store-1, one at a time (not Ready on the undone revision: under OrderedReady the StatefulSet controller does not replace them)',
    );
  });

  it('a Report guard, or forcedRollback off: the command a person runs', () => {
    for (const spec of [withStall('Report'), withStall('Undo', false)])
      assert.match(
        afterUndo(store('OrderedReady'), HASH.B, spec) ?? '',
        /^then store-2, store-1 must go by hand: kubectl delete pod store-2 store-1 -n db /,
      );
  });

  it('two broken pushes: the pod stuck on the superseded revision is named too', () => {
    const twoPushes = targetObs({
      nodes: [ordinal(0, HASH.A, true), ordinal(1, HASH.C, false), ordinal(2, HASH.B, false)],
      target: { kind: 'StatefulSet', name: 'store', namespace: 'db', waitsOnUnreadyPods: true },
    }) as Extract<Observation, { kind: 'Target' }>;
    assert.equal(
      afterUndo(twoPushes, HASH.C, withStall('Undo'), [HASH.B]),
      'then the operator evicts store-2, store-1, one at a time (not Ready on the undone revision or one the rollout superseded: under OrderedReady the StatefulSet controller does not replace them)',
    );
    assert.match(afterUndo(twoPushes, HASH.C, withStall('Report'), [HASH.B]) ?? '', /kubectl delete pod store-2 store-1 -n db /);
    assert.match(
      afterUndo(twoPushes, HASH.C, withStall('Report')) ?? '',
      /kubectl delete pod store-1 -n db /,
      'without the superseded revision, store-2 is not named',
    );
  });

  it('nothing under Parallel, for a DaemonSet, or when no pod is stuck', () => {
    assert.equal(afterUndo(store('Parallel'), HASH.B, withStall('Undo')), undefined);
    assert.equal(afterUndo(store('OrderedReady'), HASH.C, withStall('Undo')), undefined);
    const ds = targetObs({ nodes: nodesOn(HASH.B) }) as Extract<Observation, { kind: 'Target' }>;
    assert.equal(afterUndo(ds, HASH.B, withStall('Undo')), undefined);
  });
});
