/**
 * loadKubeConfig: which connection is used, and a clear error instead of client-node's silent fallback
 * to http://localhost:8080 when there is none.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeConfigError, inCluster, loadKubeConfig } from '../../src/k8s/kubeConfig.js';

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: 'https://203.0.113.7:6443'}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;

describe('loadKubeConfig', () => {
  let dir: string;
  let file: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rg-kc-'));
    file = join(dir, 'config');
    await writeFile(file, KUBECONFIG);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('an explicit file is used', () => {
    assert.equal(loadKubeConfig(file, {}).getCurrentCluster()?.server, 'https://203.0.113.7:6443');
  });

  it('an explicit file that does not exist is an error naming it', () => {
    assert.throws(() => loadKubeConfig(join(dir, 'nope'), {}), (e: unknown) => e instanceof KubeConfigError && /nope does not exist/.test(e.message));
  });

  it('~/.kube/config when nothing is named', async () => {
    const home = await mkdtemp(join(tmpdir(), 'rg-home-'));
    try {
      await mkdir(join(home, '.kube'));
      await writeFile(join(home, '.kube', 'config'), KUBECONFIG);
      assert.equal(loadKubeConfig(undefined, { HOME: home }).getCurrentCluster()?.server, 'https://203.0.113.7:6443');
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it('nothing at all: an error that says where it looked and what to do, never localhost:8080', () => {
    assert.throws(
      () => loadKubeConfig(undefined, { HOME: dir }, () => false),
      (e: unknown) => e instanceof KubeConfigError && /no kubeconfig/.test(e.message) && /--kubeconfig PATH or set KUBECONFIG/.test(e.message) && e.message.includes(join(dir, '.kube', 'config')),
    );
  });

  it('in a pod: KUBERNETES_SERVICE_HOST and the service account token', () => {
    assert.equal(inCluster({ KUBERNETES_SERVICE_HOST: '10.96.0.1' }, () => true), true);
    assert.equal(inCluster({ KUBERNETES_SERVICE_HOST: '10.96.0.1' }, () => false), false, 'no token: not a pod we can use');
    assert.equal(inCluster({}, () => true), false);
  });
});
