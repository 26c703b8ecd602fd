/**
 * Carrying out a plan of generated guards (domain/policyPlan.ts), for a RolloutGuardPolicy and for a
 * guard with a selector alike: create the missing guards, update the spec of those that differ, delete
 * those no longer planned. Only the owner's own generated guards (its label *and* a controller
 * ownerReference to its UID) are ever updated or deleted.
 */
import type { Logger } from 'pino';
import { generatedBy, type DesiredGuard, type GuardRefView, type PolicyPlan } from '../domain/policyPlan.js';
import type { PolicyView, SlimGuard } from '../api/objects.js';
import { API_VERSION, GENERATED_BY_ANNOTATION, GUARD_KIND } from '../api/names.js';
import { withDefaults } from '../api/defaults.js';
import { isConflict } from './portErrors.js';
import type { PolicyPorts } from './ports.js';

/** Who generates the guards, as its guards name it. */
export interface GuardGenerator {
  view: PolicyView;
  kind: string;
  /** The label naming the generator on its guards, and `kind/name` for the generated-by annotation. */
  label: string;
  generatedBy: string;
}

export type GuardWrites = Pick<PolicyPorts, 'createGuard' | 'patchGuardSpec' | 'deleteGuard'>;

/** Creates, updates and deletes `gen`'s generated guards as `plan` says. */
export async function applyPlan(
  ports: GuardWrites,
  gen: GuardGenerator,
  plan: PolicyPlan,
  guards: readonly GuardRefView[],
  byKey: ReadonlyMap<string, Readonly<SlimGuard>>,
  log: Logger,
): Promise<void> {
  const existing = new Map(guards.filter((g) => generatedBy(g, gen.view)).map((g) => [`${g.namespace}/${g.name}`, g]));
  for (const d of plan.desired) await ensure(ports, gen, d, existing, byKey, log);
  for (const g of plan.deletions) {
    const uid = byKey.get(`${g.namespace}/${g.name}`)?.metadata.uid;
    log.info({ guard: `${g.namespace}/${g.name}` }, 'deleting generated guard: its DaemonSet no longer matches');
    await ports.deleteGuard(g.namespace, g.name, uid);
  }
}

/**
 * The desired guard `d` exists as planned: created when missing, its spec updated when it differs.
 * `existing` are the generator's own guards; `byKey` every cached guard.
 */
async function ensure(
  ports: GuardWrites,
  gen: GuardGenerator,
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
      await ports.patchGuardSpec(guard, want);
    } catch (e) {
      // The guard changed since it was cached: its update event brings its generator back with it.
      if (!isConflict(e)) throw e;
      log.debug({ guard: key }, 'generated guard changed under the spec patch; planning it again on its update');
    }
    return;
  }
  if (byKey.has(key)) {
    // A guard of that name exists but is not ours: never take it over.
    log.warn({ guard: key }, 'a guard with the generated name exists and is not owned by its generator; skipping');
    return;
  }
  log.info({ guard: key, target: d.target }, 'creating generated guard');
  await create(ports, gen, d);
}

async function create(ports: GuardWrites, gen: GuardGenerator, d: DesiredGuard): Promise<void> {
  const body = {
    apiVersion: API_VERSION,
    kind: GUARD_KIND,
    metadata: {
      name: d.name,
      namespace: d.namespace,
      labels: { [gen.label]: gen.view.name },
      annotations: { [GENERATED_BY_ANNOTATION]: gen.generatedBy },
      // Deleting the generator deletes its guards (garbage collection), and only its guards.
      ownerReferences: [{ apiVersion: API_VERSION, kind: gen.kind, name: gen.view.name, uid: gen.view.uid, controller: true }],
    },
    spec: withDefaults(d.spec),
  };
  try {
    await ports.createGuard(body);
  } catch (e) {
    // Already created by an earlier pass whose event we have not seen yet: the next pass updates it.
    if (!isConflict(e)) throw e;
  }
}
