/**
 * The API server's reviews behind `--metrics-secure`: a TokenReview (authentication.k8s.io/v1) says
 * whose token a scraper presents, a SubjectAccessReview (authorization.k8s.io/v1) whether that user may
 * `get` the non-resource URL /metrics. Both are `create` calls the operator's ServiceAccount is granted
 * by config/rbac-metrics-auth; neither is stored by the API server.
 */
import { AUTHENTICATION_API_VERSION, AUTHORIZATION_API_VERSION } from '../api/names.js';
import type { ApiClient } from './apiClient.js';
import { SUBJECT_ACCESS_REVIEWS_PATH, TOKEN_REVIEWS_PATH } from './apiPaths.js';

/** The user a TokenReview names; passed back unchanged in the SubjectAccessReview. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** A TokenReview's answer: the user, or why there is none. */
export type Authentication = { user: UserInfo } | { user?: undefined; reason: string };

/** The API server's two reviews, as the filter needs them. Rejects when the review could not be made. */
export interface AccessReviewer {
  /** TokenReview: whose token is this, if anyone's. */
  authenticate(token: string, signal: AbortSignal): Promise<Authentication>;
  /** SubjectAccessReview of a non-resource URL: may `user` do `verb` on `path`. */
  authorize(user: UserInfo, attributes: { path: string; verb: string }, signal: AbortSignal): Promise<{ allowed: boolean; reason: string }>;
}

interface TokenReview {
  status?: {
    authenticated?: boolean;
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
    error?: string;
  };
}

interface SubjectAccessReview {
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

export class ApiAccessReviewer implements AccessReviewer {
  constructor(private readonly client: ApiClient) {}

  async authenticate(token: string, signal: AbortSignal): Promise<Authentication> {
    const r = await this.client.request<TokenReview>('POST', TOKEN_REVIEWS_PATH, {
      // No audiences: the API server checks the token against its own, as controller-runtime's filter does.
      body: { apiVersion: AUTHENTICATION_API_VERSION, kind: 'TokenReview', spec: { token } },
      signal,
    });
    const u = r.status?.user;
    if (r.status?.authenticated !== true || !u?.username)
      return { reason: r.status?.error || 'the API server did not authenticate the token' };
    return {
      user: {
        username: u.username,
        ...(u.uid ? { uid: u.uid } : {}),
        ...(u.groups ? { groups: u.groups } : {}),
        ...(u.extra ? { extra: u.extra } : {}),
      },
    };
  }

  async authorize(
    user: UserInfo,
    attributes: { path: string; verb: string },
    signal: AbortSignal,
  ): Promise<{ allowed: boolean; reason: string }> {
    const r = await this.client.request<SubjectAccessReview>('POST', SUBJECT_ACCESS_REVIEWS_PATH, {
      body: {
        apiVersion: AUTHORIZATION_API_VERSION,
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          ...(user.uid ? { uid: user.uid } : {}),
          ...(user.groups ? { groups: user.groups } : {}),
          ...(user.extra ? { extra: user.extra } : {}),
          nonResourceAttributes: { path: attributes.path, verb: attributes.verb },
        },
      },
      signal,
    });
    const s = r.status ?? {};
    return { allowed: s.allowed === true && s.denied !== true, reason: s.reason || s.evaluationError || '' };
  }
}
