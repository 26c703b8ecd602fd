/**
 * The watches of guards with a selector: a DaemonSet or StatefulSet whose labels change re-plans the
 * selector guards of its namespace (only those), and a generated guard's change (its status) brings its selector
 * guard's key back, so the records follow the generated guards' verdicts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SELECTOR_GUARD_LABEL } from '../../src/api/names.js';
import type { SlimClaim, SlimDaemonSet, SlimGuard } from '../../src/api/objects.js';
import type { InformerEvent } from '../../src/k8s/informerStore.js';
import type { Caches } from '../../src/runtime/caches.js';
import { mapEventsToKeys } from '../../src/runtime/eventKeys.js';

type Handler = (e: InformerEvent<unknown>) => void;

function fakeSet<T>(items: T[]): { set: unknown; fire: (e: InformerEvent<T>) => void } {
  const handlers: Handler[] = [];
  return {
    set: {
      onEvent: (h: Handler) => handlers.push(h),
      onRelist: () => undefined,
      list: () => items,
      get: () => undefined,
    },
    fire: (e) => {
      for (const h of handlers) h(e);
    },
  };
}

const selectorGuard = (name: string, namespace: string): SlimGuard =>
  ({ metadata: { name, namespace }, spec: { selector: { matchLabels: { tier: 'agent' } } } }) as unknown as SlimGuard;

const ds = (labels: Record<string, string>): SlimDaemonSet =>
  ({ metadata: { name: 'a', namespace: 'team', labels }, spec: {}, status: {} }) as unknown as SlimDaemonSet;

function wire(guards: SlimGuard[]): {
  keys: string[];
  fireGuard: (e: InformerEvent<SlimGuard>) => void;
  fireDs: (e: InformerEvent<SlimDaemonSet>) => void;
  fireSts: (e: InformerEvent<SlimDaemonSet>) => void;
  fireClaim: (e: InformerEvent<SlimClaim>) => void;
  targets: string[];
} {
  const g = fakeSet(guards);
  const d = fakeSet<SlimDaemonSet>([]);
  const store = { metadata: { name: 'store', namespace: 'team' }, spec: { claimTemplates: ['data'] } } as unknown as SlimDaemonSet;
  const sts = fakeSet<SlimDaemonSet>([store]);
  const claims = fakeSet<SlimClaim>([]);
  const targets: string[] = [];
  const other = (): unknown => fakeSet([]).set;
  const caches = {
    guards: g.set,
    workloads: { DaemonSet: d.set, StatefulSet: sts.set, Deployment: other() },
    workloadSet: (kind: 'DaemonSet' | 'StatefulSet' | 'Deployment') =>
      kind === 'DaemonSet' ? d.set : kind === 'StatefulSet' ? sts.set : other(),
    claims: claims.set,
    revisions: other(),
    replicaSets: other(),
    warnings: { DaemonSet: other(), StatefulSet: other(), Deployment: other() },
    podWarnings: other(),
    nodes: other(),
    pods: { sync: () => undefined, targets: () => [], pod: () => undefined },
    onPodsChanged: () => undefined,
    guardsTargeting: (kind: string, ns: string, name: string) => {
      targets.push(`${kind}:${ns}/${name}`);
      return [];
    },
  } as unknown as Caches;
  const keys: string[] = [];
  mapEventsToKeys(caches, { guard: (k) => keys.push(k) });
  return { keys, fireGuard: g.fire, fireDs: d.fire, fireSts: sts.fire, fireClaim: claims.fire, targets };
}

describe('selector guard watches', () => {
  const guards = [selectorGuard('agents', 'team'), selectorGuard('elsewhere', 'other')];

  it("a DaemonSet's label change enqueues the selector guards of its namespace only", () => {
    const w = wire(guards);
    w.fireDs({ type: 'update', old: ds({ tier: 'agent' }), obj: ds({ tier: 'app' }) });
    assert.ok(w.keys.includes('team/agents'));
    assert.ok(!w.keys.includes('other/elsewhere'));
  });

  it("a StatefulSet's label change enqueues the selector guards of its namespace too (they may choose StatefulSets)", () => {
    const w = wire(guards);
    w.fireSts({ type: 'update', old: ds({ tier: 'agent' }), obj: ds({ tier: 'db' }) });
    assert.ok(w.keys.includes('team/agents'));
    assert.ok(!w.keys.includes('other/elsewhere'));
  });

  it('a DaemonSet update that changes no label enqueues no selector guard', () => {
    const w = wire(guards);
    w.fireDs({ type: 'update', old: ds({ tier: 'agent' }), obj: ds({ tier: 'agent' }) });
    assert.ok(!w.keys.includes('team/agents'));
  });

  it("a generated guard's status change enqueues its selector guard", () => {
    const w = wire(guards);
    const child = (state: string): SlimGuard => ({
      metadata: { name: 'agents-a', namespace: 'team', labels: { [SELECTOR_GUARD_LABEL]: 'agents' } },
      spec: { targetRef: { kind: 'DaemonSet', name: 'a' } },
      status: { state: state as 'Healthy' },
    });
    w.fireGuard({ type: 'update', old: child('Healthy'), obj: child('Stalled') });
    assert.ok(w.keys.includes('team/agents-a'));
    assert.ok(w.keys.includes('team/agents'));
  });

  it("a hand-written guard appearing enqueues the namespace's selector guards", () => {
    const w = wire(guards);
    const hw: SlimGuard = { metadata: { name: 'mine', namespace: 'team' }, spec: { targetRef: { kind: 'DaemonSet', name: 'a' } } };
    w.fireGuard({ type: 'add', obj: hw });
    assert.ok(w.keys.includes('team/agents'));
  });

  it("a claim's change looks up the guards of the StatefulSet whose ordinal it belongs to, and of no other", () => {
    const w = wire(guards);
    const claim = (name: string, namespace = 'team'): SlimClaim => ({ metadata: { name, namespace }, phase: 'Bound' });
    w.fireClaim({ type: 'update', obj: claim('data-store-2') });
    w.fireClaim({ type: 'update', obj: claim('data-store-extra') });
    w.fireClaim({ type: 'update', obj: claim('logs-store-1') });
    w.fireClaim({ type: 'update', obj: claim('data-store-0', 'other') });
    assert.deepEqual(w.targets, ['StatefulSet:team/store']);
  });
});
