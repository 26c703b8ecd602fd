/**
 * The undo, done the way `kubectl rollout undo` does it (kubectl polymorphichelpers/rollback.go,
 * DaemonSetRollbacker): the ControllerRevision's `data` is itself a strategic-merge patch that replaces
 * `spec.template` wholesale, and we send exactly that, touching nothing else of the DaemonSet.
 *
 * Safety, in order:
 *  1. re-read the DaemonSet from the API server (not the cache): same UID, not opted out;
 *  2. already at the target template → record success without sending anything (a retry after a
 *     crash between "patch sent" and "status written" lands here);
 *  3. the template generation moved since the decision → a person or tool is acting: skip;
 *  4. patch with the re-read resourceVersion as a precondition, so an edit racing us yields 409 and
 *     we re-check instead of overwriting it.
 */
import { templateMatchesRevision, type DryRunOutcome, type UndoOutcome } from '../domain/undo.js';
import { UNDO_OPT_OUT_ANNOTATION } from '../domain/stateMachine.js';
import { ApiError, PatchContentType, isConflict, isForbidden, isNotFound, type ApiClient } from './apiClient.js';
import { TEMPLATE_GENERATION_ANNOTATION } from './slim.js';

/** Attempts before a run of 409s is handed back as a transient error. */
const CONFLICT_RETRIES = 3;

export interface UndoRequest {
  namespace: string;
  name: string;
  toRevisionName: string;
  expectedUid: string;
  expectedTemplateGeneration?: string;
}

// Raw JSON from the API server, read defensively.
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment */

function dsPath(ns: string, name: string): string {
  return `/apis/apps/v1/namespaces/${encodeURIComponent(ns)}/daemonsets/${encodeURIComponent(name)}`;
}

function crPath(ns: string, name: string): string {
  return `/apis/apps/v1/namespaces/${encodeURIComponent(ns)}/controllerrevisions/${encodeURIComponent(name)}`;
}

export class DaemonSetUndo {
  constructor(private readonly client: ApiClient) {}

  /** Restores the DaemonSet's template from the named ControllerRevision, guarded as described above. */
  async undo(req: UndoRequest): Promise<UndoOutcome> {
    let revision: any;
    try {
      revision = await this.client.request('GET', crPath(req.namespace, req.toRevisionName));
    } catch (e) {
      if (isNotFound(e)) return { kind: 'Failed', detail: `ControllerRevision ${req.toRevisionName} no longer exists` };
      if (isForbidden(e)) return { kind: 'Failed', detail: forbidden(e, 'get controllerrevisions') };
      throw e;
    }
    for (let attempt = 1; ; attempt++) {
      let ds: any;
      try {
        ds = await this.client.request('GET', dsPath(req.namespace, req.name));
      } catch (e) {
        if (isNotFound(e)) return { kind: 'TemplateChanged', detail: 'the DaemonSet was deleted' };
        throw e;
      }
      if (ds?.metadata?.uid !== req.expectedUid) return { kind: 'TemplateChanged', detail: 'the DaemonSet was deleted and recreated' };
      if (ds?.metadata?.annotations?.[UNDO_OPT_OUT_ANNOTATION] === 'disabled') return { kind: 'OptedOut' };
      if (templateMatchesRevision(ds?.spec?.template, revision?.data)) return { kind: 'AlreadyAtTarget' };
      const tg = ds?.metadata?.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
      if (req.expectedTemplateGeneration !== undefined && tg !== req.expectedTemplateGeneration) {
        return { kind: 'TemplateChanged', detail: `template generation ${req.expectedTemplateGeneration} became ${String(tg)}` };
      }
      try {
        await this.patch(req.namespace, req.name, revision.data, String(ds.metadata.resourceVersion), false);
        return { kind: 'Applied' };
      } catch (e) {
        if (isConflict(e) && attempt < CONFLICT_RETRIES) continue;
        if (isForbidden(e)) return { kind: 'Failed', detail: forbidden(e, 'patch daemonsets') };
        if (e instanceof ApiError && (e.statusCode === 422 || e.statusCode === 400)) return { kind: 'Failed', detail: e.message };
        throw e;
      }
    }
  }

  /** Server-side dry run of the same patch (`dryRun=All`): validated and admitted, not persisted. */
  async dryRun(namespace: string, name: string, toRevisionName: string): Promise<DryRunOutcome> {
    try {
      const revision: any = await this.client.request('GET', crPath(namespace, toRevisionName));
      await this.patch(namespace, name, revision.data, undefined, true);
      return { kind: 'Accepted' };
    } catch (e) {
      if (isForbidden(e)) return { kind: 'Rejected', detail: forbidden(e, 'patch daemonsets (dry run)') };
      if (e instanceof ApiError && e.statusCode >= 400 && e.statusCode < 500 && !isConflict(e) && e.statusCode !== 429) {
        return { kind: 'Rejected', detail: e.message };
      }
      throw e;
    }
  }

  private async patch(namespace: string, name: string, data: unknown, resourceVersion: string | undefined, dry: boolean): Promise<void> {
    // The revision data is {spec: {template: {..., $patch: replace}}}; only spec.template changes.
    const body = resourceVersion ? { ...(data as object), metadata: { resourceVersion } } : data;
    await this.client.request('PATCH', dsPath(namespace, name), {
      body,
      contentType: PatchContentType.StrategicMerge,
      ...(dry ? { query: { dryRun: 'All' } } : {}),
    });
  }
}

function forbidden(e: unknown, what: string): string {
  return `forbidden to ${what}: the operator's RBAC does not allow it (a report-only install?) — ${e instanceof Error ? e.message : String(e)}`;
}
