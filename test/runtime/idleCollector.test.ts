/**
 * IdleCollector: one full collection after each quiet spell that follows work. Time is fake; the
 * collection and the young generation's size are stand-ins the test controls.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IdleCollector, exposedGc, youngGenerationBytes, type Collection } from '../../src/runtime/idleCollector.js';
import { FakeClock } from '../support/fakeClock.js';

const MiB = 1024 * 1024;
const QUIET = 15_000;

/** A collector whose "collection" shrinks the young generation back to 1 MiB, as V8's does when idle. */
function rig() {
  const clock = new FakeClock(0);
  let young = 1 * MiB;
  const collections: number[] = [];
  const reported: Collection[] = [];
  const idle = new IdleCollector({
    clock,
    timers: clock,
    quietMs: QUIET,
    collect: () => {
      collections.push(clock.now());
      young = 1 * MiB;
    },
    youngGenerationBytes: () => young,
    onCollected: (c) => reported.push(c),
  });
  return { clock, idle, collections, reported, grow: (bytes: number) => (young = bytes) };
}

describe('IdleCollector', () => {
  it('does nothing while no work has happened', () => {
    const r = rig();
    r.grow(16 * MiB);
    r.clock.advance(10 * QUIET);
    assert.equal(r.clock.pending(), 0, 'no timer without work');
    assert.deepEqual(r.collections, []);
  });

  it('collects once, quietMs after the last work, and reports the young generation before and after', () => {
    const r = rig();
    r.idle.worked();
    r.grow(16 * MiB);
    r.clock.advance(QUIET - 1);
    assert.deepEqual(r.collections, [], 'not before the quiet spell is over');
    r.clock.advance(1);
    assert.deepEqual(r.collections, [QUIET]);
    assert.deepEqual(r.reported, [{ ms: 0, youngBefore: 16 * MiB, youngAfter: 1 * MiB }]);
    r.clock.advance(10 * QUIET);
    assert.equal(r.collections.length, 1, 'no second collection without new work');
    assert.equal(r.clock.pending(), 0);
  });

  it('waits for the work to stop: each piece of work moves the deadline, with one timer at a time', () => {
    const r = rig();
    r.grow(16 * MiB);
    for (let i = 0; i < 10; i++) {
      r.idle.worked();
      assert.equal(r.clock.pending(), 1, 'work arms at most one timer');
      r.clock.advance(QUIET / 2);
    }
    assert.deepEqual(r.collections, [], 'never quiet for quietMs while work comes every quietMs / 2');
    const lastWork = 9 * (QUIET / 2);
    r.clock.advance(QUIET);
    assert.deepEqual(r.collections, [lastWork + QUIET], 'quietMs after the last work, not after the first');
  });

  it('collects again after a later burst', () => {
    const r = rig();
    r.idle.worked();
    r.grow(8 * MiB);
    r.clock.advance(QUIET);
    r.clock.advance(60_000);
    r.idle.worked();
    r.grow(16 * MiB);
    r.clock.advance(QUIET);
    assert.deepEqual(r.collections, [QUIET, QUIET + 60_000 + QUIET]);
    assert.deepEqual(
      r.reported.map((c) => c.youngBefore),
      [8 * MiB, 16 * MiB],
    );
  });

  it('stop() cancels the armed timer and ignores later work', () => {
    const r = rig();
    r.idle.worked();
    r.grow(16 * MiB);
    r.idle.stop();
    assert.equal(r.clock.pending(), 0);
    r.idle.worked();
    r.clock.advance(10 * QUIET);
    assert.deepEqual(r.collections, []);
  });

  it("reads V8's young generation, and offers a collection only when Node exposes one", () => {
    assert.ok(youngGenerationBytes() > 0, 'the new space has a size');
    const exposed = typeof (globalThis as { gc?: unknown }).gc === 'function';
    assert.equal(exposedGc() !== undefined, exposed);
  });
});
