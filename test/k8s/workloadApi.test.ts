/**
 * What the writes know of each kind: where it is served, when its own counters say a rollout is
 * complete (the undo's "too late" check), and how ControllerRevisions and pods name a revision.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { revisionHashOf, WORKLOAD_API } from '../../src/k8s/workloadApi.js';

describe('WORKLOAD_API: paths', () => {
  it('serves each kind from apps/v1 under its own resource', () => {
    assert.equal(WORKLOAD_API.DaemonSet.path('ns', 'decoder'), '/apis/apps/v1/namespaces/ns/daemonsets/decoder');
    assert.equal(WORKLOAD_API.StatefulSet.path('ns', 'store'), '/apis/apps/v1/namespaces/ns/statefulsets/store');
    assert.equal(WORKLOAD_API.StatefulSet.path('ns'), '/apis/apps/v1/namespaces/ns/statefulsets');
    assert.deepEqual([WORKLOAD_API.DaemonSet.kind, WORKLOAD_API.StatefulSet.kind], ['DaemonSet', 'StatefulSet']);
  });
});

describe('WORKLOAD_API.StatefulSet.rolloutComplete', () => {
  /** StatefulSet at generation 2, 3 replicas, every ordinal on store-b and available. */
  const done = {
    metadata: { name: 'store', generation: 2 },
    spec: { replicas: 3 },
    status: { observedGeneration: 2, updatedReplicas: 3, availableReplicas: 3, currentRevision: 'store-b', updateRevision: 'store-b' },
  };
  const withStatus = (s: Record<string, unknown>, spec: Record<string, unknown> = done.spec) => ({
    ...done,
    spec,
    status: { ...done.status, ...s },
  });
  const cases: Array<[string, unknown, boolean]> = [
    ['every ordinal updated and available on one revision', done, true],
    ['more available than replicas (a scale-down in progress)', withStatus({ availableReplicas: 4, updatedReplicas: 4 }), true],
    ['held at a partition: the current revision is not the update revision', withStatus({ currentRevision: 'store-a' }), false],
    ['no update revision reported yet', withStatus({ currentRevision: undefined, updateRevision: undefined }), false],
    ['an ordinal not updated', withStatus({ updatedReplicas: 2 }), false],
    ['an ordinal not available', withStatus({ availableReplicas: 2 }), false],
    ['generation not observed: the counters describe the previous spec', withStatus({ observedGeneration: 1 }), false],
    ['replicas absent reads as 1', withStatus({ updatedReplicas: 1, availableReplicas: 1 }, {}), true],
    ['scaled to zero: nothing rolls out', withStatus({ updatedReplicas: 0, availableReplicas: 0 }, { replicas: 0 }), false],
    ['no status at all', { metadata: { generation: 1 }, spec: { replicas: 1 } }, false],
    ['nothing', undefined, false],
  ];
  for (const [name, sts, want] of cases) it(name, () => assert.equal(WORKLOAD_API.StatefulSet.rolloutComplete(sts), want));
});

describe('WORKLOAD_API.DaemonSet.rolloutComplete', () => {
  const ds = (s: Record<string, unknown>, generation = 3) => ({
    metadata: { generation },
    status: { observedGeneration: 3, desiredNumberScheduled: 4, updatedNumberScheduled: 4, numberAvailable: 4, ...s },
  });
  const cases: Array<[string, unknown, boolean]> = [
    ['every node updated and available', ds({}), true],
    ['a node not updated', ds({ updatedNumberScheduled: 3 }), false],
    ['a node not available', ds({ numberAvailable: 3 }), false],
    ['generation not observed', ds({}, 4), false],
    ['no node targeted', ds({ desiredNumberScheduled: 0, updatedNumberScheduled: 0, numberAvailable: 0 }), false],
    // A DaemonSet's status has no revisions: a StatefulSet's rule must not be applied to it.
    ['no currentRevision/updateRevision is needed', ds({ currentRevision: 'x', updateRevision: 'y' }), true],
  ];
  for (const [name, d, want] of cases) it(name, () => assert.equal(WORKLOAD_API.DaemonSet.rolloutComplete(d), want));
});

describe('revisionHashOf and podRevisionLabel', () => {
  const labelled = { metadata: { name: 'decoder-7d4b9c8f', labels: { 'controller-revision-hash': '7d4b9c8f' } } };
  // The StatefulSet controller labels its ControllerRevisions with controller.kubernetes.io/hash, not
  // controller-revision-hash: the hash is the suffix of the name.
  const unlabelled = { metadata: { name: 'my-store-5f6a7b8c', labels: { 'controller.kubernetes.io/hash': '5f6a7b8c' } } };

  const hashes: Array<[string, unknown, string]> = [
    ['the hash label', labelled, '7d4b9c8f'],
    ['the label wins over the name', { metadata: { name: 'decoder-zzz', labels: { 'controller-revision-hash': 'abc' } } }, 'abc'],
    ['else the suffix of the name, after its last hyphen', unlabelled, '5f6a7b8c'],
    ['a name without a hyphen is all hash', { metadata: { name: 'abc' } }, 'abc'],
    ['no name, no label', {}, ''],
  ];
  for (const [name, rev, want] of hashes) it(`revisionHashOf: ${name}`, () => assert.equal(revisionHashOf(rev), want));

  it("podRevisionLabel: a daemon pod carries the hash, a StatefulSet's pod the ControllerRevision's name", () => {
    assert.equal(WORKLOAD_API.DaemonSet.podRevisionLabel(labelled), '7d4b9c8f');
    assert.equal(WORKLOAD_API.DaemonSet.podRevisionLabel(unlabelled), '5f6a7b8c');
    assert.equal(WORKLOAD_API.StatefulSet.podRevisionLabel(unlabelled), 'my-store-5f6a7b8c');
    assert.equal(WORKLOAD_API.StatefulSet.podRevisionLabel({}), '');
  });
});
