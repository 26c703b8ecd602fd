/**
 * The API server's reviews behind `--metrics-secure`: a TokenReview (authentication.k8s.io/v1) says
 * whose token a scraper presents, a SubjectAccessReview (authorization.k8s.io/v1) whether that user may
 * `get` the non-resource URL /metrics. Both are `create` calls the operator's ServiceAccount is granted
 * by config/rbac-metrics-auth; neither is stored by the API server.
 */
import type { AccessReviewer, Authentication, UserInfo } from '../runtime/metricsAuth.js';
import type { ApiClient } from './apiClient.js';

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
    const r = await this.client.request<TokenReview>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      // No audiences: the API server checks the token against its own, as controller-runtime's filter does.
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      signal,
    });
    const u = r.status?.user;
    if (r.status?.authenticated !== true || !u?.username) return { reason: r.status?.error || 'the API server did not authenticate the token' };
    return {
      user: {
        username: u.username,
        ...(u.uid ? { uid: u.uid } : {}),
        ...(u.groups ? { groups: u.groups } : {}),
        ...(u.extra ? { extra: u.extra } : {}),
      },
    };
  }

  async authorize(user: UserInfo, attributes: { path: string; verb: string }, signal: AbortSignal): Promise<{ allowed: boolean; reason: string }> {
    const r = await this.client.request<SubjectAccessReview>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
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
