/**
 * End to end: `rollout-guard check` run as a CI pipeline would run it, as a child process against the
 * real control plane, judged by its exit code and output only.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  createNamespace,
  createNodePool,
  daemonSetRow,
  decoderDaemonSet,
  ensureCluster,
  kubeconfigPath,
  kubectl,
  kubectlJson,
  uniqueName,
  type NodePool,
} from '../support/cluster.js';
import { ROOT, apply } from '../support/operator.js';

const MAIN = path.join(ROOT, 'dist/src/main.js');

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  elapsedMs: number;
}

/** Runs the CLI; a hung check is killed after `limitMs` so the test fails instead of hanging. */
function cli(args: string[], limitMs = 60_000): Promise<CliResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, elapsedMs: Date.now() - started });
    });
  });
}

const show = (r: CliResult): string => `exit ${r.code} after ${r.elapsedMs} ms\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;

describe('rollout-guard check against the real control plane', () => {
  let ns: string;
  let pool: NodePool;
  const cleanups: Array<() => Promise<void>> = [];
  /** The CLI as documented: `check ds/NAME -n NS --deadline 8s --suspect 3s --kubeconfig PATH`. */
  const check = (name: string, ...extra: string[]): Promise<CliResult> =>
    cli(['check', `ds/${name}`, '-n', ns, '--deadline', '8s', '--suspect', '3s', '--kubeconfig', kubeconfigPath(), ...extra]);

  before(async () => {
    await ensureCluster();
    const n = await createNamespace('check');
    ns = n.name;
    cleanups.push(n.cleanup);
    pool = await createNodePool(uniqueName('chk'), 3);
    cleanups.push(pool.cleanup);
  });

  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it('a completing rollout exits 0, and not before the DaemonSet really is complete', async () => {
    // No `kubectl rollout status` first: check runs straight after the apply, as in a pipeline, and must
    // not take the not-yet-observed DaemonSet for a finished one.
    await apply(decoderDaemonSet({ name: 'decoder', ns, pool: pool.name, image: 'registry.local/decoder:1' }));
    const r = await check('decoder');
    assert.equal(r.code, 0, show(r));
    assert.match(r.stdout, /^rollout complete: 3\/3 nodes available on revision 1 /m, show(r));
    assert.deepEqual(await daemonSetRow(ns, 'decoder'), { desired: 3, current: 3, ready: 3, upToDate: 3, available: 3 });

    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2'], { ns });
    const r2 = await check('decoder');
    assert.equal(r2.code, 0, show(r2));
    assert.match(r2.stdout, /^rollout complete: .*revision 2 /m, show(r2));
    assert.deepEqual(await daemonSetRow(ns, 'decoder'), { desired: 3, current: 3, ready: 3, upToDate: 3, available: 3 });
  });

  it('a broken image exits 3 within the deadline, naming the blocked node, the cause and the undo command', async () => {
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:3-broken'], { ns });
    const r = await check('decoder');
    assert.equal(r.code, 3, show(r));
    // 8 s without progress, counted from the check's first look. The verdict's own clock (the "[ Ns]"
    // prefix) says when it was reached; the process's wall time also holds start-up and the first lists,
    // which a loaded machine stretches, so it only has to be at least the deadline.
    assert.ok(r.elapsedMs >= 8_000, `took ${r.elapsedMs} ms\n${show(r)}`);
    const verdictAt = /\[\s*(\d+)s\] Stalled/.exec(r.stdout);
    assert.ok(
      verdictAt && Number(verdictAt[1]) >= 8 && Number(verdictAt[1]) <= 8 + 5,
      `Stalled reported at ${verdictAt?.[1]} s\n${show(r)}`,
    );

    const pods = await kubectlJson<{ items: Array<{ spec: { nodeName?: string; containers: Array<{ image: string }> } }> }>(
      ['get', 'pods', '-l', 'app=decoder'],
      { ns },
    );
    const brokenNodes = pods.items.filter((p) => p.spec.containers[0]?.image.includes('broken')).map((p) => p.spec.nodeName);
    assert.equal(brokenNodes.length, 1, 'maxUnavailable 1: exactly one node got the broken pod');
    const blocked = brokenNodes[0]!;
    assert.ok(pool.nodes.includes(blocked));

    // The per-node split on the way, then the verdict.
    assert.match(r.stdout, /\] Progressing|\] Suspect/, show(r));
    assert.match(r.stdout, /\] Stalled .*cause ImagePullFailure/, show(r));
    assert.match(r.stdout, new RegExp(`blocked ${blocked}: ImagePullBackOff`), show(r));
    assert.match(r.stdout, /revision 3 \(\w+\): 1 node\(s\), 0 ready, images registry\.local\/decoder:3-broken/, show(r));
    assert.match(r.stdout, /revision 2 \(\w+\): 2 node\(s\), 2 ready/, show(r));
    assert.match(r.stdout, new RegExp(`^rollout stalled: .*${blocked} ImagePullBackOff.*Cause ImagePullFailure`, 'm'), show(r));
    assert.doesNotMatch(r.stdout, /onStall/, 'check has no onStall setting; its message must not mention one');
    assert.match(r.stdout, new RegExp(`^to undo: kubectl rollout undo daemonset/decoder -n ${ns} --to-revision=2$`, 'm'), show(r));
    assert.equal(r.stderr, '', 'nothing logged at the default level');
  });

  it('--output json prints one parseable document with the verdict and the status', async () => {
    // The DaemonSet is still stalled from the previous test: the clock starts again with this check.
    const r = await check('decoder', '--output', 'json');
    assert.equal(r.code, 3, show(r));
    const doc = JSON.parse(r.stdout) as {
      verdict: string;
      exitCode: number;
      target: string;
      message: string;
      status: { state: string; cause: string; blockedNodes: Array<{ node: string; reason: string }>; undoPlan?: { toRevision?: number } };
    };
    assert.equal(doc.verdict, 'rollout stalled');
    assert.equal(doc.exitCode, 3);
    assert.equal(doc.target, `${ns}/decoder`);
    assert.equal(doc.status.state, 'Stalled');
    assert.equal(doc.status.cause, 'ImagePullFailure');
    assert.equal(doc.status.blockedNodes.length, 1);
    assert.equal(doc.status.blockedNodes[0]?.reason, 'ImagePullBackOff');
    assert.equal(doc.status.undoPlan?.toRevision, 2);

    await apply(decoderDaemonSet({ name: 'fine', ns, pool: pool.name, image: 'registry.local/decoder:1' }));
    const ok = await check('fine', '-o', 'json');
    assert.equal(ok.code, 0, show(ok));
    const okDoc = JSON.parse(ok.stdout) as {
      verdict: string;
      exitCode: number;
      status: { state: string; desired: number; available: number };
    };
    assert.deepEqual(
      [okDoc.verdict, okDoc.exitCode, okDoc.status.state, okDoc.status.desired, okDoc.status.available],
      ['rollout complete', 0, 'Healthy', 3, 3],
    );
  });

  it('a missing DaemonSet exits 4 at once, without waiting for its deadline', async () => {
    // A 300 s deadline, and the CLI is killed after 60 s: a check that waited for the DaemonSet to appear
    // would never exit 4. What is checked is that it does not wait, not how fast a loaded machine starts it.
    const r = await cli([
      'check',
      'ds/no-such-daemonset',
      '-n',
      ns,
      '--deadline',
      '300s',
      '--suspect',
      '3s',
      '--kubeconfig',
      kubeconfigPath(),
    ]);
    assert.equal(r.code, 4, show(r));
    assert.match(r.stdout, new RegExp(`not found: DaemonSet no-such-daemonset not found in namespace ${ns}`));
  });

  it('an OnDelete DaemonSet exits 5: there is no rollout to time', async () => {
    const ds = decoderDaemonSet({ name: 'ondelete', ns, pool: pool.name, image: 'registry.local/decoder:1' }) as {
      spec: { updateStrategy: unknown };
    };
    ds.spec.updateStrategy = { type: 'OnDelete' };
    await apply(ds);
    const r = await check('ondelete');
    assert.equal(r.code, 5, show(r));
    assert.match(r.stdout, /^not checkable: .*OnDelete/m, show(r));
  });

  it('bad usage exits 2 with the usage on stderr and nothing on stdout', async () => {
    for (const args of [
      ['check'],
      ['check', 'replicaset/decoder'],
      ['check', 'ds/decoder', '--deadline', 'soon'],
      ['check', 'ds/decoder', '--wait'],
    ]) {
      const r = await cli([...args, '--kubeconfig', kubeconfigPath()]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${show(r)}`);
      assert.match(r.stderr, /usage:/);
      assert.equal(r.stdout, '');
    }
    const help = await cli(['check', '--help']);
    assert.equal(help.code, 0, show(help));
    assert.match(help.stdout, /exit codes: 0 complete, 1 error, 2 usage, 3 stalled, 4 DaemonSet not found, 5 updateStrategy OnDelete/);
  });

  it('an unreachable API server exits 1 at once instead of hanging the pipeline', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'rg-check-'));
    try {
      // Same credentials, a port nothing listens on.
      const kc = (await readFile(kubeconfigPath(), 'utf8')).replace(/server: https:\/\/127\.0\.0\.1:\d+/, 'server: https://127.0.0.1:1');
      const bad = path.join(dir, 'kubeconfig');
      await writeFile(bad, kc);
      const r = await cli(['check', 'ds/decoder', '-n', ns, '--kubeconfig', bad]);
      assert.equal(r.code, 1, show(r));
      assert.match(r.stderr, /rollout-guard check: .*ECONNREFUSED/);
      assert.ok(r.elapsedMs < 10_000, `took ${r.elapsedMs} ms`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
