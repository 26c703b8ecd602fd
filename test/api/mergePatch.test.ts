/**
 * The merge patch the status writer sends: nothing when nothing changed, whatever order the keys come in.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergePatchDiff } from '../../src/api/mergePatch.js';

describe('mergePatchDiff', () => {
  it('is undefined for equal documents whose objects list their keys in another order', () => {
    // As the API server returns a stored status (keys sorted) vs as decide builds it (code order).
    const stored = {
      blockedNodes: [{ hash: 'b', message: 'Back-off', node: 'n1', pod: 'p1', reason: 'ImagePullBackOff', revision: 2 }],
      state: 'Stalled',
    };
    const desired = {
      state: 'Stalled',
      blockedNodes: [{ node: 'n1', pod: 'p1', hash: 'b', reason: 'ImagePullBackOff', message: 'Back-off', revision: 2 }],
    };
    assert.equal(mergePatchDiff(stored, desired), undefined);
  });

  it('replaces a list whole when one element changed', () => {
    const from = {
      blockedNodes: [
        { node: 'n1', reason: 'Pending' },
        { node: 'n2', reason: 'Pending' },
      ],
    };
    const to = {
      blockedNodes: [
        { reason: 'Pending', node: 'n1' },
        { reason: 'ImagePullBackOff', node: 'n2' },
      ],
    };
    assert.deepEqual(mergePatchDiff(from, to), { blockedNodes: to.blockedNodes });
  });

  it('nulls removed keys and ignores undefined ones', () => {
    assert.deepEqual(mergePatchDiff({ a: 1, b: { c: 2, d: 3 } }, { a: 1, b: { c: 2 }, e: undefined }), { b: { d: null } });
    assert.equal(mergePatchDiff({ a: [{ x: 1 }] }, { a: [{ x: 1, y: undefined }] }), undefined);
    assert.deepEqual(mergePatchDiff({ a: [1, 2] }, { a: [2, 1] }), { a: [2, 1] });
  });
});
