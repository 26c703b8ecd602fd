/**
 * The manager's own decisions, with fakes for everything it runs: the order of a shutdown, when the
 * workers start, and what a lost lease does before and during a shutdown.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { MAX_CLOCK_SKEW_MS } from '../../src/api/defaults.js';
import type { LeaderCallbacks } from '../../src/runtime/leaderElection.js';
import { Manager, type ManagerParts } from '../../src/runtime/manager.js';

type Line = Record<string, unknown>;

interface Rig {
  manager: Manager;
  /** Every call the manager made on a fake, and every line it logged (`log: msg`), in order. */
  calls: string[];
  lines: Line[];
  signals: Map<string, () => void>;
  /** The signal the workers were started with. */
  workerSignal: () => AbortSignal | undefined;
  /** The elector's callbacks, once run() was called. */
  callbacks: () => LeaderCallbacks | undefined;
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

function rig(opts: { elect: boolean; skewMs?: number }): Rig {
  const calls: string[] = [];
  const lines: Line[] = [];
  const signals = new Map<string, () => void>();
  let workerSignal: AbortSignal | undefined;
  let callbacks: LeaderCallbacks | undefined;
  const log = pino(
    { level: 'debug' },
    {
      write: (s: string) => {
        const l = JSON.parse(s) as Line;
        lines.push(l);
        calls.push(`log: ${String(l.msg)}`);
      },
    },
  );
  const parts: ManagerParts = {
    config: { shutdownBudgetMs: 1234 },
    log,
    metrics: { leader: { set: (v) => calls.push(`leader ${v}`) } },
    caches: {
      start: () => calls.push('caches.start'),
      waitForSync: () => {
        calls.push('caches.waitForSync');
        return Promise.resolve();
      },
      stop: async () => {
        await settle();
        calls.push('caches.stop');
      },
    },
    controller: {
      startWorkers: (signal) => {
        workerSignal = signal;
        calls.push('controller.startWorkers');
      },
      // Slower than the rest: what follows it must wait for the drain.
      stop: async (budgetMs) => {
        await settle();
        await settle();
        calls.push(`controller.stop ${budgetMs}`);
      },
    },
    ...(opts.elect
      ? {
          elector: {
            run: (cb: LeaderCallbacks) => {
              callbacks = cb;
              calls.push('elector.run');
              return new Promise<void>(() => undefined);
            },
            release: async () => {
              await settle();
              calls.push('elector.release');
            },
          },
        }
      : {}),
    servers: [{ close: () => calls.push('probes.close') }, { close: () => calls.push('metrics.close') }],
    idle: { worked: () => calls.push('idle.worked'), stop: () => calls.push('idle.stop') },
    clockSkewMs: () => opts.skewMs,
    exitCodes: { ok: 0, failure: 1 },
    exit: (code) => calls.push(`exit ${code}`),
    onSignal: (sig, handler) => signals.set(sig, handler),
  };
  return { manager: new Manager(parts), calls, lines, signals, workerSignal: () => workerSignal, callbacks: () => callbacks };
}

describe('Manager', () => {
  it('without leader election: starts the caches, handles SIGTERM and SIGINT, and starts the workers once synced', async () => {
    const r = rig({ elect: false });
    await r.manager.run();
    await settle();
    assert.deepEqual([...r.signals.keys()].sort(), ['SIGINT', 'SIGTERM']);
    assert.deepEqual(
      r.calls.filter((c) => c !== 'idle.worked'),
      [
        'caches.start',
        'caches.waitForSync',
        'leader 1',
        'caches.waitForSync',
        'log: caches synced; starting workers',
        'controller.startWorkers',
      ],
    );
    assert.ok(r.calls.includes('idle.worked'), 'the first lists in, the idle collector is told');
    assert.equal(r.workerSignal()?.aborted, false);
  });

  it('with leader election: no worker starts before the lease is held', async () => {
    const r = rig({ elect: true });
    void r.manager.run();
    await settle();
    assert.ok(r.calls.includes('elector.run'));
    assert.equal(r.calls.includes('controller.startWorkers'), false, 'a follower runs no worker');
    const before = r.calls.length;
    await r.callbacks()?.onStartedLeading(new AbortController().signal);
    assert.deepEqual(
      r.calls.slice(before).filter((c) => c !== 'idle.worked'),
      ['leader 1', 'caches.waitForSync', 'log: caches synced; starting workers', 'controller.startWorkers'],
    );
  });

  it('warns when the clock differs from the API server past the bound', async () => {
    const r = rig({ elect: false, skewMs: -(MAX_CLOCK_SKEW_MS + 1) });
    await r.manager.run();
    const warn = r.lines.find((l) => l.level === 40);
    assert.equal(warn?.clockSkewMs, -(MAX_CLOCK_SKEW_MS + 1));
    assert.equal(warn?.boundMs, MAX_CLOCK_SKEW_MS);
    assert.equal(r.lines.find((l) => l.msg === 'caches synced; starting workers')?.clockSkewMs, -(MAX_CLOCK_SKEW_MS + 1));
  });

  it('shuts down in order: workers drained, watches closed, lease released, servers closed, then exit 0', async () => {
    const r = rig({ elect: true });
    void r.manager.run();
    await r.callbacks()?.onStartedLeading(new AbortController().signal);
    const before = r.calls.length;
    r.signals.get('SIGTERM')?.();
    r.signals.get('SIGINT')?.(); // a second signal while stopping changes nothing
    await r.manager.shutdown('SIGTERM');
    while (!r.calls.includes('exit 0')) await settle();
    assert.deepEqual(r.calls.slice(before), [
      'log: shutting down',
      'idle.stop',
      'controller.stop 1234',
      'caches.stop',
      'elector.release',
      'probes.close',
      'metrics.close',
      'leader 0',
      'log: stopped',
      'exit 0',
    ]);
    const line = r.lines.find((l) => l.msg === 'shutting down');
    assert.equal(line?.signal, 'SIGTERM');
    assert.equal(line?.budgetMs, 1234);
    assert.equal(r.workerSignal()?.aborted, true, "the workers' signal is aborted first");
  });

  it('a lost lease exits 1 at once; during a shutdown it changes nothing', async () => {
    const lost = rig({ elect: true });
    void lost.manager.run();
    await settle();
    lost.callbacks()?.onStoppedLeading();
    assert.deepEqual(lost.calls.slice(-2), ['log: lost leadership; exiting', 'exit 1']);
    assert.equal(lost.lines.at(-1)?.level, 50);

    const stopping = rig({ elect: true });
    void stopping.manager.run();
    await settle();
    const done = stopping.manager.shutdown('SIGTERM');
    stopping.callbacks()?.onStoppedLeading();
    await done;
    assert.equal(stopping.calls.includes('exit 1'), false);
    assert.equal(stopping.calls.at(-1), 'exit 0');
  });
});
