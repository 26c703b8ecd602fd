/**
 * The fleet-scale settings a cluster takes when it is created (cluster/state.ts RAISES): read from the
 * env and checked, and what each puts on the command lines of kwok and the controller manager.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { controllerManagerSpec, nodeLeaseFlags, nodeLeaseTimings } from '../cluster/controllers.js';
import { DEFAULT_PORTS } from '../cluster/ports.js';
import { KUBELET_LEASE_SECONDS, NODE_LEASE_SECONDS_ENV, monitorGraceFor, raisesFrom, type State } from '../cluster/state.js';

const state = (extra: Partial<State>): State => ({
  ports: { ...DEFAULT_PORTS },
  token: 't',
  nodeToken: 'n',
  binDir: '/bin',
  ...extra,
});
const graceFlags = (s: State): string[] => controllerManagerSpec(s).args.filter((a) => a.startsWith('--node-monitor-grace-period='));

describe('cluster settings: the node Lease of a fleet-scale cluster', () => {
  it('RG_NODE_LEASE_SECONDS is read as a positive integer, and left out when unset', () => {
    assert.deepEqual(raisesFrom({ [NODE_LEASE_SECONDS_ENV]: '200' }), { nodeLeaseSeconds: 200 });
    assert.deepEqual(raisesFrom({}), {});
    for (const bad of ['0', '-40', '12.5', 'forty'])
      assert.throws(
        () => raisesFrom({ [NODE_LEASE_SECONDS_ENV]: bad }),
        new RegExp(`${NODE_LEASE_SECONDS_ENV} must be a positive integer, got ${bad}`),
      );
  });

  it("the grace period keeps upstream's ratio to the Lease (40 s → 50 s)", () => {
    const rows: Array<[number, number]> = [
      [KUBELET_LEASE_SECONDS, 50],
      [8, 10],
      [200, 250],
      [41, 52],
    ];
    for (const [lease, grace] of rows) assert.equal(monitorGraceFor(lease), grace, `lease ${lease}`);
  });

  it("kwok's Lease: the short one of a node-lifecycle cluster first, else the raised one, else a kubelet's", () => {
    const rows: Array<[Partial<State>, number]> = [
      [{}, 40],
      [{ nodeLeaseSeconds: 200 }, 200],
      [{ nodeLifecycle: true }, 8],
      [{ nodeLifecycle: true, nodeLeaseSeconds: 200 }, 8],
    ];
    for (const [s, want] of rows) assert.equal(nodeLeaseTimings(s).leaseSeconds, want, JSON.stringify(s));
  });

  it("the controller manager's grace period follows a raised Lease, and keeps its default otherwise", () => {
    assert.deepEqual(nodeLeaseFlags({ nodeLeaseSeconds: 200 }), ['--node-monitor-grace-period=250s']);
    assert.deepEqual(nodeLeaseFlags({}), []);
    assert.deepEqual(graceFlags(state({ nodeLeaseSeconds: 200 })), ['--node-monitor-grace-period=250s']);
    assert.deepEqual(graceFlags(state({})), []);
    // A node-lifecycle cluster keeps its own short timings, which its tests of node deaths rely on.
    assert.deepEqual(graceFlags(state({ nodeLifecycle: true, nodeLeaseSeconds: 200 })), ['--node-monitor-grace-period=10s']);
  });
});
