/**
 * End to end, without the cluster: `npm run image` (scripts/image.sh) as a person runs it. Three builds
 * into private directories (the repository's dist/ is left alone): two with the defaults (under different
 * umasks), which must be byte for byte the same archive, and one with `--tag`, which must differ only in
 * its name. The archive is then read as containerd reads it: the OCI layout, the name annotation
 * `ctr images import` uses, the config (scripts/image-config.json, so the Dockerfile's, see
 * test/image.test.ts), and the one layer's files, owners, modes and times. As root (CI, and any machine where `chroot` works), the layer is unpacked
 * and its own node runs the operator as user 65532, on the image's libraries alone.
 *
 * Each build takes about 20 s on 2 cores (tsc, `npm ci --omit=dev`, and ~200 MB written and hashed); the
 * Node binary and the Debian libraries come from the cache after the first.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runProgram as run, shownResult as show, type ProgramResult as Result } from '../support/program.js';
import { dockerfileConfig, imageConfig, pinnedNode, read, runtimeCopies } from '../support/image.js';

function sha256(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(file)
      .on('data', (d) => h.update(d))
      .on('end', () => resolve(h.digest('hex')))
      .on('error', reject);
  });
}

/** Builds the image into `dir` with `args` under `umask`; returns the archive's path, the script's last line of stdout. */
async function build(dir: string, args: readonly string[] = [], umask = '022'): Promise<string> {
  // The registry is reached for the production dependencies: a generous limit for a slow network.
  const r = await run('bash', ['-c', `umask ${umask} && exec bash scripts/image.sh "$@"`, 'image', ...args], {
    env: { ...process.env, RG_IMAGE_DIR: dir },
    limitMs: 600_000,
  });
  assert.equal(r.code, 0, show(r));
  return r.stdout.trim().split('\n').at(-1)!;
}

/** One entry of `tar -tv`: mode, owner, size, time and path. */
interface Entry {
  mode: string;
  owner: string;
  time: string;
  path: string;
}

async function listTar(file: string): Promise<Entry[]> {
  const r = await run('tar', ['--numeric-owner', '-tvf', file], { env: { ...process.env, TZ: 'UTC' } });
  assert.equal(r.code, 0, show(r));
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const m = /^(\S+) (\S+) +\d+ (\S+ \S+) (.*?)(?: -> .*)?$/.exec(l);
      assert.ok(m, `unexpected tar line: ${l}`);
      return { mode: m[1]!, owner: m[2]!, time: m[3]!, path: m[4]! };
    });
}

interface Layout {
  index: { manifests: Array<{ digest: string; annotations: Record<string, string> }> };
  manifest: { config: { digest: string }; layers: Array<{ digest: string; mediaType: string }> };
  config: { architecture: string; os: string; config: unknown; rootfs: { diff_ids: string[] }; created?: string };
  layer: string;
}

/** Unpacks an OCI archive into `dir` and reads its index, manifest and config. */
async function unpack(archive: string, dir: string): Promise<Layout> {
  await mkdir(dir, { recursive: true });
  const r = await run('tar', ['-xf', archive, '-C', dir]);
  assert.equal(r.code, 0, show(r));
  const blob = (digest: string): string => path.join(dir, 'blobs', 'sha256', digest.replace(/^sha256:/, ''));
  const json = async <T>(p: string): Promise<T> => JSON.parse(await readFile(p, 'utf8')) as T;
  const index = await json<Layout['index']>(path.join(dir, 'index.json'));
  const manifest = await json<Layout['manifest']>(blob(index.manifests[0]!.digest));
  const config = await json<Layout['config']>(blob(manifest.config.digest));
  return { index, manifest, config, layer: blob(manifest.layers[0]!.digest) };
}

describe('`npm run image`: a reproducible OCI archive of the Dockerfile’s image, built without a container engine', () => {
  const version = (JSON.parse(read('package.json')) as { version: string }).version;
  let tmp: string;
  let first: string;
  let second: string;
  let tagged: string;
  let image: Layout;
  let entries: Entry[];

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'rg-image-'));
    first = await build(path.join(tmp, 'a'));
    // Under another umask: the modes in the archive are the script's, not the build machine's.
    second = await build(path.join(tmp, 'b'), [], '077');
    tagged = await build(path.join(tmp, 'c'), ['--tag', 'localhost:5000/team/rollout-guard:dev']);
    image = await unpack(first, path.join(tmp, 'unpacked'));
    entries = await listTar(image.layer);
  });

  after(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('prints the archive it wrote, named for the image', () => {
    assert.equal(first, path.join(tmp, 'a', `rollout-guard-${version}.tar`));
    assert.equal(tagged, path.join(tmp, 'c', 'rollout-guard-dev.tar'));
  });

  it('two builds are byte for byte the same archive', async (t) => {
    const [a, b] = await Promise.all([sha256(first), sha256(second)]);
    t.diagnostic(`sha256 ${a}`);
    assert.equal(a, b);
  });

  it('is named with the full reference a pod’s `image: rollout-guard:<version>` resolves to, which `ctr images import` stores verbatim', () => {
    assert.equal(image.index.manifests.length, 1);
    assert.deepEqual(image.index.manifests[0]!.annotations, {
      'io.containerd.image.name': `docker.io/library/rollout-guard:${version}`,
      'org.opencontainers.image.ref.name': version,
    });
  });

  it('--tag names it otherwise and changes nothing else', async () => {
    const other = await unpack(tagged, path.join(tmp, 'tagged'));
    assert.equal(other.index.manifests[0]!.annotations['io.containerd.image.name'], 'localhost:5000/team/rollout-guard:dev');
    assert.equal(other.index.manifests[0]!.digest, image.index.manifests[0]!.digest);
  });

  it('its config is scripts/image-config.json, the Dockerfile’s, with no creation time', () => {
    assert.deepEqual(image.config.config, imageConfig());
    const docker = dockerfileConfig(read('Dockerfile'));
    for (const k of ['User', 'WorkingDir', 'Entrypoint', 'Cmd', 'ExposedPorts'] as const)
      assert.deepEqual(image.config.config[k], docker[k], k);
    assert.equal(image.config.architecture, 'amd64');
    assert.equal(image.config.os, 'linux');
    assert.equal(image.config.created, undefined);
    assert.deepEqual(image.config.rootfs.diff_ids, [image.manifest.layers[0]!.digest]);
  });

  it("one layer, every entry root's, at time 0, in name order", () => {
    assert.equal(image.manifest.layers.length, 1);
    assert.deepEqual(
      entries.filter((e) => e.owner !== '0/0' || e.time !== '1970-01-01 00:00'),
      [],
    );
    // tar --sort=name orders each directory's entries by name (its subdirectories' contents follow each one).
    const children = new Map<string, string[]>();
    for (const { path: p } of entries.slice(1)) {
      const m = /^(.*\/)([^/]+\/?)$/.exec(p)!;
      children.set(m[1]!, [...(children.get(m[1]!) ?? []), m[2]!.replace(/\/$/, '')]);
    }
    for (const [dir, names] of children)
      assert.deepEqual(
        names,
        [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
        dir,
      );
  });

  it('holds node, its libraries, the operator under /app, the nonroot user and a world-writable /tmp', () => {
    const at = (p: string): Entry | undefined => entries.find((e) => e.path === `.${p}`);
    assert.match(at('/nodejs/bin/node')?.mode ?? '', /^-rwxr-xr-x$/);
    for (const p of ['/nodejs/LICENSE', '/lib64/ld-linux-x86-64.so.2', '/lib/x86_64-linux-gnu/libc.so.6', '/usr/share/doc/libc6/copyright'])
      assert.ok(at(p), `${p} missing`);
    assert.equal(at('/tmp/')?.mode, 'drwxrwxrwt');
    assert.equal(at('/app/dist/src/main.js')?.mode, '-rw-r--r--');
    const app = [...new Set(entries.filter((e) => /^\.\/app\/[^/]+/.test(e.path)).map((e) => e.path.split('/')[2]!))].sort();
    assert.deepEqual(
      app,
      runtimeCopies(read('Dockerfile'))
        .map((c) => path.posix.basename(c.dest))
        .sort(),
    );
    for (const dev of ['typescript', 'eslint', 'prettier', 'fast-check', 'typescript-eslint'])
      assert.equal(at(`/app/node_modules/${dev}/`), undefined, `devDependency ${dev} in the image`);
    assert.ok(at('/app/node_modules/@kubernetes/client-node/'));
    // Nothing is writable by anyone but root, except /tmp.
    assert.deepEqual(
      entries.filter((e) => e.path !== './tmp/' && !e.mode.startsWith('l') && /^.{5}w|^.{8}w/.test(e.mode)).map((e) => e.path),
      [],
    );
  });

  it('runs: its own node starts the operator as 65532 on the image’s libraries alone (as root, in a chroot)', async (t) => {
    if (process.getuid?.() !== 0) {
      t.skip('chroot needs root');
      return;
    }
    const rootfs = path.join(tmp, 'rootfs');
    await mkdir(rootfs);
    const x = await run('tar', ['-xf', image.layer, '-C', rootfs]);
    assert.equal(x.code, 0, show(x));
    // The image's environment only: nothing of this machine's (no NODE_OPTIONS, no extra CA file).
    const env = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };
    const inImage = (args: string[]): Promise<Result> =>
      run('chroot', ['--userspec=65532:65532', rootfs, '/nodejs/bin/node', ...args], { env });
    const node = await inImage(['--version']);
    assert.equal(node.code, 0, show(node));
    assert.equal(node.stdout.trim(), `v${pinnedNode()}`);
    const operator = await inImage(['--expose-gc', '/app/dist/src/main.js', '--version']);
    assert.equal(operator.code, 0, show(operator));
    assert.equal(operator.stdout, `rollout-guard ${version}\n`);
    const user = await inImage(['-p', 'const u = require("os").userInfo(); `${u.username} ${u.uid}:${u.gid}`']);
    assert.equal(user.stdout.trim(), 'nonroot 65532:65532', show(user));
  });
});
