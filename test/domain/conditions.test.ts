/**
 * setCondition: a list-map keyed by type; lastTransitionTime moves only when status flips; `changed`
 * tells decide whether an Event is due.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CONDITION_TYPES, getCondition, setCondition, type DesiredCondition } from '../../src/domain/conditions.js';
import type { Condition } from '../../src/api/types.js';
import { deepFreeze } from '../support/fixtures.js';

const EARLIER = '2025-01-01T00:00:00.000Z';
const NOW = '2025-01-01T01:00:00.000Z';

const existing: Condition[] = [
  { type: 'Ready', status: 'True', reason: 'TargetHealthy', message: 'fine', lastTransitionTime: EARLIER, observedGeneration: 1 },
  {
    type: 'Stalled',
    status: 'False',
    reason: 'NotStalled',
    message: 'no rollout is stalled',
    lastTransitionTime: EARLIER,
    observedGeneration: 1,
  },
];

describe('setCondition', () => {
  const cases: {
    name: string;
    want: DesiredCondition;
    generation?: number;
    changed: boolean;
    flipped: boolean;
    lastTransitionTime: string;
  }[] = [
    {
      name: 'identical → unchanged, transition time kept',
      want: { type: 'Ready', status: 'True', reason: 'TargetHealthy', message: 'fine' },
      changed: false,
      flipped: false,
      lastTransitionTime: EARLIER,
    },
    {
      name: 'message only → changed, not flipped, transition time kept',
      want: { type: 'Ready', status: 'True', reason: 'TargetHealthy', message: 'still fine' },
      changed: true,
      flipped: false,
      lastTransitionTime: EARLIER,
    },
    {
      name: 'reason only → changed, not flipped, transition time kept',
      want: { type: 'Ready', status: 'True', reason: 'Other', message: 'fine' },
      changed: true,
      flipped: false,
      lastTransitionTime: EARLIER,
    },
    {
      name: 'status flip → changed, flipped, transition time = now',
      want: { type: 'Ready', status: 'False', reason: 'TargetHealthy', message: 'fine' },
      changed: true,
      flipped: true,
      lastTransitionTime: NOW,
    },
    {
      name: 'to Unknown is a flip too',
      want: { type: 'Stalled', status: 'Unknown', reason: 'NotStalled', message: 'no rollout is stalled' },
      changed: true,
      flipped: true,
      lastTransitionTime: NOW,
    },
    {
      name: 'a new type → appended, changed, flipped, transition time = now',
      want: { type: 'Progressing', status: 'True', reason: 'RolloutComplete', message: 'done' },
      changed: true,
      flipped: true,
      lastTransitionTime: NOW,
    },
    {
      name: 'only the generation moves → unchanged (no Event), but the generation is updated',
      want: { type: 'Ready', status: 'True', reason: 'TargetHealthy', message: 'fine' },
      generation: 5,
      changed: false,
      flipped: false,
      lastTransitionTime: EARLIER,
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const input = deepFreeze(structuredClone(existing));
      const gen = tc.generation ?? 1;
      const r = setCondition(input, tc.want, NOW, gen);
      assert.equal(r.changed, tc.changed);
      assert.equal(r.flipped, tc.flipped);
      const c = getCondition(r.conditions, tc.want.type);
      assert.deepEqual(c, { ...tc.want, lastTransitionTime: tc.lastTransitionTime, observedGeneration: gen });
      // Other conditions untouched, order preserved, the new one last.
      const others = r.conditions.filter((x) => x.type !== tc.want.type);
      assert.deepEqual(
        others,
        existing.filter((x) => x.type !== tc.want.type),
      );
      const isNew = !existing.some((x) => x.type === tc.want.type);
      assert.equal(r.conditions.length, existing.length + (isNew ? 1 : 0));
      if (!isNew)
        assert.equal(
          r.conditions.findIndex((x) => x.type === tc.want.type),
          existing.findIndex((x) => x.type === tc.want.type),
        );
      else assert.equal(r.conditions[r.conditions.length - 1]!.type, tc.want.type);
    });
  }

  it('without an observed generation the field is omitted', () => {
    const r = setCondition([], { type: 'Ready', status: 'Unknown', reason: 'R', message: 'm' }, NOW, undefined);
    assert.equal('observedGeneration' in r.conditions[0]!, false);
  });

  it('a chain of updates moves the transition time only on flips', () => {
    let conds: Condition[] = [];
    const steps: [DesiredCondition['status'], string, string][] = [
      ['True', 'A', '2025-01-01T00:00:00.000Z'],
      ['True', 'B', '2025-01-01T00:01:00.000Z'],
      ['False', 'B', '2025-01-01T00:02:00.000Z'],
      ['False', 'C', '2025-01-01T00:03:00.000Z'],
      ['True', 'C', '2025-01-01T00:04:00.000Z'],
    ];
    const seen: string[] = [];
    for (const [status, reason, at] of steps) {
      conds = setCondition(conds, { type: 'Stalled', status, reason, message: '' }, at, 1).conditions;
      seen.push(getCondition(conds, 'Stalled')!.lastTransitionTime);
    }
    assert.deepEqual(seen, [
      '2025-01-01T00:00:00.000Z',
      '2025-01-01T00:00:00.000Z',
      '2025-01-01T00:02:00.000Z',
      '2025-01-01T00:02:00.000Z',
      '2025-01-01T00:04:00.000Z',
    ]);
  });
});

describe('getCondition', () => {
  it('finds by type, undefined when absent or without a list', () => {
    assert.equal(getCondition(existing, 'Stalled')?.reason, 'NotStalled');
    assert.equal(getCondition(existing, 'RolledBack'), undefined);
    assert.equal(getCondition(undefined, 'Ready'), undefined);
  });

  it('the controller owns exactly the four documented condition types', () => {
    assert.deepEqual([...CONDITION_TYPES], ['Ready', 'Progressing', 'Stalled', 'RolledBack']);
  });
});
