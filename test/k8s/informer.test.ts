import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { ApiClient } from '../../src/k8s/apiClient.js';
import { Informer, type InformerOptions } from '../../src/k8s/informer.js';
import type { InformerEvent } from '../../src/k8s/informerStore.js';

const LIST_PATH = '/apis/example.com/v1/namespaces/ns1/widgets';

interface Widget {
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    uid?: string;
    labels?: Record<string, string>;
    managedFields?: Array<{ manager: string; time: string }>;
  };
  spec: { size: number; owner?: string };
}

interface Request {
  kind: 'list' | 'watch';
  query: URLSearchParams;
}

function statusBody(code: number, reason: string, message: string): object {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code, reason, message };
}

/**
 * An in-memory API server for one namespaced resource with list (paginated), watch (with history from a
 * resourceVersion) and knobs for every fault the informer must survive.
 */
class FakeWidgetServer {
  readonly bus = new EventEmitter();
  readonly requests: Request[] = [];
  private readonly objects = new Map<string, Widget>();
  private readonly history: Array<{ rv: number; type: string; object: Widget }> = [];
  private readonly liveWatches = new Set<http.ServerResponse>();
  private readonly silent = new Set<http.ServerResponse>();
  private rv = 100;
  private server = http.createServer((req, res) => this.handle(req, res));
  /** Next N list requests answer 500. */
  listFailures = 0;
  /** Next N watch requests answer HTTP 410. */
  watchStartGone = 0;
  /** Next N watch requests are accepted and then never sent anything. */
  silentWatches = 0;
  /** Next N list requests that carry a continue token answer 410 Expired. */
  expireContinue = 0;
  /** While true, changes are recorded but not pushed to open watches (an outage from the client's view). */
  paused = false;
  /** Watches from a resourceVersion below this get an in-stream ERROR 410 (history compacted). */
  compactedBelow = 0;

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const w of [...this.liveWatches, ...this.silent]) w.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  currentRv(): string {
    return String(this.rv);
  }

  lists(): Request[] {
    return this.requests.filter((r) => r.kind === 'list');
  }

  watches(): Request[] {
    return this.requests.filter((r) => r.kind === 'watch');
  }

  put(name: string, spec: Widget['spec'], labels?: Record<string, string>, writtenAt?: string): Widget {
    const existed = this.objects.has(name);
    const obj: Widget = {
      metadata: {
        name,
        namespace: 'ns1',
        resourceVersion: String(++this.rv),
        uid: `uid-${name}`,
        ...(labels ? { labels } : {}),
        ...(writtenAt ? { managedFields: [{ manager: 'kubelet', time: writtenAt }] } : {}),
      },
      spec,
    };
    this.objects.set(name, obj);
    this.record(existed ? 'MODIFIED' : 'ADDED', obj);
    return obj;
  }

  remove(name: string): void {
    const obj = this.objects.get(name);
    if (!obj) throw new Error(`no ${name}`);
    this.objects.delete(name);
    this.record('DELETED', { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } });
  }

  /** A bookmark on every open watch; bumps the resourceVersion as the API server's progress would. */
  bookmark(): string {
    const rv = String(++this.rv);
    for (const w of this.liveWatches)
      w.write(`${JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Widget', metadata: { resourceVersion: rv } } })}\n`);
    return rv;
  }

  /** The API server's answer when a watch falls behind compaction mid-stream. */
  sendGoneInStream(): void {
    for (const w of this.liveWatches) {
      w.write(`${JSON.stringify({ type: 'ERROR', object: statusBody(410, 'Expired', 'too old resource version') })}\n`);
    }
  }

  /** Ends every open watch normally (like --min-request-timeout). */
  endWatches(): void {
    for (const w of this.liveWatches) w.end();
    this.liveWatches.clear();
  }

  /** Drops every open watch connection abruptly (API server restart). */
  dropWatches(): void {
    for (const w of this.liveWatches) w.socket?.destroy();
    this.liveWatches.clear();
  }

  openWatchCount(): number {
    return this.liveWatches.size;
  }

  private record(type: string, object: Widget): void {
    const rv = Number(object.metadata.resourceVersion);
    this.history.push({ rv, type, object });
    if (!this.paused) {
      for (const w of this.liveWatches) w.write(`${JSON.stringify({ type, object })}\n`);
    }
    this.bus.emit('change');
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const json = (code: number, body: object): void => {
      res.writeHead(code, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname !== LIST_PATH) return json(404, statusBody(404, 'NotFound', 'no such path'));
    const q = url.searchParams;
    const kind = q.get('watch') === 'true' ? 'watch' : 'list';
    this.requests.push({ kind, query: q });
    this.bus.emit('change');
    if (kind === 'list') return this.list(q, json);

    if (this.watchStartGone > 0) {
      this.watchStartGone--;
      return json(410, statusBody(410, 'Gone', 'too old resource version'));
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.flushHeaders();
    res.on('close', () => {
      this.liveWatches.delete(res);
      this.silent.delete(res);
    });
    if (this.silentWatches > 0) {
      this.silentWatches--;
      this.silent.add(res);
      return;
    }
    const from = Number(q.get('resourceVersion') ?? '0');
    if (from < this.compactedBelow) {
      res.write(`${JSON.stringify({ type: 'ERROR', object: statusBody(410, 'Expired', 'too old resource version') })}\n`);
      this.liveWatches.add(res); // the real server ends it; leave that to the client to prove it reacts to the event
      return;
    }
    for (const h of this.history) if (h.rv > from) res.write(`${JSON.stringify({ type: h.type, object: h.object })}\n`);
    this.liveWatches.add(res);
  }

  private list(q: URLSearchParams, json: (code: number, body: object) => void): void {
    if (this.listFailures > 0) {
      this.listFailures--;
      return json(500, statusBody(500, 'InternalError', 'etcdserver: request timed out'));
    }
    const cont = q.get('continue');
    if (cont && this.expireContinue > 0) {
      this.expireContinue--;
      return json(410, statusBody(410, 'Expired', 'The provided continue parameter is too old'));
    }
    const limit = Number(q.get('limit') ?? '0') || Infinity;
    const all = [...this.objects.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    const offset = cont ? Number(Buffer.from(cont, 'base64').toString()) : 0;
    const items = all.slice(offset, offset + limit);
    const next = offset + items.length < all.length ? Buffer.from(String(offset + items.length)).toString('base64') : undefined;
    json(200, {
      kind: 'WidgetList',
      apiVersion: 'example.com/v1',
      metadata: { resourceVersion: String(this.rv), ...(next ? { continue: next } : {}) },
      items: items.map((o) => ({ ...o, status: { bulky: 'x'.repeat(100) } })),
    });
  }
}

function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

const slimWidget = (raw: Widget): Widget => ({
  metadata: {
    name: raw.metadata.name,
    namespace: raw.metadata.namespace,
    resourceVersion: raw.metadata.resourceVersion,
    uid: raw.metadata.uid,
  },
  spec: { size: raw.spec.size, ...(raw.spec.owner ? { owner: raw.spec.owner } : {}) },
});

interface Harness {
  server: FakeWidgetServer;
  informer: Informer<Widget>;
  events: Array<InformerEvent<Widget>>;
  relists: number;
  /** Resolves when `pred` holds, re-checked on every server request/change and informer event. */
  until: (pred: () => boolean, what: string) => Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function setup(seed: (s: FakeWidgetServer) => void, opts: Partial<InformerOptions<Widget>> = {}): Promise<Harness> {
  const server = new FakeWidgetServer();
  const base = await server.start();
  seed(server);
  const client = ApiClient.fromKubeConfig(kubeConfigFor(base));
  const informer = new Informer<Widget>(
    client,
    {
      name: 'widgets',
      listPath: LIST_PATH,
      slim: slimWidget,
      backoff: { initialMs: 5, maxMs: 20 },
      watchTimeoutSeconds: 60,
      ...opts,
    },
    pino({ level: 'silent' }),
  );
  const h: Harness = {
    server,
    informer,
    events: [],
    relists: 0,
    until: (pred, what) =>
      new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (!pred()) return;
          server.bus.off('change', onChange);
          clearTimeout(guard);
          resolve();
        };
        const onChange = (): void => {
          check();
          // Some state settles only after the event that announced it (e.g. a response being processed).
          setImmediate(check);
        };
        // A safety net so a broken informer fails the test instead of hanging it; never a stand-in for a condition.
        const guard = setTimeout(() => {
          server.bus.off('change', onChange);
          reject(new Error(`timed out waiting for: ${what}`));
        }, 5000);
        server.bus.on('change', onChange);
        check();
      }),
  };
  informer.onEvent((ev) => {
    h.events.push(ev);
    server.bus.emit('change');
  });
  informer.onRelist(() => {
    h.relists++;
    server.bus.emit('change');
  });
  cleanups.push(async () => {
    await informer.stop();
    client.close();
    await server.close();
  });
  return h;
}

const summary = (evs: Array<InformerEvent<Widget>>): string[] => evs.map((e) => `${e.type}:${e.obj.metadata.name}`).sort();

describe('Informer', { timeout: 15_000 }, () => {
  it("reports each added or changed object's last write and its arrival, from watch events only", async () => {
    const delivered: Array<[string, number, number]> = [];
    const h = await setup((s) => s.put('listed', { size: 1 }, undefined, '2026-12-06T10:00:00Z'), {
      onDelivery: (resource, writtenAt, receivedAt) => delivered.push([resource, writtenAt, receivedAt]),
    });
    h.informer.start();
    await h.informer.waitForSync();
    await h.until(() => h.server.openWatchCount() === 1, 'watch open');
    const before = Date.now();
    h.server.put('a', { size: 1 }, undefined, '2026-12-06T10:00:05Z');
    h.server.put('a', { size: 2 }, undefined, '2026-12-06T10:00:09Z');
    h.server.put('plain', { size: 1 });
    h.server.remove('a');
    await h.until(() => h.events.length >= 5, 'the watch events');
    assert.deepEqual(
      delivered.map(([r, w]) => [r, new Date(w).toISOString()]),
      [
        ['widgets', '2026-12-06T10:00:05.000Z'],
        ['widgets', '2026-12-06T10:00:09.000Z'],
      ],
      'not the list, not an object without managedFields, not a delete',
    );
    for (const [, , receivedAt] of delivered) assert.ok(receivedAt >= before && receivedAt <= Date.now(), 'arrival on the wall clock');
    assert.deepEqual(
      h.events.filter((e) => e.writtenAt !== undefined).map((e) => [e.type, e.obj.metadata.name, new Date(e.writtenAt!).toISOString()]),
      [
        ['add', 'a', '2026-12-06T10:00:05.000Z'],
        ['update', 'a', '2026-12-06T10:00:09.000Z'],
      ],
      'the event handlers are given the same stamps, on the events themselves',
    );
  });

  it('lists with pagination, then streams watch events into the cache', async () => {
    const h = await setup(
      (s) => {
        for (const n of ['a', 'b', 'c', 'd', 'e']) s.put(n, { size: 1, owner: n < 'c' ? 'x' : 'y' });
      },
      { pageSize: 2 },
    );
    h.informer.addIndex('owner', (w) => (w.spec.owner ? [w.spec.owner] : []));
    h.informer.start();
    await h.informer.waitForSync();
    assert.equal(h.informer.hasSynced(), true);

    const lists = h.server.lists();
    assert.equal(lists.length, 3, 'five objects in pages of two');
    assert.deepEqual(
      lists.map((r) => r.query.get('limit')),
      ['2', '2', '2'],
    );
    assert.equal(lists[0]!.query.get('continue'), null);
    assert.ok(lists[1]!.query.get('continue'));
    assert.deepEqual(summary(h.events), ['add:a', 'add:b', 'add:c', 'add:d', 'add:e']);
    assert.equal(h.relists, 1);
    assert.deepEqual(
      h.informer
        .byIndex('owner', 'x')
        .map((w) => w.metadata.name)
        .sort(),
      ['a', 'b'],
    );

    // Slimmed and frozen: the bulky status is gone and the shared object cannot be changed.
    const a = h.informer.get('ns1', 'a')!;
    assert.equal((a as unknown as { status?: unknown }).status, undefined);
    assert.throws(() => {
      (a as Widget).spec.size = 99;
    }, TypeError);

    await h.until(() => h.server.openWatchCount() === 1, 'watch open');
    const w = h.server.watches()[0]!.query;
    assert.equal(w.get('resourceVersion'), h.server.currentRv());
    assert.equal(w.get('allowWatchBookmarks'), 'true');
    assert.ok(Number(w.get('timeoutSeconds')) >= 54 && Number(w.get('timeoutSeconds')) <= 66, 'jittered ±10 %');

    h.events.length = 0;
    h.server.put('f', { size: 2, owner: 'x' });
    h.server.put('a', { size: 3, owner: 'y' });
    h.server.remove('b');
    await h.until(() => h.events.length === 3, 'three watch events');
    assert.deepEqual(
      h.events.map((e) => `${e.type}:${e.obj.metadata.name}`),
      ['add:f', 'update:a', 'delete:b'],
    );
    assert.equal(h.events[1]!.old?.spec.size, 1);
    assert.equal(h.events[1]!.obj.spec.size, 3);
    assert.equal(h.informer.get('ns1', 'b'), undefined);
    assert.deepEqual(
      h.informer
        .list('ns1')
        .map((x) => x.metadata.name)
        .sort(),
      ['a', 'c', 'd', 'e', 'f'],
    );
    assert.deepEqual(h.informer.list('other'), []);
    assert.deepEqual(
      h.informer
        .byIndex('owner', 'x')
        .map((x) => x.metadata.name)
        .sort(),
      ['f'],
      'index follows updates and deletes',
    );
    assert.equal(h.informer.stats().objects, 5);
    assert.equal(h.informer.stats().restarts, 0);
    assert.ok(h.informer.stats().lastEventAt !== undefined);
  });

  it('410 on watch start: relists and emits the diff of what changed meanwhile', async () => {
    const h = await setup((s) => {
      s.put('a', { size: 1 });
      s.put('b', { size: 1 });
      s.put('c', { size: 1 });
    });
    h.informer.start();
    await h.informer.waitForSync();
    await h.until(() => h.server.openWatchCount() === 1, 'watch open');

    h.server.paused = true; // the client sees none of these changes on the stream
    h.server.remove('b');
    h.server.put('a', { size: 2 });
    h.server.put('d', { size: 1 });
    h.server.paused = false;
    h.server.watchStartGone = 1;
    h.events.length = 0;
    h.server.endWatches(); // re-watch → 410 → relist

    await h.until(() => h.relists === 2, 'relist');
    assert.deepEqual(summary(h.events), ['add:d', 'delete:b', 'update:a'], 'c is unchanged, so no event for it');
    await h.until(() => h.server.watches().length === 3 && h.server.openWatchCount() === 1, 'watch from the new list');
    assert.equal(h.server.watches()[2]!.query.get('resourceVersion'), h.server.currentRv());
    assert.equal(h.informer.stats().restarts, 1);
  });

  it('in-stream ERROR 410: relists and re-watches from the new resourceVersion', async () => {
    const h = await setup((s) => s.put('a', { size: 1 }));
    h.informer.start();
    await h.informer.waitForSync();
    await h.until(() => h.server.openWatchCount() === 1, 'watch open');

    h.server.sendGoneInStream();
    await h.until(() => h.relists === 2, 'relist after ERROR 410');
    await h.until(() => h.server.watches().length === 2, 're-watch');
    assert.equal(h.server.lists().length, 2);
    assert.equal(h.server.watches()[1]!.query.get('resourceVersion'), h.server.currentRv());
    assert.equal(h.events.filter((e) => e.type !== 'add').length, 0, 'nothing changed, so no diff events');
  });

  it('a watch from a compacted resourceVersion (ERROR 410 right away) relists', async () => {
    const h = await setup((s) => s.put('a', { size: 1 }));
    h.informer.start();
    await h.informer.waitForSync();
    await h.until(() => h.server.openWatchCount() === 1, 'watch open');
    h.server.paused = true;
    h.server.put('a', { size: 5 });
    h.server.compactedBelow = Number(h.server.currentRv()); // the informer's resume point is older than this
    h.server.endWatches();
    await h.until(() => h.relists === 2, 'relist');
    assert.equal(h.informer.get('ns1', 'a')?.spec.size, 5);
  });

  it('a delete during an outage (dropped connection) is caught by the relist diff', async () => {
    const h = await setup((s) => {
      s.put('keep', { size: 1 });
      s.put('gone', { size: 1 });
    });
    h.informer.start();
    await h.informer.waitForSync();
    await h.until(() => h.server.openWatchCount() === 1, 'watch open');

    h.server.paused = true;
    h.server.remove('gone');
    h.server.listFailures = 1; // the API server is still coming back up
    h.server.dropWatches();
    h.server.paused = false;

    await h.until(() => h.relists === 2, 'relist after the outage');
    const deletes = h.events.filter((e) => e.type === 'delete');
    assert.deepEqual(
      deletes.map((e) => e.obj.metadata.name),
      ['gone'],
    );
    assert.equal(h.informer.get('ns1', 'gone'), undefined);
    assert.equal(h.informer.stats().restarts, 2, 'the dropped stream and the failed list');
  });

  it('requestRelist: a watch that stopped delivering is replaced by a fresh list, at most once per interval', async () => {
    const h = await setup((s) => s.put('a', { size: 1 }));
    h.informer.start();
    await h.informer.waitForSync();
    await h.until(() => h.server.openWatchCount() === 1, 'watch open');
    // The stream stays open but delivers nothing: a reader knows "late" exists and cannot see it.
    h.server.paused = true;
    h.server.put('late', { size: 2 });
    assert.equal(h.informer.get('ns1', 'late'), undefined);

    assert.equal(h.informer.requestRelist('test: object missing'), true);
    await h.until(() => h.relists === 2 && h.informer.get('ns1', 'late') !== undefined, 'relisted');
    assert.deepEqual(summary(h.events.filter((e) => e.obj.metadata.name === 'late')), ['add:late']);
    assert.equal(h.informer.stats().restarts, 0, 'a requested relist is not a failure');
    await h.until(() => h.server.watches().length === 2, 're-watching after the list');
    assert.equal(h.informer.requestRelist('test: again at once'), false, 'a second request within the interval is dropped');
    assert.equal(h.server.lists().length, 2);
  });

  it('server ends the stream normally: re-watches from the last resourceVersion, no relist', async () => {
    const h = await setup((s) => s.put('a', { size: 1 }));
    h.informer.start();
    await h.informer.waitForSync();
    await h.until(() => h.server.openWatchCount() === 1, 'watch open');

    const obj = h.server.put('b', { size: 1 });
    await h.until(() => h.events.some((e) => e.obj.metadata.name === 'b'), 'event for b');
    h.server.endWatches();
    await h.until(() => h.server.watches().length === 2, 're-watch');
    assert.equal(h.server.watches()[1]!.query.get('resourceVersion'), obj.metadata.resourceVersion);

    // A bookmark moves the resume point without any object change.
    await h.until(() => h.server.openWatchCount() === 1, 'second watch open');
    // A bookmark emits no event; ending the stream right after it (same connection, so it arrives first) shows
    // where the informer resumes.
    const bookmarkRv = h.server.bookmark();
    h.server.endWatches();
    await h.until(() => h.server.watches().length === 3, 'third watch');
    assert.equal(h.server.watches()[2]!.query.get('resourceVersion'), bookmarkRv);
    assert.equal(h.server.lists().length, 1, 'no relist');
    assert.equal(h.informer.stats().restarts, 0);
    assert.equal(h.informer.stats().earlyEnds, 2, 'both ends came long before the 60 s timeout');
  });

  it('500 on list: backs off and recovers', async () => {
    const h = await setup((s) => {
      s.put('a', { size: 1 });
      s.listFailures = 3;
    });
    h.informer.start();
    await h.informer.waitForSync();
    assert.equal(h.server.lists().length, 4);
    assert.equal(h.informer.stats().restarts, 3);
    assert.deepEqual(summary(h.events), ['add:a']);
  });

  it('silent stream: the watchdog aborts it and re-watches from the same resourceVersion', async () => {
    const h = await setup(
      (s) => {
        s.put('a', { size: 1 });
        s.silentWatches = 1;
      },
      { idleTimeoutMs: 150 },
    );
    h.informer.start();
    await h.informer.waitForSync();
    await h.until(() => h.server.watches().length === 2, 'watchdog re-watch');
    const [first, second] = h.server.watches();
    assert.equal(second!.query.get('resourceVersion'), first!.query.get('resourceVersion'));
    assert.equal(h.server.lists().length, 1, 'a silent stream is not a reason to relist');
    assert.equal(h.informer.stats().restarts, 1);

    // The new stream works.
    await h.until(() => h.server.openWatchCount() === 1, 'second watch open');
    h.server.put('b', { size: 1 });
    await h.until(() => h.informer.get('ns1', 'b') !== undefined, 'event on the new stream');
  });

  it('expired continue token: the list restarts from the first page', async () => {
    const h = await setup(
      (s) => {
        for (const n of ['a', 'b', 'c', 'd', 'e']) s.put(n, { size: 1 });
        s.expireContinue = 1;
      },
      { pageSize: 2 },
    );
    h.informer.start();
    await h.informer.waitForSync();
    const conts = h.server.lists().map((r) => (r.query.get('continue') === null ? 'first' : 'next'));
    assert.deepEqual(conts, ['first', 'next', 'first', 'next', 'next']);
    assert.deepEqual(summary(h.events), ['add:a', 'add:b', 'add:c', 'add:d', 'add:e'], 'no duplicates from the aborted pass');
    assert.equal(h.informer.stats().objects, 5);
    assert.equal(h.informer.stats().restarts, 0);
  });

  it('stop() before sync rejects waitForSync; stop() is idempotent', async () => {
    const h = await setup(
      (s) => {
        s.listFailures = 1_000;
      },
      { backoff: { initialMs: 1_000, maxMs: 1_000 } },
    );
    h.informer.start();
    await h.until(() => h.server.lists().length >= 1, 'first list attempt');
    const waiting = h.informer.waitForSync();
    await h.informer.stop();
    await h.informer.stop();
    await assert.rejects(waiting, /stopped before it synced/);
  });

  it('waitForSync honours an abort signal', async () => {
    const h = await setup(
      (s) => {
        s.listFailures = 1_000;
      },
      { backoff: { initialMs: 1_000, maxMs: 1_000 } },
    );
    h.informer.start();
    const ac = new AbortController();
    const waiting = h.informer.waitForSync(ac.signal);
    ac.abort();
    await assert.rejects(waiting, /aborted/);
  });

  it('a throwing event handler is contained', async () => {
    const h = await setup((s) => s.put('a', { size: 1 }));
    h.informer.onEvent(() => {
      throw new Error('handler bug');
    });
    h.informer.start();
    await h.informer.waitForSync();
    await h.until(() => h.server.openWatchCount() === 1, 'watch open');
    h.server.put('b', { size: 1 });
    await h.until(() => h.informer.get('ns1', 'b') !== undefined, 'b cached despite the throwing handler');
    assert.equal(h.informer.stats().restarts, 0);
  });

  it('rejects addIndex after start', async () => {
    const h = await setup(() => undefined);
    h.informer.start();
    assert.throws(() => h.informer.addIndex('late', () => []), /after start/);
    assert.throws(() => h.informer.byIndex('nope', 'x'), /no index/);
  });
});
