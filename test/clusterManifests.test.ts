/**
 * The shared DaemonSet manifest: what every one has unless its caller says otherwise, and the options a
 * real node's DaemonSets take (no requests, a memory limit, a readiness probe, a longer grace period),
 * which only the real-node suite applies and a kwok pool ignores.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { daemonSetManifest, deploymentManifest, type DaemonSetOptions } from '../cluster/manifests.js';

interface PodTemplate {
  spec: { template: { spec: { terminationGracePeriodSeconds: number; containers: Array<Record<string, unknown>> } } };
}

const base: DaemonSetOptions = {
  name: 'decoder',
  namespace: 'n',
  container: { name: 'decoder', image: 'i:1', requests: { cpu: '100m', memory: '64Mi' } },
};
const podOf = (o: DaemonSetOptions): PodTemplate['spec']['template']['spec'] =>
  (daemonSetManifest(o) as unknown as PodTemplate).spec.template.spec;

describe('daemonSetManifest', () => {
  it('by default: pods gone within a second, one container with its requests and nothing else', () => {
    const pod = podOf(base);
    assert.equal(pod.terminationGracePeriodSeconds, 1);
    assert.deepEqual(pod.containers, [{ name: 'decoder', image: 'i:1', resources: { requests: { cpu: '100m', memory: '64Mi' } } }]);
  });

  it("a real node's container: no requests, a memory limit, a readiness probe, the grace period given", () => {
    const probe = { exec: { command: ['true'] }, periodSeconds: 1 };
    const pod = podOf({
      ...base,
      terminationGracePeriodSeconds: 12,
      container: { name: 'decoder', image: 'i:1', command: ['sleep', '1'], readinessProbe: probe, limits: { memory: '16Mi' } },
    });
    assert.equal(pod.terminationGracePeriodSeconds, 12);
    assert.deepEqual(pod.containers, [
      { name: 'decoder', image: 'i:1', command: ['sleep', '1'], readinessProbe: probe, resources: { limits: { memory: '16Mi' } } },
    ]);
  });

  it('a container given neither requests nor limits has no resources at all', () => {
    assert.deepEqual(podOf({ ...base, container: { name: 'decoder', image: 'i:1' } }).containers, [{ name: 'decoder', image: 'i:1' }]);
  });
});

describe('deploymentManifest', () => {
  const deployment = { name: 'web', namespace: 'n', replicas: 3, container: { name: 'web', image: 'i:1' } };
  interface DeploymentSpec {
    replicas: number;
    strategy: Record<string, unknown>;
    paused?: boolean;
    progressDeadlineSeconds?: number;
    template: { spec: { terminationGracePeriodSeconds: number } };
  }
  const specOf = (o: Parameters<typeof deploymentManifest>[0]): DeploymentSpec =>
    (deploymentManifest(o) as unknown as { spec: DeploymentSpec }).spec;

  it("by default: RollingUpdate with the API server's own surge and unavailability, pods as a DaemonSet's", () => {
    const spec = specOf(deployment);
    assert.equal(spec.replicas, 3);
    assert.deepEqual(spec.strategy, { type: 'RollingUpdate' });
    assert.equal(spec.template.spec.terminationGracePeriodSeconds, 1);
    assert.equal(spec.paused, undefined);
    assert.equal(spec.progressDeadlineSeconds, undefined);
  });

  it('Recreate takes no rollingUpdate; the Deployment fields given are written', () => {
    assert.deepEqual(specOf({ ...deployment, strategy: 'Recreate', maxSurge: 1 }).strategy, { type: 'Recreate' });
    assert.deepEqual(specOf({ ...deployment, maxSurge: 1, maxUnavailable: 0 }).strategy, {
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: 1, maxUnavailable: 0 },
    });
    const spec = specOf({ ...deployment, paused: true, progressDeadlineSeconds: 5 });
    assert.deepEqual([spec.paused, spec.progressDeadlineSeconds], [true, 5]);
  });
});
