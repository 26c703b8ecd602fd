/** The dashboard's list of guards: the columns, what made each guard, and the order. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SlimGuard } from '../../src/api/objects.js';
import { guardList, madeBy, selectorText } from '../../src/cli/dashboardList.js';

const g = (over: Partial<SlimGuard> & { name: string; namespace?: string; labels?: Record<string, string> }): SlimGuard => ({
  metadata: {
    name: over.name,
    namespace: over.namespace ?? 'ns',
    creationTimestamp: '2026-01-01T00:00:00Z',
    ...(over.labels ? { labels: over.labels } : {}),
  },
  spec: over.spec ?? { targetRef: { kind: 'DaemonSet', name: 'd' } },
  ...(over.status ? { status: over.status } : {}),
});

describe('selectorText', () => {
  const cases: Array<[Parameters<typeof selectorText>[0], string]> = [
    [undefined, ''],
    [{}, '(every workload)'],
    [{ matchLabels: { app: 'a', tier: 'b' } }, 'app=a,tier=b'],
    [
      {
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['x', 'y'] },
          { key: 'skip', operator: 'DoesNotExist' },
        ],
      },
      'tier in (x,y),skip doesnotexist',
    ],
  ];
  for (const [s, want] of cases) it(want || 'none', () => assert.equal(selectorText(s), want));
});

describe('madeBy', () => {
  const cases: Array<[string, SlimGuard, string]> = [
    ['a person', g({ name: 'a' }), ''],
    ['a policy', g({ name: 'a', labels: { 'rolloutguard.dev/policy': 'fleet' } }), 'policy fleet'],
    ['a guard with a selector', g({ name: 'a', labels: { 'rolloutguard.dev/selector-guard': 'sel' } }), 'selector guard sel'],
    [
      'its own selector',
      g({ name: 'a', spec: { selector: { matchLabels: { app: 'x' } } } as unknown as SlimGuard['spec'] }),
      'selector app=x',
    ],
  ];
  for (const [what, guard, want] of cases) it(what, () => assert.equal(madeBy(guard), want));
});

describe('guardList', () => {
  it("the CRD's columns from each guard, namespace then name, guards being deleted left out", () => {
    const l = guardList(
      [
        g({
          name: 'b',
          status: { state: 'Stalled', cause: 'ImagePullFailure', owner: 'Revision', desired: 3, updated: 1, ready: 2, message: 'm' },
        }),
        g({ name: 'a', namespace: 'z' }),
        g({ name: 'a' }),
        { ...g({ name: 'gone' }), metadata: { name: 'gone', namespace: 'ns', deletionTimestamp: '2026-01-01T00:00:00Z' } },
        g({ name: 'sel', spec: { selector: { matchLabels: { app: 'x' } }, targetKinds: ['StatefulSet'] } as unknown as SlimGuard['spec'] }),
      ],
      '2026-01-01T00:00:00Z',
      undefined,
    );
    assert.deepEqual(
      l.guards.map((r) => [r.namespace, r.name, r.kind, r.target, r.state, r.cause, r.owner, r.desired, r.mapped]),
      [
        ['ns', 'a', 'DaemonSet', 'd', '', '', '', undefined, true],
        ['ns', 'b', 'DaemonSet', 'd', 'Stalled', 'ImagePullFailure', 'Revision', 3, true],
        ['ns', 'sel', 'StatefulSet', 'app=x', '', '', '', undefined, false],
        ['z', 'a', 'DaemonSet', 'd', '', '', '', undefined, true],
      ],
    );
    assert.equal(l.namespace, undefined);
    assert.equal(guardList([], 'now', 'ns').namespace, 'ns');
  });
});
