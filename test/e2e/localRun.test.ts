/**
 * End to end: `npm start` as a developer runs it — `rollout-guard run` with a kubeconfig and no other
 * setup — against the real local control plane; and the clear errors when there is no kubeconfig, or
 * leader election is asked for with a lease namespace that does not exist.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createNamespace, ensureCluster, kubeconfigPath, uniqueName, waitFor } from '../support/cluster.js';
import { ROOT, installCrds } from '../support/operator.js';

const MAIN = resolve(ROOT, 'dist/src/main.js');

/** A developer's environment: PATH and HOME only, plus what the case adds. No KUBERNETES_SERVICE_HOST. */
function devEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: home, ...extra };
}

interface Run {
  lines: string[];
  exited: Promise<number | null>;
  kill: () => void;
}

function start(args: string[], env: NodeJS.ProcessEnv): Run {
  const child = spawn(process.execPath, [MAIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let buf = '';
  const onData = (d: Buffer): void => {
    buf += d.toString();
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  return { lines, exited, kill: () => child.kill('SIGKILL') };
}

const json = (lines: readonly string[]): Array<Record<string, unknown>> =>
  lines.flatMap((l) => {
    try {
      return [JSON.parse(l) as Record<string, unknown>];
    } catch {
      return [];
    }
  });

describe('running locally', { concurrency: true }, () => {
  const cleanups: Array<() => Promise<void>> = [];
  const runs: Run[] = [];
  let home: string;
  let ns: string;
  const listeners = ['--metrics-bind-address=127.0.0.1:0', '--health-probe-bind-address=127.0.0.1:0'];

  before(async () => {
    await ensureCluster();
    await installCrds();
    home = await mkdtemp(join(tmpdir(), 'rg-home-'));
    const n = await createNamespace('local-run');
    ns = n.name;
    cleanups.push(n.cleanup);
  });

  after(async () => {
    for (const r of runs) r.kill();
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(home, { recursive: true, force: true });
  });

  it('with KUBECONFIG set and nothing else: no leader election (no lease namespace needed), caches sync, workers start', async () => {
    const r = start(['run', `--namespaces=${ns}`, ...listeners], devEnv(home, { KUBECONFIG: kubeconfigPath() }));
    runs.push(r);
    const started = await waitFor(() => json(r.lines).find((l) => l.msg === 'starting'), { timeoutMs: 20_000, describe: 'starting' });
    assert.equal(started.leaderElect, false);
    await waitFor(() => json(r.lines).some((l) => l.msg === 'caches synced; starting workers'), {
      timeoutMs: 30_000,
      describe: 'workers started',
    });
    assert.ok(!r.lines.some((l) => l.includes('leader lease')), 'no lease was touched');
  });

  it('no kubeconfig anywhere: exit 2 with one message saying where it looked and what to do', async () => {
    const r = start(['run', ...listeners], devEnv(home));
    runs.push(r);
    assert.equal(await r.exited, 2);
    const out = r.lines.join('\n');
    assert.match(out, /no kubeconfig: \$KUBECONFIG is not set and .*\.kube\/config does not exist/);
    assert.match(out, /Pass --kubeconfig PATH or set KUBECONFIG/);
    assert.doesNotMatch(out, /localhost:8080|ECONNREFUSED/);
  });

  it('a kubeconfig that does not exist: exit 2 naming it', async () => {
    const missing = join(home, 'missing.kubeconfig');
    const r = start(['run', `--kubeconfig=${missing}`, ...listeners], devEnv(home));
    runs.push(r);
    assert.equal(await r.exited, 2);
    assert.match(r.lines.join('\n'), new RegExp(`kubeconfig ${missing.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} does not exist`));
  });

  it('leader election asked for, lease namespace missing: one error naming the namespace and the ways out', async () => {
    const leaseNs = uniqueName('no-such-ns');
    const r = start(
      [
        'run',
        `--namespaces=${ns}`,
        '--leader-elect',
        `--lease-namespace=${leaseNs}`,
        '--retry-period-ms=200',
        '--renew-deadline-ms=1000',
        '--lease-duration-ms=2000',
        ...listeners,
      ],
      devEnv(home, { KUBECONFIG: kubeconfigPath(), LOG_LEVEL: 'debug' }),
    );
    runs.push(r);
    const said = await waitFor(
      () => json(r.lines).find((l) => l.level === 'error' && String(l.msg).includes(`"${leaseNs}" does not exist`)),
      { timeoutMs: 20_000, describe: 'the missing lease namespace named' },
    );
    assert.match(String(said.msg), /kubectl create namespace .*--lease-namespace NS.*--leader-elect=false/);
    // Later attempts (every 200 ms) do not repeat it at error level.
    // The retries are logged at debug (this run's level): wait for two of them, so the check below sees
    // retries that were not repeated at error level rather than no retry at all.
    await waitFor(() => json(r.lines).filter((l) => String(l.msg).includes(`"${leaseNs}" does not exist`)).length >= 3, {
      timeoutMs: 20_000,
      describe: 'two retries logged at debug',
      intervalMs: 100,
    });
    assert.equal(json(r.lines).filter((l) => l.level === 'error' && String(l.msg).includes(`"${leaseNs}" does not exist`)).length, 1);
  });
});
