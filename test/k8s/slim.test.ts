/**
 * Slimming raw API objects: what gather relies on must survive, in particular the node of a pending
 * daemon pod (from its node affinity) and the reason a pod is not ready.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { slimDaemonSet, slimEvent, slimNode, slimPod, slimRevision, templateFacets } from '../../src/k8s/slim.js';

const owner = [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'decoder', uid: 'ds-1', controller: true }];

describe('slimPod', () => {
  it("a pending daemon pod belongs to the node its affinity pins it to, with the scheduler's reason", () => {
    const p = slimPod({
      metadata: { name: 'decoder-x', namespace: 'ns', uid: 'p1', labels: { 'controller-revision-hash': 'abc' }, ownerReferences: owner },
      spec: {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-3'] }] }],
            },
          },
        },
        containers: [{ name: 'c', image: 'img:2' }],
      },
      status: {
        phase: 'Pending',
        conditions: [
          { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 1 Insufficient cpu.' },
        ],
      },
    });
    assert.equal(p.node, 'node-3');
    assert.equal(p.scheduled, false);
    assert.equal(p.hash, 'abc');
    assert.equal(p.waitingReason, 'Unschedulable');
    assert.match(p.waitingMessage ?? '', /Insufficient cpu/);
    assert.deepEqual(p.metadata.ownerReferences, owner);
  });

  it('marked not ready: Ready False beside ContainersReady True and every readiness gate True, only while Running', () => {
    const running = (conditions: { type: string; status: string }[], extra: Record<string, unknown> = {}, phase = 'Running') =>
      slimPod({
        metadata: { name: 'p', labels: { 'controller-revision-hash': 'h' } },
        spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }], ...extra },
        status: { phase, conditions, containerStatuses: [{ name: 'c', ready: true, restartCount: 0, state: { running: {} } }] },
      });
    const marked = [
      { type: 'Ready', status: 'False' },
      { type: 'ContainersReady', status: 'True' },
    ];
    const gate = { readinessGates: [{ conditionType: 'example.com/lb' }] };
    const cases: { name: string; pod: ReturnType<typeof slimPod>; want: boolean }[] = [
      { name: 'the node lifecycle controller marked it (no gates)', pod: running(marked), want: true },
      {
        name: 'a readiness probe failing: ContainersReady False',
        pod: running([
          { type: 'Ready', status: 'False' },
          { type: 'ContainersReady', status: 'False' },
        ]),
        want: false,
      },
      { name: 'a readiness gate not yet True', pod: running([...marked, { type: 'example.com/lb', status: 'False' }], gate), want: false },
      { name: 'a readiness gate with no condition yet', pod: running(marked, gate), want: false },
      { name: 'every readiness gate True', pod: running([...marked, { type: 'example.com/lb', status: 'True' }], gate), want: true },
      {
        name: 'Ready True',
        pod: running([
          { type: 'Ready', status: 'True' },
          { type: 'ContainersReady', status: 'True' },
        ]),
        want: false,
      },
      { name: 'not Running (Succeeded)', pod: running(marked, {}, 'Succeeded'), want: false },
    ];
    for (const tc of cases) assert.equal(tc.pod.markedNotReady === true, tc.want, tc.name);
  });

  it('a container waiting reason wins, transient ones (ContainerCreating) do not count', () => {
    const base = {
      metadata: { name: 'p', labels: { 'controller-revision-hash': 'h' } },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] },
    };
    const pulling = slimPod({
      ...base,
      status: {
        phase: 'Pending',
        containerStatuses: [
          {
            name: 'c',
            ready: false,
            restartCount: 0,
            state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "i"' } },
          },
        ],
      },
    });
    assert.deepEqual([pulling.node, pulling.scheduled, pulling.waitingReason], ['n1', true, 'ImagePullBackOff']);
    const creating = slimPod({
      ...base,
      status: {
        phase: 'Pending',
        containerStatuses: [{ name: 'c', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }],
      },
    });
    assert.equal(creating.waitingReason, undefined);
    const ready = slimPod({
      ...base,
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }],
        containerStatuses: [{ name: 'c', ready: true, restartCount: 2 }],
      },
    });
    assert.deepEqual([ready.ready, ready.readySince, ready.restartCount], [true, '2026-01-01T00:00:00Z', 2]);
  });

  it('only the controller owner is kept, and large fields are dropped', () => {
    const p = slimPod({
      metadata: {
        name: 'p',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n', uid: 'u' }],
        managedFields: [{ big: 'x'.repeat(1000) }],
      },
      spec: { containers: [], volumes: [{ name: 'v' }] },
      status: {},
    });
    assert.equal(p.metadata.ownerReferences, undefined);
    assert.ok(JSON.stringify(p).length < 300, JSON.stringify(p));
  });
});

describe('slimDaemonSet, slimRevision, slimNode', () => {
  it('keeps the placement, counters and only our annotations', () => {
    const ds = slimDaemonSet({
      metadata: {
        name: 'd',
        namespace: 'ns',
        uid: 'u',
        generation: 4,
        annotations: {
          'deprecated.daemonset.template.generation': '3',
          'kubectl.kubernetes.io/last-applied-configuration': '{…}',
          'rolloutguard.dev/undo': 'disabled',
        },
      },
      spec: {
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
        template: {
          spec: { nodeSelector: { a: 'b' }, tolerations: [{ key: 'gpu', operator: 'Exists' }], containers: [{ image: 'img:1' }] },
        },
      },
      status: { observedGeneration: 4, desiredNumberScheduled: 3, numberReady: 2 },
    });
    assert.deepEqual(ds.metadata.annotations, { 'deprecated.daemonset.template.generation': '3', 'rolloutguard.dev/undo': 'disabled' });
    assert.deepEqual(ds.spec.placement, { nodeSelector: { a: 'b' }, tolerations: [{ key: 'gpu', operator: 'Exists' }] });
    assert.deepEqual(ds.spec.updateStrategy.rollingUpdate, { maxSurge: 1, maxUnavailable: 0 });
    assert.equal(ds.status.desiredNumberScheduled, 3);
    assert.equal(ds.status.updatedNumberScheduled, 0, 'absent counters read as 0');
  });

  it('revision hash from the label, else the name suffix; node taints', () => {
    assert.equal(slimRevision({ metadata: { name: 'd-abc', labels: { 'controller-revision-hash': 'abc' } }, revision: 3 }).hash, 'abc');
    assert.deepEqual(slimRevision({ metadata: { name: 'd-xyz' }, revision: 2 }), { metadata: { name: 'd-xyz' }, hash: 'xyz', revision: 2 });
    assert.deepEqual(
      slimNode({
        metadata: { name: 'n', labels: { a: '1' } },
        spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] },
        status: { images: ['huge'] },
      }).taints,
      [{ key: 'k', effect: 'NoSchedule' }],
    );
  });
});

describe('the template digest of a DaemonSet and of its ControllerRevisions', () => {
  const template = (image: string): Record<string, unknown> => ({
    metadata: { creationTimestamp: null, labels: { app: 'decoder' } },
    spec: { containers: [{ name: 'decoder', image, resources: { requests: { cpu: '100m' } } }], nodeSelector: { pool: 'gpu' } },
  });
  const ds = (image: string): ReturnType<typeof slimDaemonSet> =>
    slimDaemonSet({ metadata: { name: 'decoder', uid: 'u', generation: 2 }, spec: { template: template(image) } });
  // As the DaemonSet controller stores it: the template under spec, marked "$patch": "replace", its
  // keys in another order and the null creationTimestamp left out by a client that dropped it.
  const revision = (image: string): ReturnType<typeof slimRevision> =>
    slimRevision({
      metadata: { name: 'decoder-abc', labels: { 'controller-revision-hash': 'abc' } },
      revision: 2,
      data: {
        spec: {
          template: {
            $patch: 'replace',
            spec: { nodeSelector: { pool: 'gpu' }, containers: [{ image, name: 'decoder', resources: { requests: { cpu: '100m' } } }] },
            metadata: { labels: { app: 'decoder' } },
          },
        },
      },
    });

  it('is the same for the live template and the revision that stores it, and differs for another template', () => {
    assert.match(ds('img:1').spec.templateDigest ?? '', /^[0-9a-f]{16}$/);
    assert.equal(revision('img:1').templateDigest, ds('img:1').spec.templateDigest);
    assert.notEqual(revision('img:2').templateDigest, ds('img:1').spec.templateDigest);
  });

  it('is absent when there is no template to digest', () => {
    assert.equal(slimRevision({ metadata: { name: 'd-xyz' }, revision: 2 }).templateDigest, undefined);
    assert.equal(slimDaemonSet({ metadata: { name: 'd' }, spec: {} }).spec.templateDigest, undefined);
  });
});

describe('slim: what attribution reads', () => {
  it('a node keeps what its Ready and pressure conditions say, never their heartbeat times', () => {
    const raw = (heartbeat: string): unknown => ({
      metadata: { name: 'n' },
      spec: { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] },
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'Unknown',
            reason: 'NodeStatusUnknown',
            message: 'Kubelet stopped posting node status.',
            lastHeartbeatTime: heartbeat,
          },
          { type: 'MemoryPressure', status: 'True', lastHeartbeatTime: heartbeat },
          { type: 'DiskPressure', status: 'False', lastHeartbeatTime: heartbeat },
        ],
      },
    });
    const a = slimNode(raw('2026-01-01T00:00:00Z'));
    assert.deepEqual(a.health, {
      ready: 'Unknown',
      reason: 'NodeStatusUnknown',
      message: 'Kubelet stopped posting node status.',
      pressure: ['MemoryPressure'],
      unreachable: true,
    });
    assert.deepEqual(slimNode(raw('2026-01-01T00:00:10Z')), a, 'a heartbeat changes nothing kept');
  });

  it('a pod keeps its latest termination (reason, exit code, when) and names a waiting init container', () => {
    const p = slimPod({
      metadata: { name: 'p', deletionTimestamp: '2026-01-01T00:01:00Z' },
      spec: { nodeName: 'n' },
      status: {
        phase: 'Pending',
        initContainerStatuses: [
          { name: 'setup', restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "x"' } } },
        ],
        containerStatuses: [
          {
            name: 'a',
            restartCount: 2,
            lastState: { terminated: { reason: 'OOMKilled', exitCode: 137, finishedAt: '2026-01-01T00:00:30Z' } },
          },
          { name: 'b', restartCount: 1, lastState: { terminated: { reason: 'Error', exitCode: 1, finishedAt: '2026-01-01T00:00:10Z' } } },
        ],
      },
    });
    assert.deepEqual(p.lastTermination, { container: 'a', reason: 'OOMKilled', exitCode: 137, at: '2026-01-01T00:00:30Z' });
    assert.equal(p.waitingReason, 'ImagePullBackOff');
    assert.equal(p.waitingMessage, 'init container setup: Back-off pulling image "x"');
    assert.equal(p.metadata.deletionTimestamp, '2026-01-01T00:01:00Z');
  });

  it('an unscheduled pod with no PodScheduled condition was never looked at by a scheduler', () => {
    assert.equal(slimPod({ metadata: { name: 'p' }, spec: {}, status: { phase: 'Pending' } }).schedulingAttempted, false);
    assert.equal(
      slimPod({
        metadata: { name: 'p' },
        spec: {},
        status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
      }).schedulingAttempted,
      undefined,
    );
  });

  it('a revision keeps a digest per volume, not the template: the same volume digests the same', () => {
    const rev = (cm: string): unknown => ({
      metadata: { name: 'd-h' },
      revision: 1,
      data: {
        spec: {
          template: {
            spec: { volumes: [{ name: 'settings', configMap: { name: cm } }], containers: [{ name: 'x', image: 'big'.repeat(100) }] },
          },
        },
      },
    });
    const a = slimRevision(rev('one'));
    assert.deepEqual(Object.keys(a.volumes ?? {}), ['settings']);
    assert.equal(slimRevision(rev('one')).volumes?.settings, a.volumes?.settings);
    assert.notEqual(slimRevision(rev('two')).volumes?.settings, a.volumes?.settings);
    assert.ok(!JSON.stringify(a).includes('bigbig'));
    assert.deepEqual(
      slimRevision({ metadata: { name: 'd-h' }, revision: 1, data: { spec: { template: { spec: { containers: [] } } } } }).volumes,
      {},
      'no volumes is known, and empty',
    );
  });

  it("host ports follow the API server's defaulting: on hostNetwork every container port is a host port", () => {
    const cases: Array<{ name: string; spec: Record<string, unknown>; want: string[] }> = [
      {
        name: 'hostNetwork, containerPort only (aws-node): the port is taken on the node',
        spec: { hostNetwork: true, containers: [{ name: 'aws-node', ports: [{ containerPort: 61678, name: 'metrics' }] }] },
        want: ['61678/TCP'],
      },
      {
        name: 'hostNetwork, init container and UDP ports too',
        spec: {
          hostNetwork: true,
          initContainers: [{ name: 'init', ports: [{ containerPort: 9000 }] }],
          containers: [{ name: 'a', ports: [{ containerPort: 8472, protocol: 'UDP' }] }],
        },
        want: ['8472/UDP', '9000/TCP'],
      },
      {
        name: 'hostNetwork with hostPort written out: the same port, once',
        spec: { hostNetwork: true, containers: [{ name: 'a', ports: [{ containerPort: 9100, hostPort: 9100 }] }] },
        want: ['9100/TCP'],
      },
      {
        name: 'pod network, containerPort only: no host port',
        spec: { containers: [{ name: 'a', ports: [{ containerPort: 9100 }] }] },
        want: [],
      },
      {
        name: 'pod network, hostPort declared: that host port',
        spec: { containers: [{ name: 'a', ports: [{ containerPort: 80, hostPort: 8080 }] }] },
        want: ['8080/TCP'],
      },
    ];
    for (const c of cases) assert.deepEqual(templateFacets({ spec: c.spec }).hostPorts, c.want, c.name);
  });

  it('a Warning Event keeps the involved object, reason, time and a bounded message', () => {
    const e = slimEvent({
      metadata: { name: 'decoder.1', namespace: 'ns', managedFields: [{ big: 'x'.repeat(500) }] },
      involvedObject: { kind: 'DaemonSet', name: 'decoder', namespace: 'ns', uid: 'u' },
      reason: 'FailedCreate',
      message: `Error creating: ${'y'.repeat(3000)}`,
      lastTimestamp: '2026-01-01T00:00:05Z',
      firstTimestamp: '2026-01-01T00:00:00Z',
    });
    assert.deepEqual(e.involved, { kind: 'DaemonSet', name: 'decoder', namespace: 'ns' });
    assert.equal(e.at, '2026-01-01T00:00:05Z');
    assert.equal(e.message.length, 1024);
    assert.ok(JSON.stringify(e).length < 1300);
  });
});

describe('slimPod: the revision hash', () => {
  const owned = (kind: string, name: string, label: string | undefined, controller = true): ReturnType<typeof slimPod> =>
    slimPod({
      metadata: {
        name: `${name}-0`,
        ...(label !== undefined ? { labels: { 'controller-revision-hash': label } } : {}),
        ownerReferences: [{ apiVersion: 'apps/v1', kind, name, uid: 'o', controller }],
      },
      spec: {},
      status: {},
    });
  const cases: Array<[string, ReturnType<typeof slimPod>, string]> = [
    [
      "a StatefulSet's pod: its label names the ControllerRevision, read as the hash",
      owned('StatefulSet', 'store', 'store-7d4b9c8f'),
      '7d4b9c8f',
    ],
    ['a StatefulSet whose name has a hyphen', owned('StatefulSet', 'my-store', 'my-store-7d4b9c8f'), '7d4b9c8f'],
    ["a StatefulSet's pod whose label names another owner: kept as is", owned('StatefulSet', 'store', 'other-7d4b9c8f'), 'other-7d4b9c8f'],
    ['a daemon pod: its label is the hash', owned('DaemonSet', 'decoder', '7d4b9c8f'), '7d4b9c8f'],
    [
      "a daemon pod whose hash starts with its DaemonSet's name: kept as is",
      owned('DaemonSet', 'decoder', 'decoder-7d4b9c8f'),
      'decoder-7d4b9c8f',
    ],
    ['a StatefulSet that is not the controller', owned('StatefulSet', 'store', 'store-7d4b9c8f', false), 'store-7d4b9c8f'],
    ['no label', owned('StatefulSet', 'store', undefined), ''],
  ];
  for (const [name, pod, want] of cases) it(name, () => assert.equal(pod.hash, want));
});
