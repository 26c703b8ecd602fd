/**
 * The forced rollback's one write: an eviction through the Eviction API (`pods/eviction`, policy/v1), so
 * that PodDisruptionBudgets are honoured, made on condition that the pod is still the one decide chose
 * (its UID): a pod the StatefulSet controller recreated under the same name is never evicted by mistake.
 */
import type { EvictionOutcome } from '../domain/eviction.js';
import type { ApiClient } from './apiClient.js';
import { ApiError, isConflict, isNotFound } from './apiErrors.js';
import { podsPath } from './apiPaths.js';

/** The API server's words on a refusal: its Status message, else the HTTP status. */
function refusal(e: ApiError): string {
  const body = e.body as { message?: unknown } | undefined;
  return typeof body?.message === 'string' && body.message !== '' ? body.message : e.message;
}

export async function evictPod(client: ApiClient, namespace: string, pod: string, uid: string): Promise<EvictionOutcome> {
  const body = {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name: pod, namespace },
    deleteOptions: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid } },
  };
  try {
    await client.request('POST', `${podsPath(namespace)}/${encodeURIComponent(pod)}/eviction`, { body });
    return { kind: 'Evicted' };
  } catch (e) {
    // 429: a PodDisruptionBudget has no room now (the API server says which); retried by decide's backoff.
    if (e instanceof ApiError && e.statusCode === 429) return { kind: 'Refused', detail: refusal(e) };
    // Gone, or the UID precondition failed: the pod decide chose no longer exists.
    if (isNotFound(e) || isConflict(e)) return { kind: 'Gone' };
    throw e;
  }
}
