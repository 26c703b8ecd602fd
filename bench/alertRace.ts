/**
 * `npm run bench -- --alert-race`: how soon a stalled DaemonSet rollout is alerted on, measured with real
 * parts rather than computed. One Prometheus (Debian's package, from cluster/build.sh) scrapes
 * kube-state-metrics (built from Go modules by bench/ksm/build.sh) and rollout-guard, every 30 s with
 * rules evaluated every 30 s (kube-prometheus's defaults), and evaluates both:
 *
 * - kubernetes-mixin's `KubeDaemonSetRolloutStuck` (apps alerts; the expression below is the mixin's,
 *   with its default `job="kube-state-metrics"` selector): some counter differs from desired while
 *   `updated_number_scheduled` has not changed for 5 minutes, `for: 15m`;
 * - rollout-guard's `RolloutGuardStalled` (charts/rollout-guard/files/prometheus-rules.yaml), for a guard
 *   with the defaults (progressDeadlineSeconds 600) and one with a 120 s deadline.
 *
 * Two DaemonSets, one per guard (two guards on one DaemonSet would be a Conflict), each the classic
 * stall: three kwok nodes, maxUnavailable 1, the new image cannot be pulled; both changed at once.
 * The run lasts until both alerts fire (about 20 minutes), so it is a bench mode, never part of CI.
 * Output: the fire times after the image change, on stdout and in `<out>/<date>-alert-race.json`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile, copyFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { up } from '../cluster/controlPlane.js';
import { kubectlRunner, waitForCrdsEstablished } from '../cluster/kubectl.js';
import { daemonSetManifest, rolloutGuardManifest } from '../cluster/manifests.js';
import { createNamespace } from '../cluster/namespaces.js';
import { POOL_LABEL, createNodes, waitForNodesReady } from '../cluster/nodes.js';
import { freePort } from '../cluster/ports.js';
import { waitFor } from '../cluster/wait.js';
import { BenchOperator, ROOT } from './operator.js';

const run = promisify(execFile);

/** kubernetes-mixin's KubeDaemonSetRolloutStuck, with its default kube-state-metrics selector. */
export const ROLLOUT_STUCK = {
  alert: 'KubeDaemonSetRolloutStuck',
  expr: `(
  (
    kube_daemonset_status_current_number_scheduled{job="kube-state-metrics"}
      !=
    kube_daemonset_status_desired_number_scheduled{job="kube-state-metrics"}
  ) or (
    kube_daemonset_status_number_misscheduled{job="kube-state-metrics"}
      !=
    0
  ) or (
    kube_daemonset_status_updated_number_scheduled{job="kube-state-metrics"}
      !=
    kube_daemonset_status_desired_number_scheduled{job="kube-state-metrics"}
  ) or (
    kube_daemonset_status_number_available{job="kube-state-metrics"}
      !=
    kube_daemonset_status_desired_number_scheduled{job="kube-state-metrics"}
  )
) and (
  changes(kube_daemonset_status_updated_number_scheduled{job="kube-state-metrics"}[5m])
    ==
  0
)`,
  for: '15m',
  labels: { severity: 'warning' },
} as const;

/** kube-prometheus's scrape and evaluation intervals. */
const INTERVAL = '30s';

interface Alert {
  labels: Record<string, string>;
  state: string;
  activeAt: string;
}

export interface AlertRaceResult {
  startedAt: string;
  host: string;
  intervals: string;
  /** Seconds from the image change to each alert firing (undefined: it did not fire within the run). */
  firedAfterSeconds: { kubeDaemonSetRolloutStuck?: number; rolloutGuardStalledDefault?: number; rolloutGuardStalled120s?: number };
  /** Seconds from the image change to each guard's status turning Stalled. */
  stalledAfterSeconds: { default?: number; deadline120s?: number };
  versions: { prometheus: string; kubeStateMetrics: string };
}

function daemonSet(name: string, ns: string, pool: string, image: string): Record<string, unknown> {
  return daemonSetManifest({
    name,
    namespace: ns,
    nodeSelector: { [POOL_LABEL]: pool },
    container: { name: 'agent', image, requests: { cpu: '100m', memory: '64Mi' } },
  });
}

function guard(name: string, ns: string, spec: Record<string, unknown>): Record<string, unknown> {
  return rolloutGuardManifest({ name, namespace: ns, spec });
}

/** The two DaemonSets, each guarded by a guard of the same name. */
const GUARDED = [
  { name: 'agent-defaults', spec: {}, key: 'default' },
  { name: 'agent-120s', spec: { progressDeadlineSeconds: 120, suspectAfterSeconds: 30 }, key: 'deadline120s' },
] as const;

export async function alertRace(opts: { out: string; log: (line: string) => void }): Promise<AlertRaceResult> {
  const { log } = opts;
  const procs: ChildProcess[] = [];
  let op: BenchOperator | undefined;
  // Interrupted (the run takes ~20 min): kube-state-metrics and Prometheus must not outlive the bench.
  const onSignal = (): void => {
    for (const p of procs) p.kill('SIGKILL');
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const tmp = await mkdtemp(join(tmpdir(), 'rg-alert-race-'));
  const { kubeconfig, binDir } = await up({ log, nodes: 0 });
  const kubectl = kubectlRunner(binDir, kubeconfig);
  const ksm = (await run('bash', [resolve(ROOT, 'bench/ksm/build.sh')], { maxBuffer: 1 << 24 })).stdout.trim().split('\n').at(-1)!;
  const suffix = Date.now().toString(36);
  const ns = `alert-race-${suffix}`;
  const pool = `race-${suffix}`;
  try {
    await kubectl(['apply', '--server-side', '--force-conflicts', '-k', resolve(ROOT, 'config/crd')]);
    await waitForCrdsEstablished(kubectl, ['rolloutguards.rolloutguard.dev']);
    const nodes = [0, 1, 2].map((i) => `${pool}-${i}`);
    await createNodes(
      kubectl,
      nodes.map((name) => ({ name, labels: { 'rollout-guard.dev/pool': pool } })),
    );
    await waitForNodesReady(kubectl, nodes, { timeoutMs: 120_000 });
    await createNamespace(kubectl, ns);
    const applyObj = async (o: unknown): Promise<void> => {
      const f = join(tmp, `obj-${Math.random().toString(36).slice(2)}.yaml`);
      await writeFile(f, stringify(o));
      await kubectl(['apply', '-f', f]);
    };
    for (const g of GUARDED) await applyObj(daemonSet(g.name, ns, pool, 'registry.local/agent:1'));
    for (const g of GUARDED) await kubectl(['rollout', 'status', `ds/${g.name}`, '-n', ns, '--timeout=120s']);

    op = await BenchOperator.start(kubeconfig, [ns]);
    for (const g of GUARDED) await applyObj(guard(g.name, ns, g.spec));

    const ksmPort = await freePort();
    const ksmTelemetry = await freePort();
    const k = spawn(
      ksm,
      [
        `--kubeconfig=${kubeconfig}`,
        '--host=127.0.0.1',
        `--port=${ksmPort}`,
        '--telemetry-host=127.0.0.1',
        `--telemetry-port=${ksmTelemetry}`,
        '--resources=daemonsets',
        `--namespaces=${ns}`,
      ],
      { stdio: 'ignore' },
    );
    procs.push(k);
    // The binary's directory is named for the version bench/ksm/go.mod pins (see bench/ksm/build.sh).
    const ksmVersion = /kube-state-metrics-(v[^/]+)\//.exec(ksm)?.[1] ?? '?';

    const rules = { groups: [{ name: 'kubernetes-apps', rules: [ROLLOUT_STUCK] }] };
    await writeFile(join(tmp, 'mixin.yaml'), stringify(rules));
    await copyFile(resolve(ROOT, 'charts/rollout-guard/files/prometheus-rules.yaml'), join(tmp, 'rollout-guard.yaml'));
    const promPort = await freePort();
    await writeFile(
      join(tmp, 'prometheus.yml'),
      stringify({
        global: { scrape_interval: INTERVAL, evaluation_interval: INTERVAL },
        rule_files: [join(tmp, 'mixin.yaml'), join(tmp, 'rollout-guard.yaml')],
        scrape_configs: [
          { job_name: 'kube-state-metrics', honor_labels: true, static_configs: [{ targets: [`127.0.0.1:${ksmPort}`] }] },
          { job_name: 'rollout-guard', honor_labels: true, static_configs: [{ targets: [`127.0.0.1:${String(op.metricsPort)}`] }] },
        ],
      }),
    );
    const prometheus = join(binDir, 'prometheus');
    const p = spawn(
      prometheus,
      [
        `--config.file=${join(tmp, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(tmp, 'data')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
      ],
      { stdio: 'ignore' },
    );
    procs.push(p);
    const promVersion = (await run(prometheus, ['--version'])).stdout.split('\n')[0] ?? '?';
    const api = `http://127.0.0.1:${promPort}/api/v1`;
    // Both exporters scraped at least twice before the change: the mixin's 5 m window starts from real data.
    await waitFor(
      async () => {
        const r = (await (await fetch(`${api}/query?query=${encodeURIComponent('count_over_time(up[2m])')}`)).json()) as {
          data: { result: Array<{ value: [number, string] }> };
        };
        return r.data.result.length === 2 && r.data.result.every((x) => Number(x.value[1]) >= 2);
      },
      { timeoutMs: 180_000, intervalMs: 2000, describe: 'both targets scraped twice' },
    );

    log('alert race: rolling out a revision whose image cannot be pulled; waiting for both alerts (~20 min)');
    await Promise.all(GUARDED.map((g) => kubectl(['set', 'image', `ds/${g.name}`, 'agent=registry.local/agent:2-broken', '-n', ns])));
    const changed = Date.now();
    const fired: AlertRaceResult['firedAfterSeconds'] = {};
    const stalled: AlertRaceResult['stalledAfterSeconds'] = {};
    const since = (): number => Math.round((Date.now() - changed) / 100) / 10;
    await waitFor(
      async () => {
        const alerts = ((await (await fetch(`${api}/alerts`)).json()) as { data: { alerts: Alert[] } }).data.alerts.filter(
          (a) => a.state === 'firing',
        );
        // The mixin's alert for the first of the two DaemonSets (they stalled together).
        if (
          fired.kubeDaemonSetRolloutStuck === undefined &&
          alerts.some((a) => a.labels.alertname === ROLLOUT_STUCK.alert && GUARDED.some((g) => g.name === a.labels.daemonset))
        ) {
          fired.kubeDaemonSetRolloutStuck = since();
          log(`alert race: ${ROLLOUT_STUCK.alert} firing after ${fired.kubeDaemonSetRolloutStuck} s`);
        }
        for (const [g, key] of [
          ['agent-defaults', 'rolloutGuardStalledDefault'],
          ['agent-120s', 'rolloutGuardStalled120s'],
        ] as const) {
          if (fired[key] === undefined && alerts.some((a) => a.labels.alertname === 'RolloutGuardStalled' && a.labels.guard === g)) {
            fired[key] = since();
            log(`alert race: RolloutGuardStalled (${g}) firing after ${fired[key]} s`);
          }
        }
        for (const g of GUARDED) {
          if (stalled[g.key] !== undefined) continue;
          const st = JSON.parse((await kubectl(['get', 'rolloutguard', g.name, '-n', ns, '-o', 'json'])).stdout) as {
            status?: { state?: string };
          };
          if (st.status?.state === 'Stalled') stalled[g.key] = since();
        }
        return (
          fired.kubeDaemonSetRolloutStuck !== undefined &&
          fired.rolloutGuardStalledDefault !== undefined &&
          fired.rolloutGuardStalled120s !== undefined
        );
      },
      { timeoutMs: 40 * 60_000, intervalMs: 5000, describe: 'both alerts firing' },
    );

    const result: AlertRaceResult = {
      startedAt: new Date(changed).toISOString(),
      host: hostname(),
      intervals: `scrape and evaluation every ${INTERVAL}`,
      firedAfterSeconds: fired,
      stalledAfterSeconds: stalled,
      versions: { prometheus: promVersion, kubeStateMetrics: ksmVersion },
    };
    await mkdir(opts.out, { recursive: true });
    const file = resolve(opts.out, `${result.startedAt.slice(0, 10)}-${hostname()}-alert-race.json`);
    await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
    log(`alert race: ${JSON.stringify(result.firedAfterSeconds)}; written to ${file}`);
    return result;
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    for (const p of procs) p.kill('SIGKILL');
    await op?.stop().catch(() => undefined);
    await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']).catch(() => undefined);
    await kubectl(['delete', 'nodes', '-l', `rollout-guard.dev/pool=${pool}`, '--wait=false']).catch(() => undefined);
    await rm(tmp, { recursive: true, force: true });
  }
}
