/**
 * Human sentences: revisions, durations, node lists, and the stall sentence that names nodes, revisions,
 * the cause and the kubectl column to check.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  renumbered,
  describeBlocked,
  describeGenerations,
  describeLeft,
  dsColumns,
  fmtDuration,
  fmtRev,
  heldAtPartition,
  stallSentence,
  truncate,
  units,
  unitWord,
} from '../../src/domain/messages.js';
import type { BlockedNode, EmptyNode, GenerationStatus } from '../../src/api/types.js';
import { dsView } from '../support/fixtures.js';

describe('fmtRev', () => {
  const cases: [Parameters<typeof fmtRev>[0], string][] = [
    [{ revision: 3, hash: '5d8f9c7b4' }, 'revision 3 (5d8f9c7b4)'],
    [{ hash: '5d8f9c7b4' }, 'hash 5d8f9c7b4'],
    [undefined, 'an unknown revision'],
  ];
  for (const [r, want] of cases) it(want, () => assert.equal(fmtRev(r), want));
});

describe('fmtDuration', () => {
  const cases: [number, string][] = [
    [0, '0s'],
    [-5000, '0s'],
    [1499, '1s'],
    [90_000, '90s'],
    [119_000, '119s'],
    [120_000, '2m'],
    [125_000, '2m5s'],
    [600_000, '10m'],
    [3_600_000, '1h'],
    [3_900_000, '1h5m'],
  ];
  for (const [ms, want] of cases) it(`${ms} ms → ${want}`, () => assert.equal(fmtDuration(ms), want));
});

describe('truncate', () => {
  const cases: [string, number, string][] = [
    ['short', 10, 'short'],
    ['exactly10!', 10, 'exactly10!'],
    ['eleven char', 10, 'eleven ch…'],
  ];
  for (const [s, max, want] of cases) {
    it(`${JSON.stringify(s)} at ${max}`, () => {
      assert.equal(truncate(s, max), want);
      assert.ok(truncate(s, max).length <= max);
    });
  }
});

describe('node lists', () => {
  const blocked: BlockedNode[] = [
    { node: 'node-1', reason: 'ImagePullBackOff', message: 'Back-off pulling image' },
    { node: 'node-2', reason: 'NotReady', message: '' },
  ];
  const empty: EmptyNode[] = [
    { node: 'node-3', reason: 'NoPod', message: 'no daemon pod exists on this node' },
    { node: 'node-4', reason: 'NoPod', message: 'no daemon pod exists on this node' },
  ];
  it('describeBlocked names each node, its reason and message; more than three are summarised', () => {
    assert.equal(describeBlocked(blocked, []), 'node-1 ImagePullBackOff (Back-off pulling image), node-2 NotReady');
    assert.equal(
      describeBlocked(blocked, empty),
      'node-1 ImagePullBackOff (Back-off pulling image), node-2 NotReady, node-3 empty (no daemon pod exists on this node) and 1 more',
    );
  });
  it('describeLeft names the node and why it left', () => {
    assert.equal(
      describeLeft([{ node: 'node-3', reason: 'untolerated taint gpu=x:NoExecute' }]),
      'node-3 (untolerated taint gpu=x:NoExecute)',
    );
  });
  it('describeGenerations pluralises', () => {
    assert.equal(
      describeGenerations([
        { revision: 2, hash: 'b', images: [], nodes: 1, ready: 0 },
        { revision: 1, hash: 'a', images: [], nodes: 2, ready: 2 },
      ]),
      '1 node on revision 2 (b), 2 nodes on revision 1 (a)',
    );
  });
  it('dsColumns reads like kubectl get ds', () => {
    assert.equal(
      dsColumns(dsView({ desired: 3, ready: 2, updated: 1, available: 2 })),
      'kubectl get ds shows DESIRED 3, READY 2, UP-TO-DATE 1, AVAILABLE 2',
    );
  });
});

describe('stallSentence', () => {
  const base = {
    verb: 'has made no progress',
    to: { revision: 2, hash: 'bbb' },
    idleMs: 600_000,
    blocked: [{ node: 'node-3', reason: 'ImagePullBackOff', message: 'Back-off' }],
    empty: [],
    left: [],
    gens: [
      { revision: 2, hash: 'bbb', images: [], nodes: 1, ready: 0 },
      { revision: 1, hash: 'aaa', images: [], nodes: 2, ready: 2 },
    ],
    target: dsView({ desired: 3, ready: 2, updated: 1, available: 2 }),
    desiredAtStart: 3,
  };
  const cases: { name: string; args: Parameters<typeof stallSentence>[0]; want: RegExp[] }[] = [
    {
      name: 'a blocked node',
      args: { ...base, cause: 'ImagePullFailure' },
      want: [
        /^Rollout to revision 2 \(bbb\) has made no progress for 10m: node-3 ImagePullBackOff \(Back-off\); 1 node on revision 2 \(bbb\), 2 nodes on revision 1 \(aaa\)\. Cause ImagePullFailure: /,
        /DESIRED 3, READY 2, UP-TO-DATE 1, AVAILABLE 2\.$/,
      ],
    },
    {
      name: 'a shrink names the nodes that left',
      args: { ...base, cause: 'TargetShrank', target: dsView({ desired: 2 }), left: [{ node: 'node-3', reason: 'taint' }] },
      want: [/DESIRED dropped from 3 to 2: node-3 \(taint\) left the targets/, /Cause TargetShrank/],
    },
    {
      name: "a shrink beside a blocked node, under the blocked node's cause, says the drop after what blocks",
      args: { ...base, cause: 'ImagePullFailure', target: dsView({ desired: 2 }), left: [{ node: 'node-4', reason: 'taint' }] },
      want: [
        /node-3 ImagePullBackOff \(Back-off\); DESIRED dropped from 3 to 2: node-4 \(taint\) left the targets;/,
        /Cause ImagePullFailure/,
      ],
    },
    {
      name: 'nothing blocked',
      args: { ...base, cause: 'Unknown', blocked: [], gens: [base.gens[0]!] },
      want: [/no node is blocked, but the DaemonSet controller reports no progress\. Cause Unknown/],
    },
    {
      name: "a refusal names the controller that creates the pods: a DaemonSet's own",
      args: { ...base, cause: 'QuotaExceeded', blocked: [], refusal: 'exceeded quota' },
      want: [/no node is blocked, but the DaemonSet controller cannot create the new pods: exceeded quota/],
    },
    {
      name: "a refusal names the controller that creates the pods: a Deployment's ReplicaSet controller",
      args: {
        ...base,
        cause: 'QuotaExceeded',
        blocked: [],
        refusal: 'exceeded quota',
        target: dsView({ kind: 'Deployment', name: 'web' }),
      },
      want: [/no pod is blocked, but the ReplicaSet controller cannot create the new pods: exceeded quota/],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const s = stallSentence(tc.args);
      for (const re of tc.want) assert.match(s, re);
    });
  }
});

describe('a StatefulSet counts pods', () => {
  const sts = (o: Parameters<typeof dsView>[0] = {}) => dsView({ kind: 'StatefulSet', name: 'store', ...o });
  const two: GenerationStatus[] = [
    { revision: 2, hash: 'bbb', images: [], nodes: 1, ready: 1 },
    { revision: 1, hash: 'aaa', images: [], nodes: 2, ready: 2 },
  ];

  it('units and unitWord: nodes for a DaemonSet, pods for a StatefulSet, singular for one', () => {
    assert.deepEqual(
      [units('DaemonSet', 1), units('DaemonSet', 3), units('StatefulSet', 1), units('StatefulSet', 0), units('StatefulSet', 2)],
      ['1 node', '3 nodes', '1 pod', '0 pods', '2 pods'],
    );
    assert.deepEqual(
      [unitWord('DaemonSet'), unitWord('DaemonSet', false), unitWord('StatefulSet'), unitWord('StatefulSet', false)],
      ['nodes', 'node', 'pods', 'pod'],
    );
  });

  it('describeGenerations says pods for a StatefulSet, nodes by default', () => {
    assert.equal(describeGenerations(two, 'StatefulSet'), '1 pod on revision 2 (bbb), 2 pods on revision 1 (aaa)');
    assert.equal(describeGenerations(two), '1 node on revision 2 (bbb), 2 nodes on revision 1 (aaa)');
  });

  it('dsColumns reads like kubectl get sts', () => {
    assert.equal(dsColumns(sts({ desired: 3, ready: 2, updated: 1, available: 2 })), 'kubectl get sts shows READY 2/3');
  });

  const cases: Array<[string, Parameters<typeof heldAtPartition>, string | undefined]> = [
    ['no partition', [sts(), two], undefined],
    ['partition 0 holds nothing', [sts({ partition: 0 }), two], undefined],
    [
      'partition at replicas: every ordinal held, none updated yet',
      [sts({ partition: 3, available: 3 }), [{ ...two[1]!, nodes: 3, ready: 3 }]],
      '3 pods on revision 1 (aaa), 3/3 available; it waits at partition 3: ordinals 0–2 keep their revision until the partition is lowered',
    ],
    [
      'partition 1: one ordinal',
      [sts({ partition: 1, available: 3 }), two],
      '1 pod on revision 2 (bbb), 2 pods on revision 1 (aaa), 3/3 available; it waits at partition 1: ordinal 0 keeps its revision until the partition is lowered',
    ],
    [
      'partition 2: a range of ordinals',
      [sts({ partition: 2, available: 2 }), two],
      '1 pod on revision 2 (bbb), 2 pods on revision 1 (aaa), 2/3 available; it waits at partition 2: ordinals 0–1 keep their revision until the partition is lowered',
    ],
  ];
  for (const [name, args, want] of cases) it(`heldAtPartition: ${name}`, () => assert.equal(heldAtPartition(...args), want));
});

describe('renumbered', () => {
  const cases: Array<{
    name: string;
    undo: { toHash: string; toRevision?: number };
    now: { hash: string; revision?: number };
    want: string;
  }> = [
    {
      name: 'a ReplicaSet brought back under the next number',
      undo: { toHash: 'aaa', toRevision: 1 },
      now: { hash: 'aaa', revision: 3 },
      want: ', the revision 1 the undo restored, renumbered by its controller',
    },
    { name: 'a ControllerRevision keeps its number', undo: { toHash: 'aaa', toRevision: 1 }, now: { hash: 'aaa', revision: 1 }, want: '' },
    { name: 'another hash is not a renumbering', undo: { toHash: 'aaa', toRevision: 1 }, now: { hash: 'bbb', revision: 3 }, want: '' },
    { name: 'a number unknown on either side', undo: { toHash: 'aaa' }, now: { hash: 'aaa', revision: 3 }, want: '' },
  ];
  for (const c of cases) it(c.name, () => assert.equal(renumbered(c.undo, c.now), c.want));
});
