/**
 * End to end: `rollout-guard get` as a person runs it, as a child process against the real control
 * plane, judged by its output only: the classic stall node by node (`ds/NAME`), a guard's own state with
 * the live rows (`rg/NAME`, with the real operator running), and `--watch` re-rendering on a change and
 * stopping on SIGINT.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  createNamespace,
  createNodePool,
  decoderDaemonSet,
  ensureCluster,
  kubeconfigPath,
  kubectl,
  kubectlJson,
  uniqueName,
  waitFor,
  type NodePool,
} from '../support/cluster.js';
import { GuardReader } from '../support/guards.js';
import { OperatorProcess, ROOT, apply, guard, installCrds } from '../support/operator.js';
import type { GetView } from '../../src/cli/getView.js';

const MAIN = path.join(ROOT, 'dist/src/main.js');

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Starts the CLI; it is killed after `limitMs` so a hung command fails the test instead of hanging it. */
function start(args: string[], limitMs = 120_000): Run {
  const child = spawn(process.execPath, [MAIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, KUBECONFIG: kubeconfigPath() },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

async function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const r = start(args, 60_000);
  const code = await r.exited;
  return { code, stdout: r.stdout(), stderr: r.stderr() };
}

const show = (r: { code?: number | null; stdout: string; stderr: string }): string =>
  `exit ${r.code}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;

/** The table's data rows as arrays of cells (columns are separated by at least two spaces). */
function tableRows(text: string): string[][] {
  const lines = text.split('\n');
  const head = lines.findIndex((l) => l.startsWith('NODE '));
  if (head < 0) return [];
  const rows: string[][] = [];
  for (const l of lines.slice(head + 1)) {
    if (l.trim() === '') break;
    rows.push(l.trim().split(/\s{2,}/));
  }
  return rows;
}

describe('rollout-guard get against the real control plane', () => {
  let ns: string;
  let pool: NodePool;
  let op: OperatorProcess | undefined;
  const read = new GuardReader(undefined, () => op?.logs ?? []);
  const cleanups: Array<() => Promise<void>> = [];
  /** The node the broken revision landed on, and its revision hashes. */
  let blocked = '';

  before(async () => {
    await ensureCluster();
    await installCrds();
    const n = await createNamespace('get');
    ns = n.name;
    cleanups.push(n.cleanup);
    pool = await createNodePool(uniqueName('get'), 3);
    cleanups.push(pool.cleanup);
  });

  after(async () => {
    await op?.stop();
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it('ds/NAME: the classic stall node by node, the blocked node with its reason and owner, the others on the old revision', async () => {
    await apply(decoderDaemonSet({ name: 'decoder', ns, pool: pool.name, image: 'registry.local/decoder:1' }));
    await read.availableOn(ns, 3);
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns });
    // kwok's stages fail the pull of any image named "broken" (cluster/stages.yaml).
    type Pods = {
      items: Array<{
        spec: { nodeName?: string; containers: Array<{ image: string }> };
        status?: { containerStatuses?: Array<{ state?: { waiting?: { reason?: string } } }> };
      }>;
    };
    blocked = await waitFor(
      async () => {
        const pods = await kubectlJson<Pods>(['get', 'pods', '-l', 'app=decoder'], { ns });
        const broken = pods.items.find(
          (p) =>
            p.spec.containers[0]?.image.includes('broken') &&
            /ImagePullBackOff|ErrImagePull/.test(p.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? ''),
        );
        return broken?.spec.nodeName;
      },
      { timeoutMs: 60_000, describe: 'a pod of the broken revision failing its pull' },
    );
    assert.ok(pool.nodes.includes(blocked));

    const r = await cli(['get', 'ds/decoder', '-n', ns]);
    assert.equal(r.code, 0, show(r));
    assert.equal(r.stderr, '', 'nothing logged at the default level');
    assert.ok(!r.stdout.includes('\u001b['), 'no ANSI colour when stdout is not a terminal');
    assert.match(r.stdout, new RegExp(`^DaemonSet: +${ns}/decoder  desired 3  current 3  updated 1  ready 2  available 2$`, 'm'), show(r));
    assert.match(r.stdout, /^Cause: +ImagePullFailure$/m, show(r));
    assert.match(r.stdout, /^Whose fault: +Revision$/m, show(r));
    assert.match(r.stdout, /^Revisions: +revision 2 \(\w+\) +1 node, 0 ready +registry\.local\/decoder:2-broken +\(current\)$/m, show(r));
    assert.match(r.stdout, /^ +revision 1 \(\w+\) +2 nodes, 2 ready +registry\.local\/decoder:1$/m, show(r));
    const rows = tableRows(r.stdout);
    assert.equal(rows.length, 3, show(r));
    const [first, ...rest] = rows;
    // Sorted by revision (newest first), then node: the blocked node leads.
    assert.equal(first?.[0], blocked, show(r));
    assert.match(first?.[1] ?? '', /^2 \(\w+\)$/);
    assert.equal(first?.[3], 'no');
    assert.match(first?.[5] ?? '', /^(ImagePullBackOff|ErrImagePull) \(Revision\)$/, show(r));
    assert.deepEqual(
      rest.map((c) => c[0]),
      pool.nodes.filter((n) => n !== blocked).sort(),
    );
    for (const c of rest) {
      assert.match(c[1] ?? '', /^1 \(\w+\)$/, show(r));
      assert.deepEqual([c[3], c[5]], ['yes', 'Running'], show(r));
    }
    assert.match(r.stdout, new RegExp(`^${blocked}: .*registry\\.local/decoder:2-broken`, 'm'), show(r));

    const j = await cli(['get', 'ds/decoder', '-n', ns, '-o', 'json']);
    assert.equal(j.code, 0, show(j));
    const doc = JSON.parse(j.stdout) as GetView;
    assert.deepEqual([doc.kind, doc.daemonSet.name, doc.cause, doc.owner], ['DaemonSet', 'decoder', 'ImagePullFailure', 'Revision']);
    assert.deepEqual(
      doc.nodes.map((n) => [n.node, n.revision, n.kind]),
      [[blocked, 2, 'blocked'], ...rest.map((c) => [c[0], 1, 'ok'])],
    );
    assert.equal(doc.nodes[0]?.owner, 'Revision');
  });

  it('rg/NAME: the guard state the operator wrote, with the rows live; ds/NAME names the guard', async () => {
    op = await OperatorProcess.start({ namespaces: [ns] });
    await apply(guard('decoder', ns, 'decoder', { suspectAfterSeconds: 2, progressDeadlineSeconds: 4 }));
    await read.waitGuard(ns, (g) => g.status?.state === 'Stalled', 'Stalled');

    const r = await cli(['get', 'rg/decoder', '-n', ns]);
    assert.equal(r.code, 0, show(r));
    const lines = r.stdout.split('\n');
    assert.equal(lines[0], `RolloutGuard: ${ns}/decoder`, show(r));
    assert.equal(lines[1], `DaemonSet:    ${ns}/decoder  desired 3  current 3  updated 1  ready 2  available 2`, show(r));
    assert.equal(lines[2], 'State:        Stalled', show(r));
    assert.match(r.stdout, /^Cause: +ImagePullFailure$/m, show(r));
    assert.match(r.stdout, /^Whose fault: +Revision$/m, show(r));
    assert.match(r.stdout, /^Undo: +would restore revision 1 \(\w+\) on 1 node/m, show(r));
    assert.match(r.stdout, /^Message: +Rollout to revision 2 \(\w+\) has made no progress for 4s/m, show(r));
    const rows = tableRows(r.stdout);
    assert.equal(rows[0]?.[0], blocked, show(r));
    assert.match(rows[0]?.[5] ?? '', /^(ImagePullBackOff|ErrImagePull) \(Revision\)$/, show(r));

    const d = await cli(['get', 'ds/decoder', '-n', ns]);
    assert.equal(d.code, 0, show(d));
    assert.match(d.stdout, /^Guarded by: +rg\/decoder {2}Stalled {2}ImagePullFailure \(Revision\)$/m, show(d));

    const missing = await cli(['get', 'rg/no-such-guard', '-n', ns]);
    assert.equal(missing.code, 4, show(missing));
    assert.match(missing.stderr, new RegExp(`RolloutGuard no-such-guard not found in namespace ${ns}`));
    const noDs = await cli(['get', 'ds/no-such-daemonset', '-n', ns]);
    assert.equal(noDs.code, 4, show(noDs));
    assert.match(noDs.stderr, new RegExp(`DaemonSet no-such-daemonset not found in namespace ${ns}`));
  });

  it('--watch renders again when the rollout changes, and exits 0 on SIGINT', async () => {
    const w = start(['get', 'rg/decoder', '-n', ns, '--watch']);
    const renders = (): string[] =>
      w
        .stdout()
        .split(/^--- \S+\n/m)
        .filter((s) => s.trim() !== '');
    try {
      await waitFor(() => renders().some((r) => /^State: +Stalled$/m.test(r)), { timeoutMs: 30_000, describe: 'the first render' });
      const before = renders().length;
      // The fix: the previous image again. The DaemonSet rolls back, the guard turns Healthy.
      await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:1'], { ns });
      const healed = await waitFor(
        () => {
          const all = renders();
          const last = all[all.length - 1] ?? '';
          const rows = tableRows(last);
          return all.length > before &&
            /^State: +Healthy$/m.test(last) &&
            rows.length === 3 &&
            rows.every((c) => c[5] === 'Running' && c[3] === 'yes')
            ? last
            : undefined;
        },
        { timeoutMs: 90_000, describe: 'a render with the guard Healthy and every node Running' },
      ).catch((e: unknown) => {
        throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- stdout ---\n${w.stdout()}\n--- stderr ---\n${w.stderr()}`);
      });
      // The restored template is revision 1's again, renumbered by the DaemonSet controller.
      const revs = new Set(tableRows(healed).map((c) => c[1]));
      assert.equal(revs.size, 1, healed);
      assert.match([...revs][0] ?? '', /^3 \(\w+\)$/, healed);
      assert.ok(renders().length >= 2);

      const signalled = Date.now();
      w.child.kill('SIGINT');
      const code = await w.exited;
      assert.equal(code, 0, `exit ${code}\n${w.stderr()}`);
      assert.ok(Date.now() - signalled < 5_000, `took ${Date.now() - signalled} ms to stop`);
      assert.equal(w.stderr(), '');
    } finally {
      w.child.kill('SIGKILL');
    }
  });
});
