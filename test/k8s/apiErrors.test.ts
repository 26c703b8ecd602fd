import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, RequestTimeoutError, isGone, isTransient } from '../../src/k8s/apiErrors.js';
import { errorKind, isSchemaOutdated } from '../../src/reconcile/portErrors.js';
import { UNCHECKED_RULES, enumRefusalBody } from '../support/apiStatus.js';

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

describe('a status refused by an older CRD (SchemaOutdated)', () => {
  const invalid = (body: unknown): ApiError => ApiError.fromResponse(422, JSON.stringify(body));

  it('marks the 422 Invalid of an enum value the installed CRD does not know, as kube-apiserver sends it', () => {
    const err = ApiError.fromResponse(422, enumRefusalBody('decoder', 'status.cause', 'ImagePullFailure'));
    assert.equal(err.kind, 'SchemaOutdated');
    assert.equal(isSchemaOutdated(err), true);
    assert.equal(errorKind(err), 'SchemaOutdated');
    assert.equal(err.reason, 'Invalid');
    assert.match(
      err.message,
      /^422 Invalid: RolloutGuard\.rolloutguard\.dev "decoder" is invalid: \[status\.cause: Unsupported value: "ImagePullFailure": supported values: "", "InsufficientResources"/,
    );
    assert.equal(isTransient(err), false);
  });

  it('marks several refused status fields, and a field the schema does not declare', () => {
    const body = JSON.parse(enumRefusalBody('decoder', 'status.owner', 'Configuration')) as {
      details: { causes: Array<Record<string, string>> };
    };
    body.details.causes.push({ reason: 'FieldValueInvalid', message: 'field not declared in schema', field: '.status.newThing' });
    assert.equal(invalid(body).kind, 'SchemaOutdated');
  });

  it("the API server's note that CEL rules were not checked says nothing either way: alone, or beside a spec field, it is not marked", () => {
    const note = { reason: 'FieldValueInvalid', message: UNCHECKED_RULES, field: '<nil>' };
    const alone = {
      kind: 'Status',
      reason: 'Invalid',
      message: `x is invalid: <nil>: ${UNCHECKED_RULES}`,
      details: { causes: [note] },
      code: 422,
    };
    assert.equal(invalid(alone).kind, undefined);
    const spec = { reason: 'FieldValueNotSupported', message: 'Unsupported value: "Deployment"', field: 'spec.targetRef.kind' };
    assert.equal(invalid({ ...alone, details: { causes: [spec, note] } }).kind, undefined);
  });

  it('reads the message when the Status has no causes', () => {
    const message =
      'RolloutGuard.rolloutguard.dev "decoder" is invalid: status.state: Unsupported value: "Paused": supported values: "Unknown"';
    assert.equal(invalid({ kind: 'Status', status: 'Failure', reason: 'Invalid', message, code: 422 }).kind, 'SchemaOutdated');
  });

  it('leaves other refusals alone: a spec field, a bounded value, another code', () => {
    const spec = invalid({
      kind: 'Status',
      reason: 'Invalid',
      message: 'RolloutGuard.rolloutguard.dev "g" is invalid: spec.targetRef.kind: Unsupported value: "Deployment"',
      details: { causes: [{ reason: 'FieldValueNotSupported', message: 'Unsupported value: "Deployment"', field: 'spec.targetRef.kind' }] },
      code: 422,
    });
    assert.equal(spec.kind, undefined);
    const mixed = JSON.parse(enumRefusalBody('decoder', 'status.cause', 'ImagePullFailure')) as {
      details: { causes: Array<Record<string, string>> };
    };
    mixed.details.causes.push({ reason: 'FieldValueTooLong', message: 'Too long: may not be longer than 32768', field: 'status.message' });
    assert.equal(invalid(mixed).kind, undefined, 'a value too long is not a sign of an older CRD');
    const bad = ApiError.fromResponse(400, enumRefusalBody('decoder', 'status.cause', 'ImagePullFailure'));
    assert.equal(bad.kind, undefined);
    assert.equal(isSchemaOutdated(new ApiError('x', { statusCode: 409, reason: 'Conflict' })), false);
    assert.equal(isSchemaOutdated(new Error('422')), false);
  });
});
