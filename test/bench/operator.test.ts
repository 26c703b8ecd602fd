import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { againOnFailedConnection } from '../../bench/operator.js';

/** A real server that destroys the socket of its first `drop` requests without answering. */
async function dropping(drop: number): Promise<{ server: Server; url: string; seen: () => number }> {
  let seen = 0;
  const server = createServer((req, res) => {
    seen++;
    if (seen <= drop) req.socket.destroy();
    else res.end('# metrics\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`, seen: () => seen };
}

async function get(url: string): Promise<{ status: number; body: string; error?: string }> {
  try {
    const res = await fetch(url);
    return { status: res.status, body: await res.text() };
  } catch (e) {
    return { status: 0, body: '', error: String((e as { cause?: { code?: string } }).cause?.code ?? e) };
  }
}

describe('bench: againOnFailedConnection', () => {
  it('a connection closed before any answer is tried once more on a new one, and the error is kept', async () => {
    const s = await dropping(1);
    try {
      const retried: string[] = [];
      const r = await againOnFailedConnection(
        () => get(s.url),
        () => true,
        (e) => retried.push(e),
      );
      assert.equal(r.status, 200);
      assert.equal(r.body, '# metrics\n');
      assert.equal(s.seen(), 2);
      assert.equal(retried.length, 1);
      assert.match(retried[0]!, /ECONNRESET|UND_ERR_SOCKET|other side closed/);
    } finally {
      s.server.close();
    }
  });

  it('a second failure is returned, not hidden: one retry only', async () => {
    const s = await dropping(5);
    try {
      const retried: string[] = [];
      const r = await againOnFailedConnection(
        () => get(s.url),
        () => true,
        (e) => retried.push(e),
      );
      assert.equal(r.status, 0);
      assert.equal(s.seen(), 2);
      assert.equal(retried.length, 1);
    } finally {
      s.server.close();
    }
  });

  it('a process that is gone is not asked again', async () => {
    const s = await dropping(1);
    try {
      const retried: string[] = [];
      const r = await againOnFailedConnection(
        () => get(s.url),
        () => false,
        (e) => retried.push(e),
      );
      assert.equal(r.status, 0);
      assert.equal(s.seen(), 1);
      assert.deepEqual(retried, []);
    } finally {
      s.server.close();
    }
  });

  it('an answer, even an error status, is not tried again', async () => {
    const server = createServer((_req, res) => {
      res.statusCode = 503;
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      let calls = 0;
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
      const r = await againOnFailedConnection(
        () => (calls++, get(url)),
        () => true,
        () => assert.fail('no retry'),
      );
      assert.equal(r.status, 503);
      assert.equal(calls, 1);
    } finally {
      server.close();
    }
  });
});
