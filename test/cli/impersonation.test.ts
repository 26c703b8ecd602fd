/**
 * kubectl's `--as` and `--as-group` on every command: parsed by the one parser, refused as kubectl
 * refuses groups without a user, and sent as the API server's impersonation headers on every request.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { CONNECTION_FLAGS, connectionOf, parseArgs } from '../../src/cli/args.js';
import { parseCheckArgs } from '../../src/cli/check.js';
import { parseGetArgs } from '../../src/cli/get.js';
import { parseListArgs } from '../../src/cli/list.js';
import { parseUndoArgs } from '../../src/cli/undo.js';
import { ApiClient, impersonationHeaders } from '../../src/k8s/apiClient.js';
import { UsageError } from '../../src/runtime/config.js';

describe('--as and --as-group', () => {
  it('every command takes them; --as-group repeats', () => {
    const flags = ['--as', 'alice', '--as-group', 'dev', '--as-group=ops'];
    const want = { as: 'alice', asGroups: ['dev', 'ops'] };
    assert.deepEqual({ as: parseGetArgs(['rg/x', ...flags]).as, asGroups: parseGetArgs(['rg/x', ...flags]).asGroups }, want);
    assert.equal(parseCheckArgs(['ds/x', ...flags]).as, 'alice');
    assert.deepEqual(parseListArgs(flags).asGroups, ['dev', 'ops']);
    assert.deepEqual(parseUndoArgs(['rg/x', '--as=system:serviceaccount:ns:sa']).as, 'system:serviceaccount:ns:sa');
  });

  it('groups without a user are refused, as kubectl refuses them', () => {
    assert.throws(
      () => connectionOf(parseArgs(['--as-group', 'dev'], CONNECTION_FLAGS).flags),
      (e: unknown) => e instanceof UsageError && /--as-group .* --as/.test(e.message),
    );
  });

  it('absent, they are left out', () => {
    assert.deepEqual(connectionOf(parseArgs(['--context', 'kind'], CONNECTION_FLAGS).flags), { context: 'kind' });
  });
});

describe('impersonationHeaders', () => {
  it('Impersonate-User, and Impersonate-Group per group; nothing without a user', () => {
    assert.deepEqual(impersonationHeaders({ as: 'alice', asGroups: ['dev', 'ops'] }), {
      'Impersonate-User': 'alice',
      'Impersonate-Group': ['dev', 'ops'],
    });
    assert.deepEqual(impersonationHeaders({ as: 'alice' }), { 'Impersonate-User': 'alice' });
    assert.deepEqual(impersonationHeaders({ asGroups: ['dev'] }), {});
    assert.deepEqual(impersonationHeaders(undefined), {});
  });

  it('are on the wire of every request, over the kubeconfig user’s own', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.headers);
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const client = new ApiClient(
      `http://127.0.0.1:${port}`,
      (o) => {
        o.headers = { ...o.headers, Authorization: 'Bearer t', 'Impersonate-User': 'from-kubeconfig' };
        return Promise.resolve();
      },
      { impersonate: { as: 'alice', asGroups: ['dev', 'ops'] } },
    );
    try {
      await client.request('GET', '/api/v1/namespaces');
      await client.request('GET', '/api/v1/nodes');
    } finally {
      client.close();
      server.close();
    }
    assert.equal(seen.length, 2);
    for (const h of seen) {
      assert.equal(h['impersonate-user'], 'alice');
      // node joins repeated request headers with ", " when it reads them.
      assert.equal(h['impersonate-group'], 'dev, ops');
      assert.equal(h.authorization, 'Bearer t');
    }
  });
});
