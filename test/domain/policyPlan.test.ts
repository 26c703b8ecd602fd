/**
 * Policy planning: selection, the ignore annotation, hand-written guards winning, deterministic
 * overlap resolution, deletions limited to the policy's own guards, and generated names.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  generatedGuardName,
  matchesSelector,
  planPolicy,
  type WorkloadRef,
  type GuardRefView,
  type NamespaceView,
} from '../../src/domain/policyPlan.js';
import type { PolicyView } from '../../src/api/objects.js';

const ns: NamespaceView[] = [
  { name: 'gpu-a', labels: { team: 'gpu' } },
  { name: 'web', labels: { team: 'web' } },
];
const dss: WorkloadRef[] = [
  { kind: 'DaemonSet', namespace: 'gpu-a', name: 'agent', labels: { tier: 'node-agent' }, ignored: false },
  { kind: 'DaemonSet', namespace: 'gpu-a', name: 'app', labels: { tier: 'app' }, ignored: false },
  { kind: 'DaemonSet', namespace: 'gpu-a', name: 'skip', labels: { tier: 'node-agent' }, ignored: true },
  { kind: 'DaemonSet', namespace: 'web', name: 'agent', labels: { tier: 'node-agent' }, ignored: false },
];
const gpu: PolicyView = {
  name: 'gpu',
  uid: 'u-gpu',
  namespaceSelector: { matchLabels: { team: 'gpu' } },
  selector: { matchLabels: { tier: 'node-agent' } },
  guard: { progressDeadlineSeconds: 300 },
};
const all: PolicyView = {
  name: 'all',
  uid: 'u-all',
  selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['node-agent'] }] },
};

describe('matchesSelector', () => {
  const cases: Array<[string, Parameters<typeof matchesSelector>[0], Record<string, string>, boolean]> = [
    ['empty selects all', {}, { a: '1' }, true],
    ['absent selects all', undefined, {}, true],
    ['matchLabels hit', { matchLabels: { a: '1' } }, { a: '1', b: '2' }, true],
    ['matchLabels miss', { matchLabels: { a: '1' } }, { a: '2' }, false],
    ['In', { matchExpressions: [{ key: 'a', operator: 'In', values: ['1', '2'] }] }, { a: '2' }, true],
    ['In, key absent', { matchExpressions: [{ key: 'a', operator: 'In', values: ['1'] }] }, {}, false],
    ['NotIn, key absent', { matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['1'] }] }, {}, true],
    ['NotIn hit', { matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['1'] }] }, { a: '1' }, false],
    ['Exists', { matchExpressions: [{ key: 'a', operator: 'Exists' }] }, { a: '' }, true],
    ['DoesNotExist', { matchExpressions: [{ key: 'a', operator: 'DoesNotExist' }] }, { a: 'x' }, false],
    ['unknown operator fails closed', { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }, { a: '5' }, false],
  ];
  for (const [name, sel, labels, want] of cases) it(name, () => assert.equal(matchesSelector(sel, labels), want));
});

describe('planPolicy', () => {
  it('guards the selected DaemonSets, skipping ignored ones and other namespaces', () => {
    const p = planPolicy(gpu, [gpu], ns, dss, []);
    assert.equal(p.matched, 1);
    assert.deepEqual(
      p.desired.map((d) => `${d.namespace}/${d.target}`),
      ['gpu-a/agent'],
    );
    assert.deepEqual(p.desired[0]!.spec, { targetRef: { kind: 'DaemonSet', name: 'agent' }, progressDeadlineSeconds: 300 });
    assert.deepEqual(p.conflicts, []);
  });

  it('a hand-written guard wins and is reported', () => {
    const hw: GuardRefView = {
      namespace: 'gpu-a',
      name: 'mine',
      kind: 'DaemonSet',
      target: 'agent',
      spec: { targetRef: { kind: 'DaemonSet', name: 'agent' } },
    };
    const p = planPolicy(gpu, [gpu], ns, dss, [hw]);
    assert.deepEqual(p.desired, []);
    assert.deepEqual(p.conflicts, [
      { namespace: 'gpu-a', kind: 'DaemonSet', name: 'agent', reason: 'HandWrittenGuard', winner: 'rolloutguard/mine' },
    ]);
    assert.deepEqual(p.deletions, [], 'never deletes a hand-written guard');
  });

  it('overlaps go to the smallest policy name, whatever the order; both report it', () => {
    for (const order of [
      [gpu, all],
      [all, gpu],
    ]) {
      const a = planPolicy(all, order, ns, dss, []);
      const g = planPolicy(gpu, order, ns, dss, []);
      assert.deepEqual(
        a.desired.map((d) => `${d.namespace}/${d.target}`),
        ['gpu-a/agent', 'web/agent'],
        '"all" < "gpu"',
      );
      assert.deepEqual(g.desired, []);
      assert.deepEqual(
        g.conflicts.map((c) => c.winner),
        ['rolloutguardpolicy/all'],
      );
      assert.deepEqual(
        a.conflicts.map((c) => `${c.namespace}/${c.name}:${c.winner}`),
        ['gpu-a/agent:rolloutguardpolicy/all'],
      );
    }
  });

  it('deletes only its own generated guards that no longer match', () => {
    const stale: GuardRefView = {
      namespace: 'gpu-a',
      name: 'gpu-app',
      kind: 'DaemonSet',
      target: 'app',
      policy: 'gpu',
      ownerUid: 'u-gpu',
      spec: { targetRef: { kind: 'DaemonSet', name: 'app' } },
    };
    const foreign: GuardRefView = {
      namespace: 'gpu-a',
      name: 'other-app',
      kind: 'DaemonSet',
      target: 'app',
      policy: 'other',
      ownerUid: 'u-other',
      spec: { targetRef: { kind: 'DaemonSet', name: 'app' } },
    };
    const sameLabelOtherOwner: GuardRefView = {
      namespace: 'gpu-a',
      name: 'gpu-x',
      kind: 'DaemonSet',
      target: 'x',
      policy: 'gpu',
      ownerUid: 'u-old',
      spec: { targetRef: { kind: 'DaemonSet', name: 'x' } },
    };
    const p = planPolicy(gpu, [gpu], ns, dss, [stale, foreign, sameLabelOtherOwner]);
    assert.deepEqual(
      p.deletions.map((d) => d.name),
      ['gpu-app'],
    );
  });

  it('chooses StatefulSets only when it lists them; a claim is on kind and name', () => {
    const workloads: WorkloadRef[] = [
      ...dss,
      { kind: 'StatefulSet', namespace: 'gpu-a', name: 'agent', labels: { tier: 'node-agent' }, ignored: false },
      { kind: 'StatefulSet', namespace: 'gpu-a', name: 'off', labels: { tier: 'node-agent' }, ignored: true },
    ];
    assert.deepEqual(
      planPolicy(gpu, [gpu], ns, workloads, []).desired.map((d) => d.name),
      ['gpu-agent'],
      'a policy written before kinds keeps choosing DaemonSets alone',
    );
    const both: PolicyView = { ...gpu, targetKinds: ['DaemonSet', 'StatefulSet'] };
    // A hand-written guard of the DaemonSet named agent does not claim the StatefulSet named agent.
    const hw: GuardRefView = {
      namespace: 'gpu-a',
      name: 'mine',
      kind: 'DaemonSet',
      target: 'agent',
      spec: { targetRef: { kind: 'DaemonSet', name: 'agent' } },
    };
    const p = planPolicy(both, [both], ns, workloads, [hw]);
    assert.deepEqual(
      p.desired.map((d) => [d.name, d.spec.targetRef]),
      [['gpu-agent-sts', { kind: 'StatefulSet', name: 'agent' }]],
    );
    assert.deepEqual(p.matchedByKind, { DaemonSet: 1, StatefulSet: 1 });
    assert.deepEqual(
      p.conflicts.map((c) => `${c.kind}/${c.name}:${c.reason}`),
      ['DaemonSet/agent:HandWrittenGuard'],
    );
  });

  it('a StatefulSet whose generated name a DaemonSet took gets a hashed one, and the DaemonSet keeps its own', () => {
    const both: PolicyView = { ...gpu, namespaceSelector: {}, selector: {}, targetKinds: ['DaemonSet', 'StatefulSet'] };
    const workloads: WorkloadRef[] = [
      { kind: 'StatefulSet', namespace: 'web', name: 'x', labels: {}, ignored: false },
      { kind: 'DaemonSet', namespace: 'web', name: 'x-sts', labels: {}, ignored: false },
    ];
    const names = planPolicy(both, [both], ns, workloads, []).desired.map((d) => `${d.spec.targetRef.kind}:${d.name}`);
    assert.equal(names.length, 2);
    assert.ok(names.includes('DaemonSet:gpu-x-sts'));
    const sts = names.find((n) => n.startsWith('StatefulSet:'));
    assert.match(sts ?? '', /^StatefulSet:gpu-x-sts-[0-9a-f]{8}$/);
  });

  it('generated names are deterministic, unique per pair and at most 63 characters', () => {
    assert.equal(generatedGuardName('gpu', 'agent'), 'gpu-agent');
    const long = generatedGuardName('p'.repeat(40), 'd'.repeat(60));
    assert.ok(long.length <= 63);
    assert.equal(long, generatedGuardName('p'.repeat(40), 'd'.repeat(60)));
    assert.notEqual(long, generatedGuardName('p'.repeat(40), `${'d'.repeat(59)}e`));
    assert.match(long, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  });
});
