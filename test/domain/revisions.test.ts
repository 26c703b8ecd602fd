/**
 * Which ControllerRevision is which: the same revision across two passes, and the target's current one
 * when a stale controller numbered two revisions alike.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { currentRevisionOf, sameRevision } from '../../src/domain/revisions.js';
import type { RevisionView } from '../../src/domain/observation.js';

describe('sameRevision', () => {
  const cases: Array<{
    name: string;
    cur: { hash: string; revision?: number };
    prev: { hash: string; revision?: number };
    cached?: RevisionView[];
    want: boolean;
  }> = [
    { name: 'same hash, same number', cur: { hash: 'a', revision: 1 }, prev: { hash: 'a', revision: 1 }, want: true },
    { name: 'another hash', cur: { hash: 'b', revision: 2 }, prev: { hash: 'a', revision: 1 }, want: false },
    { name: 'a number unknown on either side: the hash decides', cur: { hash: 'a' }, prev: { hash: 'a', revision: 3 }, want: true },
    {
      name: 'the same hash renumbered: it changed and came back between two passes',
      cur: { hash: 'a', revision: 3 },
      prev: { hash: 'a', revision: 1 },
      cached: [{ name: 'd-a', hash: 'a', revision: 3 }],
      want: false,
    },
    {
      name: 'moved off a number another revision holds: a stale controller corrected, the same revision',
      cur: { hash: 'a', revision: 3 },
      prev: { hash: 'a', revision: 2 },
      cached: [
        { name: 'd-a', hash: 'a', revision: 3 },
        { name: 'd-b', hash: 'b', revision: 2 },
      ],
      want: true,
    },
  ];
  for (const c of cases) it(c.name, () => assert.equal(sameRevision(c.cur, c.prev, c.cached ?? []), c.want));
});

describe('currentRevisionOf', () => {
  const r = (hash: string, revision: number, templateDigest?: string): RevisionView => ({
    name: `d-${hash}`,
    hash,
    revision,
    ...(templateDigest ? { templateDigest } : {}),
  });
  it('the newest number; of two with it, the one storing the live template; an older one storing it is not taken', () => {
    assert.equal(currentRevisionOf([], 'x'), undefined);
    assert.equal(currentRevisionOf([r('b', 2, 'db'), r('a', 1, 'da')], undefined)?.hash, 'b');
    assert.equal(currentRevisionOf([r('old', 2, 'do'), r('new', 2, 'dn'), r('a', 1, 'da')], 'dn')?.hash, 'new');
    assert.equal(currentRevisionOf([r('b', 2, 'db'), r('a', 1, 'da')], 'da')?.hash, 'b', 'an old template back, not renumbered yet');
  });
});
