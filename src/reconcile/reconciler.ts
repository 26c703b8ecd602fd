/**
 * One reconcile pass for one guard key: gather → decide → act → persist.
 *
 * - gather reads the caches only, and decide is pure: both run in the guard's GuardPass (guardPass.ts),
 *   the same one the check command runs, which also says whether to hold a progress-only write;
 * - act performs at most the one planned write (undo or its dry run);
 * - persist patches status only when it differs. For an undo, the intent is persisted *before* acting
 *   and the outcome after, so a crash, retry or new leader never repeats it (see domain/undo.ts).
 * A 409 on the guard re-reads it and re-runs decide: a status computed from stale data is never sent.
 * A 409 on the DaemonSet is the undo's own business (bounded and re-checked there), never a reason to
 * re-run the pass. The Events of a transition are written into status with it and announced after it,
 * so none is lost or doubled (announcements.ts). A pass that fails after decide keeps decide's deadline
 * ({@link PassError}).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { GuardPolicy } from '../domain/decide/pass.js';
import type { Decision } from '../domain/decision.js';
import type { GuardSpec, GuardStatus } from '../api/types.js';
import { recordAdmission } from '../domain/compare.js';
import { iso } from '../domain/decide/kit.js';
import { recordDryRun, recordUndoOutcome, type UndoRequest } from '../domain/undo.js';
import { CONFLICT_ATTEMPTS, errorMessage, isConflict, isNotFound } from './portErrors.js';
import { daemonSetRef, guardRef, type ObjectRef, type SlimGuard } from '../api/objects.js';
import type { Clock } from './ports.js';
import { withDefaults } from '../api/defaults.js';
import type { CacheView, ReconcileObserver, ReconcilerPorts } from './ports.js';
import { PassError, TransientError } from './errors.js';
import { Announcements } from './announcements.js';
import { GuardPasses } from './guardPass.js';

export interface ReconcileResult {
  requeueAfterMs?: number;
  /** The decision made, for tests and the check command. */
  decision?: Decision;
}

/**
 * A guard as our own status write returned it, kept until the informer has caught up with it.
 * `superseded` holds the resourceVersions it replaced (the one each of our writes patched over): while
 * the cache still shows one of those, the cache is older than this copy. Any other cached version (our
 * write arrived, or someone else wrote since) ends the memo. No resourceVersion is ever compared for
 * order, only for identity.
 */
interface OwnWrite {
  guard: SlimGuard;
  superseded: Set<string>;
}

/** Bound on `superseded`: a watch that never delivers our writes must not make the memo grow forever. */
const MAX_SUPERSEDED = 64;

export { PROGRESS_WRITE_INTERVAL_MS } from './guardPass.js';

/** The log message of a relist caused by a long cache wait (cacheWait.ts); end-to-end tests expect none. */
export const CACHES_DISAGREE_MSG = 'the DaemonSet and ControllerRevision caches still disagree; relisting them';

/** How soon an Event the API server did not take is offered again. */
const ANNOUNCE_RETRY_MS = 5000;

/**
 * Runs a write to the DaemonSet. Its conflicts are handled (bounded, each attempt re-checked) inside the
 * undo; one that escapes is a transient failure of this pass, never a conflict on the guard, which would
 * re-run the whole pass and multiply the attempts.
 */
async function targetWrite<T>(write: () => Promise<T>, what: string): Promise<T> {
  try {
    return await write();
  } catch (e) {
    if (isConflict(e)) throw new TransientError(`${what}: the DaemonSet kept changing`, { cause: e });
    throw e;
  }
}

export class Reconciler {
  /**
   * Per guard key, our latest status write until the cache shows it. Deciding from the cache right
   * after our own write would patch with the version we just replaced and draw a 409, a GET and a
   * second decide: during a rollout's stream of pod events that was over half of all requests.
   */
  private readonly ownWrites = new Map<string, OwnWrite>();
  /** Per guard key, what it remembers between passes: target memory, cache wait, progress hold. */
  private readonly passes = new GuardPasses();
  /** Per guard key, which of its Events this process has announced. */
  private readonly announcements = new Announcements();

  constructor(
    private readonly ports: ReconcilerPorts,
    private readonly cache: CacheView,
    private readonly clock: Clock,
    private readonly metrics: ReconcileObserver,
    private readonly log: Logger,
  ) {}

  async reconcile(key: string): Promise<ReconcileResult> {
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const log = this.log.child({ guard: key, reconcileID: randomUUID().slice(0, 8) });
    const started = performance.now();
    try {
      let guard = this.ports.guard(namespace, name);
      if (!guard) {
        this.passes.forget(key);
        this.ownWrites.delete(key);
        this.announcements.forget(key);
        this.metrics.forgetGuard(namespace, name);
        return {};
      }
      guard = this.freshest(key, guard);
      /** decide's deadline of the latest attempt, kept if the pass fails after deciding. */
      const seen: { requeueAfterMs?: number } = {};
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.pass(guard, key, namespace, log, seen);
        } catch (e) {
          if (isNotFound(e)) return {}; // the guard was deleted under us
          if (!isConflict(e)) throw new PassError(`reconcile of ${key} failed: ${errorMessage(e)}`, seen.requeueAfterMs, { cause: e });
          if (attempt >= CONFLICT_ATTEMPTS) {
            throw new PassError(`status of ${key} kept conflicting after ${attempt} attempts`, seen.requeueAfterMs, {
              cause: new TransientError('guard status conflicts', { cause: e }),
            });
          }
          log.debug({ attempt }, 'status conflict: re-reading the guard and deciding again');
          guard = await this.ports.readGuard(namespace, name);
        }
      }
    } finally {
      this.metrics.reconcileDuration.observe((performance.now() - started) / 1000);
    }
  }

  private async pass(
    guard: Readonly<SlimGuard>,
    key: string,
    namespace: string,
    log: Logger,
    seen: { requeueAfterMs?: number },
  ): Promise<ReconcileResult> {
    const now = this.clock.now();
    const spec = withDefaults(guard.spec);
    const generation = guard.metadata.generation ?? 0;
    const prev: GuardStatus = guard.status ?? {};
    const policy: GuardPolicy = { spec, generation, name: guard.metadata.name };
    if (guard.metadata.creationTimestamp) policy.createdAt = guard.metadata.creationTimestamp;
    const pass = this.passes.for(key);
    const observed = pass.observe(this.cache, { targetName: spec.targetRef.name, prev, policy, now });
    if (observed.kind === 'PodsPending') {
      // The pods' watch was just asked for; its first list enqueues this guard again.
      log.debug({ daemonSet: observed.daemonSet }, 'waiting for the pods of the DaemonSet to be listed');
      return {};
    }
    const { obs, decision } = observed;
    if (decision.requeueAfterMs !== undefined) seen.requeueAfterMs = decision.requeueAfterMs;
    const gRef = guardRef(namespace, guard.metadata.name, guard.metadata.uid);
    const tRef = obs.kind === 'Target' ? daemonSetRef(namespace, obs.ds.name, obs.ds.uid) : undefined;
    const action = decision.action;

    if (decision.status.state !== prev.state) {
      log.info(
        {
          from: prev.state ?? 'none',
          to: decision.status.state,
          cause: decision.status.cause,
          action: action?.kind,
          generation,
          observedGeneration: prev.observedGeneration,
        },
        'state transition',
      );
    }

    // A long wait means a cache is behind, not just late: have both listed again rather than wait for
    // the next watch restart.
    const waitedMs = observed.relistAfterWaitMs;
    if (waitedMs !== undefined && this.ports.relistTargetCaches) {
      log.warn({ waitedMs }, CACHES_DISAGREE_MSG);
      this.ports.relistTargetCaches(namespace, `guard ${key} waited ${waitedMs} ms for its DaemonSet and revision caches to agree`);
    }

    const holdMs = observed.holdMs;
    if (holdMs > 0) return { decision, requeueAfterMs: Math.min(decision.requeueAfterMs ?? holdMs, holdMs) };

    // Persist (the intent, when acting, and the Events to announce), then announce.
    const status = this.announcements.attach(key, prev, decision.status, decision.events, now);
    const written = await this.write(key, guard, status);
    observed.commit();
    const afterIntent = written ?? guard;
    let unannounced = await this.announce(key, gRef, tRef, afterIntent.status);
    this.observeTransition(namespace, guard.metadata.name, prev, decision.status, spec, now);

    if (action?.kind === 'Undo' && tRef) {
      log.info(
        { fromHash: action.fromHash, toHash: action.toHash, revision: action.toRevisionName },
        'undo: intent recorded, patching DaemonSet',
      );
      const req: UndoRequest = {
        namespace,
        name: tRef.name,
        toRevisionName: action.toRevisionName,
        expectedUid: action.expectedUid,
        fromHash: action.fromHash,
        toHash: action.toHash,
        record: action.record,
      };
      if (action.expectedTemplateGeneration !== undefined) req.expectedTemplateGeneration = action.expectedTemplateGeneration;
      const outcome = await targetWrite(() => this.ports.undo(req), `undo of DaemonSet ${namespace}/${tRef.name}`);
      this.metrics.undos.inc({ outcome: outcome.kind });
      log.info({ outcome: outcome.kind, detail: 'detail' in outcome ? outcome.detail : undefined }, 'undo: outcome');
      const intent = afterIntent.status ?? decision.status;
      const r = recordUndoOutcome(intent, outcome, this.clock.now(), generation);
      this.metrics.setUndoResult(namespace, guard.metadata.name, spec.targetRef.name, r.status.lastUndo?.result);
      const done = await this.write(key, afterIntent, this.announcements.attach(key, intent, r.status, r.events, this.clock.now()));
      unannounced = await this.announce(key, gRef, tRef, (done ?? afterIntent).status);
      // The DaemonSet watch brings the convergence; look again soon in case it is already there.
      return { requeueAfterMs: 1000, decision };
    }
    if (action?.kind === 'CompareAdmission' && tRef) {
      const outcome = this.ports.compareAdmission
        ? await targetWrite(
            () => this.ports.compareAdmission!(namespace, tRef.name, action.revisionName, action.node),
            `admission dry run on DaemonSet ${namespace}/${tRef.name}`,
          )
        : { result: 'NotVerified' as const, message: 'this operator has no admission check' };
      log.info(
        { result: outcome.result, revision: action.revisionName, node: action.node },
        'admission compared with the previous revision',
      );
      await this.write(
        key,
        afterIntent,
        recordAdmission(afterIntent.status ?? decision.status, action.revisionName, action.forHash, outcome, iso(this.clock.now())),
      );
      // The next pass judges with the answer (the plan asked for one soon).
      return decision.requeueAfterMs !== undefined ? { decision, requeueAfterMs: decision.requeueAfterMs } : { decision };
    }
    if (action?.kind === 'DryRunUndo' && tRef) {
      const outcome = await targetWrite(
        () => this.ports.dryRun(namespace, tRef.name, action.toRevisionName),
        `undo dry run on DaemonSet ${namespace}/${tRef.name}`,
      );
      log.info({ outcome: outcome.kind }, 'undo dry run');
      await this.write(key, afterIntent, recordDryRun(afterIntent.status ?? decision.status, outcome));
    }
    const result: ReconcileResult = { decision };
    if (decision.requeueAfterMs !== undefined) result.requeueAfterMs = decision.requeueAfterMs;
    // An Event the API server did not take is tried again soon, not at the next transition.
    if (unannounced > 0) result.requeueAfterMs = Math.min(result.requeueAfterMs ?? ANNOUNCE_RETRY_MS, ANNOUNCE_RETRY_MS);
    return result;
  }

  /** Announces what `status` holds and this process has not announced; returns how many are still not. */
  private async announce(key: string, gRef: ObjectRef, tRef: ObjectRef | undefined, status: GuardStatus | undefined): Promise<number> {
    const pending = this.announcements.pending(key, status);
    if (pending.length === 0) return 0;
    const ids = await this.ports.emit(gRef, tRef, pending);
    this.announcements.markAnnounced(key, ids);
    return pending.length - ids.length;
  }

  private async write(key: string, guard: Readonly<SlimGuard>, status: GuardStatus): Promise<SlimGuard | undefined> {
    const written = await this.ports.writeStatus(guard, status);
    if (written) {
      this.metrics.statusWrites.inc();
      this.remember(key, guard, written);
      this.passes.for(key).written(this.clock.now());
    }
    return written;
  }

  /** The cached guard, or our own later write of it when the cache has not caught up yet. */
  private freshest(key: string, cached: Readonly<SlimGuard>): Readonly<SlimGuard> {
    const own = this.ownWrites.get(key);
    if (!own) return cached;
    const rv = cached.metadata.resourceVersion;
    if (own.guard.metadata.uid === cached.metadata.uid && rv !== undefined && own.superseded.has(rv)) return own.guard;
    this.ownWrites.delete(key);
    return cached;
  }

  private remember(key: string, from: Readonly<SlimGuard>, written: SlimGuard): void {
    const prev = this.ownWrites.get(key);
    const superseded = prev && prev.guard.metadata.uid === written.metadata.uid ? prev.superseded : new Set<string>();
    if (from.metadata.resourceVersion !== undefined) superseded.add(from.metadata.resourceVersion);
    if (superseded.size > MAX_SUPERSEDED) {
      this.ownWrites.delete(key);
      return;
    }
    this.ownWrites.set(key, { guard: written, superseded });
  }

  private observeTransition(namespace: string, name: string, prev: GuardStatus, next: GuardStatus, spec: GuardSpec, now: number): void {
    const ds = spec.targetRef.name;
    this.metrics.setState(namespace, name, ds, next.state ?? 'Unknown');
    this.metrics.setUndoResult(namespace, name, ds, next.lastUndo?.result);
    if (
      next.undoSkipped &&
      spec.onStall.action === 'Undo' &&
      (prev.undoSkipped?.reason !== next.undoSkipped.reason || prev.state !== 'Stalled')
    ) {
      this.metrics.undosSkipped.inc({ reason: next.undoSkipped.reason });
    }
    if (next.state === 'Failed' && prev.state !== 'Failed') this.metrics.countFailure(namespace, name, ds, next.cause || 'Unknown');
    if (next.state === 'Stalled' && prev.state !== 'Stalled') {
      this.metrics.countStall(namespace, name, ds, next.cause || 'Unknown', next.owner || 'Unknown');
      const last = next.rollout?.lastProgressAt ? Date.parse(next.rollout.lastProgressAt) : undefined;
      if (last !== undefined) this.metrics.detectionLatency.observe(Math.max(0, now - (last + spec.progressDeadlineSeconds * 1000)) / 1000);
    }
  }
}
