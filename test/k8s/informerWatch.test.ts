/**
 * One watch's ending, classified: a normal end that came before the watch's jittered timeout could run out
 * is the API server's doing (its watch cache dropping a slow watcher, a restart). The informer tests cover
 * the watch itself against a local server.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { endedEarly } from '../../src/k8s/informerWatch.js';

describe('endedEarly: a normal end before the jittered timeout could run out', () => {
  const cases: Array<[durationMs: number, timeoutSeconds: number, early: boolean]> = [
    [100, 300, true], // the watch cache dropped a slow watcher
    [269_999, 300, true], // just under the lowest jittered timeout (0.9 × 300 s)
    [270_000, 300, false],
    [330_000, 300, false], // the highest jittered timeout
    [500, 1, true], // the jitter never goes below 1 s
    [1_000, 1, false],
  ];
  for (const [ms, timeout, early] of cases) {
    it(`${ms} ms with a ${timeout} s timeout: ${early ? 'early' : 'at its timeout'}`, () => {
      assert.equal(endedEarly(ms, timeout), early);
    });
  }
});
