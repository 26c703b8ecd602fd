/**
 * parseBindAddress: the forms controller-runtime's bind-address flags take, `0` for disabled, and a
 * refusal that says what is wrong for everything else; listen() reports the port it bound.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { formatBindAddress, listen, parseBindAddress, type BindAddress } from '../../src/runtime/bindAddress.js';

describe('parseBindAddress', () => {
  const good: Array<[string, BindAddress | null]> = [
    [':8080', { port: 8080 }],
    ['127.0.0.1:8443', { host: '127.0.0.1', port: 8443 }],
    ['0.0.0.0:8081', { host: '0.0.0.0', port: 8081 }],
    ['localhost:0', { host: 'localhost', port: 0 }],
    [':0', { port: 0 }],
    ['[::1]:9090', { host: '::1', port: 9090 }],
    ['[::]:8080', { host: '::', port: 8080 }],
    ['metrics.example.internal:65535', { host: 'metrics.example.internal', port: 65535 }],
    ['0', null],
    [' :8080 ', { port: 8080 }],
  ];
  for (const [text, want] of good) {
    it(`${JSON.stringify(text)} → ${JSON.stringify(want)}`, () => {
      assert.deepEqual(parseBindAddress(text), want);
    });
  }

  const bad: Array<[string, RegExp]> = [
    ['8080', /host:port, :port or 0/],
    ['', /host:port, :port or 0/],
    [':', /port from 0 to 65535/],
    [':65536', /port from 0 to 65535/],
    [':http', /port from 0 to 65535/],
    [':-1', /port from 0 to 65535/],
    ['::1:8080', /IPv6 host in brackets/],
    ['[127.0.0.1]:8080', /IPv6 address inside/],
    ['bad host:8080', /IP address or host name/],
  ];
  for (const [text, want] of bad) {
    it(`${JSON.stringify(text)} is refused`, () => {
      assert.throws(() => parseBindAddress(text), want);
    });
  }

  it('formatBindAddress writes what parseBindAddress reads', () => {
    for (const text of [':8080', '127.0.0.1:0', '[::1]:9090', '0']) assert.equal(formatBindAddress(parseBindAddress(text)), text);
  });
});

describe('listen', () => {
  it('port 0: resolves with the port the kernel chose, on the host asked for', async () => {
    const server = createServer();
    try {
      const port = await listen(server, { host: '127.0.0.1', port: 0 });
      assert.ok(port > 0);
      assert.deepEqual(server.address(), { address: '127.0.0.1', family: 'IPv4', port });
    } finally {
      server.close();
    }
  });

  it('a port already taken: rejects with the listen error', async () => {
    const first = createServer();
    const second = createServer();
    try {
      const port = await listen(first, { host: '127.0.0.1', port: 0 });
      await assert.rejects(listen(second, { host: '127.0.0.1', port }), { code: 'EADDRINUSE' });
    } finally {
      first.close();
    }
  });
});
