/**
 * One reconcile pass for one guard with a selector: plan its generated guards as a namespace-scoped
 * policy (domain/policyPlan.ts) → create, update or delete them → write its status, one record per
 * selected workload with the verdict of the guard that guards it. It judges no rollout itself: its
 * generated guards are ordinary guards, run by the guard reconciler.
 */
import type { Logger } from 'pino';
import { setCondition } from '../domain/conditions.js';
import { planPolicy, type PolicyPlan } from '../domain/policyPlan.js';
import type { SlimGuard, SlimNamespace, SlimPolicy } from '../api/objects.js';
import { GUARD_KIND, SELECTOR_GUARD_LABEL } from '../api/names.js';
import { isSelectorGuard } from '../api/objects.js';
import type { Condition, GuardState, GuardStatus, TargetKind } from '../api/types.js';
import { kindNamed, type KindNamed, type SelectedRecord, type SelectedWorkload } from '../api/selected.js';
import { KINDS, namedWorkload, reportedKinds } from '../api/kinds.js';
import { applyPlan, type GuardWrites } from './generatedGuards.js';
import { guardView, policyView, selectorGuardView, workloadRefs } from './policyReconciler.js';
import { kindsOf } from '../domain/policyPlan.js';
import { errorMessage, isForbidden, retryOnConflict } from './portErrors.js';
import { TransientError } from './errors.js';
import type { Clock, WorkloadSource } from './ports.js';

/** A selected workload of any kind, as the records are ranked before they are listed per kind. */

/** Records listed in status; `desired` keeps the exact count. */
const RECORD_CAP = 100;

/** Worst first: the selector guard's state is the first of these any of its records has. */
const SEVERITY: readonly string[] = [
  'Failed',
  'Stalled',
  'Suspect',
  'RollingBack',
  'Conflict',
  'Unknown',
  'Progressing',
  'RolledBack',
  'Suspended',
  'Healthy',
];

export interface SelectorCache extends WorkloadSource {
  guard(namespace: string, name: string): Readonly<SlimGuard> | undefined;
  guards(): ReadonlyArray<Readonly<SlimGuard>>;
  /** Absent when policies are not cached: selector guards then compete only with each other. */
  policies?(): ReadonlyArray<Readonly<SlimPolicy>>;
  namespaces?(): ReadonlyArray<Readonly<SlimNamespace>>;
}

export interface SelectorPorts {
  /** Absent when the operator may not create, patch and delete guards (no policy RBAC). */
  guardWrites?: GuardWrites;
  readGuard(namespace: string, name: string): Promise<SlimGuard>;
  writeStatus(guard: Readonly<SlimGuard>, status: GuardStatus): Promise<unknown>;
}

export class SelectorReconciler {
  constructor(
    private readonly cache: SelectorCache,
    private readonly ports: SelectorPorts,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** Said in the condition when guard writes are missing: how this installation grants them. */
    private readonly enableHint = 'run with policies enabled (Helm value policies.enabled=true, flag --policies=true) watching all namespaces',
  ) {}

  /** A Conflict on the status re-reads the guard and plans again, at most CONFLICT_ATTEMPTS times. */
  async reconcile(namespace: string, name: string): Promise<void> {
    const cached = this.cache.guard(namespace, name);
    if (!cached || !isSelectorGuard(cached) || cached.metadata.deletionTimestamp) return; // deleted: garbage collection removes its guards
    let g: Readonly<SlimGuard> = cached;
    const log = this.log.child({ guard: `${namespace}/${name}`, selector: true });
    await retryOnConflict(
      async (attempt) => {
        if (attempt > 1) g = await this.ports.readGuard(namespace, name);
        await this.pass(g, log);
      },
      (attempts, e) => {
        throw new TransientError(`status of ${namespace}/${name} kept conflicting after ${attempts} attempts`, { cause: e });
      },
    );
  }

  private async pass(g: Readonly<SlimGuard>, log: Logger): Promise<void> {
    const now = new Date(this.clock.now()).toISOString();
    const writes = this.ports.guardWrites;
    // Never an error: a retry cannot grant the permission; the condition says what would.
    const needsWrites = (detail: string): Promise<unknown> => {
      const msg = `a guard with a selector needs create, patch and delete on rolloutguards in namespace ${g.metadata.namespace ?? ''}, ${detail}: ${this.enableHint}, or use targetRef guards`;
      return this.ports.writeStatus(g, withReady(g, { status: 'False', reason: 'SelectorNeedsGuardWrites', message: msg }, now, {}));
    };
    if (!writes) {
      await needsWrites('which this operator is not granted');
      return;
    }
    const view = selectorGuardView(g);
    // A kind whose cache has not listed yet: planning without it would delete its guards.
    const workloads = workloadRefs(this.cache, kindsOf(view));
    if (!workloads) return;
    const cached = this.cache.guards();
    const guards = cached.map(guardView);
    const byKey = new Map<string, Readonly<SlimGuard>>(cached.map((c) => [`${c.metadata.namespace ?? ''}/${c.metadata.name}`, c]));
    const claimants = [...(this.cache.policies?.() ?? []).map(policyView), ...cached.filter(isSelectorGuard).map(selectorGuardView)];
    const namespaces = (this.cache.namespaces?.() ?? []).map((n) => ({ name: n.metadata.name, labels: n.metadata.labels ?? {} }));
    const plan = planPolicy(view, claimants, namespaces, workloads, guards);
    const gen = { view, kind: GUARD_KIND, label: SELECTOR_GUARD_LABEL, generatedBy: `rolloutguard/${g.metadata.name}` };
    try {
      await applyPlan(writes, gen, plan, guards, byKey, log);
    } catch (e) {
      // The writes are wired but RBAC refuses them (a namespaced install run with --policies=true).
      if (!isForbidden(e)) throw e;
      log.warn({ err: errorMessage(e) }, 'generating guards is forbidden');
      await needsWrites(`and the API server refused: ${errorMessage(e)}`);
      return;
    }
    await this.ports.writeStatus(g, selectorStatus(g, plan, byKey, now));
  }
}

/** One record per selected workload: the generated guard's verdict, or the guard that wins it. */
export function selectedRecords(
  g: Readonly<SlimGuard>,
  plan: PolicyPlan,
  byKey: ReadonlyMap<string, Readonly<SlimGuard>>,
): SelectedWorkload[] {
  const ns = g.metadata.namespace ?? '';
  const records: SelectedWorkload[] = plan.desired.map((d) => {
    const st = byKey.get(`${ns}/${d.name}`)?.status;
    return {
      kind: d.kind,
      name: d.target,
      guard: d.name,
      state: st?.state ?? 'Unknown',
      ...(st?.cause ? { cause: st.cause } : {}),
      ...(st?.owner ? { owner: st.owner } : {}),
    };
  });
  const self = `rolloutguard/${g.metadata.name}`;
  for (const c of plan.conflicts) {
    if (c.winner === self) continue; // guarded by this guard: listed above
    const guard = c.winner.slice(c.winner.indexOf('/') + 1);
    records.push({ kind: c.kind, name: c.name, guard, state: 'Conflict', conflict: c.reason });
  }
  return records.sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
}

/** The worst record: its state (and cause and owner) are the selector guard's. */
function worst(records: readonly SelectedWorkload[]): SelectedWorkload | undefined {
  const at = (r: SelectedWorkload): number => {
    const i = SEVERITY.indexOf(r.state);
    return i < 0 ? SEVERITY.indexOf('Unknown') : i;
  };
  return [...records].sort((a, b) => at(a) - at(b))[0];
}

/** The records of one kind as its status list holds them: named by the kind's field, at most RECORD_CAP. */
function listed(records: readonly SelectedWorkload[], kind: TargetKind): Array<SelectedRecord & KindNamed> {
  return records
    .filter((r) => r.kind === kind)
    .slice(0, RECORD_CAP)
    .map(({ kind: k, name, ...rest }) => ({ ...kindNamed(k, name), ...rest }));
}

/** The selector guard's status after `plan` was carried out at `now`. */
export function selectorStatus(
  g: Readonly<SlimGuard>,
  plan: PolicyPlan,
  byKey: ReadonlyMap<string, Readonly<SlimGuard>>,
  now: string,
): GuardStatus {
  const records = selectedRecords(g, plan, byKey);
  const w = worst(records);
  const conflicts = records.filter((r) => r.conflict).length;
  const kinds = kindsOf(selectorGuardView(g));
  const message =
    `guards ${plan.desired.length} of ${plan.matched} selected ${kinds.map((k) => `${k}(s)`).join(' and ')}` +
    (conflicts ? `; ${conflicts} guarded by another guard` : '') +
    (w && w.state !== 'Healthy' ? `; worst: ${namedWorkload(w.kind, w.name)} ${w.state}${w.cause ? ` (${w.cause})` : ''}` : '');
  const fields: GuardStatus = {
    state: (w?.state ?? 'Unknown') as GuardState,
    cause: (w?.cause ?? '') as GuardStatus['cause'] & string,
    owner: (w?.owner ?? '') as GuardStatus['owner'] & string,
    desired: plan.matched,
    message: records.length ? message : `selects no ${kinds.join(' or ')} of its namespace`,
    workloads: records.slice(0, RECORD_CAP),
    ...Object.fromEntries(reportedKinds(kinds).map((k) => [KINDS[k].statusList, listed(records, k)])),
  };
  return withReady(g, { status: 'True', reason: 'Reconciled', message }, now, fields);
}

function withReady(
  g: Readonly<SlimGuard>,
  ready: Pick<Condition, 'status' | 'reason' | 'message'>,
  now: string,
  fields: GuardStatus,
): GuardStatus {
  const conditions = setCondition([...(g.status?.conditions ?? [])], { type: 'Ready', ...ready }, now, g.metadata.generation).conditions;
  return { observedGeneration: g.metadata.generation ?? 0, ...fields, conditions };
}
