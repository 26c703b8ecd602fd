/**
 * End to end: the monitoring bundle with real parts. promtool (Debian's prometheus package, from
 * cluster/build.sh) checks and unit-tests the alert rules; a real Prometheus scrapes a running
 * operator, evaluates the same rules, and fires RolloutGuardStalled for the classic stall on the local
 * control plane, labelled with the guard's namespace (not exported_namespace) and the DaemonSet.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { execFile } from 'node:child_process';
import { parse as parseYaml, parseAllDocuments, stringify } from 'yaml';
import { freePort } from '../../cluster/ports.js';
import {
  binDir,
  createNamespace,
  createNodePool,
  decoderDaemonSet,
  ensureCluster,
  kubectl,
  uniqueName,
  waitFor,
} from '../support/cluster.js';
import { OperatorProcess, ROOT, apply, guard, installCrds } from '../support/operator.js';

const run = promisify(execFile);
const RULES = resolve(ROOT, 'charts/rollout-guard/files/prometheus-rules.yaml');
const RULE_TESTS = resolve(ROOT, 'test/monitoring/alerts.test.yaml');
const DASHBOARD = resolve(ROOT, 'charts/rollout-guard/files/grafana-dashboard.json');

/** A Grafana dashboard's panels, those inside collapsed rows too, with their queries. */
interface Panel {
  title: string;
  type: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}

/* eslint-disable @typescript-eslint/no-explicit-any -- parsed YAML */

interface Alert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: string;
  activeAt: string;
}

/** One notification as Alertmanager's webhook receiver gets it (version 4 of its payload). */
interface Notification {
  status: string;
  receiver: string;
  alerts: { status: string; labels: Record<string, string>; annotations: Record<string, string> }[];
}

describe('monitoring', () => {
  const cleanups: Array<() => Promise<void>> = [];
  let tmp: string;

  before(async () => {
    await ensureCluster();
    tmp = await mkdtemp(join(tmpdir(), 'rg-monitoring-'));
    cleanups.push(() => rm(tmp, { recursive: true, force: true }));
  });
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it('promtool: the rules are valid and their unit tests pass', async () => {
    const promtool = join(binDir(), 'promtool');
    const check = await run(promtool, ['check', 'rules', RULES]);
    assert.match(check.stdout, /SUCCESS: 6 rules found/);
    await copyFile(RULES, join(tmp, 'rules.yaml'));
    await copyFile(RULE_TESTS, join(tmp, 'alerts.test.yaml'));
    const tested = await run(promtool, ['test', 'rules', join(tmp, 'alerts.test.yaml')]);
    assert.match(tested.stdout, /SUCCESS/);
  });

  it("deploy/monitoring's PrometheusRule carries exactly the chart's rule groups; its PodMonitor scrapes the Deployment's metrics port with honorLabels", async () => {
    const plain = parseYaml(await readFile(RULES, 'utf8')) as { groups: unknown };
    const cr = parseYaml(await readFile(resolve(ROOT, 'deploy/monitoring/prometheusrule.yaml'), 'utf8'));
    assert.equal(cr.kind, 'PrometheusRule');
    assert.deepEqual(cr.spec.groups, plain.groups);
    const pm = parseYaml(await readFile(resolve(ROOT, 'deploy/monitoring/podmonitor.yaml'), 'utf8'));
    const dep = parseYaml(await readFile(resolve(ROOT, 'deploy/deployment.yaml'), 'utf8'));
    const container = dep.spec.template.spec.containers[0];
    assert.ok(
      container.ports.some((p: any) => p.name === pm.spec.podMetricsEndpoints[0].port && p.containerPort === 8080),
      'the PodMonitor names the metrics port',
    );
    assert.equal(pm.spec.podMetricsEndpoints[0].honorLabels, true, 'keeps the guard namespace label as namespace');
    for (const [k, v] of Object.entries(pm.spec.selector.matchLabels as Record<string, string>))
      assert.equal(dep.spec.template.metadata.labels[k], v);
  });

  it("deploy/monitoring's Grafana dashboard is the chart's, in a ConfigMap labelled for Grafana's dashboard sidecar", async () => {
    assert.equal(await readFile(resolve(ROOT, 'deploy/monitoring/grafana-dashboard.json'), 'utf8'), await readFile(DASHBOARD, 'utf8'));
    const built = await run(join(binDir(), 'kubectl'), ['kustomize', resolve(ROOT, 'deploy/monitoring')]);
    const cm = parseAllDocuments(built.stdout)
      .map((d) => d.toJS() as { kind: string; metadata: { labels?: Record<string, string> }; data?: Record<string, string> })
      .find((d) => d.kind === 'ConfigMap');
    assert.equal(cm?.metadata.labels?.grafana_dashboard, '1');
    assert.deepEqual(JSON.parse(cm.data?.['rollout-guard.json'] ?? ''), JSON.parse(await readFile(DASHBOARD, 'utf8')));
  });

  describe('a real Prometheus scraping the operator', () => {
    let ns: string;
    let op: OperatorProcess;
    let prom: ChildProcess | undefined;
    let promPort: number;
    const promLog: string[] = [];
    const amLog: string[] = [];
    /** What Alertmanager delivered to the test's webhook receiver. */
    const delivered: Notification[] = [];

    before(async () => {
      await installCrds();
      const n = await createNamespace('monitoring');
      ns = n.name;
      const pool = await createNodePool(uniqueName('mon'), 3);
      cleanups.push(n.cleanup, pool.cleanup);
      op = await OperatorProcess.start({ namespaces: [ns] });
      cleanups.push(async () => void (await op.kill()));
      // The receiver a page would go to: Alertmanager's webhook, into this test.
      const receiver = createServer((req, res) => {
        let body = '';
        req.on('data', (d: Buffer) => (body += d.toString()));
        req.on('end', () => {
          delivered.push(JSON.parse(body) as Notification);
          res.end();
        });
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      cleanups.push(() => new Promise<void>((r) => receiver.close(() => r())));
      const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`;
      // A real Alertmanager (Debian's package, from cluster/build.sh), alone: no cluster peers.
      const amPort = await freePort();
      const amConfig = {
        route: { receiver: 'test', group_by: ['alertname', 'namespace', 'guard'], group_wait: '1s', group_interval: '5s' },
        receivers: [{ name: 'test', webhook_configs: [{ url: receiverUrl, send_resolved: false }] }],
      };
      await writeFile(join(tmp, 'alertmanager.yml'), stringify(amConfig));
      const am = spawn(
        join(binDir(), 'alertmanager'),
        [
          `--config.file=${join(tmp, 'alertmanager.yml')}`,
          `--storage.path=${join(tmp, 'am-data')}`,
          `--web.listen-address=127.0.0.1:${amPort}`,
          '--cluster.listen-address=',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      am.stderr?.on('data', (d: Buffer) => amLog.push(d.toString()));
      cleanups.push(() => Promise.resolve(void am.kill('SIGKILL')));
      await waitFor(async () => (await fetch(`http://127.0.0.1:${amPort}/-/ready`).catch(() => undefined))?.ok, {
        timeoutMs: 30_000,
        describe: 'alertmanager ready',
      }).catch((e: unknown) => {
        throw new Error(`${e instanceof Error ? e.message : String(e)}\n${amLog.join('')}`);
      });
      promPort = await freePort();
      const config = {
        global: { scrape_interval: '1s', evaluation_interval: '1s' },
        alerting: { alertmanagers: [{ static_configs: [{ targets: [`127.0.0.1:${amPort}`] }] }] },
        rule_files: [join(tmp, 'rules.yaml')],
        scrape_configs: [
          { job_name: 'rollout-guard', honor_labels: true, static_configs: [{ targets: [`127.0.0.1:${String(op.metricsPort)}`] }] },
        ],
      };
      await copyFile(RULES, join(tmp, 'rules.yaml'));
      await writeFile(join(tmp, 'prometheus.yml'), stringify(config));
      prom = spawn(
        join(binDir(), 'prometheus'),
        [
          `--config.file=${join(tmp, 'prometheus.yml')}`,
          `--storage.tsdb.path=${join(tmp, 'data')}`,
          `--web.listen-address=127.0.0.1:${promPort}`,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      prom.stderr?.on('data', (d: Buffer) => promLog.push(d.toString()));
      const p = prom;
      cleanups.push(() => Promise.resolve(void p.kill('SIGKILL')));
      await waitFor(async () => (await fetch(`http://127.0.0.1:${promPort}/-/ready`).catch(() => undefined))?.ok, {
        timeoutMs: 30_000,
        describe: `prometheus ready\n${promLog.join('')}`,
      });
      await apply(decoderDaemonSet({ name: 'decoder', ns, pool: pool.name, image: 'registry.local/decoder:1' }));
      await kubectl(['rollout', 'status', 'ds/decoder', '--timeout=90s'], { ns });
    });

    const alerts = async (): Promise<Alert[]> => {
      const res = await fetch(`http://127.0.0.1:${promPort}/api/v1/alerts`);
      return ((await res.json()) as { data: { alerts: Alert[] } }).data.alerts;
    };

    it('fires RolloutGuardStalled for the classic stall, labelled with the guard, its namespace and the DaemonSet; nothing else fires', async (t) => {
      await apply(guard('stalls', ns, 'decoder', { suspectAfterSeconds: 3, progressDeadlineSeconds: 10 }));
      await waitFor(
        async () =>
          (await alerts()).length === 0 &&
          ((await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=rollout_guard_state`).then((r) => r.json())) as any).data.result
            .length > 0,
        { timeoutMs: 30_000, describe: 'the operator scraped' },
      );
      await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns });
      const changed = Date.now();
      const firing = await waitFor(
        async () => (await alerts()).find((a) => a.labels.alertname === 'RolloutGuardStalled' && a.state === 'firing'),
        { timeoutMs: 60_000, describe: 'RolloutGuardStalled firing' },
      );
      t.diagnostic(
        `RolloutGuardStalled firing ${((Date.now() - changed) / 1000).toFixed(1)} s after the image change (progress deadline 10 s)`,
      );
      assert.deepEqual(
        {
          ns: firing.labels.namespace,
          guard: firing.labels.guard,
          ds: firing.labels.daemonset,
          state: firing.labels.state,
          cause: firing.labels.cause,
          owner: firing.labels.owner,
          severity: firing.labels.severity,
        },
        { ns, guard: 'stalls', ds: 'decoder', state: 'Stalled', cause: 'ImagePullFailure', owner: 'Revision', severity: 'warning' },
      );
      assert.equal(firing.annotations.summary, `DaemonSet ${ns}/decoder rollout is Stalled: ImagePullFailure, the new revision's fault`);
      assert.equal(firing.annotations.runbook_url, 'docs/runbook.md#rolloutguardstalled');
      assert.equal(firing.labels.exported_namespace, undefined);
      const others = (await alerts()).filter((a) => a.labels.alertname !== 'RolloutGuardStalled');
      assert.deepEqual(
        others.map((a) => a.labels.alertname),
        [],
        'the operator is up and leading, its caches alive',
      );
    });

    it('Alertmanager delivers the stall to a receiver: the page names the guard, the cause and whose fault it is', async (t) => {
      const page = await waitFor(
        () =>
          Promise.resolve(
            delivered
              .flatMap((n) => n.alerts.map((a) => ({ receiver: n.receiver, ...a })))
              .find((a) => a.labels.alertname === 'RolloutGuardStalled' && a.labels.guard === 'stalls' && a.status === 'firing'),
          ),
        { timeoutMs: 60_000, describe: `RolloutGuardStalled delivered by Alertmanager\n${amLog.join('')}` },
      );
      t.diagnostic(`delivered: ${page.annotations.summary}`);
      assert.equal(page.receiver, 'test');
      assert.deepEqual(
        { ns: page.labels.namespace, guard: page.labels.guard, cause: page.labels.cause, owner: page.labels.owner },
        { ns, guard: 'stalls', cause: 'ImagePullFailure', owner: 'Revision' },
      );
      assert.equal(page.annotations.summary, `DaemonSet ${ns}/decoder rollout is Stalled: ImagePullFailure, the new revision's fault`);
      assert.match(page.annotations.description ?? '', new RegExp(`kubectl describe rolloutguard -n ${ns}\\s+stalls`));
      assert.equal(page.annotations.runbook_url, 'docs/runbook.md#rolloutguardstalled');
    });

    it('every query of the Grafana dashboard returns data from the Prometheus scraping the stalled rollout', async (t) => {
      const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as { panels: Panel[] };
      const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]).filter((p) => p.type !== 'row');
      assert.ok(panels.length >= 10, `panels: ${panels.length}`);
      const empty: string[] = [];
      for (const panel of panels) {
        assert.ok((panel.targets ?? []).length > 0, `${panel.title}: a query`);
        for (const { expr } of panel.targets ?? []) {
          // Grafana's own interval variable, as it would fill it in for a scrape interval of 1 s.
          const query = expr.replaceAll('$__rate_interval', '1m');
          const res = (await (await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(query)}`)).json()) as {
            status: string;
            data?: { result: unknown[] };
            error?: string;
          };
          assert.equal(res.status, 'success', `${panel.title}: ${query}: ${res.error ?? ''}`);
          if ((res.data?.result.length ?? 0) === 0) empty.push(`${panel.title}: ${query}`);
        }
      }
      t.diagnostic(`${panels.length} panels, every query answered`);
      assert.deepEqual(empty, [], 'queries that returned no series');
    });
  });
});
