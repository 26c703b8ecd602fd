/**
 * ApiAccessReviewer against a small local HTTP API: the TokenReview and SubjectAccessReview it sends
 * (paths, kinds, the user passed through unchanged, the non-resource attributes) and how it reads the
 * answers, including a SubjectAccessReview that both allows and denies (denied wins).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ApiError } from '../../src/k8s/apiErrors.js';
import { ApiAccessReviewer } from '../../src/k8s/metricsAuth.js';
import { clientFor, listenLocal } from '../support/localApi.js';

interface Seen {
  method: string;
  path: string;
  body: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- raw request JSON
}

describe('ApiAccessReviewer', () => {
  const seen: Seen[] = [];
  let answer: (path: string, body: Record<string, any>) => [number, unknown]; // eslint-disable-line @typescript-eslint/no-explicit-any
  const server = http.createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => {
      const body = JSON.parse(text || '{}') as Record<string, unknown>;
      seen.push({ method: req.method ?? '', path: req.url ?? '', body });
      const [code, payload] = answer(req.url ?? '', body);
      res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify({ ...body, ...(payload as object) }));
    });
  });
  let reviewer: ApiAccessReviewer;
  const signal = new AbortController().signal;

  before(async () => {
    await listenLocal(server);
    reviewer = new ApiAccessReviewer(clientFor(server));
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen.length = 0;
  });

  it('authenticate: POSTs a TokenReview of the token and returns the user it names', async () => {
    const user = {
      username: 'system:serviceaccount:monitoring:prometheus',
      uid: 'abc',
      groups: ['system:serviceaccounts', 'system:authenticated'],
      extra: { 'authentication.kubernetes.io/pod-name': ['prometheus-0'] },
    };
    answer = () => [201, { status: { authenticated: true, user, audiences: ['https://kubernetes.default.svc'] } }];
    assert.deepEqual(await reviewer.authenticate('tok-1', signal), { user });
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.method, 'POST');
    assert.equal(seen[0]!.path, '/apis/authentication.k8s.io/v1/tokenreviews');
    assert.deepEqual(seen[0]!.body, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'tok-1' } });
  });

  it('authenticate: a token the API server does not accept gives its error as the reason', async () => {
    answer = () => [201, { status: { authenticated: false, error: 'invalid bearer token, token lookup failed' } }];
    assert.deepEqual(await reviewer.authenticate('forged', signal), { reason: 'invalid bearer token, token lookup failed' });
    answer = () => [201, { status: {} }];
    assert.deepEqual(await reviewer.authenticate('forged', signal), { reason: 'the API server did not authenticate the token' });
  });

  it('authenticate: a refused review (the operator lacks create tokenreviews) rejects with the ApiError', async () => {
    answer = () => [403, { kind: 'Status', code: 403, reason: 'Forbidden', message: 'tokenreviews.authentication.k8s.io is forbidden' }];
    await assert.rejects(reviewer.authenticate('tok', signal), (e: unknown) => e instanceof ApiError && e.statusCode === 403);
  });

  it('authorize: POSTs a SubjectAccessReview of the non-resource URL, for the user as authenticated', async () => {
    answer = () => [201, { status: { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "x"' } }];
    const user = { username: 'u', uid: 'id', groups: ['g'], extra: { k: ['v'] } };
    assert.deepEqual(await reviewer.authorize(user, { path: '/metrics', verb: 'get' }, signal), {
      allowed: true,
      reason: 'RBAC: allowed by ClusterRoleBinding "x"',
    });
    assert.equal(seen[0]!.path, '/apis/authorization.k8s.io/v1/subjectaccessreviews');
    assert.deepEqual(seen[0]!.body, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user: 'u', uid: 'id', groups: ['g'], extra: { k: ['v'] }, nonResourceAttributes: { path: '/metrics', verb: 'get' } },
    });
  });

  it('authorize: not allowed, or allowed and denied at once, is a refusal', async () => {
    answer = () => [201, { status: { allowed: false } }];
    assert.deepEqual(await reviewer.authorize({ username: 'u' }, { path: '/metrics', verb: 'get' }, signal), {
      allowed: false,
      reason: '',
    });
    assert.deepEqual(
      seen[0]!.body.spec,
      { user: 'u', nonResourceAttributes: { path: '/metrics', verb: 'get' } },
      'no empty uid, groups or extra sent',
    );
    answer = () => [201, { status: { allowed: true, denied: true, reason: 'denied by a webhook' } }];
    assert.deepEqual(await reviewer.authorize({ username: 'u' }, { path: '/metrics', verb: 'get' }, signal), {
      allowed: false,
      reason: 'denied by a webhook',
    });
  });
});
