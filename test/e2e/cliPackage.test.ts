/**
 * End to end: the npm package as a user gets it. `npm pack`, then `npm install -g` of the tarball into
 * a private prefix with production dependencies only; then the installed `rollout-guard` from an
 * unrelated directory, and `kubectl rollout-guard` found by the pinned kubectl's plugin discovery on PATH,
 * both against the local control plane.
 *
 * The pack skips the prepack script (`npm run build`): the test runner built dist/ just before, and a
 * rebuild here would rewrite dist/ under the suites running beside this one. The tarball's contents are
 * checked instead.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runProgram as run, shownResult as show } from '../support/program.js';
import { parse as fromYaml, stringify as toYaml } from 'yaml';
import {
  binDir,
  createNamespace,
  createNodePool,
  decoderDaemonSet,
  ensureCluster,
  kubeconfigPath,
  uniqueName,
  type NodePool,
} from '../support/cluster.js';
import { GuardReader } from '../support/guards.js';
import { ROOT, apply } from '../support/operator.js';

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  bin: Record<string, string>;
};

interface Installed {
  name: string;
  dir: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

/** Every package installed under `modules` (scoped and nested ones included), with its declared dependencies. */
async function installedPackages(modules: string): Promise<Installed[]> {
  const out: Installed[] = [];
  const add = async (dir: string, name: string): Promise<void> => {
    let json: Omit<Installed, 'name' | 'dir'>;
    try {
      json = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as Omit<Installed, 'name' | 'dir'>;
    } catch {
      return;
    }
    out.push({
      name,
      dir,
      ...(json.dependencies ? { dependencies: json.dependencies } : {}),
      ...(json.optionalDependencies ? { optionalDependencies: json.optionalDependencies } : {}),
    });
    await visit(path.join(dir, 'node_modules'));
  };
  const visit = async (dir: string): Promise<void> => {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (name.startsWith('.')) continue;
      if (name.startsWith('@')) {
        for (const sub of await readdir(path.join(dir, name))) await add(path.join(dir, name, sub), `${name}/${sub}`);
      } else {
        await add(path.join(dir, name), name);
      }
    }
  };
  await visit(modules);
  return out;
}

describe('the npm package: installed with production dependencies only, as a CLI and a kubectl plugin', () => {
  let tmp: string;
  let tgz: string;
  let prefix: string;
  /** A directory with nothing of the repository in it, to run the installed commands from. */
  let elsewhere: string;
  let ns: string;
  let pool: NodePool;
  const cleanups: Array<() => Promise<void>> = [];

  before(async () => {
    await ensureCluster();
    tmp = await mkdtemp(path.join(tmpdir(), 'rg-pkg-'));
    prefix = path.join(tmp, 'prefix');
    elsewhere = path.join(tmp, 'elsewhere');
    await mkdir(elsewhere);
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], { cwd: ROOT, limitMs: 120_000 });
    assert.equal(packed.code, 0, show(packed));
    const [info] = JSON.parse(packed.stdout) as Array<{ filename: string }>;
    tgz = path.join(tmp, info!.filename);
    // The registry is reached for the dependencies: a generous limit for a slow network.
    const installed = await run('npm', ['install', '-g', '--prefix', prefix, '--omit=dev', '--no-audit', '--no-fund', tgz], {
      cwd: elsewhere,
      limitMs: 300_000,
    });
    assert.equal(installed.code, 0, show(installed));

    const n = await createNamespace('pkg');
    ns = n.name;
    cleanups.push(n.cleanup);
    pool = await createNodePool(uniqueName('pkg'), 2);
    cleanups.push(pool.cleanup);
    await apply(decoderDaemonSet({ name: 'decoder', ns, pool: pool.name, image: 'registry.local/decoder:1' }));
  });

  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('the tarball holds the compiled CLI, the dashboard page vite built, the CRDs and the README, and nothing of the sources, tests or tools', async () => {
    const listed = await run('tar', ['tzf', tgz], { cwd: tmp });
    assert.equal(listed.code, 0, show(listed));
    const files = listed.stdout
      .split('\n')
      .filter(Boolean)
      .map((f) => f.replace(/^package\//, ''));
    for (const f of [
      'package.json',
      'README.md',
      'dist/src/main.js',
      'dist/src/kubectlPlugin.js',
      'dist/src/cli/get.js',
      'dist/src/cli/check.js',
      'dist/src/cli/dashboard.js',
      // The dashboard's page, built by vite: the command serves it from the package.
      'dist/dashboard/index.html',
      'config/crd/rolloutguards.yaml',
    ]) {
      assert.ok(files.includes(f), `${f} missing from ${files.join(' ')}`);
    }
    // The pages under docs/ stay in the repository, which README.md links to; they are not packaged.
    assert.deepEqual(
      files.filter((f) => f.startsWith('docs/')),
      [],
    );
    const stray = files.filter(
      (f) =>
        !/^(package\.json|README\.md|LICENSE|dist\/src\/.+\.js|dist\/dashboard\/(index\.html|assets\/[\w.-]+\.(js|css))|config\/crd\/[^/]+\.yaml)$/.test(
          f,
        ),
    );
    assert.deepEqual(stray, []);
  });

  it('no devDependency is installed, except as a production package’s own dependency', async () => {
    const home = path.join(prefix, 'lib', 'node_modules', pkg.name);
    const installed = await installedPackages(path.join(home, 'node_modules'));
    const names = new Set(installed.map((p) => p.name));
    for (const dep of Object.keys(pkg.dependencies)) assert.ok(names.has(dep), `production dependency ${dep} not installed`);
    const neededBy = (dep: string): string[] =>
      installed.filter((p) => p.dependencies?.[dep] !== undefined || p.optionalDependencies?.[dep] !== undefined).map((p) => p.name);
    for (const dev of Object.keys(pkg.devDependencies)) {
      if (!names.has(dev)) continue;
      // @types/node comes with @kubernetes/client-node, which lists it among its dependencies.
      assert.ok(neededBy(dev).length > 0, `devDependency ${dev} installed though no production package needs it`);
    }
    for (const tool of ['typescript', 'eslint', 'fast-check', 'typescript-eslint', '@eslint/js'])
      assert.ok(!names.has(tool), `${tool} installed`);
  });

  it('both commands are on the prefix’s PATH, executable, and start from an unrelated directory', async () => {
    for (const [bin, target] of Object.entries(pkg.bin)) {
      const file = path.join(prefix, 'bin', bin);
      assert.ok(((await stat(file)).mode & 0o111) !== 0, `${bin} is not executable`);
      assert.match(await readFile(file, 'utf8'), /^#!\/usr\/bin\/env node\n/, `${bin} (${target}) has no node shebang`);
    }
    const help = await run(path.join(prefix, 'bin', 'rollout-guard'), ['--help'], { cwd: elsewhere });
    assert.equal(help.code, 0, show(help));
    assert.match(help.stdout, /rollout-guard check ds\/NAME/);
    assert.match(help.stdout, /rollout-guard get ds\/NAME\|sts\/NAME\|deploy\/NAME\|rg\/NAME/);
    const getHelp = await run(path.join(prefix, 'bin', 'kubectl-rollout_guard'), ['get', '--help'], { cwd: elsewhere });
    assert.equal(getHelp.code, 0, show(getHelp));
    assert.match(getHelp.stdout, /kubectl rollout-guard get ds\/NAME\|sts\/NAME\|deploy\/NAME\|rg\/NAME/);
  });

  it('`rollout-guard check ds/NAME -n NS` completes against the local cluster, with KUBECONFIG from the environment', async () => {
    const r = await run(path.join(prefix, 'bin', 'rollout-guard'), ['check', 'ds/decoder', '-n', ns, '--deadline', '30s'], {
      cwd: elsewhere,
      env: { ...process.env, KUBECONFIG: kubeconfigPath() },
    });
    assert.equal(r.code, 0, show(r));
    assert.match(r.stdout, /^rollout complete: 2\/2 nodes available on revision 1 /m, show(r));
  });

  it('`kubectl rollout-guard get ds/NAME -n NS` runs through kubectl’s plugin discovery and prints a row per node', async () => {
    await new GuardReader().availableOn(ns, 2);
    const env = {
      ...process.env,
      PATH: [path.join(prefix, 'bin'), binDir(), process.env.PATH ?? ''].join(path.delimiter),
      KUBECONFIG: kubeconfigPath(),
    };
    const plugins = await run(path.join(binDir(), 'kubectl'), ['plugin', 'list', '--name-only'], { cwd: elsewhere, env });
    assert.match(plugins.stdout, /^kubectl-rollout_guard$/m, show(plugins));
    const r = await run(path.join(binDir(), 'kubectl'), ['rollout-guard', 'get', 'ds/decoder', '-n', ns], { cwd: elsewhere, env });
    assert.equal(r.code, 0, show(r));
    assert.match(r.stdout, new RegExp(`^DaemonSet: +${ns}/decoder  desired 2  current 2  updated 2  ready 2  available 2$`, 'm'), show(r));
    assert.match(r.stdout, /^NODE +REVISION +POD +READY +RESTARTS +STATUS$/m, show(r));
    for (const node of pool.nodes)
      assert.match(r.stdout, new RegExp(`^${node} +1 \\(\\w+\\) +decoder-\\w+ +yes +0 +Running$`, 'm'), show(r));
  });

  it("`kubectl rollout-guard version` prints the package's version, as `--version` does", async () => {
    const env = { ...process.env, PATH: [path.join(prefix, 'bin'), binDir(), process.env.PATH ?? ''].join(path.delimiter) };
    for (const args of [
      ['rollout-guard', 'version'],
      ['rollout-guard', '--version'],
    ]) {
      const r = await run(path.join(binDir(), 'kubectl'), args, { cwd: elsewhere, env });
      assert.equal(r.code, 0, show(r));
      assert.equal(r.stdout, `rollout-guard ${pkg.version}\n`);
    }
  });

  it("`kubectl rollout-guard get` takes kubectl's connection flags: a --kubeconfig list merged as kubectl merges it, --context, and the context's namespace without -n", async () => {
    await new GuardReader().availableOn(ns, 2);
    // First file: the current context points at an address that routes nowhere. Second: the real cluster,
    // with a context whose namespace is the suite's.
    const real = fromYaml(await readFile(kubeconfigPath(), 'utf8')) as {
      clusters: Array<{ name: string }>;
      users: Array<{ name: string }>;
      contexts: unknown[];
    };
    const first = path.join(tmp, 'kc-first');
    const second = path.join(tmp, 'kc-second');
    await writeFile(
      first,
      toYaml({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'nowhere', cluster: { server: 'https://192.0.2.1:6443' } }],
        users: [{ name: 'nobody', user: { token: 'x' } }],
        contexts: [{ name: 'nowhere', context: { cluster: 'nowhere', user: 'nobody' } }],
        'current-context': 'nowhere',
      }),
    );
    await writeFile(
      second,
      toYaml({
        ...real,
        contexts: [
          ...real.contexts,
          { name: 'team', context: { cluster: real.clusters[0]!.name, user: real.users[0]!.name, namespace: ns } },
        ],
      }),
    );
    const env = {
      ...process.env,
      PATH: [path.join(prefix, 'bin'), binDir(), process.env.PATH ?? ''].join(path.delimiter),
      KUBECONFIG: path.join(tmp, 'not-this-one'),
    };
    const r = await run(
      path.join(binDir(), 'kubectl'),
      ['rollout-guard', 'get', 'ds/decoder', '--kubeconfig', `${first}:${second}`, '--context', 'team'],
      { cwd: elsewhere, env },
    );
    assert.equal(r.code, 0, show(r));
    assert.match(r.stdout, new RegExp(`^DaemonSet: +${ns}/decoder  desired 2 `, 'm'), show(r));
    const unknown = await run(
      path.join(binDir(), 'kubectl'),
      ['rollout-guard', 'get', 'ds/decoder', '--kubeconfig', `${first}:${second}`, '--context', 'prod'],
      { cwd: elsewhere, env },
    );
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /context "prod" is not in the kubeconfig \(its contexts: nowhere, rollout-guard, team\)/, show(unknown));
    const check = await run(
      path.join(binDir(), 'kubectl'),
      ['rollout-guard', 'check', 'ds/decoder', '--kubeconfig', second, '--context', 'team', '--deadline', '30s'],
      { cwd: elsewhere, env },
    );
    assert.equal(check.code, 0, show(check));
    assert.match(check.stdout, /^rollout complete: 2\/2 nodes available on revision 1 /m, show(check));
  });
});
