/**
 * InformerSet: one cache over several namespaces, each listed and watched by its own informer, against a
 * local HTTP server standing in for the API server (it answers lists and holds watches open, silent).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { pino } from 'pino';
import { InformerSet } from '../../src/runtime/informerSet.js';
import { clientFor, listenLocal } from '../support/localApi.js';

type Obj = { metadata: { name: string; namespace?: string; resourceVersion?: string; uid?: string }; owner: string };

const slim = (raw: unknown): Obj => {
  const r = raw as { metadata: { name: string; namespace?: string; resourceVersion?: string }; owner?: string };
  return {
    metadata: {
      name: r.metadata.name,
      ...(r.metadata.namespace ? { namespace: r.metadata.namespace } : {}),
      ...(r.metadata.resourceVersion ? { resourceVersion: r.metadata.resourceVersion } : {}),
    },
    owner: r.owner ?? '',
  };
};

/** The objects the fake API server holds, by namespace. */
const STORE: Record<string, Array<{ metadata: { name: string; namespace: string; resourceVersion: string }; owner: string }>> = {
  a: [{ metadata: { name: 'x', namespace: 'a', resourceVersion: '5' }, owner: 'o1' }],
  b: [
    { metadata: { name: 'x', namespace: 'b', resourceVersion: '5' }, owner: 'o1' },
    { metadata: { name: 'y', namespace: 'b', resourceVersion: '5' }, owner: 'o2' },
  ],
  c: [{ metadata: { name: 'z', namespace: 'c', resourceVersion: '5' }, owner: 'o1' }],
};

describe('InformerSet', () => {
  let server: http.Server;
  let paths: string[];
  let open: http.ServerResponse[];
  const sets: Array<InformerSet<Obj>> = [];

  beforeEach(async () => {
    paths = [];
    open = [];
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
      res.writeHead(200, { 'content-type': 'application/json' });
      if (watch) {
        open.push(res); // held open: nothing changes while the test looks
        return;
      }
      paths.push(url.pathname);
      const ns = /\/namespaces\/([^/]+)\//.exec(url.pathname)?.[1];
      const items = ns ? (STORE[ns] ?? []) : Object.values(STORE).flat();
      res.end(JSON.stringify({ kind: 'ThingList', metadata: { resourceVersion: '5' }, items }));
    });
    await listenLocal(server);
  });

  afterEach(async () => {
    await Promise.all(sets.splice(0).flatMap((s) => s.members.map((m) => m.stop())));
    for (const r of open) r.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  function newSet(namespaces: string[]): InformerSet<Obj> {
    const set = new InformerSet<Obj>(
      clientFor(server),
      pino({ level: 'silent' }),
      namespaces,
      (ns) => ({ name: 'things', listPath: ns ? `/api/v1/namespaces/${ns}/things` : '/api/v1/things', slim }),
      { watchTimeoutSeconds: 300, idleTimeoutMs: 600_000, backoff: { initialMs: 1000, maxMs: 1000 } },
    );
    set.addIndex('owner', (o) => [o.owner]);
    sets.push(set);
    return set;
  }

  async function started(set: InformerSet<Obj>): Promise<void> {
    for (const m of set.members) m.start();
    await Promise.all(set.members.map((m) => m.waitForSync()));
  }

  it('one informer per namespace given, each listing its own namespace', async () => {
    const set = newSet(['a', 'b']);
    assert.deepEqual(set.scopes, ['a', 'b']);
    assert.equal(set.members.length, 2);
    assert.equal(set.synced(), false, 'not synced before listing');
    await started(set);
    assert.equal(set.synced(), true);
    assert.deepEqual(paths.sort(), ['/api/v1/namespaces/a/things', '/api/v1/namespaces/b/things']);
  });

  it('reads across members: get by namespace, list and index over all; a namespace not watched has nothing', async () => {
    const set = newSet(['a', 'b']);
    await started(set);
    assert.equal(set.get('a', 'x')?.metadata.namespace, 'a');
    assert.equal(set.get('b', 'y')?.owner, 'o2');
    assert.equal(set.get('c', 'z'), undefined, 'c is not watched');
    assert.equal(set.get('a', 'y'), undefined);
    assert.deepEqual(
      set
        .list()
        .map((o) => `${o.metadata.namespace}/${o.metadata.name}`)
        .sort(),
      ['a/x', 'b/x', 'b/y'],
    );
    assert.deepEqual(
      set
        .byIndex('owner', 'o1')
        .map((o) => o.metadata.namespace)
        .sort(),
      ['a', 'b'],
    );
    assert.equal(set.requestRelist('c', 'test'), false, 'no member watches c');
  });

  it('with no namespaces, one informer over all of them, scoped ""', async () => {
    const set = newSet([]);
    assert.deepEqual(set.scopes, ['']);
    assert.equal(set.members.length, 1);
    await started(set);
    assert.deepEqual(paths, ['/api/v1/things']);
    assert.equal(set.get('c', 'z')?.owner, 'o1');
    assert.equal(set.byIndex('owner', 'o1').length, 3);
    assert.equal(set.list().length, 4);
  });

  it('handlers reach every member: each member reports its own list', async () => {
    const set = newSet(['a', 'b']);
    const added: string[] = [];
    let relists = 0;
    set.onEvent((e) => added.push(`${e.type} ${e.obj.metadata.namespace}/${e.obj.metadata.name}`));
    set.onRelist(() => relists++);
    await started(set);
    assert.deepEqual(added.sort(), ['add a/x', 'add b/x', 'add b/y']);
    assert.equal(relists, 2);
  });
});
