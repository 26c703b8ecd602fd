/**
 * The real node's kubelet is built from a Go module of its own (cluster/node), so that its pin changes
 * only its own cache key. It must still be the control plane's Kubernetes: the same k8s.io/kubernetes
 * version, the same replace lines for the staging modules, and K8S_VERSION in versions.env.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

/** The repository root: this file runs as dist/test/clusterBuild.test.js. */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (p: string): string => readFileSync(join(ROOT, p), 'utf8');
const replaces = (mod: string): string[] =>
  mod
    .split('\n')
    .filter((l) => l.startsWith('replace '))
    .sort();
const kubernetes = (mod: string): string | undefined => /k8s\.io\/kubernetes (v\S+)/.exec(mod)?.[1];

describe("the real node is built from the control plane's Kubernetes", () => {
  const control = read('cluster/k8s/go.mod');
  const node = read('cluster/node/go.mod');

  it("the same k8s.io/kubernetes version, which is versions.env's K8S_VERSION", () => {
    const pinned = /^K8S_VERSION=(\S+)$/m.exec(read('cluster/versions.env'))?.[1];
    assert.ok(pinned);
    assert.equal(kubernetes(control), pinned);
    assert.equal(kubernetes(node), pinned);
  });

  it('the same replace lines for every staging module', () => {
    assert.ok(replaces(control).length > 20);
    assert.deepEqual(replaces(node), replaces(control));
  });

  it('builds only the kubelet', () => {
    assert.deepEqual(
      node.split('\n').filter((l) => l.startsWith('tool ')),
      ['tool k8s.io/kubernetes/cmd/kubelet'],
    );
  });

  it("build.sh keys the real node's directory on its module and pins, and versions.env pins each Debian package by checksum", () => {
    const build = read('cluster/build.sh');
    assert.match(build, /"\$here\/node\/go\.mod" "\$here\/node\/go\.sum"/);
    const env = read('cluster/versions.env');
    for (const deb of ['CONTAINERD', 'RUNC', 'CNI_PLUGINS', 'BUSYBOX']) {
      assert.match(env, new RegExp(`^${deb}_DEB=pool/main/\\S+\\.deb$`, 'm'));
      assert.match(env, new RegExp(`^${deb}_DEB_SHA256=[0-9a-f]{64}$`, 'm'));
    }
  });
});
