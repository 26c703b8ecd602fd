/**
 * readiness(): /readyz turns not-ready when a cache is not synced, or has not heard from the API server
 * within the bound (a watch that keeps failing, or a silent one the watchdog could not revive).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readiness, type CacheHealth } from '../../src/runtime/healthServer.js';

const NOW = 1_800_000_000_000;
const BOUND = 360_000;
const cache = (o: Partial<CacheHealth> = {}): CacheHealth => ({
  resource: 'pods',
  namespace: 'team-a',
  synced: true,
  lastEventAt: NOW - 60_000,
  ...o,
});

describe('readiness', () => {
  const cases: Array<{ name: string; caches: CacheHealth[]; ok: boolean; reason?: RegExp }> = [
    {
      name: 'every cache synced and heard from within the bound: ready',
      caches: [cache(), cache({ resource: 'nodes', namespace: '' })],
      ok: true,
    },
    { name: 'no caches (nothing to watch yet): ready', caches: [], ok: true },
    {
      name: 'a cache not synced yet: not ready, and which one',
      caches: [cache(), cache({ resource: 'daemonsets', synced: false })],
      ok: false,
      reason: /cache of daemonsets in team-a not synced/,
    },
    {
      name: 'a cache silent past the bound (failing or cut off): not ready',
      caches: [cache({ resource: 'events-pods', lastEventAt: NOW - BOUND - 1 })],
      ok: false,
      reason: /events-pods in team-a last heard from the API server 360s ago \(bound 360s\)/,
    },
    { name: 'exactly at the bound: still ready', caches: [cache({ lastEventAt: NOW - BOUND })], ok: true },
    {
      name: 'synced but never heard from: not ready',
      caches: [cache({ resource: 'nodes', namespace: '', lastEventAt: undefined })],
      ok: false,
      reason: /cache of nodes last heard from the API server never/,
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const r = readiness(tc.caches, NOW, BOUND);
      assert.equal(r.ok, tc.ok);
      if (tc.reason) assert.match(r.reason, tc.reason);
    });
  }
});
