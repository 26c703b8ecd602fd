import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseStatefulSetSize } from '../../bench/statefulSets.js';

describe('bench: StatefulSet sizes', () => {
  it('reads SxR as StatefulSets × replicas, and refuses anything else', () => {
    assert.deepEqual(parseStatefulSetSize('100x5'), { statefulSets: 100, replicas: 5 });
    assert.deepEqual(parseStatefulSetSize(' 4x2 '), { statefulSets: 4, replicas: 2 });
    for (const bad of ['100', '0x5', '5x0', 'ax2', '2x3x4']) assert.throws(() => parseStatefulSetSize(bad), /is not SxR/, bad);
  });
});
