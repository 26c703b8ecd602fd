/**
 * One reconcile pass for one guard key: gather → decide → act → persist.
 *
 * - gather reads the caches only, and decide is pure: both run in observe (guardPass.ts), the same one
 *   the check command runs, over the guard's GuardMemory; it also says whether to hold a progress-only write;
 * - act performs at most the one planned write (undo or its dry run, or a forced rollback's eviction);
 * - persist patches status only when it differs. For an undo, the intent is persisted *before* acting
 *   and the outcome after, so a crash, retry or new leader never repeats it (see domain/undo.ts).
 * A 409 on the guard re-reads it and re-runs decide: a status computed from stale data is never sent.
 * A 409 on the DaemonSet is the undo's own business (bounded and re-checked there), never a reason to
 * re-run the pass. The Events of a transition are written into status with it and announced after it,
 * so none is lost or doubled (announcements.ts), beside the guard's passes rather than in them
 * (announcer.ts). A pass that fails after decide keeps decide's deadline
 * ({@link PassError}). A status the installed CRD is too old to accept is reported in one it accepts
 * (schemaOutdated.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { GuardPolicy } from '../domain/decide/pass.js';
import type { Decision, PlannedAction } from '../domain/decision.js';
import type { BlockedNode, GuardSpec, GuardStatus, TargetKind } from '../api/types.js';
import { recordAdmission } from '../domain/compare.js';
import { iso } from '../domain/decide/timing.js';
import { recordDryRun, recordUndoOutcome, undoRequest } from '../domain/undo.js';
import { recordEviction } from '../domain/eviction.js';
import { errorMessage, isNotFound, isSchemaOutdated, retryOnConflict } from './portErrors.js';
import { guardRef, workloadRef, type ObjectRef, type SlimGuard } from '../api/objects.js';
import { withDefaults } from '../api/defaults.js';
import type { CacheView, Clock, ReconcileObserver, ReconcilerPorts } from './ports.js';
import { PassError, TransientError, targetWrite } from './errors.js';
import { GuardMemories, type GuardMemory } from './guardMemory.js';
import { newlyFailingNodes, observe } from './guardPass.js';
import { recordExplanation, type ExplanationMoments } from './explanationTiming.js';
import { Announcer } from './announcer.js';
import { CRD_OUTDATED_MSG, SCHEMA_OUTDATED_RETRY_MS, crdOutdatedStatus } from './schemaOutdated.js';

export interface ReconcileResult {
  requeueAfterMs?: number;
  /** The decision made, for tests and the check command. */
  decision?: Decision;
}

/** The log message of a relist caused by a long cache wait (cacheWait.ts); end-to-end tests expect none. */
export const CACHES_DISAGREE_MSG = "the target's and the ControllerRevision caches still disagree; relisting them";

/** What decide is given besides the caches, from the guard as read. */
function policyOf(guard: Readonly<SlimGuard>, spec: GuardSpec): GuardPolicy {
  const policy: GuardPolicy = { spec, generation: guard.metadata.generation ?? 0, name: guard.metadata.name };
  if (guard.metadata.creationTimestamp) policy.createdAt = guard.metadata.creationTimestamp;
  return policy;
}

/** One pass once decide has spoken and the write is not held: what persist and act work from. */
interface Decided {
  guard: Readonly<SlimGuard>;
  memory: GuardMemory;
  /** The guard's spec with its defaults. */
  spec: GuardSpec;
  prev: GuardStatus;
  decision: Decision;
  gRef: ObjectRef;
  /** The DaemonSet, when the guard's target exists. */
  tRef: ObjectRef | undefined;
  log: Logger;
  now: number;
}

/** The guard after the decision's status write (or as read, when nothing was written). */
interface Persisted {
  guard: Readonly<SlimGuard>;
  /** A status was written, and when its answer came (performance.now()). */
  wrote: boolean;
  wroteAt: number;
}

/** What the reconciler may ask of the queue that runs it. */
export interface ReconcilerOptions {
  /** Brings `key` back after `afterMs`: an Event the API server did not take is offered again then. */
  requeue?: (key: string, afterMs: number) => void;
}

/** When a pass began (performance.now()) and how long its key had waited for a worker before. */
interface PassTiming {
  queueWaitMs: number;
  started: number;
}

type ActionOf<K extends PlannedAction['kind']> = Extract<PlannedAction, { kind: K }>;

export class Reconciler {
  /** What each guard remembers between passes; a guard that is gone is dropped here and nowhere else. */
  private readonly memories = new GuardMemories();
  private readonly announcer: Announcer;

  constructor(
    private readonly ports: ReconcilerPorts,
    private readonly cache: CacheView,
    private readonly clock: Clock,
    private readonly metrics: ReconcileObserver,
    private readonly log: Logger,
    options: ReconcilerOptions = {},
  ) {
    this.announcer = new Announcer((g, t, e) => this.ports.emit(g, t, e), options.requeue);
  }

  /** Resolves when every announcement under way has ended (at shutdown; what is left stays in status). */
  settled(): Promise<void> {
    return this.announcer.settled();
  }

  /** `queueWaitMs`: how long the key waited for a worker (the first part of an explanation's time). */
  async reconcile(key: string, queueWaitMs = 0): Promise<ReconcileResult> {
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const log = this.log.child({ guard: key, reconcileID: randomUUID().slice(0, 8) });
    const started = performance.now();
    try {
      const cached = this.ports.guard(namespace, name);
      if (!cached) {
        this.memories.drop(key);
        this.metrics.forgetGuard(namespace, name);
        return {};
      }
      const memory = this.memories.of(key);
      let guard = memory.freshest(cached);
      /** decide's deadline of the latest attempt, kept if the pass fails after deciding. */
      const seen: { requeueAfterMs?: number } = {};
      try {
        return await retryOnConflict(
          async (attempt) => {
            if (attempt > 1) {
              log.debug({ attempt }, 'status conflict: re-reading the guard and deciding again');
              guard = await this.ports.readGuard(namespace, name);
            }
            return await this.pass(guard, memory, log, seen, { queueWaitMs, started });
          },
          (attempts, e) => {
            throw new PassError(`status of ${key} kept conflicting after ${attempts} attempts`, seen.requeueAfterMs, {
              cause: new TransientError('guard status conflicts', { cause: e }),
            });
          },
        );
      } catch (e) {
        if (e instanceof PassError) throw e; // the conflicts ran out
        if (isNotFound(e)) return {}; // the guard was deleted under us
        throw new PassError(`reconcile of ${key} failed: ${errorMessage(e)}`, seen.requeueAfterMs, { cause: e });
      }
    } finally {
      this.metrics.reconcileDuration.observe((performance.now() - started) / 1000);
    }
  }

  /** gather and decide (observe), then persist, then act. */
  private async pass(
    guard: Readonly<SlimGuard>,
    memory: GuardMemory,
    log: Logger,
    seen: { requeueAfterMs?: number },
    timing: PassTiming,
  ): Promise<ReconcileResult> {
    const now = this.clock.now();
    const spec = withDefaults(guard.spec);
    const prev: GuardStatus = guard.status ?? {};
    const observed = observe(this.cache, memory, { targetName: spec.targetRef.name, prev, policy: policyOf(guard, spec), now });
    if (observed.kind === 'PodsPending') {
      // The pods' watch was just asked for; its first list enqueues this guard again.
      log.debug({ target: observed.target }, 'waiting for the caches of the target to list');
      return {};
    }
    const { obs, decision } = observed;
    if (decision.requeueAfterMs !== undefined) seen.requeueAfterMs = decision.requeueAfterMs;
    this.logTransition(log, prev, decision, guard.metadata.generation ?? 0);
    this.relistIfLong(memory, spec.targetRef.kind, log, observed.relistAfterWaitMs);

    const holdMs = observed.holdMs;
    if (holdMs > 0) return { decision, requeueAfterMs: Math.min(decision.requeueAfterMs ?? holdMs, holdMs) };

    const { namespace } = memory;
    const gRef = guardRef(namespace, guard.metadata.name, guard.metadata.uid);
    const tRef = obs.kind === 'Target' ? workloadRef(obs.target.kind, namespace, obs.target.name, obs.target.uid) : undefined;
    const d: Decided = { guard, memory, spec, prev, decision, gRef, tRef, log, now };
    /** The guard as last stored: the act's writes patch from the persisted one. */
    let stored = guard;
    try {
      const writeStarted = performance.now();
      const persisted = await this.persist(d, () => observed.commit());
      stored = persisted.guard;
      const failing = persisted.wrote ? newlyFailingNodes(prev.blockedNodes, decision.status.blockedNodes) : [];
      if (failing.length > 0) this.explained(d, failing, { ...timing, writeStarted, wroteAt: persisted.wroteAt }, persisted.guard);
      this.accepted(memory, log);
      this.observeTransition(namespace, guard.metadata.name, prev, decision.status, spec, now);
      return await this.act(d, persisted);
    } catch (e) {
      if (!isSchemaOutdated(e)) throw e;
      return this.crdOutdated(d, stored, e);
    }
  }

  /** A write that newly names a failing node: where its time went (explanationTiming.ts). */
  private explained(d: Decided, failing: readonly BlockedNode[], t: ExplanationMoments, written: Readonly<SlimGuard>): void {
    const { namespace } = d.memory;
    const rv = written.metadata.resourceVersion;
    const write = { newlyFailing: failing, failureSeen: (pod: string) => this.cache.podFailureSighting?.(namespace, pod) };
    const clocks = { wallNow: this.clock.now(), monoNow: performance.now() };
    recordExplanation(this.metrics, d.log, t, rv !== undefined ? { ...write, resourceVersion: rv } : write, clocks);
  }

  /** A full status was written: a refusal of the installed CRD, if there was one, is over. */
  private accepted(memory: GuardMemory, log: Logger): void {
    if (memory.schemaRefusal === undefined) return;
    memory.schemaRefusal = undefined;
    log.info('the installed CRD accepts the status again');
  }

  /**
   * The installed CRD refused the status (a value it does not know): logged once per refusal, counted,
   * reported as Ready=False CRDOutdated in a status it accepts, and looked at again later (schemaOutdated.ts).
   */
  private async crdOutdated(d: Decided, guard: Readonly<SlimGuard>, e: unknown): Promise<ReconcileResult> {
    const { memory, log } = d;
    const refusal = errorMessage(e);
    this.metrics.statusWritesRefused.inc({ reason: 'SchemaOutdated' });
    if (memory.schemaRefusal !== refusal) log.error({ refused: refusal, state: d.decision.status.state }, CRD_OUTDATED_MSG);
    else log.debug({ refused: refusal }, 'status still refused by the installed CRD');
    memory.schemaRefusal = refusal;
    const reduced = crdOutdatedStatus(guard.status ?? {}, refusal, iso(this.clock.now()), guard.metadata.generation ?? 0);
    try {
      await this.write(memory, guard, reduced);
    } catch (again) {
      if (!isSchemaOutdated(again)) throw again;
      this.metrics.statusWritesRefused.inc({ reason: 'SchemaOutdated' });
      log.warn({ refused: errorMessage(again) }, 'the installed CRD refused the CRDOutdated condition too');
    }
    return { decision: d.decision, requeueAfterMs: SCHEMA_OUTDATED_RETRY_MS };
  }

  private logTransition(log: Logger, prev: GuardStatus, decision: Decision, generation: number): void {
    if (decision.status.state === prev.state) return;
    log.info(
      {
        from: prev.state ?? 'none',
        to: decision.status.state,
        cause: decision.status.cause,
        action: decision.action?.kind,
        generation,
        observedGeneration: prev.observedGeneration,
      },
      'state transition',
    );
  }

  /**
   * A long wait means a cache is behind, not just late: have both listed again rather than wait for
   * the next watch restart.
   */
  private relistIfLong(memory: GuardMemory, kind: TargetKind, log: Logger, waitedMs: number | undefined): void {
    if (waitedMs === undefined || !this.ports.relistTargetCaches) return;
    log.warn({ waitedMs }, CACHES_DISAGREE_MSG);
    this.ports.relistTargetCaches(
      kind,
      memory.namespace,
      `guard ${memory.key} waited ${waitedMs} ms for its ${kind} and revision caches to agree`,
    );
  }

  /**
   * Persists the decision (the intent, when acting, and the Events to announce), commits the pass (the
   * status now holds what it observed), then starts announcing the Events (announcer.ts: the pass
   * does not wait for them).
   */
  private async persist(d: Decided, commit: () => void): Promise<Persisted> {
    const status = d.memory.announcements.attach(d.prev, d.decision.status, d.decision.events, d.now);
    const written = await this.write(d.memory, d.guard, status);
    const wroteAt = performance.now();
    commit();
    const guard = written ?? d.guard;
    this.announce(d, guard.status);
    return { guard, wrote: written !== undefined, wroteAt };
  }

  /** Performs the planned action, if any, and records its outcome. */
  private async act(d: Decided, persisted: Persisted): Promise<ReconcileResult> {
    const { decision, tRef } = d;
    const action = decision.action;
    if (action?.kind === 'Undo' && tRef) return this.undo(d, action, tRef, persisted.guard);
    if (action?.kind === 'CompareAdmission' && tRef) return this.compareAdmission(d, action, tRef, persisted.guard);
    if (action?.kind === 'DryRunUndo' && tRef) await this.dryRunUndo(d, action, tRef, persisted.guard);
    if (action?.kind === 'Evict' && this.ports.evict) return this.evict(d, action, persisted.guard);
    const result: ReconcileResult = { decision };
    if (decision.requeueAfterMs !== undefined) result.requeueAfterMs = decision.requeueAfterMs;
    return result;
  }

  /** The undo, its intent already in `afterIntent`'s status; its outcome is written and announced. */
  private async undo(d: Decided, action: ActionOf<'Undo'>, tRef: ObjectRef, afterIntent: Readonly<SlimGuard>): Promise<ReconcileResult> {
    const { memory, log, decision } = d;
    const { namespace } = memory;
    log.info(
      { fromHash: action.fromHash, toHash: action.toHash, revision: action.toRevisionName },
      `undo: intent recorded, patching ${tRef.kind}`,
    );
    const req = undoRequest(d.spec.targetRef.kind, namespace, tRef.name, action);
    const outcome = await targetWrite(() => this.ports.undo(req), `undo of ${tRef.kind} ${namespace}/${tRef.name}`);
    this.metrics.undos.inc({ outcome: outcome.kind });
    log.info({ outcome: outcome.kind, detail: 'detail' in outcome ? outcome.detail : undefined }, 'undo: outcome');
    const intent = afterIntent.status ?? decision.status;
    const r = recordUndoOutcome(intent, outcome, this.clock.now(), d.guard.metadata.generation ?? 0, d.spec.targetRef.kind);
    this.metrics.setUndoResult(namespace, d.guard.metadata.name, d.spec.targetRef, r.status.lastUndo?.result);
    const status = memory.announcements.attach(intent, r.status, r.events, this.clock.now());
    const done = await this.write(memory, afterIntent, status);
    this.announce(d, (done ?? afterIntent).status);
    // The DaemonSet watch brings the convergence; look again soon in case it is already there.
    return { requeueAfterMs: 1000, decision };
  }

  /** A forced rollback's eviction, its intent already in `afterIntent`'s status; its outcome is written and announced. */
  private async evict(d: Decided, action: ActionOf<'Evict'>, afterIntent: Readonly<SlimGuard>): Promise<ReconcileResult> {
    const { memory, log, decision } = d;
    const outcome = await targetWrite(() => this.ports.evict!(memory.namespace, action.pod, action.uid), `eviction of ${action.pod}`);
    this.metrics.evictions.inc({ outcome: outcome.kind });
    log.info({ pod: action.pod, uid: action.uid, outcome: outcome.kind }, 'forced rollback: eviction');
    const intent = afterIntent.status ?? decision.status;
    const r = recordEviction(intent, action.pod, action.uid, outcome, this.clock.now(), d.spec.targetRef.kind);
    const status = memory.announcements.attach(intent, r.status, r.events, this.clock.now());
    const done = await this.write(memory, afterIntent, status);
    this.announce(d, (done ?? afterIntent).status);
    return { requeueAfterMs: r.retryAfterMs ?? 1000, decision };
  }

  /** Asks whether admission would refuse the previous revision too, and records the answer. */
  private async compareAdmission(
    d: Decided,
    action: ActionOf<'CompareAdmission'>,
    tRef: ObjectRef,
    afterIntent: Readonly<SlimGuard>,
  ): Promise<ReconcileResult> {
    const { decision, log } = d;
    const { namespace } = d.memory;
    const outcome = this.ports.compareAdmission
      ? await targetWrite(
          () => this.ports.compareAdmission!(d.spec.targetRef.kind, namespace, tRef.name, action.revisionName, action.node),
          `admission dry run on ${tRef.kind} ${namespace}/${tRef.name}`,
        )
      : { result: 'NotVerified' as const, message: 'this operator has no admission check' };
    log.info({ result: outcome.result, revision: action.revisionName, node: action.node }, 'admission compared with the previous revision');
    const prev = afterIntent.status ?? decision.status;
    await this.write(d.memory, afterIntent, recordAdmission(prev, action.revisionName, action.forHash, outcome, iso(this.clock.now())));
    // The next pass judges with the answer (the plan asked for one soon).
    return decision.requeueAfterMs !== undefined ? { decision, requeueAfterMs: decision.requeueAfterMs } : { decision };
  }

  private async dryRunUndo(d: Decided, action: ActionOf<'DryRunUndo'>, tRef: ObjectRef, afterIntent: Readonly<SlimGuard>): Promise<void> {
    const { namespace } = d.memory;
    const outcome = await targetWrite(
      () => this.ports.dryRun(d.spec.targetRef.kind, namespace, tRef.name, action.toRevisionName),
      `undo dry run on ${tRef.kind} ${namespace}/${tRef.name}`,
    );
    d.log.info({ outcome: outcome.kind }, 'undo dry run');
    await this.write(d.memory, afterIntent, recordDryRun(afterIntent.status ?? d.decision.status, outcome));
  }

  /** Starts announcing the Events `status` holds (announcer.ts); returns at once. */
  private announce(d: Decided, status: GuardStatus | undefined): void {
    this.announcer.start({ memory: d.memory, guard: d.gRef, target: d.tRef, status, log: d.log });
  }

  private async write(memory: GuardMemory, guard: Readonly<SlimGuard>, status: GuardStatus): Promise<SlimGuard | undefined> {
    const written = await this.ports.writeStatus(guard, status);
    if (written) {
      this.metrics.statusWrites.inc();
      memory.remember(guard, written);
      memory.written(this.clock.now());
    }
    return written;
  }

  private observeTransition(namespace: string, name: string, prev: GuardStatus, next: GuardStatus, spec: GuardSpec, now: number): void {
    const target = spec.targetRef;
    this.metrics.setState(namespace, name, target, next.state ?? 'Unknown', next.cause ?? '', next.owner ?? '');
    this.metrics.setUndoResult(namespace, name, target, next.lastUndo?.result);
    if (
      next.undoSkipped &&
      spec.onStall.action === 'Undo' &&
      (prev.undoSkipped?.reason !== next.undoSkipped.reason || prev.state !== 'Stalled')
    ) {
      this.metrics.undosSkipped.inc({ reason: next.undoSkipped.reason });
    }
    if (next.state === 'Failed' && prev.state !== 'Failed') this.metrics.countFailure(namespace, name, target, next.cause || 'Unknown');
    if (next.state === 'Stalled' && prev.state !== 'Stalled') {
      this.metrics.countStall(namespace, name, target, next.cause || 'Unknown', next.owner || 'Unknown');
      const last = next.rollout?.lastProgressAt ? Date.parse(next.rollout.lastProgressAt) : undefined;
      if (last !== undefined) this.metrics.detectionLatency.observe(Math.max(0, now - (last + spec.progressDeadlineSeconds * 1000)) / 1000);
    }
  }
}
