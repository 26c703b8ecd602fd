/**
 * `npm run image` (scripts/image.sh) builds the operator's image without a container engine; the
 * Dockerfile builds it with one. A person may use either, so they must describe the same image: the
 * config the script writes (scripts/image-config.json) sets what the Dockerfile's runtime stage sets
 * (USER, WORKDIR, ENV, EXPOSE, ENTRYPOINT, CMD), on the same Node line, and the script's Debian pins sit
 * where they move no cache key of the local control plane. The archive itself is built and checked by
 * test/e2e/image.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dockerfileConfig, imageConfig, pinnedNode, read, runtimeCopies, runtimeStage } from './support/image.js';

const dockerfile = read('Dockerfile');
const fromDockerfile = dockerfileConfig(dockerfile);
const config = imageConfig();

/** The names of Env entries (`K=V` → `K`). */
const names = (env: readonly string[] | undefined): string[] => (env ?? []).map((e) => e.slice(0, e.indexOf('=')));

describe("the image `npm run image` writes is the Dockerfile's", () => {
  it('the runtime stage sets nothing the comparison below does not cover', () => {
    // A LABEL, VOLUME, STOPSIGNAL, HEALTHCHECK, … added to the Dockerfile fails here until the script
    // writes it too (and this list and dockerfileConfig learn it).
    const known = new Set(['FROM', 'WORKDIR', 'COPY', 'USER', 'ENV', 'EXPOSE', 'ENTRYPOINT', 'CMD']);
    assert.deepEqual(
      runtimeStage(dockerfile)
        .map((i) => i.keyword)
        .filter((k) => !known.has(k)),
      [],
    );
  });

  it('USER: the numeric nonroot user', () => {
    assert.equal(fromDockerfile.User, '65532:65532');
    assert.equal(config.User, fromDockerfile.User);
  });

  it('WORKDIR', () => {
    assert.equal(config.WorkingDir, fromDockerfile.WorkingDir);
    assert.equal(config.WorkingDir, '/app');
  });

  it("ENV: each of the Dockerfile's variables with its value, and no other but PATH (which its base image sets)", () => {
    assert.ok((fromDockerfile.Env ?? []).length > 0);
    for (const e of fromDockerfile.Env ?? []) assert.ok(config.Env?.includes(e), `${e} missing from ${JSON.stringify(config.Env)}`);
    const extra = names(config.Env).filter((n) => !names(fromDockerfile.Env).includes(n));
    assert.deepEqual(extra, ['PATH']);
    assert.equal(new Set(names(config.Env)).size, names(config.Env).length, 'a variable set twice');
    const path = config.Env!.find((e) => e.startsWith('PATH='))!;
    assert.ok(path.split(/[=:]/).includes('/nodejs/bin'), `node's directory is not on ${path}`);
  });

  it('EXPOSE: the metrics and health ports', () => {
    assert.deepEqual(Object.keys(config.ExposedPorts ?? {}).sort(), Object.keys(fromDockerfile.ExposedPorts ?? {}).sort());
    assert.deepEqual(Object.keys(config.ExposedPorts ?? {}).sort(), ['8080/tcp', '8081/tcp']);
  });

  it('ENTRYPOINT and CMD, in exec form', () => {
    assert.deepEqual(config.Entrypoint, fromDockerfile.Entrypoint);
    assert.deepEqual(config.Cmd, fromDockerfile.Cmd);
    assert.equal(config.Entrypoint?.[0], '/nodejs/bin/node');
    assert.deepEqual(config.Cmd, ['run']);
  });

  it('nothing else in the config, so that a field added on one side only is seen', () => {
    assert.deepEqual(Object.keys(config).sort(), ['Cmd', 'Entrypoint', 'Env', 'ExposedPorts', 'User', 'WorkingDir']);
  });

  it("the same files under /app: package.json, node_modules and dist, as the Dockerfile's COPY lines put them", () => {
    assert.deepEqual(
      runtimeCopies(dockerfile)
        .map((c) => c.dest)
        .sort(),
      ['/app/dist', '/app/node_modules', '/app/package.json'],
    );
  });

  it("the same Node line: the Dockerfile's base images and scripts/node24.sh's pin", () => {
    const major = pinnedNode().split('.')[0]!;
    const froms = dockerfile.split('\n').filter((l) => /^FROM\s/i.test(l));
    assert.match(froms[0]!, new RegExp(`^FROM node:${major}-`));
    assert.match(froms.at(-1)!, new RegExp(`^FROM gcr\\.io/distroless/nodejs${major}-`));
  });
});

describe('the Debian packages the image takes its shared libraries from', () => {
  const env = read('cluster/versions.env');
  const lines = env.split('\n');
  const tools = lines.indexOf('# Tools');
  const realNode = lines.findIndex((l) => l.startsWith('# The real node'));

  it('are pinned by path and sha256 in versions.env', () => {
    for (const deb of ['LIBC6', 'LIBSTDCXX', 'LIBGCC', 'GCC_BASE']) {
      assert.match(env, new RegExp(`^${deb}_DEB=pool/main/\\S+_amd64\\.deb$`, 'm'));
      assert.match(env, new RegExp(`^${deb}_DEB_SHA256=[0-9a-f]{64}$`, 'm'));
    }
  });

  it("sit between '# Tools' and the real node's section, whose text keys the control plane's and the real node's caches", () => {
    assert.ok(tools > 0 && realNode > tools);
    const at = lines.flatMap((l, i) => (/^(LIBC6|LIBSTDCXX|LIBGCC|GCC_BASE)_DEB/.test(l) ? [i] : []));
    assert.equal(at.length, 8);
    for (const i of at) assert.ok(i > tools && i < realNode, `line ${i + 1} of versions.env is outside the image's section`);
    // build.sh's keys, restated: the control plane hashes what precedes '# Tools', the real node what follows its heading.
    const build = read('cluster/build.sh');
    assert.match(build, /sed '\/\^# Tools\$\/,\$d'/);
    assert.match(build, /sed -n '\/\^# The real node\/,\$p'/);
  });

  it('`npm run image` runs the script', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts.image, 'bash scripts/image.sh');
  });
});
