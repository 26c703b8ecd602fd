/**
 * The one way the operator writes its own objects (guard status, policy status, a generated guard's
 * spec): a JSON merge patch from what was read to what is wanted, carrying the resourceVersion it was
 * computed from. If anyone wrote the object since (another replica, a user editing it), the API server
 * answers 409 Conflict and the caller decides again from a fresh read instead of overwriting a change
 * it never saw. An empty diff sends nothing, so a pass that changes nothing costs no API write.
 */
import { mergePatchDiff } from '../api/mergePatch.js';
import { PatchContentType, type ApiClient } from './apiClient.js';

/**
 * Patches `field` of the object at `path` from `stored` to `desired`, on condition that the object is
 * still at `resourceVersion` (none given: unconditionally). Returns the object as the server answered,
 * or undefined when nothing differed and nothing was sent.
 */
export async function patchFrom<T>(
  client: ApiClient,
  path: string,
  resourceVersion: string | undefined,
  field: string,
  stored: unknown,
  desired: unknown,
): Promise<T | undefined> {
  const diff = mergePatchDiff(stored ?? {}, desired);
  if (diff === undefined) return undefined;
  return client.request<T>('PATCH', path, {
    body: { ...(resourceVersion !== undefined ? { metadata: { resourceVersion } } : {}), [field]: diff },
    contentType: PatchContentType.Merge,
  });
}
