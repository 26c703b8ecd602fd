/**
 * The two listeners: the probe server answers /healthz and /readyz and nothing else; the metrics server
 * answers /metrics and nothing else, in the clear or behind the auth filter (a fake reviewer here; the
 * real TokenReview and SubjectAccessReview are in test/e2e/metricsAuth.test.ts, with TLS).
 * loadServingCert refuses a missing or unusable key pair with a usage error that names the files.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { UsageError } from '../../src/runtime/config.js';
import { startProbeServer } from '../../src/runtime/healthServer.js';
import { Metrics } from '../../src/runtime/metrics.js';
import { MetricsAuthFilter } from '../../src/runtime/metricsAuth.js';
import { type AccessReviewer } from '../../src/k8s/metricsAuth.js';
import { loadServingCert, startMetricsServer } from '../../src/runtime/metricsServer.js';

const LOOPBACK = { host: '127.0.0.1', port: 0 };
const log = pino({ level: 'silent' });

async function get(port: number, path: string, init: RequestInit = {}): Promise<{ status: number; body: string; headers: Headers }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, init);
  return { status: res.status, body: await res.text(), headers: res.headers };
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

function metricsWithASample(): Metrics {
  const m = new Metrics(false);
  m.guardState.set({ namespace: 'team-a', guard: 'decoder', state: 'Healthy' }, 1);
  return m;
}

describe('probe server', () => {
  let ready = { ok: false, reason: 'cache of pods in team-a not synced' };
  let probes: { server: Server; port: number };
  before(async () => {
    probes = await startProbeServer(LOOPBACK, { ready: () => ready });
  });
  after(() => close(probes.server));

  it('binds where asked and reports the port the kernel chose', () => {
    assert.ok(probes.port > 0);
    assert.deepEqual(probes.server.address(), { address: '127.0.0.1', family: 'IPv4', port: probes.port });
  });

  it('/healthz: 200 about the process; /readyz follows the readiness checks, with the reason', async () => {
    assert.equal((await get(probes.port, '/healthz')).status, 200);
    assert.deepEqual(await get(probes.port, '/readyz').then((r) => [r.status, r.body]), [503, 'cache of pods in team-a not synced\n']);
    ready = { ok: true, reason: 'ok' };
    assert.deepEqual(await get(probes.port, '/readyz').then((r) => [r.status, r.body]), [200, 'ok\n']);
  });

  it('does not serve /metrics', async () => {
    assert.equal((await get(probes.port, '/metrics')).status, 404);
  });
});

describe('metrics server, in the clear', () => {
  let srv: { server: Server; port: number };
  before(async () => {
    srv = await startMetricsServer({ address: LOOPBACK, metrics: metricsWithASample(), log });
  });
  after(() => close(srv.server));

  it('/metrics: 200 in the Prometheus text format, without credentials', async () => {
    const r = await get(srv.port, '/metrics');
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(r.body, /^rollout_guard_state\{namespace="team-a",guard="decoder",state="Healthy"\} 1$/m);
  });

  it('does not serve the probes; other methods are 405', async () => {
    assert.equal((await get(srv.port, '/healthz')).status, 404);
    assert.equal((await get(srv.port, '/readyz')).status, 404);
    const post = await get(srv.port, '/metrics', { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });

  it('two listeners side by side on ephemeral ports do not collide', async () => {
    const probes = await startProbeServer(LOOPBACK, { ready: () => ({ ok: true, reason: 'ok' }) });
    try {
      assert.notEqual(probes.port, srv.port);
      assert.equal((await get(probes.port, '/readyz')).status, 200);
      assert.equal((await get(srv.port, '/metrics')).status, 200);
    } finally {
      await close(probes.server);
    }
  });
});

describe('metrics server behind the auth filter', () => {
  const reviewer: AccessReviewer = {
    authenticate: (token) =>
      Promise.resolve(
        token === 'reader'
          ? { user: { username: 'sa:reader' } }
          : token === 'other'
            ? { user: { username: 'sa:other' } }
            : { reason: 'invalid' },
      ),
    authorize: (user) => Promise.resolve({ allowed: user.username === 'sa:reader', reason: '' }),
  };
  const auth = new MetricsAuthFilter(reviewer, { allowTtlMs: 60_000, denyTtlMs: 10_000, maxEntries: 8, reviewTimeoutMs: 5_000 });
  let srv: { server: Server; port: number };
  before(async () => {
    srv = await startMetricsServer({ address: LOOPBACK, metrics: metricsWithASample(), log, auth });
  });
  after(() => close(srv.server));

  it('no token: 401 with a Bearer challenge and no metrics', async () => {
    const r = await get(srv.port, '/metrics');
    assert.equal(r.status, 401);
    assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer /);
    assert.doesNotMatch(r.body, /rollout_guard_/);
  });

  it('an invalid token: 401; a user without the grant: 403 naming the user; the reader: 200', async () => {
    assert.equal((await get(srv.port, '/metrics', { headers: { authorization: 'Bearer forged' } })).status, 401);
    const denied = await get(srv.port, '/metrics', { headers: { authorization: 'Bearer other' } });
    assert.equal(denied.status, 403);
    assert.match(denied.body, /"sa:other" may not get \/metrics/);
    assert.doesNotMatch(denied.body, /rollout_guard_/);
    const ok = await get(srv.port, '/metrics', { headers: { authorization: 'Bearer reader' } });
    assert.equal(ok.status, 200);
    assert.match(ok.body, /^rollout_guard_state\{/m);
  });

  it('HEAD is reviewed like GET and carries no body', async () => {
    assert.equal((await get(srv.port, '/metrics', { method: 'HEAD' })).status, 401);
    const r = await get(srv.port, '/metrics', { method: 'HEAD', headers: { authorization: 'Bearer reader' } });
    assert.equal(r.status, 200);
    assert.equal(r.body, '');
  });

  it('paths other than /metrics are 404 without a review', async () => {
    const before = auth.reviews;
    assert.equal((await get(srv.port, '/debug', { headers: { authorization: 'Bearer fresh-token' } })).status, 404);
    assert.equal(auth.reviews, before);
  });
});

describe('loadServingCert', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rg-cert-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('a directory without tls.crt: a usage error naming the file and what the directory must hold', async () => {
    await assert.rejects(loadServingCert(dir), (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.match(e.message, new RegExp(`${join(dir, 'tls.crt')} does not exist; --metrics-cert-dir must hold tls.crt and tls.key`));
      return true;
    });
  });

  it('tls.crt without tls.key: names tls.key', async () => {
    await writeFile(join(dir, 'tls.crt'), 'not a certificate');
    await assert.rejects(
      loadServingCert(dir),
      (e: unknown) => e instanceof UsageError && e.message.includes(`${join(dir, 'tls.key')} does not exist`),
    );
  });

  it('files that are not a key pair: a usage error, not a server that fails every handshake', async () => {
    await writeFile(join(dir, 'tls.key'), 'not a key');
    await assert.rejects(loadServingCert(dir), (e: unknown) => e instanceof UsageError && /are not a usable key pair/.test(e.message));
  });
});
