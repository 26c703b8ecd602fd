import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Scrape, parseMetrics } from '../../bench/stats.js';
import { podsWatched, wavesNeeded } from '../../bench/waves.js';

describe('bench: explanation waves', () => {
  it('the DaemonSets whose pods the operator watches are read from their pod watches’ series, in the namespace asked', () => {
    const text = [
      '# HELP rollout_guard_informer_objects Objects in each informer cache.',
      'rollout_guard_informer_objects{resource="pods",namespace="bench-a",daemonset="agent-001"} 1000',
      'rollout_guard_informer_objects{resource="pods",namespace="bench-a",daemonset="agent-007"} 0',
      'rollout_guard_informer_objects{resource="pods",namespace="bench-b",daemonset="agent-002"} 1000',
      'rollout_guard_informer_objects{resource="daemonsets",namespace="bench-a",daemonset=""} 20',
      'rollout_guard_informer_objects{resource="events-pods",namespace="bench-a",daemonset=""} 3',
      'rollout_guard_queue_depth 0',
    ].join('\n');
    // A watch that has listed nothing yet is still a watch: its series exists before its first list.
    assert.deepEqual([...podsWatched(new Scrape(parseMetrics(text), 0), 'bench-a')].sort(), ['agent-001', 'agent-007']);
    assert.deepEqual([...podsWatched(new Scrape(parseMetrics(text), 0), 'bench-c')], []);
  });

  it('waves needed for the minimum of samples, given those the fleet-wide rollout gave', () => {
    const rows: Array<[number, number, number, number]> = [
      [50, 12, 12, 4],
      [50, 3, 3, 16],
      [50, 60, 12, 0],
      [50, 0, 0, 0],
    ];
    for (const [min, have, per, want] of rows) assert.equal(wavesNeeded(min, have, per), want, `${min} ${have} ${per}`);
  });
});
