/**
 * Slimming a raw StatefulSet: the API server's defaults stand in for fields read before defaulting, the
 * partition and maxUnavailable survive, and the controller's counters and revisions are kept.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { templateDigest } from '../../src/k8s/slim.js';
import { slimClaim, slimStatefulSet } from '../../src/k8s/slimStatefulSet.js';

const template = { metadata: { labels: { app: 'store' } }, spec: { containers: [{ name: 'db', image: 'store:2' }, { name: 'sidecar' }] } };

describe('slimStatefulSet: defaults and the update strategy', () => {
  it('defaults what the API server defaults: 1 replica, OrderedReady, RollingUpdate; absent counters read as 0', () => {
    assert.deepEqual(slimStatefulSet({ metadata: { name: 'store' }, spec: {} }), {
      metadata: { name: 'store' },
      spec: {
        replicas: 1,
        selector: {},
        podManagementPolicy: 'OrderedReady',
        updateStrategy: { type: 'RollingUpdate' },
        minReadySeconds: 0,
        images: [],
        claimTemplates: [],
      },
      status: { observedGeneration: 0, replicas: 0, readyReplicas: 0, currentReplicas: 0, updatedReplicas: 0, availableReplicas: 0 },
    });
    assert.equal(slimStatefulSet(undefined).spec.replicas, 1, 'nothing at all reads the same');
  });

  it('keeps replicas 0 (scaled to zero on purpose), Parallel and OnDelete; an unknown policy reads as OrderedReady', () => {
    const s = slimStatefulSet({
      metadata: { name: 'store' },
      spec: { replicas: 0, podManagementPolicy: 'Parallel', updateStrategy: { type: 'OnDelete' } },
    });
    assert.deepEqual([s.spec.replicas, s.spec.podManagementPolicy, s.spec.updateStrategy], [0, 'Parallel', { type: 'OnDelete' }]);
    assert.equal(slimStatefulSet({ spec: { podManagementPolicy: 'Whatever' } }).spec.podManagementPolicy, 'OrderedReady');
  });

  it('keeps the partition and maxUnavailable of a rolling update, and only when they are given', () => {
    const cases: Array<[string, unknown, unknown]> = [
      ['both', { partition: 2, maxUnavailable: '50%' }, { partition: 2, maxUnavailable: '50%' }],
      ['partition 0', { partition: 0 }, { partition: 0 }],
      ['maxUnavailable as a number', { maxUnavailable: 1 }, { maxUnavailable: 1 }],
      ['a partition that is not a number is dropped', { partition: '2' }, {}],
      ['empty', {}, {}],
    ];
    for (const [name, rollingUpdate, want] of cases) {
      const s = slimStatefulSet({ spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate } } });
      assert.deepEqual(s.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: want }, name);
    }
  });
});

describe('slimStatefulSet: what is kept', () => {
  it("keeps the controller's counters and both revisions, the images and a digest of the template", () => {
    const s = slimStatefulSet({
      metadata: { name: 'store', namespace: 'ns', uid: 'u', generation: 5 },
      spec: { replicas: 3, minReadySeconds: 10, selector: { matchLabels: { app: 'store' } }, template },
      status: {
        observedGeneration: 4,
        replicas: 3,
        readyReplicas: 2,
        currentReplicas: 2,
        updatedReplicas: 1,
        availableReplicas: 2,
        currentRevision: 'store-7d4b9c8f',
        updateRevision: 'store-5f6a7b8c',
        collisionCount: 0,
      },
    });
    assert.deepEqual(s.status, {
      observedGeneration: 4,
      replicas: 3,
      readyReplicas: 2,
      currentReplicas: 2,
      updatedReplicas: 1,
      availableReplicas: 2,
      currentRevision: 'store-7d4b9c8f',
      updateRevision: 'store-5f6a7b8c',
    });
    assert.deepEqual(s.metadata, { name: 'store', namespace: 'ns', uid: 'u', generation: 5 });
    assert.deepEqual(s.spec.selector, { matchLabels: { app: 'store' } });
    assert.equal(s.spec.minReadySeconds, 10);
    assert.deepEqual(s.spec.images, ['store:2', '']);
    assert.equal(s.spec.templateDigest, templateDigest(template));
    assert.ok(!JSON.stringify(s).includes('containers'), 'the template itself is not kept');
  });

  it('keeps only our annotations, its labels and its controller owner', () => {
    const s = slimStatefulSet({
      metadata: {
        name: 'store',
        labels: { app: 'store' },
        annotations: {
          'rolloutguard.dev/undo': 'disabled',
          'rolloutguard.dev/ignore': 'true',
          'kubectl.kubernetes.io/last-applied-configuration': '{…}',
        },
        ownerReferences: [
          { apiVersion: 'example.com/v1', kind: 'Database', name: 'db', uid: 'o1', controller: true },
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'o2' },
        ],
      },
    });
    assert.deepEqual(s.metadata.annotations, { 'rolloutguard.dev/undo': 'disabled', 'rolloutguard.dev/ignore': 'true' });
    assert.deepEqual(s.metadata.labels, { app: 'store' });
    assert.deepEqual(s.metadata.ownerReferences, [
      { apiVersion: 'example.com/v1', kind: 'Database', name: 'db', uid: 'o1', controller: true },
    ]);
  });
});

describe('claims', () => {
  it('keeps the names of the volumeClaimTemplates, in order, and nothing else of them', () => {
    const s = slimStatefulSet({
      spec: { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { resources: {} } }, { metadata: { name: 'logs' } }, {}] },
    });
    assert.deepEqual(s.spec.claimTemplates, ['data', 'logs']);
  });

  it('slimClaim keeps phase, storage class and deletion; a claim without a phase yet reads Pending', () => {
    assert.deepEqual(
      slimClaim({
        metadata: {
          name: 'data-store-2',
          namespace: 'db',
          deletionTimestamp: '2026-01-01T00:00:00Z',
          finalizers: ['kubernetes.io/pvc-protection'],
        },
        spec: { storageClassName: 'local', volumeName: 'pv-1' },
        status: { phase: 'Bound', capacity: { storage: '1Gi' } },
      }),
      {
        metadata: { name: 'data-store-2', namespace: 'db', deletionTimestamp: '2026-01-01T00:00:00Z' },
        phase: 'Bound',
        storageClassName: 'local',
      },
    );
    assert.equal(slimClaim({ metadata: { name: 'x' } }).phase, 'Pending');
  });
});
