/**
 * The selector reconciler against in-memory ports: generated guards created with their owner, label and
 * annotation; a generated guard no longer matching deleted; a hand-written guard left alone and reported;
 * one status record per DaemonSet with the worst state; without guard writes a Ready=False condition and
 * no error; a status conflict re-reads the guard.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { GENERATED_BY_ANNOTATION, SELECTOR_GUARD_LABEL } from '../../src/api/names.js';
import type { SlimDaemonSet, SlimGuard } from '../../src/api/objects.js';
import type { GuardStatus } from '../../src/api/types.js';
import { ApiError } from '../../src/k8s/apiErrors.js';
import { SelectorReconciler, type SelectorCache, type SelectorPorts } from '../../src/reconcile/selectorReconciler.js';

const log = pino({ level: 'silent' });
const clock = { now: () => Date.UTC(2026, 0, 1) };

function daemonSet(name: string, labels: Record<string, string>): SlimDaemonSet {
  return {
    metadata: { name, namespace: 'team', labels },
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

const parent = (rv = '1'): SlimGuard => ({
  metadata: { name: 'agents', namespace: 'team', uid: 'u-p', generation: 1, resourceVersion: rv },
  spec: { selector: { matchLabels: { tier: 'agent' } }, progressDeadlineSeconds: 300 } as unknown as SlimGuard['spec'],
});

function generated(ds: string, status?: GuardStatus): SlimGuard {
  return {
    metadata: {
      name: `agents-${ds}`,
      namespace: 'team',
      uid: `g-${ds}`,
      resourceVersion: '5',
      labels: { [SELECTOR_GUARD_LABEL]: 'agents' },
      ownerReferences: [{ apiVersion: 'rolloutguard.dev/v1alpha1', kind: 'RolloutGuard', name: 'agents', uid: 'u-p', controller: true }],
    },
    spec: { targetRef: { kind: 'DaemonSet', name: ds }, progressDeadlineSeconds: 300 },
    ...(status ? { status } : {}),
  };
}

interface Recorded {
  created: Array<{
    metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string>; ownerReferences: unknown[] };
  }>;
  deleted: string[];
  statuses: Array<{ rv: string | undefined; status: GuardStatus }>;
}

/** A workload as planning reads it: only metadata. */
const statefulSet = (name: string, labels: Record<string, string>): { metadata: SlimGuard['metadata'] } => ({
  metadata: { name, namespace: 'team', labels },
});

interface RunOptions {
  guards: SlimGuard[];
  dss: SlimDaemonSet[];
  /** The cached StatefulSets; undefined while their cache has not listed. */
  sts?: Array<{ metadata: SlimGuard['metadata'] }> | undefined;
  /** The cached Deployments; undefined while their cache has not listed. */
  deploys?: Array<{ metadata: SlimGuard['metadata'] }> | undefined;
  writes?: boolean;
  statusConflicts?: number;
  forbidden?: boolean;
}

function run(o: RunOptions): {
  r: SelectorReconciler;
  rec: Recorded;
} {
  const rec: Recorded = { created: [], deleted: [], statuses: [] };
  let conflicts = o.statusConflicts ?? 0;
  const cache: SelectorCache = {
    guard: (ns, name) => o.guards.find((g) => g.metadata.namespace === ns && g.metadata.name === name),
    guards: () => o.guards,
    workloads: (kind) => (kind === 'DaemonSet' ? o.dss : kind === 'Deployment' ? o.deploys : o.sts),
  };
  const ports: SelectorPorts = {
    readGuard: () => Promise.resolve(parent('2')),
    writeStatus: (g, status) => {
      rec.statuses.push({ rv: g.metadata.resourceVersion, status });
      return conflicts-- > 0
        ? Promise.reject(new ApiError('modified', { statusCode: 409, reason: 'Conflict' }))
        : Promise.resolve(undefined);
    },
    ...(o.writes === false
      ? {}
      : {
          guardWrites: {
            createGuard: (body) => {
              if (o.forbidden)
                return Promise.reject(new ApiError('rolloutguards is forbidden: cannot create', { statusCode: 403, reason: 'Forbidden' }));
              rec.created.push(body as Recorded['created'][number]);
              return Promise.resolve();
            },
            patchGuardSpec: () => Promise.resolve(),
            deleteGuard: (_ns, name) => {
              rec.deleted.push(name);
              return Promise.resolve();
            },
          },
        }),
  };
  return { r: new SelectorReconciler(cache, ports, clock, log), rec };
}

const three = [daemonSet('a', { tier: 'agent' }), daemonSet('b', { tier: 'agent' }), daemonSet('c', { tier: 'app' })];

describe('SelectorReconciler', () => {
  it('creates one generated guard per selected DaemonSet, owned by the selector guard, with its label and annotation', async () => {
    const { r, rec } = run({ guards: [parent()], dss: three });
    await r.reconcile('team', 'agents');
    assert.deepEqual(
      rec.created.map((c) => c.metadata.name),
      ['agents-a', 'agents-b'],
    );
    const first = rec.created[0];
    assert.equal(first?.metadata.labels[SELECTOR_GUARD_LABEL], 'agents');
    assert.equal(first?.metadata.annotations[GENERATED_BY_ANNOTATION], 'rolloutguard/agents');
    assert.deepEqual(first?.metadata.ownerReferences, [
      { apiVersion: 'rolloutguard.dev/v1alpha1', kind: 'RolloutGuard', name: 'agents', uid: 'u-p', controller: true },
    ]);
    const s = rec.statuses[0]?.status;
    assert.equal(s?.desired, 2);
    assert.deepEqual(
      s?.daemonSets?.map((d) => [d.daemonSet, d.guard, d.state]),
      [
        ['a', 'agents-a', 'Unknown'],
        ['b', 'agents-b', 'Unknown'],
      ],
    );
    assert.equal(s?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  });

  it('records each generated guard verdict; the worst is its state, cause and owner', async () => {
    const guards = [
      parent(),
      generated('a', { state: 'Healthy' }),
      generated('b', { state: 'Stalled', cause: 'ImagePullFailure', owner: 'Revision' }),
    ];
    const { r, rec } = run({ guards, dss: three });
    await r.reconcile('team', 'agents');
    assert.equal(rec.created.length, 0);
    const s = rec.statuses[0]?.status;
    assert.deepEqual([s?.state, s?.cause, s?.owner], ['Stalled', 'ImagePullFailure', 'Revision']);
    assert.deepEqual(s?.daemonSets?.[1], {
      daemonSet: 'b',
      guard: 'agents-b',
      state: 'Stalled',
      cause: 'ImagePullFailure',
      owner: 'Revision',
    });
    assert.match(s?.message ?? '', /worst: b Stalled \(ImagePullFailure\)/);
  });

  it('deletes its generated guard whose DaemonSet no longer matches, never a hand-written one', async () => {
    const handWritten: SlimGuard = {
      metadata: { name: 'by-hand', namespace: 'team', uid: 'h' },
      spec: { targetRef: { kind: 'DaemonSet', name: 'b' } },
    };
    const guards = [parent(), generated('a'), generated('c'), handWritten];
    const { r, rec } = run({ guards, dss: three });
    await r.reconcile('team', 'agents');
    assert.deepEqual(rec.deleted, ['agents-c']);
    assert.equal(rec.created.length, 0);
    const b = rec.statuses[0]?.status.daemonSets?.find((d) => d.daemonSet === 'b');
    assert.deepEqual(b, { daemonSet: 'b', guard: 'by-hand', state: 'Conflict', conflict: 'HandWrittenGuard' });
  });

  it('without guard writes: Ready=False SelectorNeedsGuardWrites naming the permission, no write, no error', async () => {
    const { r, rec } = run({ guards: [parent()], dss: three, writes: false });
    await r.reconcile('team', 'agents');
    assert.equal(rec.created.length, 0);
    const ready = rec.statuses[0]?.status.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.reason, 'SelectorNeedsGuardWrites');
    assert.match(ready?.message ?? '', /create, patch and delete on rolloutguards in namespace team/);
    assert.match(ready?.message ?? '', /policies\.enabled=true/);
  });

  it('guard writes refused by RBAC: the same Ready=False condition with the refusal, and no error', async () => {
    const { r, rec } = run({ guards: [parent()], dss: three, forbidden: true });
    await r.reconcile('team', 'agents');
    const ready = rec.statuses[0]?.status.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.reason, 'SelectorNeedsGuardWrites');
    assert.match(ready?.message ?? '', /the API server refused: .*forbidden/);
  });

  it('a status conflict re-reads the guard and writes again on the fresh resourceVersion', async () => {
    const { r, rec } = run({ guards: [parent()], dss: three, statusConflicts: 1 });
    await r.reconcile('team', 'agents');
    assert.deepEqual(
      rec.statuses.map((s) => s.rv),
      ['1', '2'],
    );
  });

  it('targetKinds StatefulSet: one guard per selected StatefulSet, named <guard>-<name>-sts, listed in status.workloads by kind and name and in status.statefulSets', async () => {
    const both = { ...parent(), spec: { ...parent().spec, targetKinds: ['DaemonSet', 'StatefulSet'] } } as SlimGuard;
    const sts = [statefulSet('a', { tier: 'agent' }), statefulSet('db', { tier: 'db' })];
    const { r, rec } = run({ guards: [both], dss: three, sts });
    await r.reconcile('team', 'agents');
    assert.deepEqual(
      rec.created.map((c) => [c.metadata.name, (c as unknown as SlimGuard).spec.targetRef]),
      [
        ['agents-a', { kind: 'DaemonSet', name: 'a' }],
        ['agents-a-sts', { kind: 'StatefulSet', name: 'a' }],
        ['agents-b', { kind: 'DaemonSet', name: 'b' }],
      ],
    );
    const s = rec.statuses[0]?.status;
    assert.equal(s?.desired, 3);
    assert.deepEqual(s?.workloads, [
      { kind: 'DaemonSet', name: 'a', guard: 'agents-a', state: 'Unknown' },
      { kind: 'DaemonSet', name: 'b', guard: 'agents-b', state: 'Unknown' },
      { kind: 'StatefulSet', name: 'a', guard: 'agents-a-sts', state: 'Unknown' },
    ]);
    assert.deepEqual(s?.statefulSets, [{ statefulSet: 'a', guard: 'agents-a-sts', state: 'Unknown' }]);
    assert.deepEqual(
      s?.daemonSets?.map((d) => d.daemonSet),
      ['a', 'b'],
    );
    assert.match(s?.message ?? '', /guards 3 of 3 selected DaemonSet\(s\) and StatefulSet\(s\)/);
  });

  it('targetKinds Deployment: one guard per selected Deployment, named <guard>-<name>-deploy, listed in status.workloads and status.deployments', async () => {
    const deploys = { ...parent(), spec: { ...parent().spec, targetKinds: ['Deployment'] } } as SlimGuard;
    const { r, rec } = run({
      guards: [deploys],
      dss: three,
      deploys: [statefulSet('web', { tier: 'agent' }), statefulSet('db', { tier: 'db' })],
    });
    await r.reconcile('team', 'agents');
    assert.deepEqual(
      rec.created.map((c) => [c.metadata.name, (c as unknown as SlimGuard).spec.targetRef]),
      [['agents-web-deploy', { kind: 'Deployment', name: 'web' }]],
    );
    const s = rec.statuses[0]?.status;
    assert.deepEqual(s?.workloads, [{ kind: 'Deployment', name: 'web', guard: 'agents-web-deploy', state: 'Unknown' }]);
    assert.deepEqual(s?.deployments, [{ deployment: 'web', guard: 'agents-web-deploy', state: 'Unknown' }]);
    assert.deepEqual(s?.daemonSets, [], 'the original kind is always listed, even when not chosen');
    assert.equal(s?.statefulSets, undefined);
  });

  it('a guard left at the default never chooses a StatefulSet, and lists none', async () => {
    const { r, rec } = run({ guards: [parent()], dss: [], sts: [statefulSet('a', { tier: 'agent' })] });
    await r.reconcile('team', 'agents');
    assert.deepEqual(rec.created, []);
    assert.equal(rec.statuses[0]?.status.statefulSets, undefined);
    assert.equal(rec.statuses[0]?.status.message, 'selects no DaemonSet of its namespace');
  });

  it('while the StatefulSet cache has not listed, it plans nothing: no write, no deletion of its StatefulSet guards', async () => {
    const both = { ...parent(), spec: { ...parent().spec, targetKinds: ['StatefulSet'] } } as SlimGuard;
    const mine = { ...generated('a'), metadata: { ...generated('a').metadata, name: 'agents-a-sts' } };
    mine.spec = { ...mine.spec, targetRef: { kind: 'StatefulSet', name: 'a' } };
    const { r, rec } = run({ guards: [both, mine], dss: three, sts: undefined });
    await r.reconcile('team', 'agents');
    assert.deepEqual([rec.created.length, rec.deleted.length, rec.statuses.length], [0, 0, 0]);
  });

  it('a guard without a selector, or a missing one, is not its business', async () => {
    const plain = generated('a');
    const { r, rec } = run({ guards: [plain], dss: three });
    await r.reconcile('team', 'agents-a');
    await r.reconcile('team', 'gone');
    assert.equal(rec.statuses.length, 0);
  });
});
