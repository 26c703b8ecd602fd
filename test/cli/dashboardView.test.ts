/**
 * The dashboard's revision map and detail, from `get`'s view of fixture observations judged by the real
 * decide: cells, their states and revision groups, the counts the legend shows, and the commands Report
 * mode would run.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GuardStatus } from '../../src/api/types.js';
import type { NodeRow } from '../../src/cli/getView.js';
import { cellState, guardDetail, leftRevisions, noteDetail, reportCommands, revisionMap, unitNoun } from '../../src/cli/dashboardView.js';
import { HASH, T0, node, pod, rev, sec, targetObs } from '../support/fixtures.js';
import { classicStall, stalled, view } from '../support/getViews.js';

const row = (r: Partial<NodeRow>): NodeRow => ({ node: 'node-1', ready: true, restarts: 0, status: 'Running', kind: 'ok', ...r });

describe('cellState', () => {
  const left = new Set(['broken']);
  const cases: Array<[string, NodeRow, string | undefined, string]> = [
    ['a Ready pod', row({ hash: 'good' }), 'good', 'ready'],
    ['a pod not Ready, not blamed', row({ hash: 'good', ready: false, status: 'ContainerCreating' }), 'good', 'progressing'],
    ['a blocked pod of the revision the rollout goes to', row({ hash: 'broken', ready: false, kind: 'blocked' }), 'broken', 'blocked'],
    ['a node without its pod', row({ kind: 'empty', ready: false, status: 'NoPod' }), 'good', 'empty'],
    [
      'a pod not Ready left on a revision the rollout moved away from',
      row({ hash: 'broken', ready: false, kind: 'blocked' }),
      'good',
      'stuck',
    ],
    ['a Ready pod on a revision moved away from is not stuck', row({ hash: 'broken' }), 'good', 'ready'],
    ['a pod not Ready on another revision never left is progressing', row({ hash: 'other', ready: false }), 'good', 'progressing'],
  ];
  for (const [what, r, current, want] of cases) it(what, () => assert.equal(cellState(r, left, current), want));
});

describe('leftRevisions', () => {
  const cases: Array<[string, GuardStatus, string[]]> = [
    ['nothing undone, no rollout', {}, []],
    [
      'the undone revisions and the last undo',
      { undoneRevisions: ['a', 'b'], lastUndo: { fromHash: 'b' } as GuardStatus['lastUndo'] },
      ['a', 'b'],
    ],
    [
      "the revision a rollout started from (after a person's revert, the broken one)",
      { rollout: { fromRevision: { hash: 'c' }, toRevision: { hash: 'd' } } as GuardStatus['rollout'] },
      ['c'],
    ],
  ];
  for (const [what, s, want] of cases) it(what, () => assert.deepEqual([...leftRevisions(s)].sort(), want));
});

describe('unitNoun', () => {
  const cases: Array<[Parameters<typeof unitNoun>[0], string]> = [
    ['DaemonSet', 'node'],
    ['StatefulSet', 'ordinal'],
    ['Deployment', 'pod'],
  ];
  for (const [kind, want] of cases) it(`${kind}: ${want}`, () => assert.equal(unitNoun(kind), want));
});

describe('revisionMap', () => {
  it('the classic stall: one cell per node, newest revision first, the blocked node with its cause and owner, counts that add up', () => {
    const obs = classicStall();
    const status = stalled(obs);
    const m = revisionMap(view(obs, status), status);
    assert.deepEqual(
      m.cells.map((c) => [c.unit, c.node, c.revision, c.group, c.state, c.cause, c.owner]),
      [
        ['node-2', 'node-2', 2, 0, 'blocked', 'ImagePullFailure', 'Revision'],
        ['node-1', 'node-1', 1, 1, 'ready', undefined, undefined],
        ['node-3', 'node-3', 1, 1, 'ready', undefined, undefined],
      ],
    );
    assert.deepEqual(
      m.revisions.map((r) => [r.revision, r.hash, r.units, r.ready, r.blocked, r.current]),
      [
        [2, HASH.B, 1, 0, 1, true],
        [1, HASH.A, 2, 2, 0, false],
      ],
    );
    assert.deepEqual(m.counts, { ready: 2, progressing: 0, blocked: 1, stuck: 0, empty: 0 });
  });

  it("a pod unready on the revision a rollout left is stuck only where the controller waits on it, not on a DaemonSet's node", () => {
    const obs = targetObs({
      target: { generation: 2, observedGeneration: 2, desired: 2, current: 2, updated: 1, ready: 1, available: 1 },
      revisions: [rev(HASH.B, 2), rev(HASH.A, 1)],
      nodes: [node('node-1', [pod({ hash: HASH.A, ready: false })]), node('node-2', [pod({ hash: HASH.B })])],
    });
    const status: GuardStatus = {
      ...stalled(obs),
      rollout: { fromRevision: { hash: HASH.A }, toRevision: { hash: HASH.B }, restored: true } as GuardStatus['rollout'],
    };
    const stateOf = (waits: boolean): string | undefined =>
      revisionMap(view(obs, status), status, waits).cells.find((c) => c.unit === 'node-1')?.state;
    assert.equal(stateOf(false), 'progressing', 'a DaemonSet controller replaces it itself');
    assert.equal(stateOf(true), 'stuck', 'an OrderedReady controller waits on it');
  });

  it('a node that should run a pod and has none: an empty cell of no revision', () => {
    const obs = targetObs({
      target: { generation: 1, observedGeneration: 1, desired: 2, current: 1, updated: 1, ready: 1, available: 1 },
      revisions: [rev(HASH.A, 1)],
      nodes: [node('node-1', [pod({ hash: HASH.A })]), node('node-2', [])],
    });
    const status = stalled(obs);
    const m = revisionMap(view(obs, status, { now: T0 + sec(61) }), status);
    const empty = m.cells.find((c) => c.unit === 'node-2');
    assert.deepEqual([empty?.state, empty?.group, empty?.pod], ['empty', -1, undefined]);
    assert.equal(m.counts.empty, 1);
  });
});

describe('reportCommands', () => {
  const plan = { toRevision: 1, toHash: 'a', toRevisionName: 'x-a', nodes: 1, forHash: 'b' };
  const cells = [
    { unit: 'store-2', pod: 'store-2', hash: 'b', group: 0, state: 'blocked' as const, status: 'ImagePullBackOff' },
    { unit: 'store-1', pod: 'store-1', hash: 'a', group: 1, state: 'ready' as const, status: 'Running' },
  ];
  const cases: Array<[string, Parameters<typeof reportCommands>[0], boolean, string[]]> = [
    ['a DaemonSet: kubectl rollout undo alone', 'DaemonSet', false, ['kubectl rollout undo daemonset/x -n ns --to-revision=1']],
    [
      'a StatefulSet under OrderedReady: the undo, then the pods of the broken revision its controller would not replace',
      'StatefulSet',
      true,
      ['kubectl rollout undo statefulset/x -n ns --to-revision=1', 'kubectl delete pod store-2 -n ns'],
    ],
    [
      'a StatefulSet under Parallel: its controller replaces them, the undo alone',
      'StatefulSet',
      false,
      ['kubectl rollout undo statefulset/x -n ns --to-revision=1'],
    ],
    [
      'a Deployment: its ReplicaSets replace them, the undo alone',
      'Deployment',
      false,
      ['kubectl rollout undo deployment/x -n ns --to-revision=1'],
    ],
  ];
  for (const [what, kind, waits, want] of cases)
    it(what, () => assert.deepEqual(reportCommands(kind, { namespace: 'ns', name: 'x' }, plan, cells, waits), want));
  it('no plan, no command', () => assert.deepEqual(reportCommands('DaemonSet', { namespace: 'ns', name: 'x' }, undefined, cells), []));
  it('a plan whose dry run was refused, no command', () =>
    assert.deepEqual(
      reportCommands(
        'Deployment',
        { namespace: 'ns', name: 'x' },
        { ...plan, dryRun: 'Rejected', dryRunMessage: 'managed by Rollout/x' },
        cells,
        true,
      ),
      [],
    ));
});

describe('guardDetail', () => {
  it("the guard's own state, cause and message lead; the target, its counters and the unit's noun come from get's view", () => {
    const obs = classicStall();
    const status = stalled(obs);
    const v = view(obs, status, {
      kind: 'RolloutGuard',
      guard: {
        namespace: 'gpu-system',
        name: 'g',
        found: true,
        target: 'decoder',
        state: 'RollingBack',
        cause: 'ImagePullFailure',
        owner: 'Revision',
        revisions: [],
      },
    });
    const d = guardDetail({ namespace: 'gpu-system', name: 'g', view: v, status, timeline: [], describe: 'Name: g' });
    assert.deepEqual(
      [d.state, d.cause, d.owner, d.kind, d.target, d.unit, d.counters?.desired, d.cells.length, d.describe],
      ['RollingBack', 'ImagePullFailure', 'Revision', 'DaemonSet', 'decoder', 'node', 3, 3, 'Name: g'],
    );
    assert.equal(d.noUnits, 'No node runs or should run this DaemonSet.', "the empty map's sentence in the kind's words");
  });
  it('a note instead of a map says why, with nothing to draw', () => {
    const d = noteDetail('ns', 'sel', '2026-01-01T00:00:00Z', 'selects workloads by label');
    assert.deepEqual([d.note, d.cells, d.revisions, d.commands], ['selects workloads by label', [], [], []]);
  });
});
