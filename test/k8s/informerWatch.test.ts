/**
 * One watch's ending, classified: a normal end before the timeout the watch asked for is the API
 * server's doing (its watch cache dropping a slow watcher, a restart). The informer tests cover the watch
 * itself against a local server.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { endedEarly, type WatchEnd } from '../../src/k8s/informerWatch.js';

describe('endedEarly: a normal end before the timeout the watch asked for', () => {
  const cases: Array<[durationMs: number, timeoutSeconds: number, end: WatchEnd, early: boolean]> = [
    [100, 300, 'closed', true], // the watch cache dropped a slow watcher
    [296_999, 297, 'closed', true], // just under a jittered timeout
    [297_000, 297, 'closed', false], // at it
    [300_400, 300, 'closed', false], // its timeout, plus the time to send the request
    [500, 1, 'closed', true],
    [1_000, 1, 'closed', false],
    [100, 300, 'gone', false], // a 410 is a restart, counted as one
    [100, 300, 'idle', false], // the watchdog's doing, not the server's
    [100, 300, 'relist', false],
    [100, 300, 'stopped', false],
  ];
  for (const [ms, timeout, end, early] of cases) {
    it(`${end} after ${ms} ms, having asked for ${timeout} s: ${early ? 'early' : 'not early'}`, () => {
      assert.equal(endedEarly({ end, durationMs: ms, timeoutSeconds: timeout }), early);
    });
  }
});
