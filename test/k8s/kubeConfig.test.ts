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
    assert.throws(
      () => loadKubeConfig(join(dir, 'nope'), {}),
      (e: unknown) => e instanceof KubeConfigError && /nope does not exist/.test(e.message),
    );
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
      (e: unknown) =>
        e instanceof KubeConfigError &&
        /no kubeconfig/.test(e.message) &&
        /--kubeconfig PATH or set KUBECONFIG/.test(e.message) &&
        e.message.includes(join(dir, '.kube', 'config')),
    );
  });

  it('in a pod: KUBERNETES_SERVICE_HOST and the service account token', () => {
    assert.equal(
      inCluster({ KUBERNETES_SERVICE_HOST: '10.96.0.1' }, () => true),
      true,
    );
    assert.equal(
      inCluster({ KUBERNETES_SERVICE_HOST: '10.96.0.1' }, () => false),
      false,
      'no token: not a pod we can use',
    );
    assert.equal(
      inCluster({}, () => true),
      false,
    );
  });

  describe("a list of files and kubectl's overrides", () => {
    const config = (cluster: string, server: string, ctx: string, current: string, ns = ''): string => `apiVersion: v1
kind: Config
clusters: [{name: ${cluster}, cluster: {server: '${server}'}}]
users: [{name: u-${cluster}, user: {token: t}}]
contexts: [{name: ${ctx}, context: {cluster: ${cluster}, user: u-${cluster}${ns ? `, namespace: ${ns}` : ''}}}]
${current ? `current-context: ${current}` : ''}
`;
    let a: string;
    let b: string;
    let same: string;
    before(async () => {
      a = join(dir, 'a');
      b = join(dir, 'b');
      same = join(dir, 'same');
      await writeFile(a, config('ca', 'https://198.51.100.1:6443', 'ctx-a', ''));
      await writeFile(b, config('cb', 'https://198.51.100.2:6443', 'ctx-b', 'ctx-b', 'team-b'));
      // Names ctx-a again, with another cluster: the first file's ctx-a wins.
      await writeFile(same, config('cc', 'https://198.51.100.3:6443', 'ctx-a', 'ctx-a'));
    });

    it('a:b is merged as kubectl merges $KUBECONFIG, whatever $KUBECONFIG says: the first current-context wins', () => {
      const kc = loadKubeConfig(`${a}:${b}`, { KUBECONFIG: join(dir, 'elsewhere') });
      assert.deepEqual(
        kc.getContexts().map((c) => c.name),
        ['ctx-a', 'ctx-b'],
      );
      assert.equal(kc.getCurrentContext(), 'ctx-b', 'a sets no current-context; b does');
      assert.equal(kc.getCurrentCluster()?.server, 'https://198.51.100.2:6443');
    });

    it('the first file to name a context wins it; files that do not exist are skipped', () => {
      const kc = loadKubeConfig(`${join(dir, 'missing')}:${a}:${same}`, {});
      assert.equal(kc.getCurrentContext(), 'ctx-a');
      assert.equal(kc.getCurrentCluster()?.server, 'https://198.51.100.1:6443', "a's ctx-a, not same's");
    });

    it('--context picks a context; its namespace is the one kubectl would use', () => {
      const kc = loadKubeConfig(`${a}:${b}`, {}, undefined, { context: 'ctx-a' });
      assert.equal(kc.getCurrentContext(), 'ctx-a');
      assert.equal(kc.getCurrentCluster()?.server, 'https://198.51.100.1:6443');
      assert.equal(loadKubeConfig(`${a}:${b}`, {}).getContextObject('ctx-b')?.namespace, 'team-b');
    });

    it("--cluster and --user replace the current context's", () => {
      const kc = loadKubeConfig(`${a}:${b}`, {}, undefined, { cluster: 'ca', user: 'u-ca' });
      assert.equal(kc.getCurrentContext(), 'ctx-b');
      assert.equal(kc.getCurrentCluster()?.server, 'https://198.51.100.1:6443');
      assert.equal(kc.getCurrentUser()?.name, 'u-ca');
      assert.equal(kc.getContextObject('ctx-b')?.namespace, 'team-b', 'the namespace stays');
    });

    it('a context, cluster or user the kubeconfig does not have is an error naming the ones it has', () => {
      assert.throws(
        () => loadKubeConfig(`${a}:${b}`, {}, undefined, { context: 'prod' }),
        /context "prod" is not in the kubeconfig \(its contexts: ctx-a, ctx-b\)/,
      );
      assert.throws(
        () => loadKubeConfig(a, {}, undefined, { context: 'ctx-a', cluster: 'nope' }),
        /cluster "nope" is not in the kubeconfig \(its clusters: ca\)/,
      );
      assert.throws(
        () => loadKubeConfig(a, {}, undefined, { cluster: 'ca' }),
        /the kubeconfig sets no current-context: pass --context \(its contexts: ctx-a\)/,
      );
      assert.throws(
        () => loadKubeConfig(a, {}, undefined, { context: 'ctx-a', user: 'nope' }),
        /user "nope" is not in the kubeconfig \(its users: u-ca\)/,
      );
    });
  });
});
