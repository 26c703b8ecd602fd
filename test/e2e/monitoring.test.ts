/**
 * End to end: the monitoring bundle with real parts. promtool (Debian's prometheus package, from
 * cluster/build.sh) checks and unit-tests the alert rules; a real Prometheus scrapes a running
 * operator, evaluates the same rules, and fires RolloutGuardStalled for the classic stall on the local
 * control plane, labelled with the guard's namespace (not exported_namespace) and the DaemonSet.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { execFile } from 'node:child_process';
import { parse as parseYaml, stringify } from 'yaml';
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

/* eslint-disable @typescript-eslint/no-explicit-any -- parsed YAML */

interface Alert {
  labels: Record<string, string>;
  state: string;
  activeAt: string;
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

  describe('a real Prometheus scraping the operator', () => {
    let ns: string;
    let op: OperatorProcess;
    let prom: ChildProcess | undefined;
    let promPort: number;
    const promLog: string[] = [];

    before(async () => {
      await installCrds();
      const n = await createNamespace('monitoring');
      ns = n.name;
      const pool = await createNodePool(uniqueName('mon'), 3);
      cleanups.push(n.cleanup, pool.cleanup);
      op = await OperatorProcess.start({ namespaces: [ns] });
      cleanups.push(async () => void (await op.kill()));
      promPort = await freePort();
      const config = {
        global: { scrape_interval: '1s', evaluation_interval: '1s' },
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
          severity: firing.labels.severity,
        },
        { ns, guard: 'stalls', ds: 'decoder', state: 'Stalled', severity: 'warning' },
      );
      assert.equal(firing.labels.exported_namespace, undefined);
      const others = (await alerts()).filter((a) => a.labels.alertname !== 'RolloutGuardStalled');
      assert.deepEqual(
        others.map((a) => a.labels.alertname),
        [],
        'the operator is up and leading, its caches alive',
      );
    });
  });
});
