/** The dashboard's copy of `kubectl describe rolloutguard`: kubectl's words and layout, and its Events table. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SlimGuard } from '../../src/api/objects.js';
import { describeGuard, eventsTable, words } from '../../src/cli/dashboardDescribe.js';

describe('words', () => {
  const cases: Array<[string, string]> = [
    ['progressDeadlineSeconds', 'Progress Deadline Seconds'],
    ['targetRef', 'Target Ref'],
    ['state', 'State'],
    ['lastTransitionTime', 'Last Transition Time'],
  ];
  for (const [k, want] of cases) it(`${k}: ${want}`, () => assert.equal(words(k), want));
});

describe('describeGuard', () => {
  const guard: SlimGuard = {
    metadata: { name: 'decoder', namespace: 'ns', uid: 'u1', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { targetRef: { kind: 'DaemonSet', name: 'decoder' }, progressDeadlineSeconds: 4 },
    status: {
      state: 'Stalled',
      conditions: [{ type: 'Stalled', status: 'True', reason: 'ProgressDeadlineExceeded', message: 'm', lastTransitionTime: 't' }],
    },
  };
  it("kubectl's header, then Metadata, Spec and Status in words, nested by two spaces, values aligned per level", () => {
    const text = describeGuard(guard, [], Date.parse('2026-01-01T00:05:00Z'));
    const lines = text.split('\n');
    assert.deepEqual(lines.slice(0, 6), [
      'Name:         decoder',
      'Namespace:    ns',
      'Labels:       <none>',
      'Annotations:  <none>',
      'API Version:  rolloutguard.dev/v1alpha1',
      'Kind:         RolloutGuard',
    ]);
    assert.ok(lines.includes('Spec:'));
    assert.ok(lines.includes('  Progress Deadline Seconds:  4'), text);
    assert.ok(lines.includes('  Target Ref:'), text);
    assert.ok(lines.includes('    Kind:  DaemonSet'), text);
    assert.ok(lines.includes('  State:  Stalled'), text);
    assert.ok(lines.includes('    Reason:                ProgressDeadlineExceeded'), text);
    assert.equal(lines[lines.length - 1], 'Events:       <none>');
  });
  it("the Events as kubectl's table, oldest first, with their age and count", () => {
    const now = Date.parse('2026-01-01T00:05:00Z');
    const ev = (reason: string, at: string, count = 1) => ({
      metadata: { name: reason },
      involved: { kind: 'RolloutGuard', name: 'decoder' },
      reason,
      type: 'Warning',
      message: `${reason}!`,
      at,
      count,
      source: 'rollout-guard',
    });
    assert.deepEqual(eventsTable([ev('UndoStarted', '2026-01-01T00:04:00Z'), ev('RolloutStalled', '2026-01-01T00:03:00Z', 2)], now), [
      'Events:',
      '  Type     Reason          Age      From           Message',
      '  ----     ------          ----     ----           -------',
      '  Warning  RolloutStalled  2m (x2)  rollout-guard  RolloutStalled!',
      '  Warning  UndoStarted     60s      rollout-guard  UndoStarted!',
    ]);
  });
});
