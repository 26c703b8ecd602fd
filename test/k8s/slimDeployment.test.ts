/**
 * The slim Deployment and ReplicaSet: what a Deployment's rollout is tracked by (strategy, pause, its own
 * deadline, its Progressing condition), a ReplicaSet as the revision it stands for (its hash, its
 * revision annotation, a digest of its template comparable with the Deployment's), and a Deployment's pod
 * read by its `pod-template-hash`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { slimPod } from '../../src/k8s/slim.js';
import { DEFAULT_DEPLOYMENT_DEADLINE_SECONDS, slimDeployment, slimReplicaSet } from '../../src/k8s/slimDeployment.js';

const TEMPLATE = {
  metadata: { labels: { app: 'web' } },
  spec: {
    containers: [{ name: 'web', image: 'web:2', resources: { requests: { cpu: '100m' } } }],
    volumes: [{ name: 'cfg', configMap: { name: 'c' } }],
  },
};

/** A Deployment as the API server serves it (defaults applied), changed by `o`. */
function rawDeployment(o: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    metadata: {
      name: 'web',
      namespace: 'ns',
      uid: 'd-uid',
      generation: 3,
      annotations: { 'deployment.kubernetes.io/revision': '2', other: 'x' },
    },
    spec: {
      replicas: 4,
      selector: { matchLabels: { app: 'web' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
      minReadySeconds: 5,
      progressDeadlineSeconds: 30,
      template: TEMPLATE,
    },
    status: {
      observedGeneration: 3,
      replicas: 5,
      updatedReplicas: 2,
      readyReplicas: 4,
      availableReplicas: 3,
      unavailableReplicas: 2,
      conditions: [
        { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' },
        {
          type: 'Progressing',
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
          message: 'ReplicaSet "web-bbb" has timed out progressing.',
          lastUpdateTime: '2026-01-01T00:01:00Z',
          lastTransitionTime: '2026-01-01T00:00:30Z',
        },
      ],
    },
    ...o,
  };
}

/** A ReplicaSet of the Deployment: its template is the Deployment's plus the pod-template-hash label. */
function rawReplicaSet(o: { failure?: Record<string, unknown>; revision?: string; image?: string } = {}): Record<string, unknown> {
  return {
    metadata: {
      name: 'web-bbb',
      namespace: 'ns',
      uid: 'rs-uid',
      labels: { app: 'web', 'pod-template-hash': 'bbb' },
      annotations: { 'deployment.kubernetes.io/revision': o.revision ?? '2' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd-uid', controller: true }],
    },
    spec: {
      replicas: 4,
      template: {
        metadata: { labels: { app: 'web', 'pod-template-hash': 'bbb' } },
        spec: { ...TEMPLATE.spec, containers: [{ ...TEMPLATE.spec.containers[0], image: o.image ?? 'web:2' }] },
      },
    },
    status: { replicas: 3, readyReplicas: 2, availableReplicas: 1, ...(o.failure ? { conditions: [o.failure] } : {}) },
  };
}

describe('slimDeployment', () => {
  it('keeps its rollout: replicas, strategy, minReadySeconds, its own deadline, pause, images, counters and its Progressing condition', () => {
    const d = slimDeployment(rawDeployment());
    assert.deepEqual(d.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } });
    assert.equal(d.spec.replicas, 4);
    assert.equal(d.spec.minReadySeconds, 5);
    assert.equal(d.spec.progressDeadlineSeconds, 30);
    assert.equal(d.spec.paused, false);
    assert.deepEqual(d.spec.images, ['web:2']);
    assert.deepEqual(d.status, {
      observedGeneration: 3,
      replicas: 5,
      updatedReplicas: 2,
      readyReplicas: 4,
      availableReplicas: 3,
      unavailableReplicas: 2,
      progressing: {
        status: 'False',
        reason: 'ProgressDeadlineExceeded',
        message: 'ReplicaSet "web-bbb" has timed out progressing.',
        since: '2026-01-01T00:00:30Z',
      },
    });
    assert.deepEqual(d.metadata.annotations, { 'deployment.kubernetes.io/revision': '2' }, 'only the annotations the operator reads');
  });

  it('reads Recreate without rolling parameters, a pause, and the defaults of a Deployment read before defaulting', () => {
    const recreate = slimDeployment(rawDeployment({ spec: { strategy: { type: 'Recreate' }, paused: true, template: TEMPLATE } }));
    assert.deepEqual(recreate.spec.strategy, { type: 'Recreate' });
    assert.equal(recreate.spec.paused, true);
    assert.equal(recreate.spec.replicas, 1);
    assert.equal(recreate.spec.progressDeadlineSeconds, DEFAULT_DEPLOYMENT_DEADLINE_SECONDS);
    const bare = slimDeployment({ metadata: { name: 'x' } });
    assert.deepEqual(bare.status, {
      observedGeneration: 0,
      replicas: 0,
      updatedReplicas: 0,
      readyReplicas: 0,
      availableReplicas: 0,
      unavailableReplicas: 0,
    });
    assert.equal(bare.spec.templateDigest, undefined);
  });
});

describe('slimReplicaSet', () => {
  it('is the revision it stands for: its hash, revision number, counts and owner', () => {
    const rs = slimReplicaSet(rawReplicaSet());
    assert.equal(rs.hash, 'bbb');
    assert.equal(rs.revision, 2);
    assert.deepEqual([rs.replicas, rs.current, rs.ready, rs.available], [4, 3, 2, 1]);
    assert.equal(rs.metadata.ownerReferences?.[0]?.uid, 'd-uid');
    assert.deepEqual(Object.keys(rs.volumes ?? {}), ['cfg']);
    assert.deepEqual(rs.facets?.requests, { cpu: 0.1 });
  });

  it("digests its template as the Deployment's: equal without the pod-template-hash label, different for another template", () => {
    const live = slimDeployment(rawDeployment()).spec.templateDigest;
    assert.ok(live !== undefined);
    assert.equal(slimReplicaSet(rawReplicaSet()).templateDigest, live);
    assert.notEqual(slimReplicaSet(rawReplicaSet({ image: 'web:3' })).templateDigest, live);
  });

  it('keeps its ReplicaFailure condition only while True, and reads a missing revision as 0', () => {
    const failure = {
      type: 'ReplicaFailure',
      status: 'True',
      reason: 'FailedCreate',
      message: 'pods "web-bbb-x" is forbidden',
      lastTransitionTime: 't',
    };
    assert.deepEqual(slimReplicaSet(rawReplicaSet({ failure })).replicaFailure, {
      reason: 'FailedCreate',
      message: 'pods "web-bbb-x" is forbidden',
      since: 't',
    });
    assert.equal(slimReplicaSet(rawReplicaSet({ failure: { ...failure, status: 'False' } })).replicaFailure, undefined);
    assert.equal(slimReplicaSet(rawReplicaSet({ revision: 'x' })).revision, 0);
  });
});

describe("a Deployment's pod", () => {
  it('is read by its pod-template-hash (its controller is a ReplicaSet), a daemon pod by its controller-revision-hash', () => {
    const labels = { 'pod-template-hash': 'bbb', 'controller-revision-hash': 'not-this' };
    const rsOwned = slimPod({
      metadata: { name: 'web-bbb-x', labels, ownerReferences: [{ kind: 'ReplicaSet', name: 'web-bbb', uid: 'rs-uid', controller: true }] },
    });
    assert.equal(rsOwned.hash, 'bbb');
    const daemon = slimPod({
      metadata: { name: 'agent-x', labels, ownerReferences: [{ kind: 'DaemonSet', name: 'agent', uid: 'ds-uid', controller: true }] },
    });
    assert.equal(daemon.hash, 'not-this');
  });
});
