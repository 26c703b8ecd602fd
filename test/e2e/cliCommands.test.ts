/**
 * End to end: the kubectl-citizen parts of the CLI, run as `kubectl rollout-guard …` through the pinned
 * kubectl's plugin discovery on PATH, against the real control plane with the real operator: `--as` (a
 * user without RBAC is refused by the API server, and says so), `-o yaml`, `list` and `get -A`, the
 * `completion bash` script sourced in bash, and `undo`: refused on a healthy rollout, performed on a
 * stalled one (a kwok `broken` image) with the DaemonSet's undo record written.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import {
  binDir,
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
import { OperatorProcess, ROOT, apply, guard, installCrds } from '../support/operator.js';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

const show = (r: Result): string => `exit ${r.code}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;

let pluginDir: string;

/** `kubectl rollout-guard ARGS`, the plugin found on PATH by kubectl; never throws for an exit code. */
function plugin(args: readonly string[], extraEnv: Record<string, string> = {}): Promise<Result> {
  const env = {
    ...process.env,
    KUBECONFIG: kubeconfigPath(),
    PATH: [pluginDir, binDir(), process.env.PATH ?? ''].join(path.delimiter),
    ...extraEnv,
  };
  return new Promise((resolve) => {
    execFile(path.join(binDir(), 'kubectl'), ['rollout-guard', ...args], { env, timeout: 90_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

interface GuardObj {
  status?: { state?: string; lastUndo?: { result: string } };
}
const getGuard = (ns: string): Promise<GuardObj> => kubectlJson<GuardObj>(['get', 'rolloutguard', 'decoder'], { ns });
const image = async (ns: string): Promise<string> =>
  (await kubectlJson<{ spec: { template: { spec: { containers: Array<{ image: string }> } } } }>(['get', 'ds', 'decoder'], { ns })).spec
    .template.spec.containers[0]!.image;

describe('kubectl rollout-guard: --as, -o yaml, list, completion, undo', () => {
  let ns: string;
  let pool: NodePool;
  let op: OperatorProcess;
  const cleanups: Array<() => Promise<void>> = [];

  before(async () => {
    await ensureCluster();
    await installCrds();
    pluginDir = await mkdtemp(path.join(tmpdir(), 'rg-plugin-'));
    cleanups.push(() => rm(pluginDir, { recursive: true, force: true }));
    // kubectl finds a plugin as an executable named kubectl-rollout_guard on PATH.
    const exe = path.join(pluginDir, 'kubectl-rollout_guard');
    await writeFile(exe, `#!/bin/sh\nexec "${process.execPath}" "${path.join(ROOT, 'dist/src/kubectlPlugin.js')}" "$@"\n`);
    await chmod(exe, 0o755);
    const n = await createNamespace('cli-cmds');
    ns = n.name;
    cleanups.push(n.cleanup);
    pool = await createNodePool(uniqueName('cli-cmds'), 3);
    cleanups.push(pool.cleanup);
    // Report mode: the operator judges and keeps the history, and leaves the undo to the command.
    await apply(decoderDaemonSet({ name: 'decoder', ns, pool: pool.name, image: 'registry.local/decoder:1' }));
    await kubectl(['rollout', 'status', 'ds/decoder', '--timeout=90s'], { ns });
    await apply(guard('decoder', ns, 'decoder', { suspectAfterSeconds: 2, progressDeadlineSeconds: 5, onStall: { action: 'Report' } }));
    op = await OperatorProcess.start({ namespaces: [ns] });
    await waitFor(async () => (await getGuard(ns)).status?.state === 'Healthy', { timeoutMs: 60_000, describe: 'guard Healthy' });
  });

  after(async () => {
    if (op) await op.stop();
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it('--as a user without RBAC: the API server forbids the list, and the command says so', async () => {
    const r = await plugin(['list', '-n', ns, '--as', 'nobody-at-all', '--as-group', 'no-such-group']);
    assert.equal(r.code, 1, show(r));
    assert.match(r.stderr, /forbidden to list rolloutguards in namespace .*: .*"nobody-at-all" cannot list/i, show(r));
    const groupless = await plugin(['list', '-n', ns, '--as-group', 'x']);
    assert.equal(groupless.code, 2, show(groupless));
  });

  it('list and get -A: the guard as a row of the printer columns; -o name, -o yaml', async () => {
    const one = await plugin(['list', '-n', ns]);
    assert.equal(one.code, 0, show(one));
    const lines = one.stdout.trim().split('\n');
    assert.match(lines[0] ?? '', /^NAME +TARGET +KIND +STATE +DESIRED +UPDATED +READY +CAUSE +FAULT +AGE$/, show(one));
    assert.match(lines[1] ?? '', /^decoder +decoder +DaemonSet +Healthy +3 +3 +3 +\S+$/, show(one));
    const all = await plugin(['get', '-A']);
    assert.equal(all.code, 0, show(all));
    assert.ok(
      all.stdout.split('\n').some((l) => new RegExp(`^${ns} +decoder +decoder +DaemonSet +Healthy`).test(l)),
      show(all),
    );
    const names = await plugin(['list', '-n', ns, '-o', 'name']);
    assert.equal(names.stdout.trim(), 'rolloutguard.rolloutguard.dev/decoder', show(names));
    const yaml = await plugin(['get', '-n', ns, '-o', 'yaml']);
    const doc = parse(yaml.stdout) as { kind: string; items: Array<{ metadata: { name: string }; status: { state: string } }> };
    assert.equal(doc.kind, 'List', show(yaml));
    assert.deepEqual(
      doc.items.map((g) => [g.metadata.name, g.status.state]),
      [['decoder', 'Healthy']],
    );
  });

  it('get rg/NAME -o yaml is the same document as -o json', async () => {
    const json = await plugin(['get', 'rg/decoder', '-n', ns, '-o', 'json']);
    const yaml = await plugin(['get', 'rg/decoder', '-n', ns, '-o', 'yaml']);
    assert.equal(yaml.code, 0, show(yaml));
    const strip = (v: Record<string, unknown>): Record<string, unknown> => ({ ...v, at: '' });
    assert.deepEqual(strip(parse(yaml.stdout) as Record<string, unknown>), strip(JSON.parse(json.stdout) as Record<string, unknown>));
  });

  it('completion bash, sourced in bash, completes the commands and the guard names from the cluster', async () => {
    const script = await plugin(['completion', 'bash']);
    assert.equal(script.code, 0, show(script));
    const file = path.join(pluginDir, 'completion.bash');
    await writeFile(file, script.stdout);
    const run = (line: string): Promise<Result> => {
      const words = line.split(' ');
      const cmd = `source '${file}'; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _rollout_guard; printf '%s\\n' "\${COMPREPLY[@]}"`;
      return new Promise((resolve) => {
        const env = {
          ...process.env,
          KUBECONFIG: kubeconfigPath(),
          PATH: [pluginDir, binDir(), process.env.PATH ?? ''].join(path.delimiter),
        };
        execFile('bash', ['--norc', '--noprofile', '-c', cmd], { env, timeout: 60_000 }, (err, stdout, stderr) =>
          resolve({ code: err ? -1 : 0, stdout, stderr }),
        );
      });
    };
    const cmds = await run('kubectl-rollout_guard u');
    assert.deepEqual(cmds.stdout.trim().split('\n'), ['undo'], show(cmds));
    const names = await run(`kubectl-rollout_guard get -n ${ns} rg/`);
    assert.deepEqual(names.stdout.trim().split('\n'), ['rg/decoder'], show(names));
  });

  it("completion zsh, sourced in Debian's zsh, completes the commands and the guard names from the cluster", async () => {
    const script = await plugin(['completion', 'zsh']);
    assert.equal(script.code, 0, show(script));
    const file = path.join(pluginDir, 'completion.zsh');
    await writeFile(file, script.stdout);
    // cluster/build.sh keeps zsh's modules beside it; zsh reads its module path only from itself.
    const zsh = path.join(binDir(), 'zsh');
    const modules = path.join(path.dirname(await realpath(zsh)), 'modules');
    const run = (line: string): Promise<Result> => {
      const words = line.split(' ');
      // compadd is zsh's own builtin inside a completion widget; outside one it prints what it was given.
      const cmd = [
        `module_path=('${modules}')`,
        `source '${file}'`,
        'compadd() { local -a a; a=("$@"); print -rl -- "${(@)a[${a[(i)--]}+1,-1]}" }',
        `words=(${words.map((w) => `'${w}'`).join(' ')})`,
        `CURRENT=${words.length}`,
        '_rollout_guard',
      ].join('\n');
      return new Promise((resolve) => {
        const env = {
          ...process.env,
          KUBECONFIG: kubeconfigPath(),
          PATH: [pluginDir, binDir(), process.env.PATH ?? ''].join(path.delimiter),
        };
        execFile(zsh, ['-f', '-c', cmd], { env, timeout: 60_000 }, (err, stdout, stderr) =>
          resolve({ code: err ? -1 : 0, stdout, stderr }),
        );
      });
    };
    const cmds = await run('kubectl-rollout_guard u');
    assert.equal(cmds.code, 0, show(cmds));
    assert.deepEqual(cmds.stdout.trim().split('\n'), ['undo'], show(cmds));
    const names = await run(`kubectl-rollout_guard get -n ${ns} rg/`);
    assert.deepEqual(names.stdout.trim().split('\n'), ['rg/decoder'], show(names));
    assert.equal(names.stderr, '', show(names));
  });

  it('undo on a healthy rollout is refused: nothing to undo, exit 6, nothing changed', async () => {
    const r = await plugin(['undo', 'rg/decoder', '-n', ns]);
    assert.equal(r.code, 6, show(r));
    assert.match(r.stderr, /nothing to undo: the rollout is Healthy/, show(r));
    assert.equal(await image(ns), 'registry.local/decoder:1');
  });

  it('undo on a stalled rollout (a broken image): the dry run says the plan, the undo restores revision 1 and records it', async () => {
    await kubectl(['set', 'image', 'ds/decoder', 'decoder=registry.local/decoder:2-broken'], { ns });
    await waitFor(async () => (await getGuard(ns)).status?.state === 'Stalled', { timeoutMs: 60_000, describe: 'guard Stalled' });
    const dry = await plugin(['undo', 'ds/decoder', '-n', ns, '--dry-run']);
    assert.equal(dry.code, 0, show(dry));
    assert.match(
      dry.stdout,
      /would undo DaemonSet .*\/decoder \(RolloutGuard decoder\): restore revision 1 \(\w+\) in place of stalled revision 2/,
      show(dry),
    );
    assert.match(dry.stdout, /server-side dry run: accepted/, show(dry));
    assert.equal(await image(ns), 'registry.local/decoder:2-broken', 'the dry run changed nothing');

    const r = await plugin(['undo', 'rg/decoder', '-n', ns]);
    assert.equal(r.code, 0, show(r));
    assert.match(r.stdout, /undone: restore revision 1/, show(r));
    assert.equal(await image(ns), 'registry.local/decoder:1');
    const ds = await kubectlJson<{ metadata: { annotations: Record<string, string> } }>(['get', 'ds', 'decoder'], { ns });
    const record = JSON.parse(ds.metadata.annotations['rolloutguard.dev/last-undo'] ?? '{}') as { guard?: string };
    assert.equal(record.guard, `${ns}/decoder`, 'the undo record names the guard, so no guard undoes that revision again');
    await kubectl(['rollout', 'status', 'ds/decoder', '--timeout=90s'], { ns });

    // Undoing again finds nothing to undo: the restored revision runs everywhere.
    await waitFor(async () => (await getGuard(ns)).status?.state !== 'Stalled', { timeoutMs: 60_000, describe: 'guard no longer Stalled' });
    const again = await plugin(['undo', 'rg/decoder', '-n', ns]);
    assert.equal(again.code, 6, show(again));
  });
});
