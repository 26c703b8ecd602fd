/**
 * A guard with a selector planned as a namespace-scoped policy: only its own namespace, never with an
 * empty selector, a hand-written guard winning, selector guards ranking before policies, deletions
 * limited to its own generated guards.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { claimantRef, generatedBy, planPolicy, type WorkloadRef, type GuardRefView } from '../../src/domain/policyPlan.js';
import type { PolicyView } from '../../src/api/objects.js';

const dss: WorkloadRef[] = [
  { kind: 'DaemonSet', namespace: 'team', name: 'a', labels: { tier: 'agent' }, ignored: false },
  { kind: 'DaemonSet', namespace: 'team', name: 'b', labels: { tier: 'agent' }, ignored: false },
  { kind: 'DaemonSet', namespace: 'team', name: 'c', labels: { tier: 'app' }, ignored: false },
  { kind: 'DaemonSet', namespace: 'other', name: 'a', labels: { tier: 'agent' }, ignored: false },
];
const sel: PolicyView = {
  name: 'agents',
  uid: 'u-sel',
  namespace: 'team',
  selector: { matchLabels: { tier: 'agent' } },
  guard: { bakeSeconds: 30, onStall: { action: 'Undo' } },
};
const policy: PolicyView = { name: 'aaa', uid: 'u-pol', selector: { matchLabels: { tier: 'agent' } } };
const namespaces = [
  { name: 'team', labels: {} },
  { name: 'other', labels: {} },
];

describe('planPolicy for a guard with a selector', () => {
  it('selects the matching DaemonSets of its own namespace only, with its settings', () => {
    const plan = planPolicy(sel, [sel], [], dss, []);
    assert.equal(plan.matched, 2);
    assert.deepEqual(
      plan.desired.map((d) => `${d.namespace}/${d.name}->${d.target}`),
      ['team/agents-a->a', 'team/agents-b->b'],
    );
    assert.deepEqual(plan.desired[0]?.spec, { targetRef: { kind: 'DaemonSet', name: 'a' }, bakeSeconds: 30, onStall: { action: 'Undo' } });
  });

  it('an empty selector selects nothing', () => {
    const empty: PolicyView = { ...sel, selector: {} };
    assert.equal(planPolicy(empty, [empty], [], dss, []).matched, 0);
    const absent: PolicyView = { name: 'x', uid: 'u-x', namespace: 'team' };
    assert.equal(planPolicy(absent, [absent], [], dss, []).matched, 0);
  });

  it('a hand-written guard on a selected DaemonSet wins and is reported', () => {
    const hw: GuardRefView = {
      namespace: 'team',
      name: 'mine',
      kind: 'DaemonSet',
      target: 'b',
      spec: { targetRef: { kind: 'DaemonSet', name: 'b' } },
    };
    const plan = planPolicy(sel, [sel], [], dss, [hw]);
    assert.deepEqual(
      plan.desired.map((d) => d.target),
      ['a'],
    );
    assert.deepEqual(plan.conflicts, [
      { namespace: 'team', kind: 'DaemonSet', name: 'b', reason: 'HandWrittenGuard', winner: 'rolloutguard/mine' },
    ]);
  });

  it('a selector guard wins over a policy, and both report it; another selector guard of the same name sorts', () => {
    const forSel = planPolicy(sel, [sel, policy], namespaces, dss, []);
    assert.equal(forSel.desired.length, 2);
    // The selector guard reports the overlap too, on each DaemonSet both select (not an empty list).
    assert.deepEqual(
      forSel.conflicts.map((c) => `${c.namespace}/${c.name} ${c.reason} ${c.winner}`),
      ['team/a OverlappingSelector rolloutguard/agents', 'team/b OverlappingSelector rolloutguard/agents'],
    );
    const forPolicy = planPolicy(policy, [sel, policy], namespaces, dss, []);
    assert.deepEqual(
      forPolicy.desired.map((d) => `${d.namespace}/${d.target}`),
      ['other/a'],
    );
    assert.equal(forPolicy.conflicts.filter((c) => c.winner === 'rolloutguard/agents').length, 2);
    const later: PolicyView = { ...sel, name: 'zz', uid: 'u-zz' };
    assert.equal(planPolicy(later, [sel, later], [], dss, []).desired.length, 0);
  });

  it('policies alone still report OverlappingPolicy', () => {
    const other: PolicyView = { ...policy, name: 'bbb', uid: 'u-b' };
    const plan = planPolicy(other, [policy, other], namespaces, dss, []);
    assert.ok(plan.conflicts.length > 0 && plan.conflicts.every((c) => c.reason === 'OverlappingPolicy'));
  });

  it('deletes only its own generated guards (label, namespace and owner UID) no longer matching', () => {
    const spec = { targetRef: { kind: 'DaemonSet' as const, name: 'c' } };
    const stale: GuardRefView = {
      namespace: 'team',
      name: 'agents-c',
      kind: 'DaemonSet',
      target: 'c',
      selectorGuard: 'agents',
      ownerUid: 'u-sel',
      spec,
    };
    const foreign: GuardRefView = { ...stale, name: 'agents-c2', ownerUid: 'u-other' };
    const policyMade: GuardRefView = {
      namespace: 'team',
      name: 'agents-c3',
      kind: 'DaemonSet',
      target: 'c',
      policy: 'agents',
      ownerUid: 'u-sel',
      spec,
    };
    const plan = planPolicy(sel, [sel], [], dss, [stale, foreign, policyMade]);
    assert.deepEqual(
      plan.deletions.map((g) => g.name),
      ['agents-c'],
    );
    assert.equal(generatedBy(foreign, sel), false);
    assert.equal(claimantRef(sel), 'rolloutguard/agents');
    assert.equal(claimantRef(policy), 'rolloutguardpolicy/aaa');
  });
});
