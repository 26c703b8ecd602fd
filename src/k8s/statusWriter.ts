/**
 * Writes a guard's status through the /status subresource as a JSON merge patch computed from the
 * stored status to the desired one. An empty diff sends nothing, so a pass whose observation did not
 * change costs no API write.
 *
 * The patch carries the resourceVersion the status was decided from: if anyone wrote the guard since
 * (another replica, a user editing spec), the server answers 409 and the caller re-decides from fresh
 * state instead of overwriting it with something computed from stale data.
 */
import type { GuardStatus } from '../domain/types.js';
import { PatchContentType, type ApiClient } from './apiClient.js';
import { mergePatchDiff } from '../domain/mergePatch.js';
import { guardsPath } from './apiPaths.js';
import { slimGuard, type SlimGuard } from './slim.js';

export class StatusWriter {
  constructor(private readonly client: ApiClient) {}

  /**
   * Patches status from `stored` to `desired`. Returns the updated guard, or undefined when nothing
   * differed and nothing was sent.
   */
  async write(guard: Readonly<SlimGuard>, desired: GuardStatus): Promise<SlimGuard | undefined> {
    const diff = mergePatchDiff(guard.status ?? {}, desired);
    if (diff === undefined) return undefined;
    const ns = guard.metadata.namespace ?? '';
    const body = { metadata: { resourceVersion: guard.metadata.resourceVersion }, status: diff };
    const raw = await this.client.request('PATCH', `${guardsPath(ns, guard.metadata.name)}/status`, {
      body,
      contentType: PatchContentType.Merge,
    });
    return slimGuard(raw);
  }

  /** Reads the guard fresh from the API server (after a 409). */
  async read(namespace: string, name: string): Promise<SlimGuard> {
    return slimGuard(await this.client.request('GET', guardsPath(namespace, name)));
  }
}
