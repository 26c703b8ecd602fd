import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { summarize } from '../../bench/stats.js';

describe('bench: statistics', () => {
  it('summarizes a few samples: nearest-rank percentiles, the max and the mean', () => {
    assert.deepEqual(summarize([]), { count: 0 });
    assert.deepEqual(summarize([3, 1, 2, 4]), { count: 4, p50: 2, p99: 4, max: 4, mean: 2.5 });
  });

  it('summarizes as many samples as a 5,000-node run delivers, more than a call takes as arguments', () => {
    const many = Array.from({ length: 600_000 }, (_, i) => i % 1000);
    const s = summarize(many);
    assert.equal(s.count, 600_000);
    assert.equal(s.max, 999);
    assert.equal(s.p99, 989);
  });
});
