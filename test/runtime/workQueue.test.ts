import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WorkQueue, type WorkQueueOptions } from '../../src/runtime/workQueue.js';
import { FakeClock } from '../support/fakeClock.js';

/** A queue on fake time; the default bucket is large enough never to matter unless a test says otherwise. */
function newQueue(opts: Partial<WorkQueueOptions> = {}): { q: WorkQueue; clock: FakeClock } {
  const clock = new FakeClock(1_000_000);
  const q = new WorkQueue({ baseDelayMs: 1000, maxDelayMs: 300_000, qps: 1e6, burst: 1e6, clock, timers: clock, ...opts });
  return { q, clock };
}

/** Drains what is ready right now without blocking (get() on an empty queue would wait). */
async function drainReady(q: WorkQueue): Promise<string[]> {
  const out: string[] = [];
  while (q.len() > 0) {
    const k = await q.get();
    if (k === undefined) break;
    out.push(k);
  }
  return out;
}

describe('WorkQueue: dedup and exclusivity', () => {
  const cases: Array<{ name: string; adds: string[]; want: string[] }> = [
    { name: 'distinct keys keep FIFO order', adds: ['a', 'b', 'c'], want: ['a', 'b', 'c'] },
    { name: 'duplicates while queued collapse', adds: ['a', 'b', 'a', 'a', 'b'], want: ['a', 'b'] },
    { name: 'single key many times', adds: ['x', 'x', 'x'], want: ['x'] },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { q } = newQueue();
      for (const k of c.adds) q.add(k);
      assert.equal(q.len(), c.want.length);
      assert.deepEqual(await drainReady(q), c.want);
    });
  }

  it('a key added while processing is re-queued exactly once after done()', async () => {
    const { q } = newQueue();
    q.add('a');
    const k = await q.get();
    assert.equal(k, 'a');
    q.add('a');
    q.add('a');
    assert.equal(q.len(), 0, 'not handed out again while processing');
    q.done('a');
    assert.equal(q.len(), 1);
    assert.equal(await q.get(), 'a');
    q.done('a');
    assert.equal(q.len(), 0, 'ran exactly once more');
  });

  it('never hands one key to two workers at once', async () => {
    const { q } = newQueue();
    q.add('a');
    const first = await q.get();
    q.add('a');
    let second: string | undefined;
    const pending = q.get().then((k) => (second = k));
    await Promise.resolve();
    assert.equal(second, undefined, 'second worker waits while a is processing');
    q.done(first!);
    await pending;
    assert.equal(second, 'a');
  });

  it('a waiting get() is woken by add()', async () => {
    const { q } = newQueue();
    const got = q.get();
    q.add('k');
    assert.equal(await got, 'k');
  });

  it('done() of a clean key does not re-queue it', async () => {
    const { q } = newQueue();
    q.add('a');
    q.done((await q.get())!);
    assert.equal(q.len(), 0);
  });
});

describe('WorkQueue: how long a key waited', () => {
  it('counts from the first add to the take; a second add while queued does not restart it', async () => {
    const { q, clock } = newQueue();
    q.add('a');
    clock.advance(300);
    q.add('a');
    clock.advance(200);
    assert.equal(await q.get(), 'a');
    assert.equal(q.waitedMs('a'), 500);
    q.done('a');
    assert.equal(q.waitedMs('a'), 0, 'no wait is reported for a key not in process');
  });

  it('a key added while its pass runs waits for that pass too, from that add', async () => {
    const { q, clock } = newQueue();
    q.add('a');
    assert.equal(await q.get(), 'a');
    clock.advance(1000);
    q.add('a');
    clock.advance(400);
    assert.equal(q.waitedMs('a'), 0, 'the pass in progress waited nothing');
    q.done('a');
    clock.advance(100);
    assert.equal(await q.get(), 'a');
    assert.equal(q.waitedMs('a'), 500);
  });

  it('each key has its own wait', async () => {
    const { q, clock } = newQueue();
    q.add('a');
    clock.advance(100);
    q.add('b');
    clock.advance(50);
    assert.equal(await q.get(), 'a');
    assert.equal(await q.get(), 'b');
    assert.deepEqual([q.waitedMs('a'), q.waitedMs('b')], [150, 50]);
  });

  it('a delayed add counts from when its delay ends', async () => {
    const { q, clock } = newQueue();
    q.addAfter('a', 1000);
    clock.advance(1000);
    clock.advance(40);
    assert.equal(await q.get(), 'a');
    assert.equal(q.waitedMs('a'), 40);
  });
});

describe('WorkQueue: addAfter', () => {
  const cases: Array<{ name: string; delays: number[]; fireAt: number }> = [
    { name: 'single deadline', delays: [500], fireAt: 500 },
    { name: 'earlier second deadline replaces the later one', delays: [1000, 300], fireAt: 300 },
    { name: 'later second deadline is ignored', delays: [300, 1000], fireAt: 300 },
    { name: 'three deadlines keep the earliest', delays: [800, 200, 500], fireAt: 200 },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { q, clock } = newQueue();
      for (const d of c.delays) q.addAfter('k', d);
      assert.equal(clock.pending(), 1, 'one pending timer per key');
      clock.advance(c.fireAt - 1);
      assert.equal(q.len(), 0, 'not ready before the deadline');
      clock.advance(1);
      assert.equal(q.len(), 1);
      assert.deepEqual(await drainReady(q), ['k']);
      clock.advance(10_000);
      assert.equal(q.len(), 0, 'the replaced deadline does not fire later');
    });
  }

  for (const d of [0, -5]) {
    it(`a delay of ${d} adds immediately`, () => {
      const { q, clock } = newQueue();
      q.addAfter('k', d);
      assert.equal(q.len(), 1);
      assert.equal(clock.pending(), 0);
    });
  }

  it('a delayed key that is already queued is not duplicated when it fires', async () => {
    const { q, clock } = newQueue();
    q.addAfter('k', 100);
    q.add('k');
    clock.advance(100);
    assert.deepEqual(await drainReady(q), ['k']);
  });
});

describe('WorkQueue: addRateLimited', () => {
  const perKey: Array<{ name: string; base: number; max: number; want: number[] }> = [
    { name: 'doubles per failure', base: 1000, max: 300_000, want: [1000, 2000, 4000, 8000, 16000] },
    { name: 'caps at maxDelay', base: 10, max: 50, want: [10, 20, 40, 50, 50, 50] },
    { name: 'base equals max', base: 7, max: 7, want: [7, 7, 7] },
  ];
  for (const c of perKey) {
    it(`per-key exponential backoff: ${c.name}`, async () => {
      const { q, clock } = newQueue({ baseDelayMs: c.base, maxDelayMs: c.max });
      const seen: number[] = [];
      for (let i = 0; i < c.want.length; i++) {
        q.addRateLimited('k');
        seen.push(clock.nextDelay()!);
        assert.equal(q.numRequeues('k'), i + 1);
        clock.advance(clock.nextDelay()!);
        const k = await q.get();
        q.done(k!);
      }
      assert.deepEqual(seen, c.want);
    });
  }

  it('a server-given Retry-After wins when it is longer than the backoff, and never shortens it', () => {
    const { q, clock } = newQueue({ baseDelayMs: 1000, maxDelayMs: 300_000 });
    q.addRateLimited('k', 7_000);
    assert.equal(clock.nextDelay(), 7_000);
    const { q: q2, clock: c2 } = newQueue({ baseDelayMs: 1000, maxDelayMs: 300_000 });
    q2.addRateLimited('k', 200);
    assert.equal(c2.nextDelay(), 1000);
  });

  it('forget resets the per-key count, and counts are per key', () => {
    const { q, clock } = newQueue({ baseDelayMs: 100, maxDelayMs: 10_000 });
    q.addRateLimited('a');
    clock.advance(100);
    q.addRateLimited('a');
    q.addRateLimited('b');
    assert.equal(q.numRequeues('a'), 2);
    assert.equal(q.numRequeues('b'), 1);
    q.forget('a');
    assert.equal(q.numRequeues('a'), 0);
    assert.equal(q.numRequeues('b'), 1);
  });

  // Distinct keys, so only the global bucket can delay them: qps 10 → one token per 100 ms, burst 2.
  const bucket: Array<{ name: string; qps: number; burst: number; gapMs: number; want: number[] }> = [
    { name: 'burst passes, then one token per 1/qps', qps: 10, burst: 2, gapMs: 0, want: [1, 1, 100, 200, 300] },
    { name: 'tokens refill over time', qps: 10, burst: 2, gapMs: 100, want: [1, 1, 1, 1, 1] },
    { name: 'refill is capped at burst', qps: 10, burst: 1, gapMs: 0, want: [1, 100, 200] },
  ];
  for (const c of bucket) {
    it(`global token bucket: ${c.name}`, () => {
      const { q, clock } = newQueue({ baseDelayMs: 1, maxDelayMs: 1, qps: c.qps, burst: c.burst });
      const seen: number[] = [];
      c.want.forEach((_, i) => {
        q.addRateLimited(`k${i}`);
        // The new key's timer is the latest one scheduled; measure it before advancing.
        seen.push(Math.round(maxPendingDelay(clock)));
        clock.advance(c.gapMs);
      });
      assert.deepEqual(seen, c.want);
    });
  }

  it('takes the max of per-key and bucket delays', () => {
    const { q, clock } = newQueue({ baseDelayMs: 50, maxDelayMs: 10_000, qps: 1, burst: 1 });
    q.addRateLimited('a'); // per-key 50, bucket 0 → 50
    assert.equal(clock.nextDelay(), 50);
    q.addRateLimited('b'); // per-key 50, bucket 1000 → 1000
    assert.equal(Math.round(maxPendingDelay(clock)), 1000);
  });

  it('a clock stepping backwards does not drain or mint tokens', () => {
    const { q, clock } = newQueue({ baseDelayMs: 1, maxDelayMs: 1, qps: 10, burst: 1 });
    q.addRateLimited('a'); // takes the only token
    clock.advance(1); // fire a's timer so only b's is pending below
    clock.set(clock.now() - 60_000);
    q.addRateLimited('b');
    assert.deepEqual(clock.pendingDelays().map(Math.round), [100], 'bucket neither refilled nor drained by the step');
  });
});

describe('WorkQueue: shutDown', () => {
  it('hands out what is queued, then undefined; drops delayed keys and ignores new adds', async () => {
    const { q, clock } = newQueue();
    q.add('a');
    q.addAfter('later', 100);
    q.shutDown();
    assert.equal(q.shuttingDown(), true);
    assert.equal(clock.pending(), 0, 'delayed adds dropped');
    q.add('b');
    q.addRateLimited('c');
    assert.equal(await q.get(), 'a');
    assert.equal(await q.get(), undefined);
    clock.advance(1000);
    assert.equal(q.len(), 0);
  });

  it('releases waiting workers with undefined', async () => {
    const { q } = newQueue();
    const waiting = [q.get(), q.get()];
    q.shutDown();
    assert.deepEqual(await Promise.all(waiting), [undefined, undefined]);
  });

  it('a key dirtied before shutdown still runs once more after done()', async () => {
    const { q } = newQueue();
    q.add('a');
    const k = await q.get();
    q.add('a');
    q.shutDown();
    q.done(k!);
    assert.equal(await q.get(), 'a');
    q.done('a');
    assert.equal(await q.get(), undefined);
  });
});

/** Delay until the latest pending timer (the key just scheduled, in these tests). */
function maxPendingDelay(clock: FakeClock): number {
  return Math.max(0, ...clock.pendingDelays());
}

describe('WorkQueue: urgent keys', () => {
  // Each step: `+k` add, `!k` addUrgent, `take` get (recorded), `done k`.
  const cases: Array<{ name: string; steps: string[]; want: string[] }> = [
    { name: 'an urgent key is handed out before the plain ones', steps: ['+a', '+b', '!c'], want: ['c', 'a', 'b'] },
    { name: 'urgent keys keep FIFO order among themselves', steps: ['+a', '!b', '!c'], want: ['b', 'c', 'a'] },
    { name: 'a waiting key moves up when it turns urgent, once', steps: ['+a', '+b', '+c', '!c', '!c'], want: ['c', 'a', 'b'] },
    { name: 'an urgent key added plainly again stays urgent', steps: ['+a', '!b', '+b'], want: ['b', 'a'] },
    {
      name: 'a key in process that turns urgent runs again first, after done',
      steps: ['+a', 'take', '+b', '!a', 'done a'],
      want: ['a', 'a', 'b'],
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { q } = newQueue();
      const got: string[] = [];
      for (const st of c.steps) {
        if (st.startsWith('+')) q.add(st.slice(1));
        else if (st.startsWith('!')) q.addUrgent(st.slice(1));
        else if (st === 'take') got.push((await q.get())!);
        else q.done(st.slice('done '.length));
      }
      got.push(...(await drainReady(q)));
      assert.deepEqual(got, c.want);
    });
  }

  it('an urgent key is measured from the add that first queued it, not from the urgent one', async () => {
    const { q, clock } = newQueue();
    q.add('a');
    clock.advance(300);
    q.addUrgent('a');
    clock.advance(200);
    assert.equal(await q.get(), 'a');
    assert.equal(q.waitedMs('a'), 500);
  });

  it('after shutdown an urgent add is refused like any other', async () => {
    const { q } = newQueue();
    q.shutDown();
    q.addUrgent('a');
    assert.equal(q.len(), 0);
    assert.equal(await q.get(), undefined);
  });
});

describe('WorkQueue: the batch period', () => {
  // Steps: `+k` add, `!k` addUrgent, `@k:ms` addAfter, `run k` get and done k (must be k), `wait ms`
  // advance the fake clock, `ready a,b` what is ready now, in order (drained as passes that end at once).
  const cases: Array<{ name: string; steps: string[] }> = [
    { name: 'a key never passed is queued at once', steps: ['+a', 'ready a'] },
    {
      name: 'a plain add within the period after a pass waits for its end, and the adds meanwhile make one pass',
      steps: ['+a', 'run a', 'wait 100', '+a', 'ready -', 'wait 200', '+a', '+a', 'ready -', 'wait 199', 'ready -', 'wait 1', 'ready a'],
    },
    { name: 'a plain add after the period is queued at once', steps: ['+a', 'run a', 'wait 500', '+a', 'ready a'] },
    {
      name: 'an urgent add is never held, and ends a hold',
      steps: ['+a', 'run a', 'wait 10', '+a', 'ready -', '!a', 'ready a', 'wait 1000', 'ready -'],
    },
    { name: 'an urgent add right after a pass is not held', steps: ['+a', 'run a', '!a', 'ready a'] },
    {
      name: 'a deadline is never held, and ends a hold',
      steps: ['+a', 'run a', '@a:50', '+a', 'wait 50', 'ready a', 'wait 1000', 'ready -'],
    },
    {
      name: 'a deadline that fires while the pass runs is queued at its end, unheld',
      steps: ['+a', 'take a', '@a:50', 'wait 50', 'done a', 'ready a'],
    },
    {
      name: 'a plain add while the pass runs is held after it',
      steps: ['+a', 'take a', '+a', 'wait 50', 'done a', 'ready -', 'wait 499', 'ready -', 'wait 1', 'ready a'],
    },
    { name: 'other keys are not held by a key’s period', steps: ['+a', 'run a', '+a', '+b', 'ready b', 'wait 500', 'ready a'] },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { q, clock } = newQueue({ batchMs: 500 });
      for (const st of c.steps) {
        const [verb, arg = ''] = st.includes(' ') ? st.split(' ') : [st[0]!, st.slice(1)];
        if (verb === '+') q.add(arg);
        else if (verb === '!') q.addUrgent(arg);
        else if (verb === '@') q.addAfter(arg.split(':')[0]!, Number(arg.split(':')[1]));
        else if (verb === 'wait') clock.advance(Number(arg));
        else if (verb === 'take') assert.equal(await q.get(), arg, st);
        else if (verb === 'done') q.done(arg);
        else if (verb === 'run') {
          assert.equal(await q.get(), arg, st);
          q.done(arg);
        } else if (verb === 'ready') {
          const got = await drainReady(q);
          for (const k of got) q.done(k);
          assert.deepEqual(got, arg === '-' ? [] : arg.split(','), `${st} (after ${c.steps.slice(0, c.steps.indexOf(st)).join('; ')})`);
        } else throw new Error(`bad step ${st}`);
      }
    });
  }

  it("a held key's wait counts its hold: the change that queued it waited that long", async () => {
    const { q, clock } = newQueue({ batchMs: 500 });
    q.add('a');
    q.done((await q.get())!);
    clock.advance(100);
    q.add('a');
    clock.advance(400);
    assert.equal(await q.get(), 'a');
    assert.equal(q.waitedMs('a'), 400);
  });

  it('without a batch period nothing is held', async () => {
    const { q } = newQueue();
    q.add('a');
    q.done((await q.get())!);
    q.add('a');
    assert.equal(q.len(), 1);
  });

  it('at shutdown a held key is still handed out, and its timer is gone', async () => {
    const { q, clock } = newQueue({ batchMs: 500 });
    q.add('a');
    q.done((await q.get())!);
    q.add('a');
    assert.equal(q.len(), 0);
    q.shutDown();
    assert.equal(await q.get(), 'a');
    q.done('a');
    assert.equal(await q.get(), undefined);
    assert.equal(clock.pending(), 0);
  });
});
