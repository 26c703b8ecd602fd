/**
 * Writes a guard's status through the /status subresource, the one way the operator writes its own
 * objects (preconditionedPatch.ts): a merge patch from the stored status to the desired one, on condition of
 * the resourceVersion the status was decided from, so a guard written since (another replica, a user
 * editing spec) draws a 409 and the reconciler decides again from fresh state.
 */
import type { GuardStatus } from '../api/types.js';
import type { ApiClient } from './apiClient.js';
import { guardsPath } from './apiPaths.js';
import { slimGuard } from './slim.js';
import { type SlimGuard } from '../api/objects.js';
import { patchFrom } from './preconditionedPatch.js';

export class StatusWriter {
  constructor(private readonly client: ApiClient) {}

  /**
   * Patches status from `stored` to `desired`. Returns the updated guard, or undefined when nothing
   * differed and nothing was sent.
   */
  async write(guard: Readonly<SlimGuard>, desired: GuardStatus): Promise<SlimGuard | undefined> {
    const path = `${guardsPath(guard.metadata.namespace ?? '', guard.metadata.name)}/status`;
    const raw = await patchFrom(this.client, path, guard.metadata.resourceVersion, 'status', guard.status, desired);
    return raw === undefined ? undefined : slimGuard(raw);
  }

  /** Reads the guard fresh from the API server (after a 409). */
  async read(namespace: string, name: string): Promise<SlimGuard> {
    return slimGuard(await this.client.request('GET', guardsPath(namespace, name)));
  }
}
