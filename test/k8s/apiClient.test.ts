import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiClient, PatchContentType, USER_AGENT, resourceOf, type RequestRecord } from '../../src/k8s/apiClient.js';
import {
  ApiError,
  RequestTimeoutError,
  isAbortError,
  isConflict,
  isForbidden,
  isGone,
  isNotFound,
  isTransient,
} from '../../src/k8s/apiErrors.js';
import type { WatchEvent } from '../../src/k8s/watchStream.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function status(code: number, reason: string, message: string, details?: object): string {
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
    ...(details ? { details } : {}),
  });
}

/** A tiny API server with one route per scenario. */
function handler(seen: Seen[], hung: http.ServerResponse[]): http.RequestListener {
  return (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const url = new URL(req.url ?? '/', 'http://x');
      const p = url.pathname.replace(/^\/prefix/, '');
      const json = (code: number, payload: string, headers: http.OutgoingHttpHeaders = {}): void => {
        res.writeHead(code, { 'Content-Type': 'application/json', ...headers });
        res.end(payload);
      };
      switch (p) {
        case '/api/v1/namespaces/ns1/configmaps/missing':
          return json(404, status(404, 'NotFound', 'configmaps "missing" not found', { name: 'missing', kind: 'configmaps' }));
        case '/api/v1/namespaces/ns1/configmaps/conflict':
          return json(409, status(409, 'Conflict', 'Operation cannot be fulfilled: the object has been modified'));
        case '/api/v1/namespaces/ns1/configmaps/throttled':
          return json(429, status(429, 'TooManyRequests', 'storage is re-initializing', { retryAfterSeconds: 3 }), { 'Retry-After': '7' });
        case '/api/v1/namespaces/ns1/configmaps/throttled-header-only':
          res.writeHead(429, { 'Content-Type': 'text/plain', 'Retry-After': '7' });
          return res.end('Too many requests, please try again later.');
        case '/api/v1/namespaces/ns1/configmaps/proxy-error':
          res.writeHead(502, { 'Content-Type': 'text/html' });
          return res.end('<html>Bad Gateway</html>');
        case '/api/v1/namespaces/ns1/configmaps/forbidden':
          return json(403, status(403, 'Forbidden', 'configmaps is forbidden: User cannot get'));
        case '/api/v1/namespaces/ns1/configmaps/empty':
          res.writeHead(200);
          return res.end();
        case '/api/v1/namespaces/ns1/configmaps/hang':
          hung.push(res); // never answered: the client's timeout must fire
          return;
        case '/api/v1/namespaces/ns1/configmaps/echo':
          return json(
            200,
            JSON.stringify({
              method: req.method,
              query: Object.fromEntries(url.searchParams),
              contentType: req.headers['content-type'] ?? null,
              received: body === '' ? null : JSON.parse(body),
            }),
          );
        case '/api/v1/namespaces/ns1/pods': {
          if (url.searchParams.get('watch') !== 'true') return json(400, status(400, 'BadRequest', 'expected a watch'));
          if (url.searchParams.get('resourceVersion') === 'old')
            return json(410, status(410, 'Expired', 'too old resource version: 1 (5)'));
          if (url.searchParams.get('resourceVersion') === 'denied') return json(403, status(403, 'Forbidden', 'pods is forbidden'));
          res.writeHead(200, { 'Content-Type': 'application/json' });
          if (url.searchParams.get('resourceVersion') === 'forever') {
            hung.push(res);
            return;
          }
          const lines = [
            JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '11' }, note: 'ünïcødé' } }),
            JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: 'a', resourceVersion: '12' } } }),
            JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '13' } } }),
            JSON.stringify({ type: 'DELETED', object: { metadata: { name: 'a', resourceVersion: '14' } } }),
          ].join('\n');
          // Split mid-line and mid-character to exercise the line buffering.
          const buf = Buffer.from(`${lines}\n`, 'utf8');
          const cuts = [7, 40, 41, 90, buf.length];
          let from = 0;
          const writeNext = (): void => {
            const to = cuts.shift();
            if (to === undefined) return void res.end();
            res.write(buf.subarray(from, to));
            from = to;
            setImmediate(writeNext);
          };
          return writeNext();
        }
        default:
          return json(404, status(404, 'NotFound', `no route ${p}`));
      }
    });
  };
}

function kubeConfigFor(server: string, user: object = { name: 'u' }): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server }],
    users: [user],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

describe('ApiClient', { timeout: 10_000 }, () => {
  const seen: Seen[] = [];
  const hung: http.ServerResponse[] = [];
  const server = http.createServer(handler(seen, hung));
  let base = '';
  let client: ApiClient;
  const records: RequestRecord[] = [];

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = ApiClient.fromKubeConfig(kubeConfigFor(base, { name: 'u', token: 'sekret' }), {
      onRequest: (r) => records.push(r),
    });
  });
  after(async () => {
    client.close();
    for (const r of hung) r.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('decodes a 404 Status into ApiError', async () => {
    const err = await client.request('GET', '/api/v1/namespaces/ns1/configmaps/missing').catch((e: unknown) => e);
    assert.ok(err instanceof ApiError);
    assert.equal(err.statusCode, 404);
    assert.equal(err.reason, 'NotFound');
    assert.match(err.message, /configmaps "missing" not found/);
    assert.equal((err.body as { details: { name: string } }).details.name, 'missing');
    assert.equal(isNotFound(err), true);
    assert.equal(isTransient(err), false);
  });

  it('decodes 409 as a conflict (not transient: it needs a re-read)', async () => {
    const err = await client.request('PUT', '/api/v1/namespaces/ns1/configmaps/conflict', { body: {} }).catch((e: unknown) => e);
    assert.equal(isConflict(err), true);
    assert.equal((err as ApiError).reason, 'Conflict');
    assert.equal(isTransient(err), false);
  });

  it('decodes 429: Status details.retryAfterSeconds wins over the header', async () => {
    const err = await client.request('GET', '/api/v1/namespaces/ns1/configmaps/throttled').catch((e: unknown) => e);
    assert.ok(err instanceof ApiError);
    assert.equal(err.statusCode, 429);
    assert.equal(err.reason, 'TooManyRequests');
    assert.equal(err.retryAfterSeconds, 3);
    assert.equal(isTransient(err), true);
  });

  it('decodes 429 with only a Retry-After header and a non-JSON body', async () => {
    const err = await client.request('GET', '/api/v1/namespaces/ns1/configmaps/throttled-header-only').catch((e: unknown) => e);
    assert.ok(err instanceof ApiError);
    assert.equal(err.retryAfterSeconds, 7);
    assert.equal(err.reason, undefined);
    assert.equal(err.body, 'Too many requests, please try again later.');
  });

  it('decodes a non-Status 5xx (e.g. from a proxy) as transient', async () => {
    const err = await client.request('GET', '/api/v1/namespaces/ns1/configmaps/proxy-error').catch((e: unknown) => e);
    assert.ok(err instanceof ApiError);
    assert.equal(err.statusCode, 502);
    assert.match(err.message, /Bad Gateway/);
    assert.equal(isTransient(err), true);
  });

  it('classifies 403 as forbidden', async () => {
    const err = await client.request('GET', '/api/v1/namespaces/ns1/configmaps/forbidden').catch((e: unknown) => e);
    assert.equal(isForbidden(err), true);
    assert.equal(isTransient(err), false);
  });

  it('round-trips a JSON body, sends JSON headers, user agent, bearer token; omits undefined query values', async () => {
    const body = { metadata: { name: 'x', labels: { a: 'b' } }, data: { n: 1, s: 'ü', list: [true, null] } };
    const got = await client.request<{ method: string; query: Record<string, string>; contentType: string; received: unknown }>(
      'POST',
      '/api/v1/namespaces/ns1/configmaps/echo',
      { body, query: { dryRun: 'All', limit: 5, watch: false, skip: undefined } },
    );
    assert.deepEqual(got.received, body);
    assert.equal(got.method, 'POST');
    assert.equal(got.contentType, 'application/json');
    assert.deepEqual(got.query, { dryRun: 'All', limit: '5', watch: 'false' });
    const last = seen.at(-1)!;
    assert.equal(last.headers['user-agent'], USER_AGENT);
    assert.equal(last.headers.accept, 'application/json');
    assert.equal(last.headers.authorization, 'Bearer sekret');
  });

  for (const ct of [PatchContentType.Merge, PatchContentType.StrategicMerge, PatchContentType.Json]) {
    it(`PATCH sends the caller's content type ${ct}`, async () => {
      const patch = ct === PatchContentType.Json ? [{ op: 'replace', path: '/data/a', value: '1' }] : { data: { a: '1' } };
      const got = await client.request<{ method: string; contentType: string; received: unknown }>(
        'PATCH',
        '/api/v1/namespaces/ns1/configmaps/echo',
        { body: patch, contentType: ct },
      );
      assert.equal(got.method, 'PATCH');
      assert.equal(got.contentType, ct);
      assert.deepEqual(got.received, patch);
    });
  }

  it('refuses a PATCH without an explicit content type', async () => {
    await assert.rejects(client.request('PATCH', '/api/v1/namespaces/ns1/configmaps/echo', { body: {} }), TypeError);
  });

  it('returns undefined for an empty 2xx body', async () => {
    assert.equal(await client.request('DELETE', '/api/v1/namespaces/ns1/configmaps/empty'), undefined);
  });

  it('times out a request that gets no answer, as a transient error', async () => {
    const quick = ApiClient.fromKubeConfig(kubeConfigFor(base), { requestTimeoutMs: 100 });
    try {
      const err = await quick.request('GET', '/api/v1/namespaces/ns1/configmaps/hang').catch((e: unknown) => e);
      assert.ok(err instanceof RequestTimeoutError);
      assert.equal(isTransient(err), true);
    } finally {
      quick.close();
    }
  });

  it('aborts a request through its signal; an abort is not transient', async () => {
    const ac = new AbortController();
    const p = client.request('GET', '/api/v1/namespaces/ns1/configmaps/hang', { signal: ac.signal });
    ac.abort();
    const err = await p.catch((e: unknown) => e);
    assert.equal(isAbortError(err), true);
    assert.equal(isTransient(err), false);
  });

  it('reports a refused connection as transient', async () => {
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const dead = ApiClient.fromKubeConfig(kubeConfigFor(`http://127.0.0.1:${port}`));
    try {
      const err = await dead.request('GET', '/api/v1/namespaces').catch((e: unknown) => e);
      assert.equal((err as { code?: string }).code, 'ECONNREFUSED');
      assert.equal(isTransient(err), true);
    } finally {
      dead.close();
    }
  });

  it('keeps a path prefix of the server URL', async () => {
    const prefixed = ApiClient.fromKubeConfig(kubeConfigFor(`${base}/prefix/`));
    try {
      await prefixed.request('GET', '/api/v1/namespaces/ns1/configmaps/echo');
      assert.match(seen.at(-1)!.url, /^\/prefix\/api\/v1\/namespaces\/ns1\/configmaps\/echo$/);
    } finally {
      prefixed.close();
    }
  });

  it('streams a watch split across chunks, in order, and resolves when the server ends it', async () => {
    const events: WatchEvent[] = [];
    await client.watch(
      '/api/v1/namespaces/ns1/pods',
      { resourceVersion: '10', allowWatchBookmarks: true },
      (ev) => events.push(ev),
      new AbortController().signal,
    );
    assert.deepEqual(
      events.map((e) => `${e.type}:${(e.object as { metadata: { resourceVersion: string } }).metadata.resourceVersion}`),
      ['ADDED:11', 'MODIFIED:12', 'BOOKMARK:13', 'DELETED:14'],
    );
    assert.equal((events[0]!.object as { note: string }).note, 'ünïcødé');
    const q = new URL(seen.at(-1)!.url, 'http://x').searchParams;
    assert.equal(q.get('watch'), 'true');
    assert.equal(q.get('resourceVersion'), '10');
    assert.equal(q.get('allowWatchBookmarks'), 'true');
  });

  it('rejects a watch that starts with 410 or 403 with a classified ApiError', async () => {
    const gone = await client
      .watch('/api/v1/namespaces/ns1/pods', { resourceVersion: 'old' }, () => undefined, new AbortController().signal)
      .catch((e: unknown) => e);
    assert.equal(isGone(gone), true);
    assert.equal((gone as ApiError).reason, 'Expired');
    const denied = await client
      .watch('/api/v1/namespaces/ns1/pods', { resourceVersion: 'denied' }, () => undefined, new AbortController().signal)
      .catch((e: unknown) => e);
    assert.equal(isForbidden(denied), true);
  });

  it('aborts an open watch through its signal', async () => {
    const ac = new AbortController();
    const before = hung.length;
    const p = client.watch('/api/v1/namespaces/ns1/pods', { resourceVersion: 'forever' }, () => undefined, ac.signal);
    // Abort once the server holds the stream open (the request has been seen), not after a sleep.
    await waitUntil(() => hung.length > before);
    ac.abort();
    const err = await p.catch((e: unknown) => e);
    assert.equal(isAbortError(err), true);
  });

  it('reports low-cardinality request records for metrics', () => {
    assert.ok(records.some((r) => r.verb === 'GET' && r.resource === 'configmaps' && r.code === '404'));
    assert.ok(records.some((r) => r.verb === 'PATCH' && r.resource === 'configmaps' && r.code === '200'));
    assert.ok(records.some((r) => r.verb === 'WATCH' && r.resource === 'pods' && r.code === '200'));
    assert.ok(
      records.some((r) => r.verb === 'GET' && r.code === 'error'),
      'an aborted request is recorded as error',
    );
    // Latency for every request that ends, failed or not; none for a watch, whose length says nothing.
    for (const r of records.filter((x) => x.verb !== 'WATCH'))
      assert.ok(r.seconds !== undefined && r.seconds >= 0 && r.seconds < 10, `${r.verb} ${r.resource} ${r.code}: ${r.seconds}`);
    assert.ok(records.filter((x) => x.verb === 'WATCH').every((r) => r.seconds === undefined));
  });
});

describe('resourceOf', () => {
  const cases: Array<[string, string]> = [
    ['/api/v1/namespaces/ns/pods', 'pods'],
    ['/api/v1/namespaces/ns/pods/p1', 'pods'],
    ['/api/v1/nodes', 'nodes'],
    ['/api/v1/namespaces/ns', 'namespaces'],
    ['/apis/apps/v1/daemonsets', 'daemonsets'],
    ['/apis/apps/v1/namespaces/ns/daemonsets/ds', 'daemonsets'],
    ['/apis/rollout-guard.io/v1alpha1/namespaces/ns/rolloutguards/g/status', 'rolloutguards/status'],
    ['/healthz', 'other'],
  ];
  for (const [path, want] of cases) it(`${path} → ${want}`, () => assert.equal(resourceOf(path), want));
});

/** Resolves once `pred` holds, re-checking on each turn of the event loop (bounded, so a bug fails, not hangs). */
async function waitUntil(pred: () => boolean, maxTurns = 10_000): Promise<void> {
  for (let i = 0; i < maxTurns; i++) {
    if (pred()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('condition not reached');
}
