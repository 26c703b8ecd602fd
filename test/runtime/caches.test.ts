/**
 * The caches by kind: a kind cached from the start is listed with the others; a kind cached on demand
 * (KindDescriptor.cachedOnDemand) is never listed until a guard asks for it, and then its workloads, its
 * controller's Warnings and (where it keeps them) the claims are listed before it counts as listed.
 * Against a local HTTP server standing in for the API server, which records every list it is asked for.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { pino } from 'pino';
import { KINDS, TARGET_KINDS } from '../../src/api/kinds.js';
import { Caches } from '../../src/runtime/caches.js';
import { DEFAULTS, type OperatorConfig } from '../../src/runtime/config.js';
import { waitFor } from '../../cluster/wait.js';
import { FakeClock } from '../support/fakeClock.js';
import { clientFor, quietApi, type QuietApi } from '../support/localApi.js';

/** Polling a local fake API: a list takes milliseconds; the bound only ends a broken run. */
const QUICK = { timeoutMs: 5_000, intervalMs: 5 };

describe('Caches: each kind cached from the start or on demand', () => {
  let api: QuietApi;
  /** Every list asked for: its path, and its field selector when it has one. */
  let lists: string[];
  let caches: Caches | undefined;

  beforeEach(async () => {
    lists = [];
    caches = undefined;
    api = await quietApi((url) => {
      const selector = url.searchParams.get('fieldSelector');
      lists.push(selector ? `${url.pathname}?${selector}` : url.pathname);
      return [];
    });
  });

  afterEach(async () => {
    await caches?.stop();
    await api.close();
  });

  function started(): Caches {
    const config: OperatorConfig = { ...DEFAULTS, identity: 'test', leaseNamespace: 'rollout-guard-system' };
    const c = new Caches({
      client: clientFor(api.server),
      config,
      policies: false,
      clock: new FakeClock(Date.parse('2026-01-01T00:00:00Z')),
      log: pino({ level: 'silent' }),
    });
    c.start();
    return c;
  }

  /** Whether a list of `resource` (a path's last segment), or of Events with `selector`, was asked for. */
  const listed = (resource: string, selector?: string): boolean =>
    lists.some((l) => (selector ? l.endsWith(`/events?${selector}`) : l.split('?')[0]!.endsWith(`/${resource}`)));

  const fromStart = TARGET_KINDS.filter((k) => !KINDS[k].cachedOnDemand);
  const onDemand = TARGET_KINDS.filter((k) => KINDS[k].cachedOnDemand);

  it('lists the kinds cached from the start, and never a kind cached on demand that no guard asked for', async () => {
    assert.ok(fromStart.length > 0 && onDemand.length > 0, `from the start: ${fromStart.join()}; on demand: ${onDemand.join()}`);
    caches = started();
    await caches.waitForSync();
    for (const k of fromStart) {
      assert.ok(listed(KINDS[k].resource), `${k} listed: ${lists.join(', ')}`);
      assert.ok(listed('events', KINDS[k].controllerWarnings), `${k}'s Warnings listed: ${lists.join(', ')}`);
      assert.equal(caches.kindListed(k), true);
    }
    for (const k of onDemand) {
      assert.equal(listed(KINDS[k].resource), false, `${k} never listed: ${lists.join(', ')}`);
      assert.equal(listed('events', KINDS[k].controllerWarnings), false, `${k}'s Warnings never listed`);
    }
    assert.equal(listed('persistentvolumeclaims'), false, 'no claim listed before a kind that keeps claims is asked for');
  });

  it('a kind cached on demand: not listed when first asked, then its workloads, Warnings and claims listed, and then it is', async () => {
    const c = started();
    caches = c;
    await c.waitForSync();
    for (const [i, k] of onDemand.entries()) {
      assert.equal(c.kindListed(k), false, `${k}: asking starts it, it has not listed yet`);
      await waitFor(() => c.kindListed(k), { ...QUICK, describe: `${k} listed` });
      assert.ok(listed(KINDS[k].resource), `${k} listed: ${lists.join(', ')}`);
      assert.ok(listed('events', KINDS[k].controllerWarnings), `${k}'s Warnings listed: ${lists.join(', ')}`);
      // Claims (and ReplicaSets) start with the first kind asked for that needs them, and stay.
      const asked = onDemand.slice(0, i + 1);
      const claims = asked.some((a) => KINDS[a].claims);
      assert.equal(listed('persistentvolumeclaims'), claims, `claims listed once asked for ${asked.join()}: ${claims}`);
      const replicaSets = asked.some((a) => KINDS[a].history === 'ReplicaSets');
      assert.equal(listed('replicasets'), replicaSets, `ReplicaSets listed once asked for ${asked.join()}: ${replicaSets}`);
      assert.deepEqual(c.listedWorkloads(k), []);
      // Asked again: nothing listed anew (started once).
      const before = lists.length;
      c.watchKind(k);
      assert.equal(lists.length, before);
    }
  });
});
