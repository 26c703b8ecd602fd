/**
 * Pure parts of the undo: folding the act step's outcome into status, the Report-mode dry run, and
 * kubectl's "current template already matches revision N" check done semantically.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { recordDryRun, recordUndoOutcome, templateMatchesRevision, type UndoOutcome } from '../../src/domain/undo.js';
import type { GuardStatus, PlannedEvent } from '../../src/api/types.js';
import { HASH, T0, deepFreeze, imagePullPod, iso, node, pod, policy, rev, run, sec, targetObs, cond } from '../support/fixtures.js';

const T1 = T0 + sec(60);
const AFTER = T1 + sec(601);

/** A real Stalled status with an undo decided (lastUndo Pending), as decide writes it before acting. */
function pendingStatus(): GuardStatus {
  const stall = targetObs({
    nodes: [node('node-1', [pod({ hash: HASH.A })]), node('node-2', [pod({ hash: HASH.A })]), node('node-3', [imagePullPod(HASH.B)])],
    revisions: [rev(HASH.A, 1), rev(HASH.B, 2)],
    target: { generation: 2, observedGeneration: 2, templateGeneration: '2', updated: 1, ready: 2, available: 2 },
  });
  const target = run(
    [
      {
        obs: targetObs({
          nodes: [node('node-1', [pod({ hash: HASH.A })])],
          target: { desired: 1, current: 1, updated: 1, ready: 1, available: 1 },
        }),
        at: T0,
      },
      { obs: stall, at: T1 },
      { obs: stall, at: T1 + sec(600) },
    ],
    { policy: policy({ onStall: { action: 'Undo' } }) },
  );
  const s = target[2]!.status;
  assert.equal(s.lastUndo?.result, 'Pending', 'fixture precondition');
  return s;
}

describe('recordUndoOutcome', () => {
  const cases: {
    outcome: UndoOutcome;
    result: string;
    message: string;
    state: string;
    event: Omit<PlannedEvent, 'note'> & { note: RegExp };
    rolledBackReason: string;
  }[] = [
    {
      outcome: { kind: 'Applied' },
      result: 'Applied',
      message: 'restored revision 1 (aaa111) in place of revision 2 (bbb222)',
      state: 'RollingBack',
      event: {
        type: 'Normal',
        reason: 'UndoStarted',
        action: 'Undo',
        onTarget: true,
        note: /^Undo: restored revision 1 \(aaa111\) in place of stalled revision 2 \(bbb222\)/,
      },
      rolledBackReason: 'UndoStarted',
    },
    {
      outcome: { kind: 'AlreadyAtTarget' },
      result: 'Applied',
      message: 'found already restored revision 1 (aaa111) in place of revision 2 (bbb222)',
      state: 'RollingBack',
      event: { type: 'Normal', reason: 'UndoStarted', action: 'Undo', onTarget: true, note: /found already restored/ },
      rolledBackReason: 'UndoStarted',
    },
    {
      outcome: { kind: 'TemplateChanged', detail: 'template generation is 3, decided at 2' },
      result: 'Failed',
      message:
        'not applied: the template changed since the stall was detected (template generation is 3, decided at 2); a person or tool is acting',
      state: 'Stalled',
      event: {
        type: 'Warning',
        reason: 'UndoSkipped',
        action: 'Undo',
        onTarget: true,
        note: /^Undo of revision 2 \(bbb222\) skipped: the template changed/,
      },
      rolledBackReason: 'UndoSkipped',
    },
    {
      outcome: { kind: 'OptedOut' },
      result: 'Failed',
      message: 'not applied: the DaemonSet is now annotated rolloutguard.dev/undo=disabled',
      state: 'Stalled',
      event: { type: 'Warning', reason: 'UndoSkipped', action: 'Undo', onTarget: true, note: /rolloutguard\.dev\/undo=disabled/ },
      rolledBackReason: 'UndoSkipped',
    },
    {
      outcome: { kind: 'Failed', detail: 'daemonsets.apps "decoder" is forbidden' },
      result: 'Failed',
      message: 'undo failed: daemonsets.apps "decoder" is forbidden',
      state: 'Stalled',
      event: {
        type: 'Warning',
        reason: 'UndoFailed',
        action: 'Undo',
        onTarget: true,
        note: /^Undo of revision 2 \(bbb222\) to revision 1 \(aaa111\) failed: daemonsets/,
      },
      rolledBackReason: 'UndoFailed',
    },
  ];
  for (const tc of cases) {
    it(`${tc.outcome.kind} → lastUndo ${tc.result}, state ${tc.state}, ${tc.event.reason}`, () => {
      const before = deepFreeze(pendingStatus());
      const { status, events } = recordUndoOutcome(before, tc.outcome, AFTER, 1);
      assert.equal(status.state, tc.state);
      assert.deepEqual(status.lastUndo, { ...before.lastUndo!, result: tc.result, message: tc.message });
      assert.equal(events.length, 1);
      const { note, ...rest } = events[0]!;
      const { note: pattern, ...want } = tc.event;
      assert.deepEqual(rest, want);
      assert.match(note, pattern);
      const rb = cond(status, 'RolledBack');
      assert.equal(rb.status, 'False');
      assert.equal(rb.reason, tc.rolledBackReason);
      assert.equal(rb.message, tc.message);
      // RolledBack was already False (UndoStarted): no flip, the transition time stays.
      assert.equal(rb.lastTransitionTime, cond(before, 'RolledBack').lastTransitionTime);
      // Everything else is carried over untouched.
      assert.deepEqual(status.rollout, before.rollout);
      assert.deepEqual(cond(status, 'Stalled'), cond(before, 'Stalled'));
    });
  }

  it('without an undo record nothing changes and nothing is emitted', () => {
    const s = deepFreeze<GuardStatus>({ state: 'Stalled', cause: 'ImagePullFailure' });
    const r = recordUndoOutcome(s, { kind: 'Applied' }, AFTER, 1);
    assert.deepEqual(r.status, s);
    assert.notEqual(r.status, s);
    assert.deepEqual(r.events, []);
  });

  it('long API errors are truncated to fit status (500) and the Event note (1 kB)', () => {
    const detail = 'x'.repeat(5000);
    const r = recordUndoOutcome(pendingStatus(), { kind: 'Failed', detail }, AFTER, 1);
    assert.equal(r.status.lastUndo!.message.length, 500);
    assert.ok(r.status.lastUndo!.message.endsWith('…'));
    assert.equal(r.events[0]!.note.length, 1000);
  });

  it("the RolledBack condition carries the guard's generation", () => {
    const r = recordUndoOutcome(pendingStatus(), { kind: 'Applied' }, AFTER, 4);
    assert.equal(cond(r.status, 'RolledBack').observedGeneration, 4);
  });
});

describe('recordDryRun', () => {
  const withPlan = (): GuardStatus =>
    deepFreeze({
      state: 'Stalled',
      undoPlan: { toRevision: 1, toHash: HASH.A, toRevisionName: 'decoder-aaa111', nodes: 1, dryRun: 'NotRun', forHash: HASH.B },
    });

  it('Accepted is recorded on the plan', () => {
    const s = recordDryRun(withPlan(), { kind: 'Accepted' });
    assert.equal(s.undoPlan?.dryRun, 'Accepted');
    assert.equal(s.undoPlan?.dryRunMessage, undefined);
    assert.equal(s.undoPlan?.forHash, HASH.B);
  });

  it('Rejected keeps the (truncated) reason', () => {
    const s = recordDryRun(withPlan(), { kind: 'Rejected', detail: `admission webhook denied: ${'y'.repeat(1000)}` });
    assert.equal(s.undoPlan?.dryRun, 'Rejected');
    assert.equal(s.undoPlan?.dryRunMessage?.length, 500);
    assert.match(s.undoPlan.dryRunMessage, /^admission webhook denied/);
  });

  it('a later Accepted clears an earlier rejection message', () => {
    const rejected = recordDryRun(withPlan(), { kind: 'Rejected', detail: 'no' });
    const s = recordDryRun(rejected, { kind: 'Accepted' });
    assert.equal(s.undoPlan?.dryRun, 'Accepted');
    assert.equal('dryRunMessage' in s.undoPlan, false);
  });

  it('without a plan the status is returned unchanged', () => {
    const s = deepFreeze<GuardStatus>({ state: 'Stalled' });
    assert.deepEqual(recordDryRun(s, { kind: 'Accepted' }), s);
  });
});

describe('templateMatchesRevision', () => {
  const live = () => ({
    metadata: { labels: { app: 'decoder' } },
    spec: {
      containers: [
        { name: 'decoder', image: 'registry.example/decoder:1' },
        { name: 'sidecar', image: 'registry.example/sidecar:1' },
      ],
    },
  });
  /** A ControllerRevision's data, shaped as the DaemonSet controller snapshots it. */
  const data = (template: Record<string, unknown>) => ({ spec: { template: { ...template, $patch: 'replace' } } });
  const stored = () => ({
    metadata: { creationTimestamp: null, labels: { app: 'decoder' } },
    spec: {
      containers: [
        { name: 'decoder', image: 'registry.example/decoder:1' },
        { name: 'sidecar', image: 'registry.example/sidecar:1' },
      ],
    },
  });

  const cases: { name: string; live: unknown; data: unknown; want: boolean }[] = [
    { name: 'the same template (ignoring $patch and the null creationTimestamp)', live: live(), data: data(stored()), want: true },
    {
      name: 'key order is irrelevant',
      live: {
        spec: {
          containers: [
            { image: 'registry.example/decoder:1', name: 'decoder' },
            { image: 'registry.example/sidecar:1', name: 'sidecar' },
          ],
        },
        metadata: { labels: { app: 'decoder' } },
      },
      data: data(stored()),
      want: true,
    },
    {
      name: 'a null creationTimestamp on the live side too',
      live: { ...live(), metadata: { creationTimestamp: null, labels: { app: 'decoder' } } },
      data: data(stored()),
      want: true,
    },
    { name: 'undefined fields are absent fields', live: { ...live(), extra: undefined }, data: data(stored()), want: true },
    {
      name: 'a different image is a real difference',
      live: {
        ...live(),
        spec: {
          containers: [
            { name: 'decoder', image: 'registry.example/decoder:2' },
            { name: 'sidecar', image: 'registry.example/sidecar:1' },
          ],
        },
      },
      data: data(stored()),
      want: false,
    },
    {
      name: 'an extra label is a real difference',
      live: { ...live(), metadata: { labels: { app: 'decoder', tier: 'x' } } },
      data: data(stored()),
      want: false,
    },
    {
      name: 'container order matters (lists are ordered)',
      live: {
        ...live(),
        spec: {
          containers: [
            { name: 'sidecar', image: 'registry.example/sidecar:1' },
            { name: 'decoder', image: 'registry.example/decoder:1' },
          ],
        },
      },
      data: data(stored()),
      want: false,
    },
    {
      name: 'a real creationTimestamp is not ignored',
      live: live(),
      data: data({ ...stored(), metadata: { creationTimestamp: '2025-01-01T00:00:00Z', labels: { app: 'decoder' } } }),
      want: false,
    },
    { name: 'revision data without spec.template', live: live(), data: { spec: {} }, want: false },
    { name: 'no revision data', live: live(), data: undefined, want: false },
  ];
  for (const tc of cases) it(`${tc.name} → ${tc.want}`, () => assert.equal(templateMatchesRevision(tc.live, tc.data), tc.want));

  it('matches a revision whose data round-tripped through JSON (as read from the API)', () => {
    assert.equal(templateMatchesRevision(live(), JSON.parse(JSON.stringify(data(stored())))), true);
  });
});

describe('fixture sanity', () => {
  it('the pending status was decided at the stall', () => {
    assert.equal(pendingStatus().lastUndo?.at, iso(T1 + sec(600)));
  });
});
