/**
 * computeSplit: the per-node picture behind `kubectl get ds` READY 2/3 — which revision each node runs,
 * which nodes are blocked on the target revision, which eligible nodes have no pod.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { computeSplit, dominantOtherHash, type Split } from '../../src/domain/split.js';
import type { NodeView } from '../../src/domain/observation.js';
import { HASH, crashLoopPod, imagePullPod, node, nodesOn, notReadyPod, pod, rev } from '../support/fixtures.js';

const REVS = [rev(HASH.A, 1), rev(HASH.B, 2)];
/** A surge pod is created after the old pod it stands beside. */
const LATER = '2025-01-01T00:05:00.000Z';

/** Compact view of a split for table assertions. */
function summary(s: Split): { gens: string[]; blocked: string[]; empty: string[]; onTarget: number; oldGone: number; eligible: number } {
  return {
    gens: s.generations.map((g) => `${g.revision ?? '-'}:${g.hash}:${g.nodes}/${g.ready}`),
    blocked: s.blocked.map((b) => `${b.node}:${b.reason}`),
    empty: s.empty.map((e) => `${e.node}:${e.reason}`),
    onTarget: s.onTarget,
    oldGone: s.oldGone,
    eligible: s.eligible,
  };
}

describe('computeSplit', () => {
  const cases: { name: string; nodes: NodeView[]; target: string | undefined; want: ReturnType<typeof summary> }[] = [
    {
      name: 'all nodes on the target revision',
      nodes: nodesOn(HASH.B),
      target: HASH.B,
      want: { gens: [`2:${HASH.B}:3/3`], blocked: [], empty: [], onTarget: 3, oldGone: 3, eligible: 3 },
    },
    {
      name: 'classic stall: two old nodes waiting their turn are not blocked; the broken new pod is',
      nodes: [node('node-1', [pod({ hash: HASH.A })]), node('node-2', [pod({ hash: HASH.A })]), node('node-3', [imagePullPod(HASH.B)])],
      target: HASH.B,
      want: {
        gens: [`2:${HASH.B}:1/0`, `1:${HASH.A}:2/2`],
        blocked: ['node-3:ImagePullBackOff'],
        empty: [],
        onTarget: 0,
        oldGone: 1,
        eligible: 3,
      },
    },
    {
      name: 'maxSurge: old ready + new broken on one node → blocked (not empty), one node, counted by its newest pod',
      nodes: [node('node-1', [pod({ hash: HASH.A, name: 'old' }), { ...crashLoopPod(HASH.B), name: 'surge', createdAt: LATER }])],
      target: HASH.B,
      want: {
        gens: [`2:${HASH.B}:1/0`],
        blocked: ['node-1:CrashLoopBackOff'],
        empty: [],
        onTarget: 0,
        oldGone: 0,
        eligible: 1,
      },
    },
    {
      name: 'maxSurge: new available but old not yet deleted → neither blocked nor on target (the oldest pod wins), one node',
      nodes: [node('node-1', [pod({ hash: HASH.A, name: 'old' }), pod({ hash: HASH.B, name: 'surge', createdAt: LATER })])],
      target: HASH.B,
      want: { gens: [`2:${HASH.B}:1/1`], blocked: [], empty: [], onTarget: 0, oldGone: 0, eligible: 1 },
    },
    {
      name: 'maxSurge on three nodes, the surge pod unschedulable beside the old one: 1 node on revision 2, 2 on revision 1 (not 1 + 3)',
      nodes: [
        node('node-1', [pod({ hash: HASH.A, name: 'a1' })]),
        node('node-2', [pod({ hash: HASH.A, name: 'a2' })]),
        node('node-3', [
          pod({ hash: HASH.A, name: 'a3' }),
          pod({ hash: HASH.B, name: 'b3', createdAt: LATER, phase: 'Pending', scheduled: false, waitingReason: 'Unschedulable' }),
        ]),
      ],
      target: HASH.B,
      want: {
        gens: [`2:${HASH.B}:1/0`, `1:${HASH.A}:2/2`],
        blocked: ['node-3:Unschedulable'],
        empty: [],
        onTarget: 0,
        oldGone: 0,
        eligible: 3,
      },
    },
    {
      name: 'an eligible node with no pod is empty (NoPod)',
      nodes: [node('node-1', [pod({ hash: HASH.B })]), node('node-2', [])],
      target: HASH.B,
      want: { gens: [`2:${HASH.B}:1/1`], blocked: [], empty: ['node-2:NoPod'], onTarget: 1, oldGone: 2, eligible: 2 },
    },
    {
      name: 'a node whose only pod is terminating is empty (Terminating); the terminating pod is not a generation',
      nodes: [node('node-1', [pod({ hash: HASH.A, deleting: true })])],
      target: HASH.B,
      want: { gens: [], blocked: [], empty: ['node-1:Terminating'], onTarget: 0, oldGone: 0, eligible: 1 },
    },
    {
      name: 'terminating old pod + new not-ready pod → blocked on the new pod',
      nodes: [node('node-1', [pod({ hash: HASH.A, deleting: true }), notReadyPod(HASH.B)])],
      target: HASH.B,
      want: { gens: [`2:${HASH.B}:1/0`], blocked: ['node-1:NotReady'], empty: [], onTarget: 0, oldGone: 0, eligible: 1 },
    },
    {
      name: 'an ineligible node still shows in generations (its pod runs) but is never blocked, empty or on target',
      nodes: [
        node('node-1', [pod({ hash: HASH.B })]),
        node('node-2', [imagePullPod(HASH.B)], false, 'untolerated taint x:NoExecute'),
        node('node-3', [], false),
      ],
      target: HASH.B,
      want: { gens: [`2:${HASH.B}:2/1`], blocked: [], empty: [], onTarget: 1, oldGone: 1, eligible: 1 },
    },
    {
      name: 'without a target hash nothing is blocked, but empty nodes are still reported',
      nodes: [node('node-1', [imagePullPod(HASH.B)]), node('node-2', [])],
      target: undefined,
      want: { gens: [`2:${HASH.B}:1/0`], blocked: [], empty: ['node-2:NoPod'], onTarget: 0, oldGone: 0, eligible: 2 },
    },
    {
      name: 'a hash not in history has no revision number; ready-but-not-available is blocked (minReadySeconds)',
      nodes: [node('node-1', [pod({ hash: 'zzz999', ready: true, available: false })])],
      target: 'zzz999',
      want: { gens: ['-:zzz999:1/1'], blocked: ['node-1:NotReady'], empty: [], onTarget: 0, oldGone: 1, eligible: 1 },
    },
    {
      name: 'one target pod available among two on a node counts as on target',
      nodes: [node('node-1', [imagePullPod(HASH.B), pod({ hash: HASH.B, name: 'second' })])],
      target: HASH.B,
      want: { gens: [`2:${HASH.B}:1/1`], blocked: [], empty: [], onTarget: 1, oldGone: 1, eligible: 1 },
    },
    {
      name: 'an old pod counts against oldGone until the kubelet removes it, terminating or not; a terminating pod of the target does not',
      nodes: [
        node('node-1', [pod({ hash: HASH.A, deleting: true })]),
        node('node-2', []),
        node('node-3', [pod({ hash: HASH.B, deleting: true }), pod({ hash: HASH.B, name: 'new' })]),
      ],
      target: HASH.B,
      want: { gens: [`2:${HASH.B}:1/1`], blocked: [], empty: ['node-1:Terminating', 'node-2:NoPod'], onTarget: 1, oldGone: 2, eligible: 3 },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => assert.deepEqual(summary(computeSplit(tc.nodes, REVS, tc.target)), tc.want));
  }

  it('blocked nodes carry pod, revision, hash and the kubelet message; lists are sorted by node name', () => {
    const s = computeSplit(
      [node('node-b', [imagePullPod(HASH.B)]), node('node-a', [imagePullPod(HASH.B)]), node('node-c', []), node('node-0', [])],
      REVS,
      HASH.B,
    );
    assert.deepEqual(s.blocked[0], {
      node: 'node-a',
      pod: 'decoder-bbb222-node-a',
      revision: 2,
      hash: HASH.B,
      reason: 'ImagePullBackOff',
      message: 'Back-off pulling image "registry.example/decoder:bbb222"',
    });
    assert.deepEqual(
      s.blocked.map((b) => b.node),
      ['node-a', 'node-b'],
    );
    assert.deepEqual(
      s.empty.map((e) => e.node),
      ['node-0', 'node-c'],
    );
  });

  it('generations are ordered newest revision first, then by hash', () => {
    const s = computeSplit(
      [
        node('n1', [pod({ hash: 'x' })]),
        node('n2', [pod({ hash: HASH.A })]),
        node('n3', [pod({ hash: HASH.B })]),
        node('n4', [pod({ hash: 'w' })]),
      ],
      REVS,
      HASH.B,
    );
    assert.deepEqual(
      s.generations.map((g) => g.hash),
      [HASH.B, HASH.A, 'w', 'x'],
    );
  });

  it('does not mutate its inputs', () => {
    const nodes = Object.freeze([Object.freeze(node('n1', [Object.freeze(pod({ hash: HASH.A }))]))]);
    assert.doesNotThrow(() => computeSplit(nodes, REVS, HASH.B));
  });
});

describe("computeSplit: a StatefulSet's ordinals", () => {
  /** Unit `store-<ordinal>`, its pod on `host` when given. */
  const ordinal = (n: number, pods: NodeView['pods'], host?: string): NodeView => ({
    ...node(`store-${n}`, pods),
    ordinal: n,
    ...(host !== undefined ? { host } : {}),
  });

  it("blocked and empty entries carry the node the ordinal's pod runs on; an empty ordinal says so in its terms", () => {
    const s = computeSplit(
      [
        ordinal(0, [pod({ hash: HASH.A })], 'n1'),
        ordinal(1, [imagePullPod(HASH.B)], 'n2'),
        ordinal(2, []),
        ordinal(3, [{ ...pod({ hash: HASH.A }), deleting: true }], 'n3'),
      ],
      REVS,
      HASH.B,
    );
    assert.deepEqual(
      s.blocked.map((b) => [b.node, b.host, b.reason]),
      [['store-1', 'n2', 'ImagePullBackOff']],
    );
    assert.deepEqual(s.empty, [
      { node: 'store-2', reason: 'NoPod', message: 'no pod exists for ordinal 2' },
      { node: 'store-3', host: 'n3', reason: 'Terminating', message: 'the old pod is terminating and no new pod exists yet' },
    ]);
  });

  it('a unit without a host carries none, and a node keeps the daemon wording', () => {
    const s = computeSplit([ordinal(0, [imagePullPod(HASH.B)]), node('node-9', [])], REVS, HASH.B);
    assert.equal('host' in s.blocked[0]!, false);
    assert.deepEqual(s.empty, [{ node: 'node-9', reason: 'NoPod', message: 'no daemon pod exists on this node' }]);
  });
});

describe('dominantOtherHash', () => {
  const gens = [
    { hash: HASH.B, revision: 2, images: [], nodes: 1, ready: 0 },
    { hash: HASH.A, revision: 1, images: [], nodes: 2, ready: 2 },
    { hash: HASH.C, revision: 3, images: [], nodes: 2, ready: 2 },
  ];
  const cases: { name: string; exclude: string | undefined; want: string | undefined }[] = [
    { name: 'most nodes wins, ties to the higher revision', exclude: HASH.B, want: HASH.C },
    { name: 'the excluded hash is never chosen', exclude: HASH.C, want: HASH.A },
    { name: 'nothing excluded', exclude: undefined, want: HASH.C },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(dominantOtherHash(gens, tc.exclude)?.hash, tc.want));

  it('none other → undefined', () => assert.equal(dominantOtherHash([gens[0]!], HASH.B), undefined));
});
