/**
 * End to end: the metrics listener and the probe listener of the real operator process, against the
 * real API server.
 *
 * With `--metrics-secure`, /metrics is served over HTTPS (a self-signed certificate made here with
 * openssl, trusted by the client as its only CA, so the TLS check is real) and every request is
 * decided by a real TokenReview and SubjectAccessReview: no token → 401, the token of a ServiceAccount
 * without the grant → 403, the token of one bound to config/rbac-metrics-auth's reader role → 200 with
 * the operator's metrics. The operator's own identity is the cluster-admin kubeconfig, so the reviews
 * cannot fail for want of its RBAC; the opt-in role that grants them is checked with `kubectl auth
 * can-i`. The probes answer over plain HTTP without credentials on their own port, whichever mode.
 *
 * The RBAC objects of config/rbac-metrics-auth are installed unchanged except for their names (a
 * unique suffix on cluster-scoped ones, ServiceAccounts moved to this suite's namespace), as
 * test/e2e/security.test.ts does, so concurrent suites cannot collide with them.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { createNamespace, ensureCluster, kubeconfigPath, kubectl, uniqueName, waitFor } from '../support/cluster.js';
import { OperatorProcess, ROOT, apply, installCrds } from '../support/operator.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- rendered manifests are untyped YAML */
type Obj = Record<string, any>;

/** Label on the cluster-scoped objects this suite creates, for cleanup. */
const TEST_LABEL = 'rollout-guard.dev/metrics-auth-test';
const INSTALL_NS = 'rollout-guard-system';

/** One HTTPS request that trusts only `ca`; the status and body, or the error's message as `error`. */
function httpsGet(port: number, path: string, ca: Buffer, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((done, fail) => {
    const req = https.get(
      { host: '127.0.0.1', port, path, ca, headers: token === undefined ? {} : { authorization: `Bearer ${token}` }, timeout: 15_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => done({ status: res.statusCode ?? 0, body }));
        res.on('error', fail);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', fail);
  });
}

async function plainGet(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

/** Sum of the samples of `name` whose labels include every `labels` pair, from Prometheus text. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const head = line.slice(0, line.lastIndexOf(' '));
    if (Object.entries(labels).every(([k, v]) => head.includes(`${k}="${v}"`))) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** config/rbac-metrics-auth's objects with unique names: cluster-scoped ones suffixed, SAs moved to `ns`. */
async function relocatedMetricsRbac(ns: string, suffix: string): Promise<Obj[]> {
  const { stdout } = await kubectl(['kustomize', resolve(ROOT, 'config/rbac-metrics-auth')]);
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as Obj)
    .filter(Boolean)
    .map((d) => {
      const o = structuredClone(d);
      assert.ok((o.kind as string).startsWith('Cluster'), `${o.kind}/${o.metadata.name}: config/rbac-metrics-auth is cluster-scoped`);
      o.metadata.labels = { ...o.metadata.labels, [TEST_LABEL]: suffix };
      o.metadata.name = `${o.metadata.name}-${suffix}`;
      if (o.roleRef?.kind === 'ClusterRole') o.roleRef.name = `${o.roleRef.name}-${suffix}`;
      for (const s of (o.subjects ?? []) as Obj[]) {
        assert.equal(s.namespace, INSTALL_NS);
        s.namespace = ns;
      }
      return o;
    });
}

async function canI(user: string, args: readonly string[]): Promise<boolean> {
  const res = await kubectl(['auth', 'can-i', ...args, `--as=${user}`], { allowFail: true });
  return res.stdout.trim() === 'yes';
}

describe('metrics and probe listeners (end to end)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  const procs: OperatorProcess[] = [];
  const suffix = uniqueName('mauth').replace(/^mauth-/, 'mauth');
  let ns: string;
  let certDir: string;
  let ca: Buffer;

  before(async () => {
    await ensureCluster();
    await installCrds();
    const n = await createNamespace('metrics-auth');
    ns = n.name;
    cleanups.push(n.cleanup);
    cleanups.push(async () => {
      await kubectl(['delete', 'clusterrole,clusterrolebinding', '-l', `${TEST_LABEL}=${suffix}`, '--ignore-not-found']);
    });
    certDir = await mkdtemp(join(tmpdir(), 'rg-metrics-cert-'));
    cleanups.push(() => rm(certDir, { recursive: true, force: true }));
    // A serving certificate for 127.0.0.1, self-signed: the client below trusts exactly this one.
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=rollout-guard-metrics',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      join(certDir, 'tls.key'),
      '-out',
      join(certDir, 'tls.crt'),
    ]);
    ca = await readFile(join(certDir, 'tls.crt'));
  });

  after(async () => {
    for (const p of procs) await p.kill();
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  describe('--metrics-secure', () => {
    let op: OperatorProcess;
    let metricsPort: number;
    let readerToken: string;
    let strangerToken: string;

    before(async () => {
      // reader: bound to the reader role; stranger: a ServiceAccount with no grant at all; rollout-guard:
      // the operator's name, bound by config/rbac-metrics-auth's own binding (moved here).
      for (const sa of ['reader', 'stranger', 'rollout-guard']) await kubectl(['create', 'serviceaccount', sa], { ns });
      const rbac = await relocatedMetricsRbac(ns, suffix);
      const readerRole = rbac.find((o) => o.kind === 'ClusterRole' && (o.rules as Obj[]).some((r) => r.nonResourceURLs));
      assert.ok(readerRole, 'config/rbac-metrics-auth has a reader role');
      await apply({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          ...rbac,
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'ClusterRoleBinding',
            metadata: { name: `metrics-reader-${suffix}`, labels: { [TEST_LABEL]: suffix } },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: readerRole.metadata.name },
            subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: ns }],
          },
        ],
      });
      // RBAC reaches the authorizer through its informers: wait until the grants are in effect.
      await waitFor(
        async () =>
          (await canI(`system:serviceaccount:${ns}:reader`, ['get', '/metrics'])) &&
          (await canI(`system:serviceaccount:${ns}:rollout-guard`, ['create', 'tokenreviews.authentication.k8s.io'])),
        { timeoutMs: 30_000, describe: 'the metrics RBAC in effect' },
      );
      readerToken = (await kubectl(['create', 'token', 'reader', '--duration=10m'], { ns })).stdout.trim();
      strangerToken = (await kubectl(['create', 'token', 'stranger', '--duration=10m'], { ns })).stdout.trim();
      op = await OperatorProcess.start({ namespaces: [ns], extraArgs: ['--metrics-secure', `--metrics-cert-dir=${certDir}`] });
      procs.push(op);
      assert.equal(typeof op.metricsPort, 'number', "the 'starting' line names the metrics port");
      metricsPort = op.metricsPort as number;
      assert.notEqual(metricsPort, op.probePort);
      const started = op.jsonLogs().find((l) => l.msg === 'starting');
      assert.equal(started?.metricsPort, metricsPort, "the 'starting' line names the metrics port the operator was given");
      assert.equal(started?.metricsSecure, true);
    });

    it('config/rbac-metrics-auth: the operator may create TokenReviews and SubjectAccessReviews, and nothing more from it', async () => {
      const sa = `system:serviceaccount:${ns}:rollout-guard`;
      assert.ok(await canI(sa, ['create', 'tokenreviews.authentication.k8s.io']));
      assert.ok(await canI(sa, ['create', 'subjectaccessreviews.authorization.k8s.io']));
      assert.equal(await canI(sa, ['get', '/metrics']), false, 'the operator is not itself a reader');
      assert.equal(await canI(sa, ['list', 'secrets', '-A']), false);
      assert.equal(await canI(`system:serviceaccount:${ns}:stranger`, ['get', '/metrics']), false);
    });

    it('no token: 401, and no metrics', async () => {
      const r = await httpsGet(metricsPort, '/metrics', ca);
      assert.equal(r.status, 401);
      assert.doesNotMatch(r.body, /rollout_guard_/);
    });

    it('a token the API server did not issue: 401', async () => {
      assert.equal((await httpsGet(metricsPort, '/metrics', ca, 'not-a-real-token')).status, 401);
    });

    it('the token of a ServiceAccount without get /metrics: 403', async () => {
      const r = await httpsGet(metricsPort, '/metrics', ca, strangerToken);
      assert.equal(r.status, 403);
      assert.match(r.body, new RegExp(`system:serviceaccount:${ns}:stranger`));
      assert.doesNotMatch(r.body, /rollout_guard_/);
    });

    it('the token of a ServiceAccount bound to the reader role: 200 with the rollout_guard_ metrics; repeated scrapes are not reviewed again', async () => {
      const first = await httpsGet(metricsPort, '/metrics', ca, readerToken);
      assert.equal(first.status, 200, first.body);
      assert.match(first.body, /^rollout_guard_informer_objects\{/m);
      assert.match(first.body, /^# TYPE rollout_guard_api_requests_total counter$/m);
      // The reviews are the operator's own API requests, counted like any other.
      const reviews = (text: string) => sample(text, 'rollout_guard_api_requests_total', { verb: 'POST', resource: 'tokenreviews' });
      const before = reviews(first.body);
      assert.ok(before >= 1, 'the TokenReviews made so far are counted');
      let last = first;
      for (let i = 0; i < 3; i++) {
        last = await httpsGet(metricsPort, '/metrics', ca, readerToken);
        assert.equal(last.status, 200);
      }
      assert.equal(reviews(last.body), before, 'three more scrapes with the same token: no TokenReview (cached)');
    });

    it('plain HTTP to the metrics port serves nothing', async () => {
      const r = await plainGet(metricsPort, '/metrics').catch(() => ({ status: 0, body: '' }));
      assert.notEqual(r.status, 200);
      assert.doesNotMatch(r.body, /rollout_guard_/);
    });

    it('/healthz and /readyz answer on the probe port over plain HTTP without credentials; /metrics is not there', async () => {
      const port = op.probePort;
      assert.deepEqual(await plainGet(port, '/healthz'), { status: 200, body: 'ok\n' });
      assert.equal((await plainGet(port, '/readyz')).status, 200);
      const m = await plainGet(port, '/metrics');
      assert.equal(m.status, 404);
      assert.doesNotMatch(m.body, /rollout_guard_/);
    });
  });

  describe('default flags (metrics in the clear)', () => {
    let op: OperatorProcess;

    before(async () => {
      op = await OperatorProcess.start({ namespaces: [ns] });
      procs.push(op);
    });

    it("the 'starting' line names two different ports", () => {
      assert.equal(typeof op.metricsPort, 'number');
      assert.equal(typeof op.probePort, 'number');
      assert.notEqual(op.metricsPort, op.probePort);
      const started = op.jsonLogs().find((l) => l.msg === 'starting');
      assert.equal(started?.metricsSecure, false);
      assert.equal(started?.metricsPort, op.metricsPort, 'the metrics port it was given');
      assert.equal(started?.probePort, op.probePort, 'the probe port it was given');
    });

    it('/metrics is served on the metrics port without credentials, and not on the probe port', async () => {
      const m = await plainGet(op.metricsPort as number, '/metrics');
      assert.equal(m.status, 200);
      assert.match(m.body, /^rollout_guard_informer_objects\{/m);
      const p = await plainGet(op.probePort, '/metrics');
      assert.equal(p.status, 404);
      assert.doesNotMatch(p.body, /rollout_guard_/);
    });

    it('the probes are served on the probe port, and not on the metrics port', async () => {
      assert.equal((await plainGet(op.probePort, '/healthz')).status, 200);
      assert.equal((await plainGet(op.probePort, '/readyz')).status, 200);
      assert.equal((await plainGet(op.metricsPort as number, '/healthz')).status, 404);
      assert.equal((await plainGet(op.metricsPort as number, '/readyz')).status, 404);
    });
  });

  describe('refused at start', () => {
    /** Runs `rollout-guard run` with `args` until it exits; its exit code and what it printed. */
    function runOperator(args: string[]): Promise<{ code: number | null; output: string }> {
      return new Promise((done) => {
        const child = spawn(
          process.execPath,
          [resolve(ROOT, 'dist/src/main.js'), 'run', `--kubeconfig=${kubeconfigPath()}`, '--leader-elect=false', ...args],
          {
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        let output = '';
        child.stdout.on('data', (d: Buffer) => (output += d.toString()));
        child.stderr.on('data', (d: Buffer) => (output += d.toString()));
        // An operator that started anyway would never exit on its own: stop it so the assertion can say so.
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.on('exit', (code) => {
          clearTimeout(timer);
          done({ code, output });
        });
      });
    }

    it('--metrics-secure without --metrics-cert-dir: exit 2 with one usage error', async () => {
      const r = await runOperator(['--metrics-secure', '--metrics-bind-address=127.0.0.1:0', '--health-probe-bind-address=127.0.0.1:0']);
      assert.equal(r.code, 2, r.output);
      assert.match(r.output, /^rollout-guard: --metrics-secure needs --metrics-cert-dir, a directory with tls\.crt and tls\.key/m);
      assert.doesNotMatch(r.output, /"msg":"starting"/);
    });

    it('--metrics-secure with a directory lacking the certificate: exit 2 naming the missing file', async () => {
      const empty = await mkdtemp(join(tmpdir(), 'rg-metrics-nocert-'));
      try {
        const r = await runOperator([
          '--metrics-secure',
          `--metrics-cert-dir=${empty}`,
          '--metrics-bind-address=127.0.0.1:0',
          '--health-probe-bind-address=127.0.0.1:0',
        ]);
        assert.equal(r.code, 2, r.output);
        assert.match(r.output, new RegExp(`^rollout-guard: --metrics-secure: ${join(empty, 'tls.crt')} does not exist`, 'm'));
        assert.equal(r.output.match(/^rollout-guard: /gm)?.length, 1, 'one error, said once');
        assert.doesNotMatch(r.output, /"msg":"starting"/);
      } finally {
        await rm(empty, { recursive: true, force: true });
      }
    });
  });
});
