/**
 * API writes of the policy reconciler: generated guards (create, spec patch, delete with a UID
 * precondition so a same-named guard created since is never removed) and the policy's status.
 */
import { mergePatchDiff } from '../domain/mergePatch.js';
import type { PolicyStatus, SlimPolicy } from '../domain/objects.js';
import { PatchContentType, isNotFound, type ApiClient } from './apiClient.js';
import { guardsPath, policiesPath } from './apiPaths.js';

export class PolicyWriter {
  constructor(private readonly client: ApiClient) {}

  async createGuard(body: unknown): Promise<void> {
    const ns = (body as { metadata: { namespace: string } }).metadata.namespace;
    await this.client.request('POST', guardsPath(ns), { body });
  }

  async patchGuardSpec(namespace: string, name: string, spec: unknown): Promise<void> {
    await this.client.request('PATCH', guardsPath(namespace, name), { body: { spec }, contentType: PatchContentType.Merge });
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
    const diff = mergePatchDiff(policy.status ?? {}, status);
    if (diff === undefined) return;
    await this.client.request('PATCH', `${policiesPath(policy.metadata.name)}/status`, {
      body: { status: diff },
      contentType: PatchContentType.Merge,
    });
  }
}
