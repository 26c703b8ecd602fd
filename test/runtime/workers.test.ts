/**
 * Workers: the loops that run one controller's reconcile on its own queue. Time is fake (the queue's
 * delayed adds run on a FakeClock), so backoff and requeue delays are read off the pending timers.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { pino } from 'pino';
import { ApiError } from '../../src/k8s/apiErrors.js';
import { PassError } from '../../src/reconcile/errors.js';
import { Metrics } from '../../src/runtime/metrics.js';
import { Workers, type PassResult } from '../../src/runtime/workers.js';
import { WorkQueue } from '../../src/runtime/workQueue.js';
import { FakeClock } from '../support/fakeClock.js';

type Line = Record<string, unknown>;

interface Rig {
  workers: Workers;
  queue: WorkQueue;
  clock: FakeClock;
  metrics: Metrics;
  lines: Line[];
  calls: string[];
}

const running: Array<{ workers: Workers; stop: AbortController }> = [];

/** Workers named `name` over a fresh fake-time queue (1 s backoff doubling to 5 min), running `reconcile`. */
function rig(
  reconcile: (key: string, call: number) => PassResult | Promise<PassResult>,
  opts: {
    name?: string;
    queueName?: string;
    count?: number;
    metrics?: Metrics;
    lines?: Line[];
    clock?: FakeClock;
    onWork?: () => void;
    mayRun?: () => boolean;
  } = {},
): Rig {
  const clock = opts.clock ?? new FakeClock(1_000_000);
  const queue = new WorkQueue({ baseDelayMs: 1000, maxDelayMs: 300_000, qps: 1e6, burst: 1e6, clock, timers: clock });
  const metrics = opts.metrics ?? new Metrics(false);
  const lines = opts.lines ?? [];
  const log = pino({ level: 'debug' }, { write: (s: string) => lines.push(JSON.parse(s) as Line) });
  const calls: string[] = [];
  const workers = new Workers({
    name: opts.name ?? 'guard',
    queueName: opts.queueName ?? 'guards',
    queue,
    // Async, so that a test's synchronous throw reaches the workers as a failed pass.
    reconcile: async (key) => {
      calls.push(key);
      return await reconcile(key, calls.filter((k) => k === key).length);
    },
    count: opts.count ?? 2,
    metrics,
    log,
    ...(opts.onWork ? { onWork: opts.onWork } : {}),
    ...(opts.mayRun ? { mayRun: opts.mayRun } : {}),
  });
  const stop = new AbortController();
  workers.start(stop.signal);
  running.push({ workers, stop });
  return { workers, queue, clock, metrics, lines, calls };
}

/** Lets the worker loops run until `pred` holds (they only wait on promises, never on real time). */
async function until(pred: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !pred(); i++) await new Promise((r) => setImmediate(r));
  assert.ok(pred(), `timed out waiting for: ${what}`);
}

async function counterValue(m: Metrics, cls: string): Promise<number> {
  return (await m.reconcileErrors.get()).values.find((v) => v.labels.class === cls)?.value ?? 0;
}

describe('Workers', () => {
  afterEach(async () => {
    for (const r of running.splice(0)) {
      r.stop.abort();
      await r.workers.shutDown();
    }
  });

  it('runs each queued key; adds while a key waits or runs collapse into one more pass', async () => {
    const r = rig(() => ({}), { count: 1 });
    r.workers.add('ns/a'); // handed at once to the waiting worker
    r.workers.add('ns/a'); // while it runs: one more pass after it
    r.workers.add('ns/a'); // already due again: nothing more
    r.workers.add('ns/b');
    await until(() => r.calls.length >= 3 && r.queue.len() === 0, 'the keys run');
    await new Promise((res) => setImmediate(res));
    assert.deepEqual(r.calls, ['ns/a', 'ns/b', 'ns/a']);
  });

  it('tells onWork of every key queued and every pass ended, failed passes included', async () => {
    const seen: string[] = [];
    const r = rig(
      (key) => {
        seen.push(`pass ${key}`);
        if (key === 'ns/bad') throw new Error('boom');
      },
      { onWork: () => seen.push('work') },
    );
    r.workers.add('ns/a');
    r.workers.add('ns/bad');
    assert.deepEqual(seen.slice(0, 2), ['work', 'work'], 'each add is work');
    await until(() => seen.length === 6, 'both passes ended');
    assert.equal(seen.filter((w) => w === 'work').length, 4, 'two adds and two pass ends, the failed one too');
    assert.equal(seen.at(-1), 'work', 'the last thing told is a pass ending');
  });

  it('honours requeueAfterMs: the key runs again once that time has passed, not before', async () => {
    const r = rig((_k, call) => (call === 1 ? { requeueAfterMs: 30_000 } : {}));
    r.workers.add('ns/a');
    await until(() => r.clock.pending() === 1, 'the requeue is scheduled');
    assert.equal(r.clock.nextDelay(), 30_000);
    r.clock.advance(29_999);
    await new Promise((res) => setImmediate(res));
    assert.deepEqual(r.calls, ['ns/a'], 'not before the requeue time');
    r.clock.advance(1);
    await until(() => r.calls.length === 2, 'run again at the requeue time');
    assert.equal(r.clock.pending(), 0, 'the second pass asked for nothing');
  });

  it('addAfter brings a key back after the delay (an announcement to retry), told as work', async () => {
    let work = 0;
    const r = rig(() => ({}), { onWork: () => work++ });
    r.workers.addAfter('ns/a', 5000);
    assert.equal(work, 1, 'the delayed add is work');
    assert.equal(r.clock.nextDelay(), 5000);
    r.clock.advance(4999);
    await new Promise((res) => setImmediate(res));
    assert.deepEqual(r.calls, [], 'not before the delay');
    r.clock.advance(1);
    await until(() => r.calls.length === 1, 'run at the delay');
  });

  it('a failing key is retried with per-key backoff (1 s, 2 s, ...), counted, logged with the key, and forgotten after a success', async () => {
    const r = rig((_k, call) => {
      if (call <= 2) throw new Error('boom');
      return {};
    });
    r.workers.add('ns/a');
    await until(() => r.clock.pending() === 1, 'first retry scheduled');
    assert.equal(r.clock.nextDelay(), 1000);
    assert.equal(r.queue.numRequeues('ns/a'), 1);
    r.clock.advance(1000);
    await until(() => r.calls.length === 2 && r.clock.pending() === 1, 'second retry scheduled');
    assert.equal(r.clock.nextDelay(), 2000, 'the backoff doubles');
    r.clock.advance(2000);
    await until(() => r.calls.length === 3 && r.queue.numRequeues('ns/a') === 0, 'the success resets the count');
    assert.equal(await counterValue(r.metrics, 'transient'), 2);
    const failed = r.lines.filter((l) => l.msg === 'reconcile failed: retrying with backoff');
    assert.equal(failed.length, 2);
    assert.equal(failed[0]?.guard, 'ns/a');
    assert.deepEqual(
      failed.map((l) => l.retries),
      [0, 1],
    );
  });

  it("a server's Retry-After is waited for when longer than the backoff", async () => {
    const r = rig(() => {
      throw new ApiError('too many requests', { statusCode: 429, retryAfterSeconds: 7 });
    });
    r.workers.add('ns/a');
    await until(() => r.clock.pending() === 1, 'retry scheduled');
    assert.equal(r.clock.nextDelay(), 7000);
    assert.equal(r.lines.find((l) => l.msg === 'reconcile failed: retrying with backoff')?.retryAfterMs, 7000);
  });

  it('a deadline decided before the failure keeps its requeue when it comes before the backoff', async () => {
    const r = rig((_k, call) => {
      if (call === 1) throw new PassError('write failed', 400, { cause: new Error('boom') });
      return {};
    });
    r.workers.add('ns/a');
    await until(() => r.clock.pending() === 1, 'retry scheduled');
    assert.equal(r.clock.nextDelay(), 400, 'the earlier of the deadline and the 1 s backoff');
  });

  it('a 403 is logged at error level and counted as forbidden', async () => {
    const r = rig(() => {
      throw new ApiError('rolloutguards/status is forbidden', { statusCode: 403, reason: 'Forbidden' });
    });
    r.workers.add('ns/a');
    await until(() => r.lines.some((l) => l.level === 50), 'error logged');
    assert.match(String(r.lines.find((l) => l.level === 50)?.msg), /^reconcile forbidden/);
    assert.equal(await counterValue(r.metrics, 'forbidden'), 1);
  });

  it("logs and labels with its own controller's name: a policy's failure names the policy, never a guard", async () => {
    const r = rig(
      () => {
        throw new Error('boom');
      },
      { name: 'policy', queueName: 'policies' },
    );
    r.workers.add('gpu-agents');
    await until(() => r.lines.length > 0, 'failure logged');
    assert.equal(r.lines[0]?.policy, 'gpu-agents');
    assert.equal('guard' in (r.lines[0] ?? {}), false);
    const depth = (await r.metrics.queueDepth.get()).values;
    assert.deepEqual(
      depth.map((v) => v.labels.queue),
      ['policies'],
    );
  });

  it('two controllers, two queues: the same key is not deduplicated across them, and one stuck pass does not hold up the other', async () => {
    const metrics = new Metrics(false);
    const clock = new FakeClock(1_000_000);
    let release: () => void = () => undefined;
    const stuck = new Promise<void>((res) => (release = res));
    const policies = rig(
      async () => {
        await stuck;
      },
      { name: 'policy', queueName: 'policies', count: 1, metrics, clock },
    );
    const guards = rig(() => ({}), { count: 1, metrics, clock });
    policies.workers.add('x');
    guards.workers.add('x');
    guards.workers.add('ns/a');
    await until(() => guards.calls.length === 2, 'the guards ran');
    assert.deepEqual(guards.calls, ['x', 'ns/a']);
    assert.deepEqual(policies.calls, ['x'], 'the policy pass still running');
    const depth = (await metrics.queueDepth.get()).values.map((v) => v.labels.queue).sort();
    assert.deepEqual(depth, ['guards', 'policies'], 'one depth series per queue');
    release();
  });

  it('records how long each key waited for a worker, by queue: a key queued behind a running pass waits for it', async () => {
    let release: () => void = () => undefined;
    const stuck = new Promise<void>((res) => (release = res));
    const r = rig(
      async (key) => {
        if (key === 'ns/a') await stuck;
      },
      { count: 1 },
    );
    r.workers.add('ns/a');
    await until(() => r.calls.length === 1, 'a taken');
    r.workers.add('ns/b');
    r.clock.advance(250);
    release();
    await until(() => r.calls.length === 2, 'b taken');
    const [h] = (await r.metrics.queueWait.get()).values.filter((v) => v.metricName === 'rollout_guard_queue_wait_seconds_sum');
    assert.equal(h?.labels.queue, 'guards');
    assert.equal(h?.value, 0.25, 'a waited 0 s, b the 0.25 s a took');
    const count = (await r.metrics.queueWait.get()).values.find((v) => v.metricName === 'rollout_guard_queue_wait_seconds_count');
    assert.equal(count?.value, 2);
  });

  it('mayRun is asked when a key is taken: refused, the pass does not run, the key stays queued and the workers stop', async () => {
    let may = true;
    const asked: string[] = [];
    const lines: Line[] = [];
    const r = rig(() => ({}), { count: 2, lines, mayRun: () => (asked.push('asked'), may) });
    r.workers.add('ns/a');
    await until(() => r.calls.length === 1, 'a runs while allowed');
    may = false;
    r.workers.add('ns/b');
    await until(() => lines.some((l) => /may no longer act/.test(String(l.msg))), 'the refusal is logged');
    let ended = false;
    const loops = r.workers.shutDown().then(() => (ended = true));
    await until(() => ended, 'both loops ended');
    await loops;
    assert.deepEqual(r.calls, ['ns/a'], 'b never ran');
    assert.equal(r.queue.len(), 1, 'b is still queued, for whoever may run it');
    assert.ok(asked.length >= 2, 'asked for a and for b');
    assert.equal(lines.find((l) => /may no longer act/.test(String(l.msg)))?.guard, 'ns/b');
  });

  it('a requeue that falls due after a pause past the lease runs no pass: the gate is read on the clock of the take', async () => {
    // The gate mirrors LeaderElector.stillLeading(): true while the last renewal is under a lease old.
    const LEASE_MS = 15_000;
    const clock = new FakeClock(1_000_000);
    const renewedAt = clock.now();
    const lines: Line[] = [];
    const r = rig((_k, call) => (call === 1 ? { requeueAfterMs: 10_000 } : {}), {
      clock,
      count: 1,
      lines,
      mayRun: () => clock.now() - renewedAt < LEASE_MS,
    });
    r.workers.add('ns/a');
    await until(() => clock.pending() === 1, 'the deadline requeue is scheduled');
    // The process is frozen for 20 s: no renewal ran, and the requeue is overdue the moment it wakes.
    clock.advance(20_000);
    await until(() => lines.some((l) => /may no longer act/.test(String(l.msg))), 'the worker took the overdue key and refused it');
    assert.deepEqual(r.calls, ['ns/a'], 'the overdue requeue did not run a pass');
    assert.equal(r.queue.len(), 1, 'the key waits in the queue');
  });

  it('yields to the event loop after each pass: I/O that arrives during a backlog runs between its passes, not after it', async () => {
    const order: string[] = [];
    const r = rig(
      (key) => {
        order.push(key);
        // What a watch event or a write's answer looks like to the loop: a callback of a later turn.
        if (key === 'ns/a') setImmediate(() => order.push('io'));
      },
      { count: 1 },
    );
    // A backlog: both keys are ready, so the second is handed over without waiting for anything.
    r.queue.add('ns/a');
    r.queue.add('ns/b');
    await until(() => order.length === 3, 'both passes and the I/O ran');
    assert.deepEqual(order, ['ns/a', 'io', 'ns/b']);
  });

  it('shutDown ends the loops once the pass in flight has finished', async () => {
    let release: () => void = () => undefined;
    const r = rig(() => new Promise<PassResult>((res) => (release = () => res({}))), { count: 1 });
    r.workers.add('ns/a');
    await until(() => r.calls.length === 1, 'pass started');
    let ended = false;
    const done = r.workers.shutDown().then(() => (ended = true));
    await new Promise((res) => setImmediate(res));
    assert.equal(ended, false, 'waits for the pass in flight');
    r.workers.add('ns/b');
    release();
    await done;
    assert.deepEqual(r.calls, ['ns/a'], 'nothing new after shutDown');
  });
});
