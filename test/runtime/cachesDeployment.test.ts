/**
 * The caches of a kind whose pods a ReplicaSet creates (a Deployment): its ReplicaSets are cached with it,
 * indexed by their Deployment, and lead a pod, or a Warning about a ReplicaSet, back to the Deployment.
 * Against a local HTTP server standing in for the API server.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { pino } from 'pino';
import { Caches } from '../../src/runtime/caches.js';
import { DEFAULTS, type OperatorConfig } from '../../src/runtime/config.js';
import { waitFor } from '../../cluster/wait.js';
import { FakeClock } from '../support/fakeClock.js';
import { clientFor, listenLocal } from '../support/localApi.js';

const QUICK = { timeoutMs: 5_000, intervalMs: 5 };

const REPLICA_SET = {
  metadata: {
    name: 'web-bbb',
    namespace: 'shop',
    uid: 'rs-uid',
    resourceVersion: '7',
    labels: { 'pod-template-hash': 'bbb' },
    annotations: { 'deployment.kubernetes.io/revision': '2' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'deploy-uid', controller: true }],
  },
  spec: { replicas: 2, template: { metadata: { labels: { app: 'web', 'pod-template-hash': 'bbb' } }, spec: { containers: [] } } },
  status: { replicas: 2 },
};

/** The metadata of a pod whose controller is ReplicaSet `name` with UID `uid`. */
const podOf = (name: string, uid: string) => ({
  ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name, uid, controller: true }],
});

describe('Caches: the ReplicaSets of Deployments', () => {
  let server: http.Server;
  let open: http.ServerResponse[];
  let caches: Caches;

  beforeEach(async () => {
    open = [];
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      res.writeHead(200, { 'content-type': 'application/json' });
      if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') {
        open.push(res);
        return;
      }
      const items = url.pathname.endsWith('/replicasets') ? [REPLICA_SET] : [];
      res.end(JSON.stringify({ kind: 'List', metadata: { resourceVersion: '7' }, items }));
    });
    await listenLocal(server);
    const config: OperatorConfig = { ...DEFAULTS, identity: 'test', leaseNamespace: 'rollout-guard-system' };
    caches = new Caches({
      client: clientFor(server),
      config,
      policies: false,
      clock: new FakeClock(Date.parse('2026-01-01T00:00:00Z')),
      log: pino({ level: 'silent' }),
    });
    caches.start();
    await caches.waitForSync();
  });

  afterEach(async () => {
    await caches.stop();
    for (const r of open) r.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('are listed only once a guard asks for Deployments, and are then found by their Deployment', async () => {
    assert.equal(caches.replicaSets.list().length, 0, 'not listed before a Deployment is asked for');
    caches.watchKind('Deployment');
    await waitFor(() => caches.kindListed('Deployment'), { ...QUICK, describe: 'Deployments listed' });
    assert.deepEqual(
      caches.replicaSets.byIndex('owner', 'deploy-uid').map((rs) => [rs.metadata.name, rs.hash, rs.revision]),
      [['web-bbb', 'bbb', 2]],
    );
  });

  it('lead a pod and a Warning about a ReplicaSet back to the Deployment, and nothing else', async () => {
    assert.equal(caches.workloadOf('shop', podOf('web-bbb', 'rs-uid')), undefined, 'the ReplicaSet not cached yet');
    caches.watchKind('Deployment');
    await waitFor(() => caches.kindListed('Deployment'), { ...QUICK, describe: 'Deployments listed' });
    assert.deepEqual(caches.workloadOf('shop', podOf('web-bbb', 'rs-uid')), { kind: 'Deployment', name: 'web', uid: 'deploy-uid' });
    assert.equal(caches.workloadOf('shop', podOf('web-bbb', 'another-uid')), undefined, 'a ReplicaSet of the same name made anew');
    assert.equal(caches.workloadOf('other', podOf('web-bbb', 'rs-uid')), undefined, 'another namespace');
    const daemonPod = { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'ds-uid', controller: true }] };
    assert.deepEqual(caches.workloadOf('shop', daemonPod), { kind: 'DaemonSet', name: 'agent', uid: 'ds-uid' });

    assert.equal(caches.warnedWorkload('Deployment', 'shop', 'web-bbb'), 'web');
    assert.equal(caches.warnedWorkload('Deployment', 'shop', 'gone-aaa'), undefined);
    assert.equal(caches.warnedWorkload('DaemonSet', 'shop', 'agent'), 'agent', "a DaemonSet's Warnings are about itself");
  });
});
