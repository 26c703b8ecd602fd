/**
 * explainNoPod / explainPod / mountedVolume / probeFailure: causes read from the Warning Events the DaemonSet
 * controller and the kubelet emit, with their owner. Messages are the servers' own wording.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attribute } from '../../src/domain/decide/attribute.js';
import { computeSplit } from '../../src/domain/split.js';
import type { WarningView } from '../../src/domain/observation.js';
import { explainNoPod, explainPod, mountedVolume, probeFailure } from '../../src/domain/warnings.js';
import { HASH, T0, health, iso, node, pod, rev, sec, withHealth } from '../support/fixtures.js';

const SINCE = T0 + sec(60);
const w = (reason: string, message: string, at = SINCE + sec(1)): WarningView => ({ reason, message, at: iso(at) });

const PSA =
  'Error creating: pods "decoder-x7k2p" is forbidden: violates PodSecurity "baseline:latest": privileged (container "decoder" must not set securityContext.privileged=true)';
const WEBHOOK =
  'Error creating: admission webhook "validation.gatekeeper.sh" denied the request: [no-privileged] privileged container is not allowed: decoder';
const QUOTA_PODS =
  'Error creating: pods "decoder-abcde" is forbidden: exceeded quota: pod-count, requested: pods=1, used: pods=3, limited: pods=3';
const QUOTA_CPU =
  'Error creating: pods "decoder-abcde" is forbidden: exceeded quota: compute, requested: requests.cpu=4, used: requests.cpu=2, limited: requests.cpu=4';

describe("explainNoPod: the DaemonSet controller's FailedCreate", () => {
  const cases: Array<{ name: string; warning?: WarningView; want?: { owner: string; cause: string; quote?: RegExp } }> = [
    {
      name: 'Pod Security refusal: the revision, quoted',
      warning: w('FailedCreate', PSA),
      want: { owner: 'Revision', cause: 'AdmissionRefused', quote: /violates PodSecurity "baseline:latest": privileged/ },
    },
    {
      name: 'a policy webhook refusal (Gatekeeper): the revision',
      warning: w('FailedCreate', WEBHOOK),
      want: { owner: 'Revision', cause: 'AdmissionRefused', quote: /denied the request/ },
    },
    {
      name: "a quota on the pod count (a maxSurge pod with no room): the namespace's configuration, the quota named",
      warning: w('FailedCreate', QUOTA_PODS),
      want: { owner: 'Configuration', cause: 'QuotaExceeded', quote: /ResourceQuota pod-count/ },
    },
    {
      name: 'a quota on requests: the revision asks for more than the namespace allows',
      warning: w('FailedCreate', QUOTA_CPU),
      want: { owner: 'Revision', cause: 'QuotaExceeded', quote: /requests \(requests\.cpu\) exceed ResourceQuota compute/ },
    },
    { name: 'a refusal from before the rollout explains nothing now', warning: w('FailedCreate', PSA, SINCE - sec(5)) },
    {
      name: "an event stamped in the rollout's first second (one-second precision) still explains it",
      warning: w('FailedCreate', PSA, SINCE - 800),
      want: { owner: 'Revision', cause: 'AdmissionRefused' },
    },
    {
      name: 'other DaemonSet warnings are not a refusal',
      warning: w('FailedDaemonPod', 'Found failed daemon pod decoder-abc on node node-1, will try to kill it'),
    },
    { name: 'no event', warning: undefined },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = explainNoPod(tc.warning, SINCE);
      if (!tc.want) return assert.equal(got, undefined);
      assert.equal(got?.owner, tc.want.owner);
      assert.equal(got?.cause, tc.want.cause);
      if (tc.want.quote) assert.match(got.message, tc.want.quote);
    });
  }
});

describe("explainPod: the kubelet's Warning Events on a pod that does not start", () => {
  const MOUNT = 'MountVolume.SetUp failed for volume "settings" : configmap "decoder-settings" not found';
  const cases: Array<{ name: string; warning: WarningView; changed?: boolean; want?: { owner: string; cause: string } }> = [
    {
      name: 'a volume the new revision added does not mount: the revision',
      warning: w('FailedMount', MOUNT),
      changed: true,
      want: { owner: 'Revision', cause: 'VolumeMountFailure' },
    },
    {
      name: 'a volume the new revision left as it was does not mount: the node',
      warning: w('FailedMount', MOUNT),
      changed: false,
      want: { owner: 'Node', cause: 'VolumeMountFailure' },
    },
    {
      name: 'whether the revision changed it is not known: unknown owner, still named',
      warning: w('FailedMount', MOUNT),
      want: { owner: 'Unknown', cause: 'VolumeMountFailure' },
    },
    {
      name: 'a sandbox or CNI failure: the node, never the revision',
      warning: w(
        'FailedCreatePodSandBox',
        'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox: plugin type="calico" failed (add): stat /var/lib/calico/nodename: no such file or directory',
      ),
      changed: true,
      want: { owner: 'Node', cause: 'SandboxFailure' },
    },
    { name: 'an old event explains nothing', warning: w('FailedMount', MOUNT, SINCE - sec(5)), changed: true },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = explainPod(tc.warning, SINCE, () => tc.changed);
      if (!tc.want) return assert.equal(got, undefined);
      assert.equal(got?.owner, tc.want.owner);
      assert.equal(got?.cause, tc.want.cause);
      assert.match(got.message, /"/, "the kubelet's words are quoted");
    });
  }

  it('mountedVolume reads the volume name from both kubelet wordings', () => {
    assert.equal(mountedVolume('MountVolume.SetUp failed for volume "settings" : configmap "x" not found'), 'settings');
    assert.equal(
      mountedVolume('Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data kube-api-access-x]: timed out'),
      'data',
    );
    assert.equal(mountedVolume('something else'), undefined);
  });
});

describe('attribute: Events explain empty and stuck nodes', () => {
  const readyNode = (name: string, pods = [] as ReturnType<typeof pod>[]) => withHealth(node(name, pods), health());
  it('an empty Ready node refused by admission is evidence against the revision', () => {
    const nodes = [readyNode('node-1', [pod({ hash: HASH.A })]), readyNode('node-2', [])];
    const split = computeSplit(nodes, [rev(HASH.A, 1), rev(HASH.B, 2)], HASH.B);
    const a = attribute(
      {
        split,
        nodes,
        minReadySeconds: 0,
        observed: true,
        incomplete: true,
        left: [],
        shrank: false,
        since: SINCE,
        warning: w('FailedCreate', PSA),
      },
      SINCE + sec(10),
    );
    assert.equal(a.owner, 'Revision');
    assert.equal(a.cause, 'AdmissionRefused');
    assert.deepEqual(a.revisionEvidence, ['node-2']);
    assert.match(a.empty[0]!.message, /violates PodSecurity/);
  });

  it("a pod in ContainerCreating with a sandbox failure is the node's", () => {
    const stuck = pod({
      hash: HASH.B,
      phase: 'Pending',
      ready: false,
      warning: w('FailedCreatePodSandBox', 'Failed to create pod sandbox: network plugin not ready'),
    });
    const nodes = [readyNode('node-1', [stuck])];
    const split = computeSplit(nodes, [rev(HASH.A, 1), rev(HASH.B, 2)], HASH.B);
    const a = attribute(
      { split, nodes, minReadySeconds: 0, observed: true, incomplete: true, left: [], shrank: false, since: SINCE },
      SINCE + sec(10),
    );
    assert.equal(a.owner, 'Node');
    assert.equal(a.cause, 'SandboxFailure');
    assert.deepEqual(a.revisionEvidence, []);
  });

  it('a definitive container reason wins over an older mount warning', () => {
    const p = pod({
      hash: HASH.B,
      waitingReason: 'ImagePullBackOff',
      waitingMessage: 'Back-off pulling image',
      warning: w('FailedMount', 'MountVolume.SetUp failed for volume "x" : not found'),
    });
    const nodes = [readyNode('node-1', [p])];
    const split = computeSplit(nodes, [rev(HASH.A, 1), rev(HASH.B, 2)], HASH.B);
    const a = attribute(
      {
        split,
        nodes,
        minReadySeconds: 0,
        observed: true,
        incomplete: true,
        left: [],
        shrank: false,
        since: SINCE,
        volumeChanged: () => false,
      },
      SINCE + sec(10),
    );
    assert.equal(a.cause, 'ImagePullFailure');
  });

  it("a running pod that is not ready names what its readiness probe printed (the kubelet's Unhealthy Event)", () => {
    const probing = pod({ hash: HASH.B, ready: false, warning: w('Unhealthy', 'Readiness probe failed: not yet\n') });
    const nodes = [readyNode('node-1', [probing])];
    const split = computeSplit(nodes, [rev(HASH.A, 1), rev(HASH.B, 2)], HASH.B);
    const a = attribute(
      { split, nodes, minReadySeconds: 0, observed: true, incomplete: true, left: [], shrank: false, since: SINCE },
      SINCE + sec(10),
    );
    assert.equal(a.blocked[0]?.cause, 'NotReady');
    assert.equal(a.blocked[0]?.owner, 'Revision');
    assert.equal(a.blocked[0]?.message, 'container running but not ready; the kubelet: "Readiness probe failed: not yet"');
  });
});

describe("probeFailure: the kubelet's Unhealthy Event on a pod that is not ready", () => {
  const cases: Array<{ name: string; warning?: WarningView; want?: string }> = [
    {
      name: 'a readiness probe that printed something',
      warning: w('Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 503'),
      want: '"Readiness probe failed: HTTP probe failed with statuscode: 503"',
    },
    {
      name: 'an exec probe that printed nothing: the trailing space goes',
      warning: w('Unhealthy', 'Readiness probe failed: '),
      want: '"Readiness probe failed:"',
    },
    {
      name: 'a startup probe',
      warning: w('Unhealthy', 'Startup probe failed: dial tcp 10.244.0.5:8080: connect: connection refused'),
      want: '"Startup probe failed: dial tcp 10.244.0.5:8080: connect: connection refused"',
    },
    {
      name: 'a probe that errored (the container exited meanwhile)',
      warning: w(
        'Unhealthy',
        'Readiness probe errored and resulted in unknown state: rpc error: code = Unknown desc = failed to exec in container: container is in CONTAINER_EXITED state',
      ),
      want: '"Readiness probe errored and resulted in unknown state: rpc error: code = Unknown desc = failed to exec in container: container is in CONTAINER_EXITED state"',
    },
    {
      name: 'a liveness probe: the kubelet restarts the container, a crash says more',
      warning: w('Unhealthy', 'Liveness probe failed: HTTP probe failed with statuscode: 500'),
    },
    { name: 'an Unhealthy Event from before the rollout', warning: w('Unhealthy', 'Readiness probe failed: x', SINCE - sec(5)) },
    { name: 'another reason', warning: w('FailedMount', 'MountVolume.SetUp failed for volume "x" : not found') },
    { name: 'no event', warning: undefined },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(probeFailure(tc.warning, SINCE), tc.want));
});
