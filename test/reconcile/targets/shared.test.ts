/**
 * openTarget, the opening every kind's gather adapter shares, through a fake CacheView and a target of
 * no particular kind: a target not cached or without a UID is missing (and the guard's memory of its
 * units forgotten), one going away is deleting, one whose pods are needed but not cached waits for them
 * (asking for them under its view's kind), and otherwise it opens with its view, its revisions newest
 * first and whether its units come from its counters.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Meta, SlimRevision } from '../../../src/api/objects.js';
import type { TargetKind } from '../../../src/api/types.js';
import type { Observation } from '../../../src/domain/observation.js';
import type { CacheView } from '../../../src/reconcile/ports.js';
import { TargetMemory } from '../../../src/reconcile/targetMemory.js';
import { openTarget, type TargetKindParts } from '../../../src/reconcile/targets/shared.js';
import { dsView, node } from '../../support/fixtures.js';
import { holding } from '../../support/cacheViews.js';

/** A cached target as an adapter reads it: its metadata, and what its kind's view is built from. */
interface Cached {
  metadata: Meta;
  updated: number;
  digest: string;
}

const REVISIONS: SlimRevision[] = [
  { metadata: { name: 't-aaa' }, hash: 'aaa', revision: 1, templateDigest: 'digest-a' },
  { metadata: { name: 't-bbb' }, hash: 'bbb', revision: 2, templateDigest: 'digest-b' },
];

/** Target `t` in `ns`, 3 units of which `updated` run the live template, the one revision 2 stores. */
function cached(o: { meta?: Partial<Meta>; updated?: number } = {}): Cached {
  return {
    metadata: { name: 't', namespace: 'ns', uid: 't-uid', creationTimestamp: '2025-12-01T00:00:00Z', ...o.meta },
    updated: o.updated ?? 3,
    digest: 'digest-b',
  };
}

/** The view of kind `kind` a kind's adapter would build. */
const viewOf =
  (kind: TargetKind): TargetKindParts<Cached>['viewOf'] =>
  (_cache, c, namespace, name, uid) =>
    dsView({ kind, namespace, name, uid, updated: c.updated, templateDigest: c.digest });

/** The pod caches asked for, as `kind namespace/name`. */
type Asked = string[];

/** A cache holding the revisions of `t-uid`, whose pod cache is `podCache` (always synced without it). */
function world(asked: Asked, o: { podCache?: 'synced' | 'syncing' | 'off'; terminatingSince?: string } = {}): CacheView {
  const { podCache, terminatingSince } = o;
  return {
    workload: holding({}),
    podsOwnedBy: () => [],
    revisionsOwnedBy: (uid) => (uid === 't-uid' ? REVISIONS : []),
    nodes: () => [],
    wantPods: (kind, namespace, name) => {
      asked.push(`${kind} ${namespace}/${name}`);
    },
    ...(podCache ? { podCache: () => podCache } : {}),
    ...(terminatingSince ? { namespaceTerminatingSince: () => terminatingSince } : {}),
  };
}

const AT = { namespace: 'ns', name: 't', status: undefined };
const open = (cache: CacheView, target: Cached | undefined, kind: TargetKind = 'StatefulSet', memory = new TargetMemory()) =>
  openTarget(cache, memory, AT, { cached: target, viewOf: viewOf(kind) });

describe('openTarget: a target that is not there to judge', () => {
  const cases: Array<[string, Cached | undefined, Parameters<typeof world>[1], Observation]> = [
    ['not cached', undefined, {}, { kind: 'TargetMissing', targetName: 't' }],
    ['cached without a UID', cached({ meta: { uid: '' } }), {}, { kind: 'TargetMissing', targetName: 't' }],
    [
      'being deleted',
      cached({ meta: { deletionTimestamp: '2026-01-01T00:00:00Z' } }),
      {},
      { kind: 'TargetDeleting', targetName: 't', by: 'Target', since: '2026-01-01T00:00:00Z' },
    ],
    [
      'in a namespace that began terminating after it was created',
      cached(),
      { terminatingSince: '2026-01-01T00:00:00Z' },
      { kind: 'TargetDeleting', targetName: 't', by: 'Namespace', since: '2026-01-01T00:00:00Z' },
    ],
  ];
  for (const [name, target, cache, want] of cases) {
    it(`is ${want.kind} when ${name}`, () => assert.deepEqual(open(world([], cache), target), want));
  }

  it('forgets the units it remembers when the target is missing: one made anew is seen for the first time', () => {
    const memory = new TargetMemory();
    const units = ['t-0', 't-1', 't-2'].map((n) => node(n));
    memory.diff('t-uid', units, new Set(['t-0', 't-1', 't-2']), true);
    open(world([]), undefined, 'StatefulSet', memory);
    // Without forget(), t-1 and t-2 would be named removed.
    assert.deepEqual(memory.diff('t-uid', units.slice(0, 1), new Set(['t-0']), true), { left: [], removed: [] });
  });
});

describe('openTarget: the pods', () => {
  it('waits for pods that are needed (a rollout in the counters) and not cached, asking for them under the kind', () => {
    for (const kind of ['DaemonSet', 'StatefulSet'] as const) {
      const asked: Asked = [];
      assert.deepEqual(open(world(asked, { podCache: 'syncing' }), cached({ updated: 1 }), kind), { kind: 'PodsPending', target: 't' });
      assert.deepEqual(asked, [`${kind} ns/t`]);
    }
  });

  it('opens from the counters when the pods are not cached and not needed, without asking for them', () => {
    const asked: Asked = [];
    const opened = open(world(asked, { podCache: 'off' }), cached());
    assert.ok(opened.kind === 'Opened', JSON.stringify(opened));
    assert.equal(opened.fromCounters, true);
    assert.deepEqual(asked, []);
  });

  it('opens with the view, the revisions newest first and the current one, when the pods are cached', () => {
    const target = cached({ updated: 1 });
    const opened = open(world([]), target);
    assert.ok(opened.kind === 'Opened', JSON.stringify(opened));
    assert.equal(opened.cached, target);
    assert.equal(opened.uid, 't-uid');
    assert.deepEqual([opened.view.kind, opened.view.name, opened.view.namespace, opened.view.uid], ['StatefulSet', 't', 'ns', 't-uid']);
    assert.deepEqual(
      opened.revisions.map((r) => r.hash),
      ['bbb', 'aaa'],
    );
    assert.equal(opened.currentRevision?.hash, 'bbb', 'the newest, storing the live template');
    assert.equal(opened.fromCounters, false);
  });
});
