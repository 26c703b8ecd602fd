/** The dashboard's timeline: which Events it shows, a mirrored pair once, marks, and the states seen. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_TIMELINE, isAbout, markOf, slimTimelineEvent, timeline, type TimelineEvent } from '../../src/cli/dashboardTimeline.js';

const ev = (kind: string, name: string, reason: string, at: string, extra: Partial<TimelineEvent> = {}): TimelineEvent => ({
  metadata: { name: `${name}.${reason}.${at}`, namespace: 'ns' },
  involved: { kind, name, namespace: 'ns' },
  reason,
  type: 'Normal',
  message: `${reason} message`,
  at,
  count: 1,
  source: 'rollout-guard',
  ...extra,
});

describe('slimTimelineEvent', () => {
  const cases: Array<[string, unknown, Partial<TimelineEvent>]> = [
    [
      'a core v1 Event: its involved object, reason, type, last time, count and source',
      {
        metadata: { name: 'e', namespace: 'ns', resourceVersion: '5' },
        involvedObject: { kind: 'DaemonSet', name: 'd', namespace: 'ns' },
        reason: 'RolloutStalled',
        type: 'Warning',
        message: 'm',
        firstTimestamp: '2026-01-01T00:00:00Z',
        lastTimestamp: '2026-01-01T00:01:00Z',
        count: 3,
        source: { component: 'rollout-guard' },
      },
      { reason: 'RolloutStalled', type: 'Warning', at: '2026-01-01T00:01:00Z', count: 3, source: 'rollout-guard' },
    ],
    [
      'an events.k8s.io Event as core v1 shows it: eventTime and the reporting controller',
      {
        metadata: { name: 'e' },
        involvedObject: { kind: 'RolloutGuard', name: 'g' },
        reason: 'UndoStarted',
        eventTime: '2026-01-01T00:02:00.000000Z',
        reportingComponent: 'rollout-guard',
      },
      { type: 'Normal', at: '2026-01-01T00:02:00.000000Z', count: 1, source: 'rollout-guard' },
    ],
  ];
  for (const [what, raw, want] of cases)
    it(what, () => {
      const e = slimTimelineEvent(raw);
      for (const [k, v] of Object.entries(want)) assert.deepEqual(e[k as keyof TimelineEvent], v, k);
    });
  it('a long message is cut to 1 kB', () => assert.equal(slimTimelineEvent({ message: 'x'.repeat(5000) }).message.length, 1024));
});

describe('isAbout: which Events re-render a viewed guard', () => {
  const guard = { namespace: 'ns', name: 'g' };
  const target = { kind: 'StatefulSet', name: 'store' };
  const cases: Array<[string, TimelineEvent, boolean]> = [
    ['the guard', ev('RolloutGuard', 'g', 'RolloutStalled', '2026-01-01T00:00:00Z'), true],
    ['its workload', ev('StatefulSet', 'store', 'RolloutStalled', '2026-01-01T00:00:00Z'), true],
    ['a workload of another kind with its name', ev('Deployment', 'store', 'ScalingReplicaSet', '2026-01-01T00:00:00Z'), false],
    ['another guard', ev('RolloutGuard', 'other', 'RolloutStalled', '2026-01-01T00:00:00Z'), false],
    [
      'the guard of that name in another namespace',
      ev('RolloutGuard', 'g', 'RolloutStalled', '2026-01-01T00:00:00Z', {
        involved: { kind: 'RolloutGuard', name: 'g', namespace: 'other' },
      }),
      false,
    ],
  ];
  for (const [what, e, want] of cases) it(`${what}: ${want}`, () => assert.equal(isAbout(e, guard, target), want));
});

describe('markOf', () => {
  const cases: Array<[string, string | undefined]> = [
    ['RolloutStalled', 'stall'],
    ['RevisionFailed', 'stall'],
    ['UndoStarted', 'undo'],
    ['UndoComplete', 'undo'],
    ['PodEvicted', 'eviction'],
    ['RolloutComplete', 'recovered'],
    ['RolloutStarted', undefined],
  ];
  for (const [reason, want] of cases) it(`${reason}: ${want ?? 'none'}`, () => assert.equal(markOf(reason), want));
});

describe('timeline', () => {
  const guard = { namespace: 'ns', name: 'g' };
  const target = { kind: 'DaemonSet', name: 'd' };
  it("the guard's and its workload's Events, oldest first, a mirrored pair once naming both; other objects' left out", () => {
    const t = timeline(
      [
        ev('DaemonSet', 'd', 'UndoStarted', '2026-01-01T00:02:00Z'),
        ev('RolloutGuard', 'g', 'UndoStarted', '2026-01-01T00:02:00Z'),
        ev('RolloutGuard', 'g', 'RolloutStalled', '2026-01-01T00:01:00Z', { type: 'Warning' }),
        ev('RolloutGuard', 'other', 'RolloutStalled', '2026-01-01T00:01:30Z'),
        ev('DaemonSet', 'other', 'RolloutStalled', '2026-01-01T00:01:30Z'),
        ev('StatefulSet', 'd', 'RolloutStalled', '2026-01-01T00:01:30Z'),
      ],
      guard,
      target,
    );
    assert.deepEqual(
      t.map((e) => [e.reason, e.on, e.mark, e.warning]),
      [
        ['RolloutStalled', ['RolloutGuard/g'], 'stall', true],
        ['UndoStarted', ['RolloutGuard/g', 'DaemonSet/d'], 'undo', false],
      ],
    );
  });
  it('the states seen are entries of their own, in time order', () => {
    const t = timeline([ev('RolloutGuard', 'g', 'RolloutStalled', '2026-01-01T00:01:00Z')], guard, target, [
      { at: '2026-01-01T00:00:00Z', state: 'Healthy' },
      { at: '2026-01-01T00:01:01Z', state: 'Stalled' },
    ]);
    assert.deepEqual(
      t.map((e) => [e.reason, e.message, e.mark]),
      [
        ['State', 'Healthy', 'state'],
        ['RolloutStalled', 'RolloutStalled message', 'stall'],
        ['State', 'Stalled', 'state'],
      ],
    );
  });
  it(`keeps the newest ${MAX_TIMELINE}`, () => {
    const many = Array.from({ length: MAX_TIMELINE + 10 }, (_, i) =>
      ev('RolloutGuard', 'g', `R${i}`, new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString()),
    );
    const t = timeline(many, guard, target);
    assert.equal(t.length, MAX_TIMELINE);
    assert.equal(t[t.length - 1]?.reason, `R${MAX_TIMELINE + 9}`);
  });
});
