/**
 * ClockSkew: the estimate of API server time − local time from `Date` headers (one-second resolution,
 * truncated), and an ApiClient feeding it from a real HTTP exchange with a server whose clock is off.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, it } from 'node:test';
import { ClockSkew } from '../../src/k8s/clockSkew.js';
import { clientFor, listenLocal } from '../support/localApi.js';

/** The Date header a server whose clock reads `serverMs` sends. */
const dateAt = (serverMs: number): string => new Date(serverMs).toUTCString();

describe('ClockSkew', () => {
  it('nothing is estimated before a response, or from one without a usable Date', () => {
    const s = new ClockSkew();
    assert.equal(s.estimateMs(), undefined);
    s.sample(1000, 1010, undefined);
    s.sample(1000, 1010, 'not a date');
    assert.equal(s.estimateMs(), undefined);
  });

  it('one response bounds the skew to its second plus the round trip', () => {
    const s = new ClockSkew();
    const local = Date.parse('2026-12-01T10:00:00.250Z');
    // The server is 30 s ahead; it answered 5 ms after we sent.
    s.sample(local, local + 10, dateAt(local + 5 + 30_000));
    const e = s.estimateMs()!;
    assert.ok(Math.abs(e - 30_000) <= 1000, `within the Date header's resolution: ${e}`);
  });

  it('responses at different sub-second phases narrow the estimate well below a second', () => {
    const s = new ClockSkew();
    const skew = -12_345; // the server is 12.345 s behind
    let local = Date.parse('2026-12-01T10:00:00.000Z');
    for (let i = 0; i < 20; i++) {
      local += 1000 + 137; // phases walk through the second
      s.sample(local, local + 4, dateAt(local + 2 + skew));
    }
    const e = s.estimateMs()!;
    assert.ok(Math.abs(e - skew) <= 100, `narrowed: ${e} vs ${skew}`);
  });

  it('a clock step (intervals that no longer overlap) restarts the estimate from the newest response', () => {
    const s = new ClockSkew();
    let local = Date.parse('2026-12-01T10:00:00.000Z');
    for (let i = 0; i < 10; i++) {
      local += 1237;
      s.sample(local, local + 3, dateAt(local + 1));
    }
    assert.ok(Math.abs(s.estimateMs()!) <= 1000);
    // The operator's clock is stepped back a minute (or the server's forward).
    for (let i = 0; i < 10; i++) {
      local += 1237;
      s.sample(local, local + 3, dateAt(local + 1 + 60_000));
    }
    const e = s.estimateMs()!;
    assert.ok(Math.abs(e - 60_000) <= 200, `follows the step: ${e}`);
  });
});

describe('ApiClient feeds ClockSkew from each response', () => {
  it('a server 90 s ahead is estimated at 90 s (a real HTTP exchange; the server sets its own Date header)', async () => {
    const server = http.createServer((_req, res) => {
      res.sendDate = false; // we send our own, skewed
      res.writeHead(200, { 'Content-Type': 'application/json', Date: dateAt(Date.now() + 90_000) });
      res.end('{}');
    });
    await listenLocal(server);
    try {
      const skew = new ClockSkew();
      const client = clientFor(server, { clockSkew: skew });
      for (let i = 0; i < 5; i++) await client.request('GET', '/version');
      const e = skew.estimateMs()!;
      assert.ok(Math.abs(e - 90_000) <= 1000, `estimated ${e}`);
      client.close();
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
