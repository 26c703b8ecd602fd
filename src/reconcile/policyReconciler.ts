/**
 * One reconcile pass for one RolloutGuardPolicy: gather the cached namespaces, workloads of the kinds it
 * chooses, guards and policies → plan (pure, domain/policyPlan.ts) → create, update or delete generated guards → persist
 * the policy's status.
 *
 * Only guards carrying this policy's label *and* a controller ownerReference to this policy's UID are
 * ever updated or deleted: a hand-written guard, or another policy's, is never touched.
 */
import type { Logger } from 'pino';
import { setCondition } from '../domain/conditions.js';
import {
  kindsOf,
  planPolicy,
  type Conflict,
  type GuardRefView,
  type NamespaceView,
  type PolicyPlan,
  type WorkloadRef,
} from '../domain/policyPlan.js';
import type { PolicyView } from '../api/objects.js';
import { GUARD_KIND, IGNORE_ANNOTATION, POLICY_KIND, POLICY_LABEL, SELECTOR_GUARD_LABEL } from '../api/names.js';
import { DEFAULT_KIND, KINDS, namedWorkload, reportedKinds } from '../api/kinds.js';
import type { TargetKind } from '../api/types.js';
import { kindNamed } from '../api/selected.js';
import { controllerOf, isSelectorGuard, type PolicyStatus, type SlimGuard, type SlimPolicy } from '../api/objects.js';
import { applyPlan } from './generatedGuards.js';
import { retryOnConflict } from './portErrors.js';
import type { Clock } from './ports.js';
import { TransientError } from './errors.js';
import type { PolicyCache, PolicyPorts, WorkloadSource } from './ports.js';

/** Conflicts listed in status; the count stays exact. */
const CONFLICT_CAP = 50;

export function policyView(p: Readonly<SlimPolicy>): PolicyView {
  const v: PolicyView = { name: p.metadata.name, uid: p.metadata.uid ?? '' };
  if (p.spec?.namespaceSelector) v.namespaceSelector = p.spec.namespaceSelector;
  if (p.spec?.selector) v.selector = p.spec.selector;
  if (p.spec?.targetKinds) v.targetKinds = [...p.spec.targetKinds];
  if (p.spec?.guard) v.guard = p.spec.guard;
  return v;
}

export function guardView(g: Readonly<SlimGuard>): GuardRefView {
  const v: GuardRefView = {
    namespace: g.metadata.namespace ?? '',
    name: g.metadata.name,
    kind: g.spec?.targetRef?.kind ?? DEFAULT_KIND,
    target: g.spec?.targetRef?.name ?? '',
    spec: g.spec,
  };
  const policy = g.metadata.labels?.[POLICY_LABEL];
  if (policy) v.policy = policy;
  const selectorGuard = g.metadata.labels?.[SELECTOR_GUARD_LABEL];
  if (selectorGuard) v.selectorGuard = selectorGuard;
  const owner = controllerOf(g.metadata, POLICY_KIND) ?? controllerOf(g.metadata, GUARD_KIND);
  if (owner) v.ownerUid = owner.uid;
  return v;
}

/** A guard with a selector, planned as a policy confined to its namespace, with its own settings. */
export function selectorGuardView(g: Readonly<SlimGuard>): PolicyView {
  const v: PolicyView = { name: g.metadata.name, uid: g.metadata.uid ?? '', namespace: g.metadata.namespace ?? '' };
  if (g.spec.selector) v.selector = g.spec.selector;
  if (g.spec.targetKinds) v.targetKinds = [...g.spec.targetKinds];
  const s = g.spec;
  const guard: NonNullable<PolicyView['guard']> = {};
  if (s.suspectAfterSeconds !== undefined) guard.suspectAfterSeconds = s.suspectAfterSeconds;
  if (s.progressDeadlineSeconds !== undefined) guard.progressDeadlineSeconds = s.progressDeadlineSeconds;
  if (s.onStall !== undefined) guard.onStall = { ...s.onStall };
  if (s.failedNodesThreshold !== undefined) guard.failedNodesThreshold = s.failedNodesThreshold;
  if (s.bakeSeconds !== undefined) guard.bakeSeconds = s.bakeSeconds;
  v.guard = guard;
  return v;
}

export class PolicyReconciler {
  constructor(
    private readonly cache: PolicyCache,
    private readonly ports: PolicyPorts,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /**
   * A Conflict on the policy's status re-reads the policy and plans again, at most CONFLICT_ATTEMPTS
   * times, as a guard's status does: a status computed from a stale policy is never sent.
   */
  async reconcile(name: string): Promise<void> {
    const cached = this.cache.policy(name);
    if (!cached) return; // deleted: the garbage collector removes its guards through their ownerReferences
    let p: Readonly<SlimPolicy> = cached;
    const log = this.log.child({ policy: name });
    await retryOnConflict(
      async (attempt) => {
        if (attempt > 1) {
          log.debug({ attempt }, 'policy status conflict: re-reading the policy and planning again');
          const fresh = await this.ports.readPolicy(name);
          if (!fresh) return;
          p = fresh;
        }
        await this.pass(p, log);
      },
      (attempts, e) => {
        throw new TransientError(`status of policy ${name} kept conflicting after ${attempts} attempts`, { cause: e });
      },
    );
  }

  /** gather the cached objects → plan → create, update or delete generated guards → persist the status. */
  private async pass(p: Readonly<SlimPolicy>, log: Logger): Promise<void> {
    const policy = policyView(p);
    // A kind whose cache has not listed yet: planning without it would delete its guards.
    const workloads = workloadRefs(this.cache, kindsOf(policy));
    if (!workloads) return;
    const cached = this.cache.guards();
    const guards = cached.map(guardView);
    /** Every cached guard by `namespace/name`: a policy over hundreds of DaemonSets looks each up once. */
    const byKey = new Map<string, Readonly<SlimGuard>>(cached.map((g) => [`${g.metadata.namespace ?? ''}/${g.metadata.name}`, g]));
    // Guards with a selector claim DaemonSets too: they compete with the policies for them.
    const claimants = [...this.cache.policies().map(policyView), ...cached.filter(isSelectorGuard).map(selectorGuardView)];
    const plan = planPolicy(policy, claimants, this.namespaces(), workloads, guards);
    const gen = { view: policy, kind: POLICY_KIND, label: POLICY_LABEL, generatedBy: `rolloutguardpolicy/${p.metadata.name}` };
    await applyPlan(this.ports, gen, plan, guards, byKey, log);
    await this.ports.writeStatus(p, policyStatus(p, plan, new Date(this.clock.now()).toISOString()));
  }

  private namespaces(): NamespaceView[] {
    return this.cache.namespaces().map((n) => ({ name: n.metadata.name, labels: n.metadata.labels ?? {} }));
  }
}

/** The workloads of `kinds` as planning reads them; undefined while one kind's cache has not listed. */
export function workloadRefs(source: WorkloadSource, kinds: readonly TargetKind[]): WorkloadRef[] | undefined {
  const out: WorkloadRef[] = [];
  for (const kind of kinds) {
    const list = source.workloads(kind);
    if (!list) return undefined;
    for (const w of list) {
      out.push({
        kind,
        namespace: w.metadata.namespace ?? '',
        name: w.metadata.name,
        labels: w.metadata.labels ?? {},
        ignored: w.metadata.annotations?.[IGNORE_ANNOTATION] === 'true',
      });
    }
  }
  return out;
}

/** The policy's status after `plan` was carried out at `now`. */
function policyStatus(p: Readonly<SlimPolicy>, plan: PolicyPlan, now: string): PolicyStatus {
  const guardsNow = plan.desired.length;
  const kinds = kindsOf(policyView(p));
  const nouns = kinds.map((k) => `${k}(s)`).join(' and ');
  const msg = `guards ${guardsNow} of ${plan.matched} matching ${nouns}${plan.conflicts.length ? `; ${plan.conflicts.length} conflict(s)` : ''}`;
  const named = (c: Conflict): string => namedWorkload(c.kind, `${c.namespace}/${c.name}`);
  let conditions = [...(p.status?.conditions ?? [])];
  conditions = setCondition(
    conditions,
    { type: 'Ready', status: 'True', reason: 'Reconciled', message: msg },
    now,
    p.metadata.generation,
  ).conditions;
  conditions = setCondition(
    conditions,
    plan.conflicts.length > 0
      ? {
          type: 'Conflicting',
          status: 'True',
          reason: plan.conflicts[0]?.reason ?? 'Conflict',
          message: plan.conflicts
            .slice(0, 3)
            .map((c) => `${named(c)}: ${c.reason}, guarded by ${c.winner}`)
            .join('; '),
        }
      : { type: 'Conflicting', status: 'False', reason: 'NoConflicts', message: `no ${kinds.join(' or ')} is claimed twice` },
    now,
    p.metadata.generation,
  ).conditions;
  return {
    observedGeneration: p.metadata.generation ?? 0,
    matched: plan.matched,
    matchedByKind: kinds.map((kind) => ({ kind, matched: plan.matchedByKind[kind] ?? 0 })),
    ...Object.fromEntries(reportedKinds(kinds).map((k) => [KINDS[k].matchedCount, plan.matchedByKind[k] ?? 0])),
    guards: guardsNow,
    conflictCount: plan.conflicts.length,
    conflicts: plan.conflicts.slice(0, CONFLICT_CAP).map((c) => ({
      namespace: c.namespace,
      kind: c.kind,
      name: c.name,
      ...kindNamed(c.kind, c.name),
      reason: c.reason,
      winner: c.winner,
    })),
    conditions,
  };
}
