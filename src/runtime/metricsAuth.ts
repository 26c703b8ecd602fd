/**
 * Who may read /metrics when `--metrics-secure` is on, decided as controller-runtime's
 * `filters.WithAuthenticationAndAuthorization` and kube-rbac-proxy decide it: the bearer token is
 * authenticated by the API server (a TokenReview), and the user it names must be allowed to `get` the
 * non-resource URL /metrics (a SubjectAccessReview), so access is granted with ordinary RBAC.
 *
 * The reviews go through the AccessReviewer that src/k8s/metricsAuth.ts declares and implements: this
 * file holds the decision and its cache, and knows nothing of HTTP clients.
 */
import { createHash } from 'node:crypto';

import { errorMessage } from '../reconcile/portErrors.js';
import type { AccessReviewer } from '../k8s/metricsAuth.js';

/**
 * What the filter answers for one request. 401: no token, or one the API server does not accept; 403: a
 * known user without the grant; 503: the API server could not be asked (never cached).
 */
export type AuthDecision =
  | { status: 200; user: string }
  | { status: 401; reason: string }
  | { status: 403; user: string; reason: string }
  | { status: 503; reason: string };

export interface MetricsAuthOptions {
  /** How long an allowed token is remembered. */
  allowTtlMs: number;
  /** How long a refused token (401 or 403) is remembered. */
  denyTtlMs: number;
  /** At most this many tokens are remembered; the oldest entry goes first. */
  maxEntries: number;
  /** Time allowed for the two reviews of one token together. */
  reviewTimeoutMs: number;
  /** Monotonic milliseconds; a parameter so tests can move time. */
  now?: () => number;
}

/** The one thing the metrics server serves, in the terms of a SubjectAccessReview. */
export const METRICS_ATTRIBUTES = { path: '/metrics', verb: 'get' } as const;

interface Entry {
  decision: AuthDecision;
  expiresAt: number;
}

/**
 * Decides each request from its Authorization header, remembering decisions per token so that a
 * scraper does not cost two API calls a scrape. Tokens are kept only as SHA-256 hashes. Concurrent
 * requests with the same token share one pair of reviews.
 */
export class MetricsAuthFilter {
  private readonly cache = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<AuthDecision>>();
  private readonly now: () => number;
  private made = 0;

  constructor(
    private readonly reviewer: AccessReviewer,
    private readonly opts: MetricsAuthOptions,
  ) {
    this.now = opts.now ?? (() => performance.now());
  }

  /** Reviews made so far (TokenReviews sent). */
  get reviews(): number {
    return this.made;
  }

  /** Entries remembered now (expired ones included until they are next looked at or evicted). */
  get size(): number {
    return this.cache.size;
  }

  async check(authorization: string | undefined): Promise<AuthDecision> {
    const token = bearerToken(authorization);
    if (token === undefined) return { status: 401, reason: 'no bearer token' };
    const key = createHash('sha256').update(token).digest('hex');
    const hit = this.cache.get(key);
    if (hit) {
      if (hit.expiresAt > this.now()) return hit.decision;
      this.cache.delete(key);
    }
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    // review() never rejects: a failure to ask is the decision 503, which is not remembered.
    const review = this.review(token).then((decision) => {
      this.inFlight.delete(key);
      if (decision.status !== 503) this.remember(key, decision);
      return decision;
    });
    this.inFlight.set(key, review);
    return review;
  }

  private async review(token: string): Promise<AuthDecision> {
    this.made++;
    const signal = AbortSignal.timeout(this.opts.reviewTimeoutMs);
    try {
      const authn = await this.reviewer.authenticate(token, signal);
      if (authn.user === undefined) return { status: 401, reason: authn.reason };
      const user = authn.user.username;
      const authz = await this.reviewer.authorize(authn.user, METRICS_ATTRIBUTES, signal);
      if (!authz.allowed) {
        return { status: 403, user, reason: authz.reason || `${METRICS_ATTRIBUTES.verb} ${METRICS_ATTRIBUTES.path} is not allowed` };
      }
      return { status: 200, user };
    } catch (err) {
      return { status: 503, reason: `could not review the token with the API server: ${errorMessage(err)}` };
    }
  }

  private remember(key: string, decision: AuthDecision): void {
    const ttl = decision.status === 200 ? this.opts.allowTtlMs : this.opts.denyTtlMs;
    this.cache.delete(key); // re-inserted last: Map order is the eviction order
    this.cache.set(key, { decision, expiresAt: this.now() + ttl });
    while (this.cache.size > this.opts.maxEntries) {
      const oldest = this.cache.keys().next();
      if (oldest.done) break;
      this.cache.delete(oldest.value);
    }
  }
}

/** The token of `Authorization: Bearer <token>` (scheme case-insensitive, RFC 7235); undefined otherwise. */
export function bearerToken(header: string | undefined): string | undefined {
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m?.[1];
}
