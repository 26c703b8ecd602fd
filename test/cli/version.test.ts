/**
 * `rollout-guard version` prints package.json's version. The compiled module finds package.json by a path
 * relative to itself, so it is read here where the module runs: in this checkout (dist/src/cli/, as in the
 * npm package) and in the image, laid out as the Dockerfile's COPY lines lay out dist/ and package.json.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { packageVersion } from '../../src/cli/version.js';
import { ROOT, read, runtimeCopies } from '../support/image.js';

describe('packageVersion', () => {
  it("is package.json's version, not 'unknown'", () => {
    const { version } = JSON.parse(read('package.json')) as { version: string };
    assert.notEqual(version, 'unknown');
    assert.equal(packageVersion(), version);
  });

  it("is the image's package.json's version, with dist/ and package.json where the Dockerfile copies them", async () => {
    const copies = runtimeCopies(read('Dockerfile'));
    const destOf = (name: string): string => {
      const copy = copies.find((c) => c.name === name);
      assert.ok(copy, `the Dockerfile's runtime stage copies no ${name}`);
      return copy.dest;
    };
    // This test runs as dist/test/cli/version.test.js; the module it reads is the compiled one beside it.
    const compiled = fileURLToPath(new URL('../../src/cli/version.js', import.meta.url));
    const image = mkdtempSync(join(tmpdir(), 'rg-version-'));
    try {
      const inImage = join(image, destOf('dist'), relative(join(ROOT, 'dist'), compiled));
      mkdirSync(dirname(inImage), { recursive: true });
      copyFileSync(compiled, inImage);
      const pkg = join(image, destOf('package.json'));
      mkdirSync(dirname(pkg), { recursive: true });
      // A version of its own, so that reading this checkout's package.json instead would fail.
      writeFileSync(pkg, JSON.stringify({ name: 'rollout-guard', version: '9.8.7-image', type: 'module' }));
      const loaded = (await import(pathToFileURL(inImage).href)) as { packageVersion: () => string };
      assert.equal(loaded.packageVersion(), '9.8.7-image');
    } finally {
      rmSync(image, { recursive: true, force: true });
    }
  });
});
