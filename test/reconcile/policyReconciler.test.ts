/**
 * The policy reconciler's write discipline, against in-memory ports: a Conflict on the policy's status
 * re-reads the policy and plans again (bounded, as a guard's status is), and a Conflict on a generated
 * guard's spec is left to that guard's update event.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { POLICY_LABEL } from '../../src/api/names.js';
import type { PolicyStatus, SlimDaemonSet, SlimGuard, SlimPolicy } from '../../src/api/objects.js';
import { CONFLICT_ATTEMPTS } from '../../src/reconcile/portErrors.js';
import type { GuardSpecInput } from '../../src/api/types.js';
import { ApiError } from '../../src/k8s/apiErrors.js';
import { classify } from '../../src/reconcile/errors.js';
import { PolicyReconciler } from '../../src/reconcile/policyReconciler.js';
import type { PolicyCache, PolicyPorts } from '../../src/reconcile/ports.js';

const conflict = (): ApiError => new ApiError('the object has been modified', { statusCode: 409, reason: 'Conflict' });

function policy(generation: number, rv: string): SlimPolicy {
  return { metadata: { name: 'all', uid: 'u-all', generation, resourceVersion: rv }, spec: { guard: { progressDeadlineSeconds: 60 } } };
}

function daemonSet(name: string): SlimDaemonSet {
  return {
    metadata: { name, namespace: 'ns1', labels: {} },
    spec: { updateStrategy: { type: 'RollingUpdate' }, minReadySeconds: 0, placement: {}, images: [] },
    status: {
      observedGeneration: 1,
      desiredNumberScheduled: 1,
      currentNumberScheduled: 1,
      updatedNumberScheduled: 1,
      numberReady: 1,
      numberAvailable: 1,
      numberMisscheduled: 0,
    },
  };
}

/** A generated guard of policy `all` for `agent`, as cached, with a deadline the policy no longer asks for. */
const STALE_GUARD: SlimGuard = {
  metadata: {
    name: 'all-agent',
    namespace: 'ns1',
    uid: 'g-1',
    resourceVersion: '7',
    labels: { [POLICY_LABEL]: 'all' },
    ownerReferences: [{ apiVersion: 'rolloutguard.dev/v1alpha1', kind: 'RolloutGuardPolicy', name: 'all', uid: 'u-all', controller: true }],
  },
  spec: { targetRef: { kind: 'DaemonSet', name: 'agent' }, progressDeadlineSeconds: 30 },
};

interface Harness {
  ports: PolicyPorts;
  statusWrites: Array<{ rv: string | undefined; status: PolicyStatus }>;
  specPatches: Array<{ rv: string | undefined; spec: GuardSpecInput }>;
  reads: number;
}

function harness(o: { statusConflicts: number; specConflicts?: number; fresh?: SlimPolicy }): Harness {
  let statusConflicts = o.statusConflicts;
  let specConflicts = o.specConflicts ?? 0;
  const h: Harness = {
    statusWrites: [],
    specPatches: [],
    reads: 0,
    ports: {
      createGuard: () => Promise.resolve(),
      deleteGuard: () => Promise.resolve(),
      patchGuardSpec: (g, spec) => {
        h.specPatches.push({ rv: g.metadata.resourceVersion, spec });
        return specConflicts-- > 0 ? Promise.reject(conflict()) : Promise.resolve();
      },
      writeStatus: (p, status) => {
        h.statusWrites.push({ rv: p.metadata.resourceVersion, status });
        return statusConflicts-- > 0 ? Promise.reject(conflict()) : Promise.resolve();
      },
      readPolicy: () => {
        h.reads++;
        return Promise.resolve(o.fresh);
      },
    },
  };
  return h;
}

function cache(p: SlimPolicy, guards: SlimGuard[] = []): PolicyCache {
  return {
    policy: () => p,
    policies: () => [p],
    namespaces: () => [{ metadata: { name: 'ns1', labels: {} } }],
    workloads: (kind) => (kind === 'DaemonSet' ? [daemonSet('agent')] : []),
    guards: () => guards,
  };
}

const log = pino({ level: 'silent' });
const clock = { now: () => Date.UTC(2026, 0, 1) };

describe('PolicyReconciler writes', () => {
  it('a status conflict re-reads the policy and writes the status planned from the fresh copy, on its resourceVersion', async () => {
    const h = harness({ statusConflicts: 1, fresh: policy(2, '20') });
    await new PolicyReconciler(cache(policy(1, '10')), h.ports, clock, log).reconcile('all');
    assert.equal(h.reads, 1);
    assert.deepEqual(
      h.statusWrites.map((w) => [w.rv, w.status.observedGeneration]),
      [
        ['10', 1],
        ['20', 2],
      ],
    );
  });

  it(`gives up after ${CONFLICT_ATTEMPTS} conflicting attempts with a transient failure`, async () => {
    const h = harness({ statusConflicts: 100, fresh: policy(1, '10') });
    await assert.rejects(
      new PolicyReconciler(cache(policy(1, '10')), h.ports, clock, log).reconcile('all'),
      (e: unknown) => classify(e) === 'transient' && /kept conflicting/.test(String(e)),
    );
    assert.equal(h.statusWrites.length, CONFLICT_ATTEMPTS);
  });

  it('a policy deleted during the retries ends the pass', async () => {
    const h = harness({ statusConflicts: 1 });
    await new PolicyReconciler(cache(policy(1, '10')), h.ports, clock, log).reconcile('all');
    assert.equal(h.statusWrites.length, 1);
  });

  it("patches a generated guard's spec on the cached resourceVersion; a conflict there does not fail the pass", async () => {
    const h = harness({ statusConflicts: 0, specConflicts: 1 });
    await new PolicyReconciler(cache(policy(1, '10'), [STALE_GUARD]), h.ports, clock, log).reconcile('all');
    assert.deepEqual(
      h.specPatches.map((p) => [p.rv, p.spec.progressDeadlineSeconds]),
      [['7', 60]],
    );
    assert.equal(h.statusWrites.length, 1);
  });
});
