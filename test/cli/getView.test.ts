/**
 * The view of `rollout-guard get`: rows, the header's data and the guards, from fixture observations
 * judged by the real decide.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { guardSummary, guardsTargeting, nodeRows } from '../../src/cli/getView.js';
import { decide } from '../../src/domain/decide/decide.js';
import type { GuardStatus } from '../../src/api/types.js';
import type { Observation } from '../../src/domain/observation.js';
import type { SlimGuard } from '../../src/api/objects.js';
import {
  DS_NAME,
  HASH,
  T0,
  deadKubelet,
  deletingPod,
  imagePullPod,
  node,
  nodesOn,
  pod,
  rev,
  sec,
  targetObs,
  withHealth,
} from '../support/fixtures.js';
import { classicStall, p, stalled, view } from '../support/getViews.js';

describe('nodeRows', () => {
  it('one row per pod, newest revision first then by node, the blocked node with its reason and owner', () => {
    const obs = classicStall();
    const rows = nodeRows(obs, stalled(obs), T0);
    assert.deepEqual(
      rows.map((r) => [r.node, r.revision, r.hash, r.kind, r.status, r.owner, r.ready]),
      [
        ['node-2', 2, HASH.B, 'blocked', 'ImagePullBackOff', 'Revision', false],
        ['node-1', 1, HASH.A, 'ok', 'Running', undefined, true],
        ['node-3', 1, HASH.A, 'ok', 'Running', undefined, true],
      ],
    );
    assert.equal(rows[0]?.cause, 'ImagePullFailure');
    assert.match(rows[0]?.message ?? '', /Back-off pulling image/);
    assert.equal(rows[0]?.pod, `${DS_NAME}-${HASH.B}-node-2`);
  });

  it('a node that should run the pod and has none is a row without a pod; a terminating old pod shows as Terminating', () => {
    const obs = targetObs({
      target: { generation: 2, observedGeneration: 2, updated: 1, ready: 1, available: 1 },
      revisions: [rev(HASH.B, 2), rev(HASH.A, 1)],
      nodes: [node('node-1', [pod({ hash: HASH.B })]), node('node-2', []), node('node-3', [deletingPod(HASH.A, T0 + sec(30))])],
    });
    const rows = nodeRows(obs, decide(obs, {}, p, T0).status, T0);
    const byNode = new Map(rows.map((r) => [r.node, r]));
    assert.deepEqual([...byNode.keys()], ['node-1', 'node-3', 'node-2'], 'revision 2, revision 1, then the node without a pod');
    assert.equal(byNode.get('node-2')?.kind, 'empty');
    assert.equal(byNode.get('node-2')?.status, 'NoPod');
    assert.equal(byNode.get('node-2')?.pod, undefined);
    assert.equal(byNode.get('node-3')?.status, 'Terminating');
    assert.equal(byNode.get('node-3')?.kind, 'empty');
    assert.equal(byNode.get('node-3')?.owner, 'ConfiguredWait', 'inside its grace period: a configured wait');
  });

  it('a node that is down is its own fault, even where it still runs the old revision', () => {
    const obs = targetObs({
      target: { generation: 2, observedGeneration: 2, updated: 1, ready: 1, available: 1 },
      revisions: [rev(HASH.B, 2), rev(HASH.A, 1)],
      nodes: [
        node('node-1', [pod({ hash: HASH.B })]),
        withHealth(node('node-2', [pod({ hash: HASH.A, ready: false })]), deadKubelet()),
        node('node-3', [pod({ hash: HASH.A })]),
      ],
    });
    const rows = nodeRows(obs, decide(obs, {}, p, T0).status, T0);
    const down = rows.find((r) => r.node === 'node-2');
    assert.equal(down?.kind, 'blocked');
    assert.equal(down?.owner, 'Node');
    assert.equal(down?.status, 'NodeNotReady');
  });

  it('beyond the 20 nodes status lists, blocked nodes are still attributed, one by one', () => {
    const n = 25;
    const nodes = Array.from({ length: n }, (_, i) => node(`node-${String(i + 1).padStart(2, '0')}`, [imagePullPod(HASH.B)]));
    const obs = targetObs({
      target: { generation: 2, observedGeneration: 2, desired: n, current: n, updated: n, ready: 0, available: 0 },
      revisions: [rev(HASH.B, 2), rev(HASH.A, 1)],
      nodes,
    });
    const status = decide(obs, {}, p, T0).status;
    assert.equal(status.blockedNodes?.length, 20, 'the status list is capped');
    assert.equal(status.blockedNodeCount, n);
    const rows = nodeRows(obs, status, T0);
    assert.equal(rows.length, n);
    assert.ok(
      rows.every((r) => r.kind === 'blocked' && r.status === 'ImagePullBackOff' && r.owner === 'Revision'),
      JSON.stringify(rows.slice(18)),
    );
  });

  it('a missing DaemonSet has no rows', () => {
    const obs: Observation = { kind: 'TargetMissing', targetName: DS_NAME };
    assert.deepEqual(nodeRows(obs, decide(obs, {}, p, T0).status, T0), []);
  });
});

describe('buildView', () => {
  const obs = classicStall();
  const status = stalled(obs);
  const missing: Observation = { kind: 'TargetMissing', targetName: DS_NAME };
  const unobserved = targetObs({ target: { generation: 2, observedGeneration: 1 }, nodes: nodesOn(HASH.A) });
  const guard = guardSummary('gpu-system', 'decoder-guard', undefined, DS_NAME);
  /** What each case is checked on: the header's data, and how many rows and revisions. */
  const shape = (v: ReturnType<typeof view>) => ({
    kind: v.kind,
    found: v.daemonSet.found,
    state: v.state,
    cause: v.cause,
    owner: v.owner,
    current: v.currentRevision?.revision,
    revisions: v.revisions.length,
    nodes: v.nodes.length,
    guard: v.guard?.name,
    guardedBy: v.guardedBy?.map((g) => g.name),
  });
  const cases: Array<[string, () => ReturnType<typeof view>, ReturnType<typeof shape>]> = [
    [
      'a stalled DaemonSet: decide’s state, cause and owner, its revisions and a row per pod',
      () => view(obs, status),
      {
        kind: 'DaemonSet',
        found: true,
        state: 'Stalled',
        cause: 'ImagePullFailure',
        owner: 'Revision',
        current: 2,
        revisions: 2,
        nodes: 3,
        guard: undefined,
        guardedBy: undefined,
      },
    ],
    [
      'a missing DaemonSet: not found, no rows',
      () => view(missing, decide(missing, {}, p, T0).status),
      {
        kind: 'DaemonSet',
        found: false,
        state: decide(missing, {}, p, T0).status.state ?? 'Unknown',
        cause: undefined,
        owner: undefined,
        current: undefined,
        revisions: 0,
        nodes: 0,
        guard: undefined,
        guardedBy: undefined,
      },
    ],
    [
      'a generation the controller has not observed: Waiting, not Healthy',
      () => view(unobserved, decide(unobserved, {}, p, T0).status),
      {
        kind: 'DaemonSet',
        found: true,
        state: 'Waiting',
        cause: undefined,
        owner: undefined,
        current: 1,
        revisions: 1,
        nodes: 3,
        guard: undefined,
        guardedBy: undefined,
      },
    ],
    [
      'rg/NAME: the guard summary is carried as given',
      () => view(obs, status, { kind: 'RolloutGuard', name: 'decoder-guard', guard }),
      {
        kind: 'RolloutGuard',
        found: true,
        state: 'Stalled',
        cause: 'ImagePullFailure',
        owner: 'Revision',
        current: 2,
        revisions: 2,
        nodes: 3,
        guard: 'decoder-guard',
        guardedBy: undefined,
      },
    ],
    [
      'ds/NAME: the guards that target it are carried as given, even none',
      () => view(obs, status, { guardedBy: [{ name: 'a' }, { name: 'b', state: 'Healthy' }] }),
      {
        kind: 'DaemonSet',
        found: true,
        state: 'Stalled',
        cause: 'ImagePullFailure',
        owner: 'Revision',
        current: 2,
        revisions: 2,
        nodes: 3,
        guard: undefined,
        guardedBy: ['a', 'b'],
      },
    ],
  ];
  for (const [what, build, want] of cases) {
    it(what, () => {
      assert.deepEqual(shape(build()), want);
    });
  }

  it('the time is the observation’s, the DaemonSet’s counters are its own, and absent fields are left out', () => {
    const v = view(obs, status);
    assert.equal(v.at, new Date(T0 + sec(61)).toISOString());
    assert.deepEqual(v.daemonSet, {
      kind: 'DaemonSet',
      namespace: 'gpu-system',
      name: DS_NAME,
      found: true,
      desired: 3,
      current: 3,
      updated: 1,
      ready: 2,
      available: 2,
      generation: 2,
      observedGeneration: 2,
    });
    assert.deepEqual(view(missing, {}), {
      kind: 'DaemonSet',
      at: new Date(T0 + sec(61)).toISOString(),
      daemonSet: { kind: 'DaemonSet', namespace: 'gpu-system', name: DS_NAME, found: false },
      state: 'Unknown',
      revisions: [],
      nodes: [],
    });
  });
});

describe('guardSummary', () => {
  const status: GuardStatus = {
    state: 'Stalled',
    cause: 'ImagePullFailure',
    owner: 'Revision',
    message: 'stalled',
    currentRevision: { revision: 2, hash: HASH.B },
    undoPlan: { toRevision: 1, toHash: HASH.A, toRevisionName: `${DS_NAME}-${HASH.A}`, forHash: HASH.B, nodes: 1 },
  };
  const g = (s?: GuardStatus): SlimGuard => ({
    metadata: { name: 'decoder-guard', namespace: 'gpu-system' },
    spec: { targetRef: { kind: 'DaemonSet', name: DS_NAME } },
    ...(s ? { status: s } : {}),
  });
  const base = { namespace: 'gpu-system', name: 'decoder-guard', target: DS_NAME };
  const cases: Array<[string, SlimGuard | undefined, ReturnType<typeof guardSummary>]> = [
    ['a guard that does not exist', undefined, { ...base, found: false, revisions: [] }],
    ['a guard without status yet', g(), { ...base, found: true, revisions: [] }],
    [
      'a guard with status: the fields get shows, copied',
      g(status),
      {
        ...base,
        found: true,
        revisions: [],
        state: 'Stalled',
        cause: 'ImagePullFailure',
        owner: 'Revision',
        message: 'stalled',
        currentRevision: { revision: 2, hash: HASH.B },
        undoPlan: { toRevision: 1, toHash: HASH.A, toRevisionName: `${DS_NAME}-${HASH.A}`, forHash: HASH.B, nodes: 1 },
      },
    ],
  ];
  for (const [what, guard, want] of cases) {
    it(what, () => {
      assert.deepEqual(guardSummary('gpu-system', 'decoder-guard', guard, DS_NAME), want);
    });
  }
});

describe('guardsTargeting', () => {
  const g = (name: string, target: string, extra: Partial<SlimGuard['metadata']> = {}, s?: GuardStatus): SlimGuard => ({
    metadata: { name, namespace: 'gpu-system', ...extra },
    spec: { targetRef: { kind: 'DaemonSet', name: target } },
    ...(s ? { status: s } : {}),
  });
  const cases: Array<[string, SlimGuard[], ReturnType<typeof guardsTargeting>]> = [
    ['no guards', [], []],
    ['guards of other DaemonSets are left out', [g('other', 'node-exporter')], []],
    ['a guard being deleted is left out', [g('going', DS_NAME, { deletionTimestamp: '2024-01-01T00:00:00Z' })], []],
    [
      'by name, with the state, cause and owner they have',
      [g('b', DS_NAME), g('a', DS_NAME, {}, { state: 'Suspect', cause: 'ImagePullFailure' })],
      [{ name: 'a', state: 'Suspect', cause: 'ImagePullFailure' }, { name: 'b' }],
    ],
  ];
  for (const [what, guards, want] of cases) {
    it(what, () => {
      assert.deepEqual(guardsTargeting(guards, 'DaemonSet', DS_NAME), want);
    });
  }
});
