/**
 * One reconcile pass for one RolloutGuardPolicy: gather the cached namespaces, DaemonSets, guards and
 * policies → plan (pure, domain/policyPlan.ts) → create, update or delete generated guards → persist
 * the policy's status.
 *
 * Only guards carrying this policy's label *and* a controller ownerReference to this policy's UID are
 * ever updated or deleted: a hand-written guard, or another policy's, is never touched.
 */
import type { Logger } from 'pino';
import { setCondition } from '../domain/conditions.js';
import { planPolicy, type DaemonSetRef, type GuardRefView, type NamespaceView, type PolicyPlan } from '../domain/policyPlan.js';
import type { PolicyView, SlimDaemonSet } from '../api/objects.js';
import { GUARD_KIND, IGNORE_ANNOTATION, POLICY_KIND, POLICY_LABEL, SELECTOR_GUARD_LABEL } from '../api/names.js';
import { controllerOf, isSelectorGuard, type PolicyStatus, type SlimGuard, type SlimPolicy } from '../api/objects.js';
import { applyPlan } from './generatedGuards.js';
import { retryOnConflict } from './portErrors.js';
import type { Clock } from './ports.js';
import { TransientError } from './errors.js';
import type { PolicyCache, PolicyPorts } from './ports.js';

/** Conflicts listed in status; the count stays exact. */
const CONFLICT_CAP = 50;

export function policyView(p: Readonly<SlimPolicy>): PolicyView {
  const v: PolicyView = { name: p.metadata.name, uid: p.metadata.uid ?? '' };
  if (p.spec?.namespaceSelector) v.namespaceSelector = p.spec.namespaceSelector;
  if (p.spec?.selector) v.selector = p.spec.selector;
  if (p.spec?.guard) v.guard = p.spec.guard;
  return v;
}

export function guardView(g: Readonly<SlimGuard>): GuardRefView {
  const v: GuardRefView = {
    namespace: g.metadata.namespace ?? '',
    name: g.metadata.name,
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
    const cached = this.cache.guards();
    const guards = cached.map(guardView);
    /** Every cached guard by `namespace/name`: a policy over hundreds of DaemonSets looks each up once. */
    const byKey = new Map<string, Readonly<SlimGuard>>(cached.map((g) => [`${g.metadata.namespace ?? ''}/${g.metadata.name}`, g]));
    // Guards with a selector claim DaemonSets too: they compete with the policies for them.
    const claimants = [...this.cache.policies().map(policyView), ...cached.filter(isSelectorGuard).map(selectorGuardView)];
    const plan = planPolicy(policy, claimants, this.namespaces(), this.daemonSets(), guards);
    const gen = { view: policy, kind: POLICY_KIND, label: POLICY_LABEL, generatedBy: `rolloutguardpolicy/${p.metadata.name}` };
    await applyPlan(this.ports, gen, plan, guards, byKey, log);
    await this.ports.writeStatus(p, policyStatus(p, plan, new Date(this.clock.now()).toISOString()));
  }

  private namespaces(): NamespaceView[] {
    return this.cache.namespaces().map((n) => ({ name: n.metadata.name, labels: n.metadata.labels ?? {} }));
  }

  private daemonSets(): DaemonSetRef[] {
    return daemonSetRefs(this.cache.daemonSets());
  }
}

/** The DaemonSets as planning reads them. */
export function daemonSetRefs(list: ReadonlyArray<Readonly<SlimDaemonSet>>): DaemonSetRef[] {
  return list.map((d) => ({
    namespace: d.metadata.namespace ?? '',
    name: d.metadata.name,
    labels: d.metadata.labels ?? {},
    ignored: d.metadata.annotations?.[IGNORE_ANNOTATION] === 'true',
  }));
}

/** The policy's status after `plan` was carried out at `now`. */
function policyStatus(p: Readonly<SlimPolicy>, plan: PolicyPlan, now: string): PolicyStatus {
  const guardsNow = plan.desired.length;
  const msg = `guards ${guardsNow} of ${plan.matched} matching DaemonSet(s)${plan.conflicts.length ? `; ${plan.conflicts.length} conflict(s)` : ''}`;
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
            .map((c) => `${c.namespace}/${c.daemonSet}: ${c.reason}, guarded by ${c.winner}`)
            .join('; '),
        }
      : { type: 'Conflicting', status: 'False', reason: 'NoConflicts', message: 'no DaemonSet is claimed twice' },
    now,
    p.metadata.generation,
  ).conditions;
  return {
    observedGeneration: p.metadata.generation ?? 0,
    matchedDaemonSets: plan.matched,
    guards: guardsNow,
    conflictCount: plan.conflicts.length,
    conflicts: plan.conflicts.slice(0, CONFLICT_CAP),
    conditions,
  };
}
