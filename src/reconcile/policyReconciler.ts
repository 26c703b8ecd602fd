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
import {
  planPolicy,
  type DaemonSetRef,
  type DesiredGuard,
  type GuardRefView,
  type NamespaceView,
  type PolicyPlan,
} from '../domain/policyPlan.js';
import type { PolicyView } from '../api/objects.js';
import { API_VERSION, GENERATED_BY_ANNOTATION, GUARD_KIND, IGNORE_ANNOTATION, POLICY_KIND, POLICY_LABEL } from '../api/names.js';
import { withDefaults } from '../api/defaults.js';
import { controllerOf, type PolicyStatus, type SlimGuard, type SlimPolicy } from '../api/objects.js';
import { CONFLICT_ATTEMPTS, isConflict } from './portErrors.js';
import type { Clock } from './ports.js';
import { TransientError } from './errors.js';
import type { PolicyCache, PolicyPorts } from './ports.js';

/** Conflicts listed in status; the count stays exact. */
const CONFLICT_CAP = 50;

function policyView(p: Readonly<SlimPolicy>): PolicyView {
  const v: PolicyView = { name: p.metadata.name, uid: p.metadata.uid ?? '' };
  if (p.spec?.namespaceSelector) v.namespaceSelector = p.spec.namespaceSelector;
  if (p.spec?.selector) v.selector = p.spec.selector;
  if (p.spec?.guard) v.guard = p.spec.guard;
  return v;
}

function guardView(g: Readonly<SlimGuard>): GuardRefView {
  const v: GuardRefView = {
    namespace: g.metadata.namespace ?? '',
    name: g.metadata.name,
    target: g.spec?.targetRef?.name ?? '',
    spec: g.spec,
  };
  const policy = g.metadata.labels?.[POLICY_LABEL];
  if (policy) v.policy = policy;
  const owner = controllerOf(g.metadata, POLICY_KIND);
  if (owner) v.ownerUid = owner.uid;
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
    let p = this.cache.policy(name);
    if (!p) return; // deleted: the garbage collector removes its guards through their ownerReferences
    const log = this.log.child({ policy: name });
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.pass(p, log);
      } catch (e) {
        if (!isConflict(e)) throw e;
        if (attempt >= CONFLICT_ATTEMPTS)
          throw new TransientError(`status of policy ${name} kept conflicting after ${attempt} attempts`, { cause: e });
        log.debug({ attempt }, 'policy status conflict: re-reading the policy and planning again');
        const fresh = await this.ports.readPolicy(name);
        if (!fresh) return;
        p = fresh;
      }
    }
  }

  /** gather the cached objects → plan → create, update or delete generated guards → persist the status. */
  private async pass(p: Readonly<SlimPolicy>, log: Logger): Promise<void> {
    const policy = policyView(p);
    const cached = this.cache.guards();
    const guards = cached.map(guardView);
    /** Every cached guard by `namespace/name`: a policy over hundreds of DaemonSets looks each up once. */
    const byKey = new Map<string, Readonly<SlimGuard>>(cached.map((g) => [`${g.metadata.namespace ?? ''}/${g.metadata.name}`, g]));
    const plan = planPolicy(policy, this.cache.policies().map(policyView), this.namespaces(), this.daemonSets(), guards);
    const existing = new Map(
      guards.filter((g) => g.policy === policy.name && g.ownerUid === policy.uid).map((g) => [`${g.namespace}/${g.name}`, g]),
    );
    for (const d of plan.desired) await this.ensure(p, d, existing, byKey, log);
    for (const g of plan.deletions) {
      const uid = byKey.get(`${g.namespace}/${g.name}`)?.metadata.uid;
      log.info({ guard: `${g.namespace}/${g.name}` }, 'deleting generated guard: its DaemonSet no longer matches');
      await this.ports.deleteGuard(g.namespace, g.name, uid);
    }
    await this.ports.writeStatus(p, policyStatus(p, plan, new Date(this.clock.now()).toISOString()));
  }

  private namespaces(): NamespaceView[] {
    return this.cache.namespaces().map((n) => ({ name: n.metadata.name, labels: n.metadata.labels ?? {} }));
  }

  private daemonSets(): DaemonSetRef[] {
    return this.cache.daemonSets().map((d) => ({
      namespace: d.metadata.namespace ?? '',
      name: d.metadata.name,
      labels: d.metadata.labels ?? {},
      ignored: d.metadata.annotations?.[IGNORE_ANNOTATION] === 'true',
    }));
  }

  /**
   * The desired guard `d` exists as planned: created when missing, its spec updated when it differs.
   * `existing` are this policy's own generated guards; `byKey` every cached guard.
   */
  private async ensure(
    p: Readonly<SlimPolicy>,
    d: DesiredGuard,
    existing: ReadonlyMap<string, GuardRefView>,
    byKey: ReadonlyMap<string, Readonly<SlimGuard>>,
    log: Logger,
  ): Promise<void> {
    const key = `${d.namespace}/${d.name}`;
    const mine = existing.get(key);
    if (mine) {
      const want = withDefaults(d.spec);
      const guard = byKey.get(key);
      if (!guard || JSON.stringify(withDefaults(mine.spec)) === JSON.stringify(want)) return;
      log.info({ guard: key }, 'updating generated guard');
      try {
        await this.ports.patchGuardSpec(guard, want);
      } catch (e) {
        // The guard changed since it was cached: its update event brings this policy back with it.
        if (!isConflict(e)) throw e;
        log.debug({ guard: key }, 'generated guard changed under the spec patch; planning it again on its update');
      }
      return;
    }
    if (byKey.has(key)) {
      // A guard of that name exists but is not ours: never take it over.
      log.warn({ guard: key }, 'a guard with the generated name exists and is not owned by this policy; skipping');
      return;
    }
    log.info({ guard: key, target: d.target }, 'creating generated guard');
    await this.create(p, d);
  }

  private async create(p: Readonly<SlimPolicy>, d: DesiredGuard): Promise<void> {
    const body = {
      apiVersion: API_VERSION,
      kind: GUARD_KIND,
      metadata: {
        name: d.name,
        namespace: d.namespace,
        labels: { [POLICY_LABEL]: p.metadata.name },
        annotations: { [GENERATED_BY_ANNOTATION]: `rolloutguardpolicy/${p.metadata.name}` },
        // Deleting the policy deletes its guards (garbage collection), and only its guards.
        ownerReferences: [{ apiVersion: API_VERSION, kind: POLICY_KIND, name: p.metadata.name, uid: p.metadata.uid, controller: true }],
      },
      spec: withDefaults(d.spec),
    };
    try {
      await this.ports.createGuard(body);
    } catch (e) {
      // Already created by an earlier pass whose event we have not seen yet: the next pass updates it.
      if (!isConflict(e)) throw e;
    }
  }
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
