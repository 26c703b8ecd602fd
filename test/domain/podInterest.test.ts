/**
 * When a DaemonSet's pods are needed, and the picture of a settled DaemonSet without them: it must be the
 * one its pods would give, or stopping a watch would rewrite a guard's status.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countersSettled, followsRollout, needsPods, type SettledCounters } from '../../src/domain/podInterest.js';
import { splitFromCounters } from '../../src/domain/split.js';
import { decide } from '../../src/domain/decide/decide.js';
import type { GuardStatus } from '../../src/api/types.js';
import type { Observation } from '../../src/domain/observation.js';
import { HASH, T0, node, nodesOn, policy, rev, sec, targetObs } from '../support/fixtures.js';

const settled: SettledCounters = {
  generation: 4,
  observedGeneration: 4,
  desired: 5,
  current: 5,
  updated: 5,
  ready: 5,
  available: 5,
  misscheduled: 0,
};

describe('countersSettled', () => {
  const cases: Array<[string, Partial<SettledCounters>, boolean]> = [
    ['every node updated, ready and available', {}, true],
    ['a spec the controller has not observed (a rollout begins, or the controller is down)', { generation: 5 }, false],
    ['a node not updated yet', { updated: 4 }, false],
    ['a pod not ready (a crash after readiness)', { ready: 4 }, false],
    ['a pod ready but not available (minReadySeconds)', { available: 4 }, false],
    ['a node without its pod (a new node, a deleted pod)', { current: 4 }, false],
    ['a pod on a node it should not run on', { misscheduled: 1 }, false],
    ['no node targeted at all', { desired: 0, current: 0, updated: 0, ready: 0, available: 0 }, true],
    ["a StatefulSet's partition holding ordinals on another revision, counters complete", { partition: 2 }, false],
  ];
  for (const [name, o, want] of cases) it(name, () => assert.equal(countersSettled({ ...settled, ...o }), want));
});

describe('needsPods', () => {
  const active: GuardStatus = {
    state: 'Progressing',
    rollout: {
      toRevision: { hash: HASH.B },
      startedAt: '',
      lastProgressAt: '',
      desiredAtStart: 5,
      progress: { observedGeneration: 4, updated: 5, available: 5, ready: 5, onTarget: 5 },
      updatedAt: '',
    },
  };
  const done: GuardStatus = { state: 'Healthy', rollout: { ...active.rollout!, completedAt: '2026-01-01T00:00:00Z' } };
  const cases: Array<[string, Partial<SettledCounters>, Array<GuardStatus | undefined>, boolean]> = [
    ['settled, no guard has written status yet', {}, [undefined], false],
    ['settled, its guard Healthy after a completed rollout', {}, [done], false],
    ['settled, but a guard still follows the rollout (it bakes)', {}, [active], true],
    ['settled, one of two guards still follows it', {}, [done, active], true],
    ['not settled, every guard Healthy (a rollout the guards have not seen yet)', { updated: 1 }, [done], true],
    ['not settled, no guard at all: nobody needs its pods', { ready: 2 }, [], false],
    ['a StatefulSet held at its partition, its guard Healthy: the pods say which ordinal runs what', { partition: 2 }, [done], true],
  ];
  for (const [name, o, g, want] of cases) it(name, () => assert.equal(needsPods({ ...settled, ...o }, g), want));

  it('followsRollout: only a rollout without completedAt', () => {
    assert.deepEqual(
      [undefined, {}, done, active].map((s) => followsRollout(s)),
      [false, false, false, true],
    );
  });
});

describe('splitFromCounters', () => {
  it('every targeted node on the current revision, nothing blocked or empty', () => {
    const s = splitFromCounters({ desired: 5, ready: 5, images: ['a:1'] }, 5, rev(HASH.B, 2));
    assert.deepEqual(s, {
      generations: [{ hash: HASH.B, revision: 2, images: ['a:1'], nodes: 5, ready: 5 }],
      blocked: [],
      empty: [],
      onTarget: 5,
      oldGone: 5,
      eligible: 5,
      targetHash: HASH.B,
    });
  });
  it('no node targeted, or no revision recorded: no generation', () => {
    assert.deepEqual(splitFromCounters({ desired: 0, ready: 0, images: ['a:1'] }, 0, rev(HASH.B, 2)).generations, []);
    assert.deepEqual(splitFromCounters({ desired: 3, ready: 3, images: ['a:1'] }, 3, undefined).generations, []);
  });

  it('decide writes the same status from the counters as from the pods, so a watch that stops changes nothing', () => {
    const images = [`registry.example/decoder:${HASH.B}`];
    const withPods = targetObs({
      target: { generation: 2, observedGeneration: 2, images },
      revisions: [rev(HASH.A, 1), rev(HASH.B, 2)],
      nodes: nodesOn(HASH.B),
    });
    const fromCounters = {
      ...targetObs({
        target: { generation: 2, observedGeneration: 2, images },
        revisions: [rev(HASH.A, 1), rev(HASH.B, 2)],
        nodes: [node('node-1'), node('node-2'), node('node-3')],
      }),
      podsFromCounters: true,
    } as Observation;
    // A rollout that completed on B earlier: the guard is Healthy on it.
    let prev: GuardStatus = {};
    prev = decide(withPods, prev, policy({ bakeSeconds: 0 }), T0).status;
    prev = decide(withPods, prev, policy({ bakeSeconds: 0 }), T0 + sec(10)).status;
    assert.equal(prev.state, 'Healthy');
    const a = decide(withPods, prev, policy({ bakeSeconds: 0 }), T0 + sec(20));
    const b = decide(fromCounters, prev, policy({ bakeSeconds: 0 }), T0 + sec(20));
    assert.deepEqual(b.status, a.status);
    assert.deepEqual(b.events, a.events);
    assert.ok((b.status.generations ?? []).length === 1, 'the generation is reported, not dropped');
  });
});
