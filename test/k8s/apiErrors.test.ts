import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, RequestTimeoutError, isGone, isTransient } from '../../src/k8s/apiErrors.js';

describe('isTransient', () => {
  const cases: Array<[string, unknown, boolean]> = [
    ['500', new ApiError('x', { statusCode: 500 }), true],
    ['503', new ApiError('x', { statusCode: 503 }), true],
    ['429', new ApiError('x', { statusCode: 429 }), true],
    ['409', new ApiError('x', { statusCode: 409 }), false],
    ['404', new ApiError('x', { statusCode: 404 }), false],
    ['410', new ApiError('x', { statusCode: 410 }), false],
    ['ECONNRESET', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), true],
    ['EACCES', Object.assign(new Error('nope'), { code: 'EACCES' }), false],
    ['timeout', new RequestTimeoutError('GET', '/x', 1), true],
    ['plain error', new Error('bug'), false],
  ];
  for (const [name, err, want] of cases) it(`${name} → ${want}`, () => assert.equal(isTransient(err), want));

  it('decodes an in-stream watch ERROR Status', () => {
    const err = ApiError.fromStatus({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
    assert.equal(isGone(err), true);
    assert.equal(err.message, '410 Expired: too old resource version');
  });
});
