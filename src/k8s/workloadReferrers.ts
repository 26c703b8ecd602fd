/**
 * Who runs a workload by naming it rather than owning it (KindDescriptor.undo.referredBy): an Argo
 * Rollout whose `spec.workloadRef` names a Deployment takes its pod template from it and may keep it
 * scaled above 0 (`scaleDown: never`), so the Deployment carries no ownerReference and no count that
 * tells. It is read afresh, in the workload's namespace, right before an undo: the only moment the answer
 * matters, and a watch on a resource most clusters do not serve would cost every install a cache.
 */
import { KINDS, type ReferringManager } from '../api/kinds.js';
import type { TargetKind } from '../api/types.js';
import { errorMessage } from '../reconcile/portErrors.js';
import type { ApiClient } from './apiClient.js';
import { isForbidden, isNotFound } from './apiErrors.js';
import { resourcePath } from './apiPaths.js';

// Raw JSON from the API server, read defensively.
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment */

/** Why an undo must not be made: a manager names the workload, or whether one does cannot be read. */
export type Referral = { manager: string } | { unknown: string };

/** The first manager of `kind` naming the workload, or why that cannot be told; undefined when none does. */
export async function referringManager(
  client: ApiClient,
  kind: TargetKind,
  namespace: string,
  name: string,
): Promise<Referral | undefined> {
  for (const m of KINDS[kind].undo.referredBy) {
    let items: any[];
    try {
      const list: any = await client.request('GET', resourcePath(`${m.group}/${m.version}`, m.resource, namespace));
      items = Array.isArray(list?.items) ? list.items : [];
    } catch (e) {
      // The API does not serve the resource: its controller is not installed, so it manages nothing.
      if (isNotFound(e)) continue;
      if (isForbidden(e))
        return {
          unknown: `whether a ${m.kind} (${m.resource}.${m.group}) runs the ${kind} cannot be read: the operator may not list them (the undo role grants it) — ${errorMessage(e)}`,
        };
      throw e;
    }
    const referrer = items.find((o) => refersTo(o, m, kind, name));
    if (referrer) return { manager: `${m.kind}/${String(referrer.metadata?.name)}` };
  }
  return undefined;
}

/** Whether the object's reference field names the workload (its apiVersion's group, when given, the kind's). */
function refersTo(o: any, m: ReferringManager, kind: TargetKind, name: string): boolean {
  const ref = o?.spec?.[m.refField];
  if (ref?.kind !== kind || ref?.name !== name) return false;
  const apiVersion: unknown = ref.apiVersion;
  // `apps/v1` names a group; a core-style `v1`, or none, names no other group than the kind's.
  const group = typeof apiVersion === 'string' && apiVersion.includes('/') ? apiVersion.split('/')[0] : undefined;
  return group === undefined || group === KINDS[kind].group;
}
