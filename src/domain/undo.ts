/**
 * Pure parts of the undo: recording its outcome in status, and deciding whether a DaemonSet's live
 * template already equals a ControllerRevision (kubectl rollout undo's "skipped rollback" check).
 *
 * kubectl byte-compares the revision's `data` with a patch built from the live template
 * (kubectl polymorphichelpers/rollback.go). Go's JSON encoding (sorted keys, escaped <>&) is not
 * reproducible here, so we compare semantically instead, ignoring the `$patch` directive and the
 * always-null `creationTimestamp` that snapshots carry.
 */
import { UNDO_OPT_OUT_ANNOTATION } from '../api/names.js';
import { setCondition } from './conditions.js';
import type { PlannedAction } from './decision.js';
import { fmtRev, truncate } from './messages.js';
import { wordsOf } from './kindWords.js';
import { DEFAULT_KIND } from '../api/kinds.js';
import { EventAction, Reason } from '../api/reasons.js';
import { UNDONE_HISTORY_CAP, type DaemonSetUndoRecord, type GuardStatus, type PlannedEvent, type TargetKind } from '../api/types.js';

/** `list` with `hash` last, once, keeping the newest {@link UNDONE_HISTORY_CAP}. */
export function withUndone(list: readonly string[] | undefined, hash: string): string[] {
  return [...(list ?? []).filter((h) => h !== hash), hash].slice(-UNDONE_HISTORY_CAP);
}

/** Every broken hash a DaemonSet's undo record says was undone (records written before the list have `from` only). */
export function undoneOn(rec: Readonly<Partial<DaemonSetUndoRecord>> | undefined): string[] {
  if (!rec) return [];
  const list = Array.isArray(rec.undone) ? rec.undone.filter((h) => typeof h === 'string') : [];
  return typeof rec.from === 'string' && !list.includes(rec.from) ? [...list, rec.from] : list;
}

/** An undo as reconcile asks for it: restore `toRevisionName`'s template on `kind` `namespace/name`. */
export interface UndoRequest {
  kind: TargetKind;
  namespace: string;
  name: string;
  toRevisionName: string;
  expectedUid: string;
  expectedTemplateGeneration?: string;
  /** The digest of the template the decision read, for a kind without a template generation. */
  expectedTemplateDigest?: string;
  /** The broken hash being undone. */
  fromHash?: string;
  /** The hash of the revision restored: the ControllerRevision must carry it. */
  toHash?: string;
  /** Written to the DaemonSet's undo record annotation in the same patch. */
  record?: DaemonSetUndoRecord;
}

/**
 * The request an Undo action of decide's plan is sent as, for target `kind` `namespace/name`: the
 * operator's act step and `rollout-guard undo` send the same one, re-checks and record included.
 */
export function undoRequest(
  kind: TargetKind,
  namespace: string,
  name: string,
  action: Extract<PlannedAction, { kind: 'Undo' }>,
): UndoRequest {
  const req: UndoRequest = {
    kind,
    namespace,
    name,
    toRevisionName: action.toRevisionName,
    expectedUid: action.expectedUid,
    fromHash: action.fromHash,
    toHash: action.toHash,
    record: action.record,
  };
  if (action.expectedTemplateGeneration !== undefined) req.expectedTemplateGeneration = action.expectedTemplateGeneration;
  if (action.expectedTemplateDigest !== undefined) req.expectedTemplateDigest = action.expectedTemplateDigest;
  return req;
}

/** The result of the act step's undo attempt. */
export type UndoOutcome =
  | { kind: 'Applied' }
  | { kind: 'AlreadyAtTarget' }
  | { kind: 'TemplateChanged'; detail: string }
  | { kind: 'OptedOut' }
  /** The fresh read found a reason not to act that the cache did not show yet (owner, record, complete). */
  | { kind: 'NotUndone'; detail: string }
  | { kind: 'Failed'; detail: string };

/** Every kind of {@link UndoOutcome}: a Record, so that `tsc` names one added to the union and missing here. */
export const UNDO_OUTCOME_KINDS = Object.keys({
  Applied: 1,
  AlreadyAtTarget: 1,
  TemplateChanged: 1,
  OptedOut: 1,
  NotUndone: 1,
  Failed: 1,
} satisfies Record<UndoOutcome['kind'], 1>);

/** The result of the act step's server-side dry run (Report mode). */
export type DryRunOutcome = { kind: 'Accepted' } | { kind: 'Rejected'; detail: string };

/**
 * Folds an undo outcome into the status written after acting, and returns the Events that go with it;
 * `kind` is the target's, whose words the Events use.
 */
export function recordUndoOutcome(
  status: Readonly<GuardStatus>,
  outcome: UndoOutcome,
  now: number,
  generation: number,
  kind: TargetKind = DEFAULT_KIND,
): { status: GuardStatus; events: PlannedEvent[] } {
  const u = status.lastUndo;
  if (!u) return { status: { ...status }, events: [] };
  const nowIso = new Date(now).toISOString();
  const target = fmtRev({ revision: u.toRevision, hash: u.toHash });
  const broken = fmtRev({ revision: u.fromRevision, hash: u.fromHash });
  const events: PlannedEvent[] = [];
  let lastUndo = { ...u };
  let state = status.state;
  switch (outcome.kind) {
    case 'Applied':
    case 'AlreadyAtTarget': {
      const how = outcome.kind === 'Applied' ? 'restored' : 'found already restored';
      lastUndo = { ...u, result: 'Applied', message: `${how} ${target} in place of ${broken}` };
      state = 'RollingBack';
      events.push({
        type: 'Normal',
        reason: Reason.UndoStarted,
        action: EventAction.Undo,
        onTarget: true,
        note: `Undo: ${how} ${target} in place of stalled ${broken}; waiting for every ${wordsOf(kind).unit} to run it`,
      });
      break;
    }
    case 'TemplateChanged':
    case 'NotUndone':
    case 'OptedOut': {
      const why =
        outcome.kind === 'OptedOut'
          ? `the ${kind} is now annotated ${UNDO_OPT_OUT_ANNOTATION}=disabled`
          : outcome.kind === 'NotUndone'
            ? outcome.detail
            : `the template changed since the stall was detected (${outcome.detail}); a person or tool is acting`;
      lastUndo = { ...u, result: 'Failed', message: `not applied: ${why}` };
      events.push({
        type: 'Warning',
        reason: Reason.UndoSkipped,
        action: EventAction.Undo,
        onTarget: true,
        note: truncate(`Undo of ${broken} skipped: ${why}`, 1000),
      });
      break;
    }
    case 'Failed':
      lastUndo = { ...u, result: 'Failed', message: truncate(`undo failed: ${outcome.detail}`, 500) };
      events.push({
        type: 'Warning',
        reason: Reason.UndoFailed,
        action: EventAction.Undo,
        onTarget: true,
        note: truncate(`Undo of ${broken} to ${target} failed: ${outcome.detail}`, 1000),
      });
      break;
  }
  const c = setCondition(
    status.conditions ?? [],
    lastUndo.result === 'Applied'
      ? { type: 'RolledBack', status: 'False', reason: Reason.UndoStarted, message: lastUndo.message }
      : {
          type: 'RolledBack',
          status: 'False',
          reason: outcome.kind === 'Failed' ? Reason.UndoFailed : Reason.UndoSkipped,
          message: lastUndo.message,
        },
    nowIso,
    generation,
  );
  // Attempted, whatever came of it: never again for this hash (lastUndo holds only the latest).
  const undoneRevisions = withUndone(status.undoneRevisions, u.fromHash);
  return { status: { ...status, state, lastUndo, undoneRevisions, conditions: c.conditions }, events };
}

/** Folds a dry-run outcome into the status's undo plan. */
export function recordDryRun(status: Readonly<GuardStatus>, outcome: DryRunOutcome): GuardStatus {
  if (!status.undoPlan) return { ...status };
  const undoPlan = { ...status.undoPlan, dryRun: outcome.kind };
  if (outcome.kind === 'Rejected') undoPlan.dryRunMessage = truncate(outcome.detail, 500);
  else delete undoPlan.dryRunMessage;
  return { ...status, undoPlan };
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function normalise(v: unknown): Json {
  if (Array.isArray(v)) return v.map(normalise);
  if (v && typeof v === 'object') {
    const out: { [k: string]: Json } = {};
    for (const k of Object.keys(v).sort()) {
      if (k === '$patch') continue;
      const val = (v as Record<string, unknown>)[k];
      if (k === 'creationTimestamp' && (val === null || val === undefined)) continue;
      if (val === undefined) continue;
      out[k] = normalise(val);
    }
    return out;
  }
  return v as Json;
}

/**
 * True when the live `spec.template` equals the template stored in a DaemonSet ControllerRevision's
 * `data` (`{spec: {template: {..., $patch: replace}}}`).
 */
export function templateMatchesRevision(liveTemplate: unknown, revisionData: unknown): boolean {
  const stored = (revisionData as { spec?: { template?: unknown } } | undefined)?.spec?.template;
  if (stored === undefined) return false;
  return canonicalTemplate(liveTemplate) === canonicalTemplate(stored);
}

/**
 * A pod template as canonical JSON (keys sorted, the revision's `$patch` marker and a null
 * `creationTimestamp` left out): a DaemonSet's live template and the template a ControllerRevision
 * stores for it give the same text exactly when the DaemonSet controller would match them.
 */
export function canonicalTemplate(template: unknown): string {
  return JSON.stringify(normalise(template));
}
