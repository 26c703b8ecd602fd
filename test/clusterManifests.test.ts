/**
 * The shared DaemonSet manifest: what every one has unless its caller says otherwise, and the options a
 * real node's DaemonSets take (no requests, a memory limit, a readiness probe, a longer grace period),
 * which only the real-node suite applies and a kwok pool ignores.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { daemonSetManifest, type DaemonSetOptions } from '../cluster/manifests.js';

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
