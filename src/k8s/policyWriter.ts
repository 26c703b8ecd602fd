/**
 * API writes of the policy reconciler: generated guards (create; spec patch on condition of the
 * resourceVersion it was planned from; delete with a UID precondition so a same-named guard created
 * since is never removed) and the policy's status, written the same way as a guard's (preconditionedPatch.ts).
 */
import type { GuardSpecInput } from '../api/types.js';
import type { PolicyStatus, SlimGuard, SlimPolicy } from '../api/objects.js';
import { type ApiClient } from './apiClient.js';
import { isNotFound } from './apiErrors.js';
import { guardsPath, policiesPath } from './apiPaths.js';
import { slimPolicy } from './slim.js';
import { patchFrom } from './preconditionedPatch.js';

export class PolicyWriter {
  constructor(private readonly client: ApiClient) {}

  async createGuard(body: unknown): Promise<void> {
    const ns = (body as { metadata: { namespace: string } }).metadata.namespace;
    await this.client.request('POST', guardsPath(ns), { body });
  }

  async patchGuardSpec(guard: Readonly<SlimGuard>, spec: GuardSpecInput): Promise<void> {
    await patchFrom(
      this.client,
      guardsPath(guard.metadata.namespace ?? '', guard.metadata.name),
      guard.metadata.resourceVersion,
      'spec',
      guard.spec,
      spec,
    );
  }

  async deleteGuard(namespace: string, name: string, uid: string | undefined): Promise<void> {
    try {
      await this.client.request('DELETE', guardsPath(namespace, name), {
        body: { apiVersion: 'v1', kind: 'DeleteOptions', ...(uid ? { preconditions: { uid } } : {}) },
      });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  async writeStatus(policy: Readonly<SlimPolicy>, status: PolicyStatus): Promise<void> {
    await patchFrom(
      this.client,
      `${policiesPath(policy.metadata.name)}/status`,
      policy.metadata.resourceVersion,
      'status',
      policy.status,
      status,
    );
  }

  /** Reads the policy fresh from the API server (after a 409); undefined once it is deleted. */
  async readPolicy(name: string): Promise<SlimPolicy | undefined> {
    try {
      return slimPolicy(await this.client.request('GET', policiesPath(name)));
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }
}
