/**
 * The controller's queues: guards and policies each have their own queue and workers. Against a local
 * HTTP server standing in for the API server, holding one RolloutGuardPolicy and nothing else; the
 * caches and reconcilers are assembled as the manager assembles them.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { pino } from 'pino';
import { GROUP, VERSION } from '../../src/api/names.js';
import type { PolicyPorts } from '../../src/reconcile/ports.js';
import { DEFAULTS, type OperatorConfig } from '../../src/runtime/config.js';
import type { Caches } from '../../src/runtime/caches.js';
import type { Controller } from '../../src/runtime/controller.js';
import { assembleController, type Assembly } from '../../src/runtime/manager.js';
import { Metrics } from '../../src/runtime/metrics.js';
import { waitFor } from '../../cluster/wait.js';
import { FakeClock } from '../support/fakeClock.js';
import { clientFor, quietApi, type QuietApi } from '../support/localApi.js';

type Line = Record<string, unknown>;

const POLICY = {
  apiVersion: `${GROUP}/${VERSION}`,
  kind: 'RolloutGuardPolicy',
  metadata: { name: 'gpu-agents', uid: 'p-uid', generation: 1, resourceVersion: '7' },
  spec: {},
};

describe('Controller: one queue per controller', () => {
  let api: QuietApi;
  let controller: Controller | undefined;
  let caches: Caches | undefined;
  let stop: AbortController;

  beforeEach(async () => {
    stop = new AbortController();
    controller = undefined;
    caches = undefined;
    api = await quietApi((url) => (url.pathname.endsWith('/rolloutguardpolicies') ? [POLICY] : []));
  });

  afterEach(async () => {
    stop.abort();
    await controller?.stop(1000);
    await caches?.stop();
    await api.close();
  });

  async function started(policyPorts: PolicyPorts, lines: Line[], metrics: Metrics): Promise<Controller> {
    const config: OperatorConfig = { ...DEFAULTS, identity: 'test', leaseNamespace: 'rollout-guard-system', policies: true, workers: 1 };
    const assembly: Assembly = {
      client: clientFor(api.server),
      // A guard absent from the cache is forgotten without a request: no port is called in these tests.
      writes: {} as Assembly['writes'],
      policyWrites: policyPorts,
      config,
      clock: new FakeClock(Date.parse('2026-01-01T00:00:00Z')),
      metrics,
      log: pino({ level: 'debug' }, { write: (s: string) => lines.push(JSON.parse(s) as Line) }),
    };
    ({ caches, controller } = assembleController(assembly));
    caches.start();
    await caches.waitForSync();
    controller.startWorkers(stop.signal);
    return controller;
  }

  const unused = (): Promise<void> => Promise.reject(new Error('not expected in this test'));
  /** Polling a local fake API: a pass takes milliseconds; the bound only ends a broken run. */
  const QUICK = { timeoutMs: 5_000, intervalMs: 5 };

  it("a policy's failure is logged with the policy's name, never as a guard", async () => {
    const lines: Line[] = [];
    const writes: string[] = [];
    await started(
      {
        createGuard: unused,
        patchGuardSpec: unused,
        deleteGuard: unused,
        readPolicy: () => Promise.reject(new Error('not expected in this test')),
        writeStatus: (p) => {
          writes.push(p.metadata.name);
          return Promise.reject(new Error('status write refused'));
        },
      },
      lines,
      new Metrics(false),
    );
    const failed = await waitFor(() => lines.find((l) => l.msg === 'reconcile failed: retrying with backoff'), {
      ...QUICK,
      describe: 'the failure logged',
    });
    assert.ok(failed, 'the failure is logged');
    assert.equal(failed.policy, 'gpu-agents', 'the key is the bare policy name');
    assert.equal('guard' in failed, false);
    assert.deepEqual(writes, ['gpu-agents']);
  });

  it('a policy pass that hangs does not hold up the guards, even with one worker each', async () => {
    const lines: Line[] = [];
    const metrics = new Metrics(false);
    let policyStarted = false;
    const c = await started(
      {
        createGuard: unused,
        patchGuardSpec: unused,
        deleteGuard: unused,
        readPolicy: () => Promise.reject(new Error('not expected in this test')),
        writeStatus: () => {
          policyStarted = true;
          return new Promise<void>(() => undefined); // never answers
        },
      },
      lines,
      metrics,
    );
    await waitFor(() => policyStarted, { ...QUICK, describe: 'the policy pass started' });
    assert.ok(policyStarted, 'the policy pass is running');
    const passes = async (): Promise<number> =>
      (await metrics.reconcileDuration.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
    const before = await passes();
    c.guardWork.add('team-a/gone');
    await waitFor(async () => (await passes()) > before, { ...QUICK, describe: 'a guard pass while the policy pass hangs' });
    assert.equal(await passes(), before + 1, 'the guard key ran while the policy pass hangs');
    const depth = (await metrics.queueDepth.get()).values.map((v) => v.labels.queue).sort();
    assert.deepEqual(depth, ['guards', 'policies']);
  });
});
