/**
 * The undo, done the way `kubectl rollout undo` does it (kubectl's DaemonSetRollbacker,
 * StatefulSetRollbacker and DeploymentRollbacker alike): a strategic-merge patch that replaces
 * `spec.template` wholesale with the template the revision keeps (a ControllerRevision's, or a
 * ReplicaSet's without its `pod-template-hash` label: historyApi.ts), touching nothing else of the
 * workload. It is written for a DaemonSet below; the other kinds are undone the same way (workloadApi.ts
 * and historyApi.ts hold what differs). A Deployment's controller then scales the restored ReplicaSet
 * back up and the broken one down: nothing is evicted.
 *
 * The revision is checked before anything is copied from it: it must be controlled by this DaemonSet
 * (its UID) and carry the hash the decision named. Only its pod template is sent, never the object
 * verbatim: whoever can write ControllerRevisions or ReplicaSets must not be able to use the operator to
 * write any other field of a workload.
 *
 * Safety, in order:
 *  0. the revision belongs to this DaemonSet and has the expected hash (above);
 *  1. re-read the DaemonSet from the API server (not the cache): same UID, not opted out, not owned by
 *     another controller, and the broken revision not already undone by any guard (the record on the
 *     DaemonSet);
 *  2. already at the target template → record success without sending anything (a retry after a
 *     crash between "patch sent" and "status written" lands here);
 *  3. the template moved since the decision (its generation annotation, or the digest of the template the
 *     decision read) → a person or tool is acting: skip;
 *  4. the rollout completed meanwhile (the counters of the observed generation say every node is
 *     updated and available) → nothing to undo: skip;
 *  5. no manager runs it by naming it (an Argo Rollout's workloadRef, listed afresh: workloadReferrers.ts),
 *     checked last, so that nothing is listed when nothing would be written;
 *  6. patch with the re-read resourceVersion as a precondition, so an edit racing us yields 409 and
 *     we re-check instead of overwriting it, at most CONFLICT_ATTEMPTS times. A DaemonSet that changes
 *     under each attempt has another active writer; the undo then gives up for good ("NotUndone",
 *     recorded, never retried for this revision) rather than race it. The bound is applied here alone:
 *     the reconciler never re-runs a pass for a conflict on the DaemonSet. The same patch writes the
 *     undo record annotation, so the template and the record of why it changed can never be seen apart.
 */
import { TEMPLATE_GENERATION_ANNOTATION, UNDO_OPT_OUT_ANNOTATION, UNDO_RECORD_ANNOTATION } from '../api/names.js';
import { templateMatchesRevision, undoneOn, withUndone, type DryRunOutcome, type UndoOutcome, type UndoRequest } from '../domain/undo.js';
import type { DaemonSetUndoRecord, TargetKind } from '../api/types.js';
import { DEFAULT_KIND, KINDS } from '../api/kinds.js';
import { wordsOf } from '../domain/kindWords.js';
import { errorMessage, retryOnConflict } from '../reconcile/portErrors.js';
import { PatchContentType, type ApiClient } from './apiClient.js';
import { ApiError, isConflict, isForbidden, isNotFound } from './apiErrors.js';
import { checkRevision, historyApi } from './historyApi.js';
import { templateDigest } from './slim.js';
import { WORKLOAD_API } from './workloadApi.js';
import { referringManager } from './workloadReferrers.js';

// Raw JSON from the API server, read defensively.
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment */

export class TemplateUndo {
  constructor(private readonly client: ApiClient) {}

  /** Restores the workload's template from the named ControllerRevision, guarded as described above. */
  async undo(req: UndoRequest): Promise<UndoOutcome> {
    const kind = req.kind ?? DEFAULT_KIND;
    const history = historyApi(kind);
    let revision: any;
    try {
      revision = await this.client.request('GET', history.path(req.namespace, req.toRevisionName));
    } catch (e) {
      if (isNotFound(e)) return { kind: 'Failed', detail: `${history.kind} ${req.toRevisionName} no longer exists` };
      if (isForbidden(e)) return { kind: 'Failed', detail: forbidden(e, `get ${history.resource}`) };
      throw e;
    }
    const refused = checkRevision(revision, req.toRevisionName, kind, req.expectedUid, req.toHash);
    if (refused) return { kind: 'Failed', detail: refused };
    const template = templatePatch(kind, revision);
    return retryOnConflict(
      () => this.attempt(req, kind, template),
      (attempts) => ({
        kind: 'NotUndone',
        detail: `the ${kind} changed under each of ${attempts} attempts to patch it: another writer is active, and the undo does not race it`,
      }),
    );
  }

  /** One read, check and patch of the DaemonSet; a Conflict is thrown for {@link retryOnConflict}. */
  private async attempt(req: UndoRequest, kind: TargetKind, template: TemplatePatch): Promise<UndoOutcome> {
    const api = WORKLOAD_API[kind];
    let ds: any;
    try {
      ds = await this.client.request('GET', api.path(req.namespace, req.name));
    } catch (e) {
      if (isNotFound(e)) return { kind: 'TemplateChanged', detail: `the ${kind} was deleted` };
      throw e;
    }
    if (ds?.metadata?.uid !== req.expectedUid) return { kind: 'TemplateChanged', detail: `the ${kind} was deleted and recreated` };
    if (ds?.metadata?.annotations?.[UNDO_OPT_OUT_ANNOTATION] === 'disabled') return { kind: 'OptedOut' };
    const owners: any[] = Array.isArray(ds?.metadata?.ownerReferences) ? ds.metadata.ownerReferences : [];
    const owner = owners.find((o) => o?.controller === true);
    if (owner)
      return {
        kind: 'NotUndone',
        detail: `the ${kind} is managed by ${String(owner.kind)}/${String(owner.name)}, which would revert an undo`,
      };
    const recorded = readRecord(ds?.metadata?.annotations?.[UNDO_RECORD_ANNOTATION]);
    if (templateMatchesRevision(ds?.spec?.template, template)) return { kind: 'AlreadyAtTarget' };
    if (req.fromHash !== undefined && undoneOn(recorded).includes(req.fromHash)) {
      const by =
        recorded?.from === req.fromHash
          ? ` at ${String(recorded.at)} by RolloutGuard ${String(recorded.guard)}`
          : ` (the record on the ${kind})`;
      return { kind: 'NotUndone', detail: `the revision ${req.fromHash} was already undone${by}` };
    }
    const tg = ds?.metadata?.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
    if (req.expectedTemplateGeneration !== undefined && tg !== req.expectedTemplateGeneration) {
      return { kind: 'TemplateChanged', detail: `template generation ${req.expectedTemplateGeneration} became ${String(tg)}` };
    }
    // A kind without a template generation (a StatefulSet, a Deployment) is held to the template itself:
    // a fix pushed between the decision and this read is never overwritten.
    if (req.expectedTemplateDigest !== undefined && ds?.spec?.template && templateDigest(ds.spec.template) !== req.expectedTemplateDigest) {
      return { kind: 'TemplateChanged', detail: `the ${kind}'s template changed since the undo was decided` };
    }
    if (api.rolloutComplete(ds))
      return {
        kind: 'NotUndone',
        detail: `the rollout completed before the undo was made: every ${wordsOf(kind).unit} is updated and available`,
      };
    // Step 5, last before the patch.
    const managed = await this.managedByReferrer(kind, req.namespace, req.name);
    if (managed) return { kind: 'NotUndone', detail: managed };
    try {
      // The record keeps every hash undone on this DaemonSet, not only this one: see DaemonSetUndoRecord.undone.
      const record = req.record ? { ...req.record, undone: withUndone(undoneOn(recorded), req.record.from) } : undefined;
      const annotations = record ? { [UNDO_RECORD_ANNOTATION]: JSON.stringify(record) } : undefined;
      await this.patch(kind, req.namespace, req.name, template, String(ds.metadata.resourceVersion), false, annotations);
      return { kind: 'Applied' };
    } catch (e) {
      if (isConflict(e)) throw e; // the next attempt reads the workload again and re-checks it
      if (isForbidden(e)) return { kind: 'Failed', detail: forbidden(e, `patch ${resource(kind)}`) };
      if (e instanceof ApiError && (e.statusCode === 422 || e.statusCode === 400)) return { kind: 'Failed', detail: e.message };
      throw e;
    }
  }

  /** Server-side dry run of the same patch (`dryRun=All`): validated and admitted, not persisted. */
  async dryRun(kind: TargetKind, namespace: string, name: string, toRevisionName: string): Promise<DryRunOutcome> {
    try {
      const revision: any = await this.client.request('GET', historyApi(kind).path(namespace, toRevisionName));
      const ds: any = await this.client.request('GET', WORKLOAD_API[kind].path(namespace, name));
      const refused = checkRevision(revision, toRevisionName, kind, String(ds?.metadata?.uid));
      if (refused) return { kind: 'Rejected', detail: refused };
      // Report mode must not tell a person to run an undo that a manager naming the workload would revert.
      const managed = await this.managedByReferrer(kind, namespace, name);
      if (managed) return { kind: 'Rejected', detail: managed };
      await this.patch(kind, namespace, name, templatePatch(kind, revision), undefined, true);
      return { kind: 'Accepted' };
    } catch (e) {
      if (isForbidden(e)) return { kind: 'Rejected', detail: forbidden(e, `patch ${resource(kind)} (dry run)`) };
      if (e instanceof ApiError && e.statusCode >= 400 && e.statusCode < 500 && !isConflict(e) && e.statusCode !== 429) {
        return { kind: 'Rejected', detail: e.message };
      }
      throw e;
    }
  }

  /** Why no undo may be made because a manager runs the workload by naming it (workloadReferrers.ts); undefined when none does. */
  private async managedByReferrer(kind: TargetKind, namespace: string, name: string): Promise<string | undefined> {
    const referral = await referringManager(this.client, kind, namespace, name);
    if (!referral) return undefined;
    if ('unknown' in referral) return referral.unknown;
    return `the ${kind} is managed by ${referral.manager}, which runs it by reference and would revert an undo`;
  }

  private async patch(
    kind: TargetKind,
    namespace: string,
    name: string,
    data: TemplatePatch,
    resourceVersion: string | undefined,
    dry: boolean,
    annotations?: Record<string, string>,
  ): Promise<void> {
    // Only spec.template changes, plus our own record annotation.
    const metadata = { ...(resourceVersion ? { resourceVersion } : {}), ...(annotations ? { annotations } : {}) };
    const body = Object.keys(metadata).length > 0 ? { ...(data as object), metadata } : data;
    await this.client.request('PATCH', WORKLOAD_API[kind].path(namespace, name), {
      body,
      contentType: PatchContentType.StrategicMerge,
      ...(dry ? { query: { dryRun: 'All' } } : {}),
    });
  }
}

/** The patch that puts a revision's template back, and nothing else. */
interface TemplatePatch {
  spec: { template: Record<string, unknown> };
}

/** Only the revision's pod template, replacing the live one wholesale (checkRevision made sure there is one). */
function templatePatch(kind: TargetKind, revision: any): TemplatePatch {
  return { spec: { template: { ...historyApi(kind).template(revision), $patch: 'replace' } } };
}

/** The RBAC resource of a kind, as a refusal names the right that is missing. */
function resource(kind: TargetKind): string {
  return KINDS[kind].resource;
}

function readRecord(raw: unknown): Partial<DaemonSetUndoRecord> | undefined {
  if (typeof raw !== 'string') return undefined;
  try {
    return JSON.parse(raw) as Partial<DaemonSetUndoRecord>;
  } catch {
    return undefined;
  }
}

function forbidden(e: unknown, what: string): string {
  return `forbidden to ${what}: the operator's RBAC does not allow it (a report-only install?) — ${errorMessage(e)}`;
}
