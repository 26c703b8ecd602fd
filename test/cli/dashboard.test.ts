/** The arguments of `rollout-guard dashboard`: loopback and port 3200 by default, kubectl's namespace flags. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DASHBOARD_USAGE, parseDashboardArgs } from '../../src/cli/dashboard.js';
import { UsageError } from '../../src/runtime/config.js';

describe('parseDashboardArgs', () => {
  const cases: Array<[string[], Partial<ReturnType<typeof parseDashboardArgs>>]> = [
    [[], { address: '127.0.0.1', port: 3200, allNamespaces: false }],
    [['-A'], { allNamespaces: true }],
    [['-n', 'gpu'], { namespace: 'gpu', allNamespaces: false }],
    [['--port', '0'], { port: 0 }],
    [['--port=8080', '--address', '0.0.0.0'], { port: 8080, address: '0.0.0.0' }],
    [['--context', 'prod', '--as', 'me'], { context: 'prod', as: 'me' }],
  ];
  for (const [args, want] of cases)
    it(JSON.stringify(args), () => {
      const got = parseDashboardArgs(args);
      for (const [k, v] of Object.entries(want)) assert.deepEqual(got[k as keyof typeof got], v, k);
    });

  const refused: Array<[string[], RegExp]> = [
    [['--port', '70000'], /--port wants a number from 0 to 65535/],
    [['--port', 'x'], /--port wants a number/],
    [['rg/x'], /dashboard takes no target/],
    [['--watch'], /unknown/],
  ];
  for (const [args, msg] of refused)
    it(`refuses ${JSON.stringify(args)}`, () =>
      assert.throws(
        () => parseDashboardArgs(args),
        (e: unknown) => e instanceof UsageError && msg.test(e.message),
      ));

  it('its usage says it is read-only and where it listens', () => {
    assert.match(DASHBOARD_USAGE, /never writes to the cluster/);
    assert.match(DASHBOARD_USAGE, /--address +where to listen \(default 127\.0\.0\.1/);
  });
});
