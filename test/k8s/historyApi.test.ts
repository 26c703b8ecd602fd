/**
 * Where an undo reads its template, per kind: a ControllerRevision's `data.spec.template`, or a
 * ReplicaSet's `spec.template` without the `pod-template-hash` label its controller added, and the checks
 * made before anything is copied from either.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkRevision, historyApi } from '../../src/k8s/historyApi.js';
import { podOf } from '../../src/k8s/admissionCheck.js';

const TEMPLATE = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'web:1' }] } };
const owned = (kind: string, uid = 'uid-1') => [{ apiVersion: 'apps/v1', kind, name: 'web', uid, controller: true }];
const replicaSet = {
  metadata: { name: 'web-5d8f', uid: 'rs-uid', labels: { app: 'web', 'pod-template-hash': '5d8f' }, ownerReferences: owned('Deployment') },
  spec: { template: { ...TEMPLATE, metadata: { labels: { app: 'web', 'pod-template-hash': '5d8f' } } } },
};
const controllerRevision = {
  metadata: { name: 'web-7c9d', labels: { 'controller-revision-hash': '7c9d' }, ownerReferences: owned('DaemonSet') },
  data: { spec: { template: { ...TEMPLATE, $patch: 'replace' } } },
};
const workload = { metadata: { name: 'web', namespace: 'shop', uid: 'uid-1' } };

describe('historyApi', () => {
  it("reads a Deployment's history from ReplicaSets: the template without its pod-template-hash label, the hash from it", () => {
    const history = historyApi('Deployment');
    assert.equal(history.path('shop', 'web-5d8f'), '/apis/apps/v1/namespaces/shop/replicasets/web-5d8f');
    assert.equal(history.hash(replicaSet), '5d8f');
    assert.deepEqual(history.template(replicaSet), TEMPLATE);
    assert.deepEqual(
      replicaSet.spec.template.metadata.labels,
      { app: 'web', 'pod-template-hash': '5d8f' },
      'the object read is left as it was',
    );
  });

  it("reads the other kinds' history from ControllerRevisions", () => {
    for (const kind of ['DaemonSet', 'StatefulSet'] as const) {
      const history = historyApi(kind);
      assert.equal(history.path('shop', 'web-7c9d'), '/apis/apps/v1/namespaces/shop/controllerrevisions/web-7c9d');
      assert.equal(history.hash(controllerRevision), '7c9d');
      assert.deepEqual(history.template(controllerRevision), { ...TEMPLATE, $patch: 'replace' });
    }
  });

  it('copies only from a ReplicaSet the Deployment controls, with the hash named and a template', () => {
    assert.equal(checkRevision(replicaSet, 'web-5d8f', 'Deployment', 'uid-1', '5d8f'), undefined);
    assert.match(
      checkRevision(replicaSet, 'web-5d8f', 'Deployment', 'uid-2') ?? '',
      /ReplicaSet web-5d8f is not controlled by this Deployment/,
    );
    assert.match(checkRevision(replicaSet, 'web-5d8f', 'Deployment', 'uid-1', 'ffff') ?? '', /carries hash 5d8f, not the ffff/);
    assert.match(checkRevision(replicaSet, 'web-5d8f', 'DaemonSet', 'uid-1') ?? '', /not controlled by this DaemonSet/);
  });
});

describe("podOf (the admission comparison's dry-run pod)", () => {
  it("builds a Deployment's pod as its ReplicaSet would: owned by the ReplicaSet, labelled with its hash", () => {
    const pod = podOf('Deployment', workload, replicaSet, 'node-1') as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
    assert.deepEqual(pod.metadata.ownerReferences, [
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8f', uid: 'rs-uid', controller: true },
    ]);
    assert.deepEqual(pod.metadata.labels, { app: 'web', 'pod-template-hash': '5d8f' });
    assert.ok(JSON.stringify(pod.spec.affinity).includes('node-1'));
  });

  it("builds a DaemonSet's pod owned by the DaemonSet, labelled with its controller-revision-hash", () => {
    const pod = podOf('DaemonSet', workload, controllerRevision, undefined) as { metadata: Record<string, unknown> };
    assert.deepEqual(pod.metadata.ownerReferences, [
      { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'web', uid: 'uid-1', controller: true },
    ]);
    assert.deepEqual(pod.metadata.labels, { app: 'web', 'controller-revision-hash': '7c9d' });
  });
});
