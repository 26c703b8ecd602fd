/**
 * MetricsAuthFilter with a fake reviewer: 401 without a token or with one the API server does not
 * accept, 403 for a user without the grant, 200 otherwise; decisions remembered per token for their
 * TTL (refusals shorter), failures to ask never remembered, concurrent requests sharing one review,
 * and the number of remembered tokens bounded.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { METRICS_ATTRIBUTES, MetricsAuthFilter, bearerToken } from '../../src/runtime/metricsAuth.js';
import { type AccessReviewer, type Authentication, type UserInfo } from '../../src/k8s/metricsAuth.js';

/** Tokens the fake API server knows, the users they name, and which users hold `get /metrics`. */
class FakeReviewer implements AccessReviewer {
  readonly calls: string[] = [];
  readonly sarUsers: UserInfo[] = [];
  readonly attributes: Array<{ path: string; verb: string }> = [];
  failing = false;
  /** When set, authenticate() waits for this before answering. */
  gate: Promise<void> | undefined;
  constructor(
    readonly tokens: Map<string, UserInfo>,
    readonly allowed: Set<string>,
  ) {}

  async authenticate(token: string): Promise<Authentication> {
    this.calls.push(`tokenreview ${token}`);
    await this.gate;
    if (this.failing) throw new Error('connect ECONNREFUSED');
    const user = this.tokens.get(token);
    return user ? { user } : { reason: 'invalid bearer token' };
  }

  authorize(user: UserInfo, attributes: { path: string; verb: string }): Promise<{ allowed: boolean; reason: string }> {
    this.calls.push(`sar ${user.username}`);
    this.sarUsers.push(user);
    this.attributes.push(attributes);
    const allowed = this.allowed.has(user.username);
    return Promise.resolve({ allowed, reason: allowed ? 'RBAC: allowed by ClusterRoleBinding' : '' });
  }
}

const PROM: UserInfo = {
  username: 'system:serviceaccount:monitoring:prometheus',
  uid: 'u-1',
  groups: ['system:serviceaccounts'],
  extra: { 'authentication.kubernetes.io/pod-name': ['prometheus-0'] },
};
const NOBODY: UserInfo = { username: 'system:serviceaccount:team-a:nobody' };

function setup(o: { allowTtlMs?: number; denyTtlMs?: number; maxEntries?: number } = {}) {
  let now = 1_000;
  const reviewer = new FakeReviewer(
    new Map([
      ['prom-token', PROM],
      ['nobody-token', NOBODY],
    ]),
    new Set([PROM.username]),
  );
  const filter = new MetricsAuthFilter(reviewer, {
    allowTtlMs: o.allowTtlMs ?? 60_000,
    denyTtlMs: o.denyTtlMs ?? 10_000,
    maxEntries: o.maxEntries ?? 256,
    reviewTimeoutMs: 5_000,
    now: () => now,
  });
  return { reviewer, filter, advance: (ms: number) => (now += ms) };
}

describe('MetricsAuthFilter: decisions', () => {
  it('no Authorization header, another scheme, or an empty token: 401 without asking the API server', async () => {
    const { reviewer, filter } = setup();
    for (const h of [undefined, '', 'Basic dXNlcjpwYXNz', 'Bearer', 'Bearer  ', 'prom-token']) {
      assert.equal((await filter.check(h)).status, 401, JSON.stringify(h));
    }
    assert.deepEqual(reviewer.calls, []);
  });

  it('a token the API server does not authenticate: 401, and no SubjectAccessReview', async () => {
    const { reviewer, filter } = setup();
    assert.deepEqual(await filter.check('Bearer forged'), { status: 401, reason: 'invalid bearer token' });
    assert.deepEqual(reviewer.calls, ['tokenreview forged']);
  });

  it('a known user without get /metrics: 403 naming the user', async () => {
    const { filter } = setup();
    const d = await filter.check('Bearer nobody-token');
    assert.equal(d.status, 403);
    assert.equal(d.status === 403 && d.user, NOBODY.username);
  });

  it('a user with get /metrics: 200; the review asks exactly for get on /metrics, as the user the token named', async () => {
    const { reviewer, filter } = setup();
    assert.deepEqual(await filter.check('Bearer prom-token'), { status: 200, user: PROM.username });
    assert.deepEqual(reviewer.attributes, [{ path: '/metrics', verb: 'get' }]);
    assert.deepEqual(METRICS_ATTRIBUTES, { path: '/metrics', verb: 'get' });
    assert.deepEqual(reviewer.sarUsers, [PROM], 'uid, groups and extra passed through unchanged');
  });

  it('the API server cannot be asked: 503, saying why', async () => {
    const { reviewer, filter } = setup();
    reviewer.failing = true;
    const d = await filter.check('Bearer prom-token');
    assert.equal(d.status, 503);
    assert.match(d.status === 503 ? d.reason : '', /ECONNREFUSED/);
  });

  it('bearerToken: the scheme is case-insensitive, surrounding space ignored', () => {
    assert.equal(bearerToken('bearer abc.def'), 'abc.def');
    assert.equal(bearerToken('  BEARER   abc  '), 'abc');
    assert.equal(bearerToken('Bearer a b'), undefined);
  });
});

describe('MetricsAuthFilter: cache', () => {
  it('an allowed token is reviewed once per allow TTL, however often it scrapes', async () => {
    const { reviewer, filter, advance } = setup({ allowTtlMs: 60_000 });
    for (let i = 0; i < 4; i++) {
      assert.equal((await filter.check('Bearer prom-token')).status, 200);
      advance(15_000 - 1); // four 15 s scrapes inside one minute
    }
    assert.equal(filter.reviews, 1);
    advance(10);
    assert.equal((await filter.check('Bearer prom-token')).status, 200);
    assert.equal(filter.reviews, 2, 'reviewed again once the TTL passed');
    assert.deepEqual(reviewer.calls.filter((c) => c.startsWith('sar')).length, 2);
  });

  it('refusals are remembered for the shorter deny TTL, then asked again (a new grant is seen)', async () => {
    const { reviewer, filter, advance } = setup({ denyTtlMs: 10_000 });
    assert.equal((await filter.check('Bearer nobody-token')).status, 403);
    assert.equal((await filter.check('Bearer forged')).status, 401);
    advance(9_999);
    assert.equal((await filter.check('Bearer nobody-token')).status, 403);
    assert.equal((await filter.check('Bearer forged')).status, 401);
    assert.equal(filter.reviews, 2, 'both refusals came from the cache');
    reviewer.allowed.add(NOBODY.username); // someone binds the reader role
    advance(1);
    assert.equal((await filter.check('Bearer nobody-token')).status, 200);
    assert.equal(filter.reviews, 3);
  });

  it('a failure to ask is not remembered: the next request asks again', async () => {
    const { reviewer, filter } = setup();
    reviewer.failing = true;
    assert.equal((await filter.check('Bearer prom-token')).status, 503);
    reviewer.failing = false;
    assert.equal((await filter.check('Bearer prom-token')).status, 200);
    assert.equal(filter.reviews, 2);
  });

  it('concurrent requests with one token share one review', async () => {
    const { reviewer, filter } = setup();
    let open!: () => void;
    reviewer.gate = new Promise((r) => (open = r));
    const pending = [filter.check('Bearer prom-token'), filter.check('Bearer prom-token'), filter.check('bearer prom-token')];
    open();
    assert.deepEqual(
      (await Promise.all(pending)).map((d) => d.status),
      [200, 200, 200],
    );
    assert.equal(filter.reviews, 1);
  });

  it('the cache holds at most maxEntries tokens; the oldest is forgotten first', async () => {
    const { reviewer, filter } = setup({ maxEntries: 3 });
    for (const t of ['a', 'b', 'c', 'd', 'e']) await filter.check(`Bearer ${t}`);
    assert.equal(filter.size, 3);
    assert.equal(filter.reviews, 5);
    await filter.check('Bearer e'); // still remembered
    await filter.check('Bearer c'); // still remembered
    assert.equal(filter.reviews, 5);
    await filter.check('Bearer a'); // forgotten: asked again
    assert.equal(filter.reviews, 6);
    assert.equal(filter.size, 3);
    assert.ok(
      reviewer.calls.every((c) => c.startsWith('tokenreview')),
      'unknown tokens never reach a SubjectAccessReview',
    );
  });

  it('a flood of distinct tokens cannot grow the cache past its bound', async () => {
    const { filter } = setup({ maxEntries: 16 });
    for (let i = 0; i < 500; i++) await filter.check(`Bearer t${i}`);
    assert.equal(filter.size, 16);
  });
});
