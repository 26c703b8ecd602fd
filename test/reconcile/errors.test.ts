/**
 * classify / retryAfterMs: what the work queue does with a failed key, and how long the API server
 * asked it to wait.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../src/k8s/apiErrors.js';
import { PassError, TransientError, classify, deadlineOf, retryAfterMs } from '../../src/reconcile/errors.js';

describe('retryAfterMs', () => {
  const cases: Array<[string, unknown, number]> = [
    ['429 with Retry-After 7 s', new ApiError('too many requests', { statusCode: 429, retryAfterSeconds: 7 }), 7_000],
    ['503 with Retry-After 2 s', new ApiError('unavailable', { statusCode: 503, retryAfterSeconds: 2 }), 2_000],
    [
      'a 429 wrapped as the cause of another error',
      new TransientError('status kept failing', { cause: new ApiError('slow down', { statusCode: 429, retryAfterSeconds: 3 }) }),
      3_000,
    ],
    ['a 429 without Retry-After: the backoff decides', new ApiError('too many requests', { statusCode: 429 }), 0],
    ['a 500 with a Retry-After is not a request to wait', new ApiError('boom', { statusCode: 500, retryAfterSeconds: 9 }), 0],
    ['not an API error', new Error('x'), 0],
  ];
  for (const [name, e, want] of cases) it(name, () => assert.equal(retryAfterMs(e), want));
});

describe('classify', () => {
  it('403 is forbidden, also wrapped by a failed pass; 429, 5xx, TransientError and the unknown are transient', () => {
    assert.equal(classify(new ApiError('forbidden', { statusCode: 403 })), 'forbidden');
    assert.equal(classify(new PassError('pass failed', 5000, { cause: new ApiError('forbidden', { statusCode: 403 }) })), 'forbidden');
    assert.equal(classify(new ApiError('slow down', { statusCode: 429 })), 'transient');
    assert.equal(classify(new ApiError('boom', { statusCode: 503 })), 'transient');
    assert.equal(classify(new TransientError('x')), 'transient');
    assert.equal(classify(new Error('a bug')), 'transient');
  });
});

describe('deadlineOf', () => {
  it("a failed pass keeps decide's deadline; other errors carry none", () => {
    assert.equal(deadlineOf(new PassError('pass failed', 12_000, { cause: new ApiError('forbidden', { statusCode: 403 }) })), 12_000);
    assert.equal(deadlineOf(new PassError('pass failed before deciding', undefined, { cause: new Error('x') })), undefined);
    assert.equal(deadlineOf(new ApiError('forbidden', { statusCode: 403 })), undefined);
  });
});
