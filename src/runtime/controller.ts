/**
 * The controller: the caches' events become keys (eventKeys.ts) in keyed work queues, and workers run
 * the reconcilers. Guards and policies each have their own queue and workers (workers.ts): guard keys
 * are `namespace/name`, policy keys a name, so a policy pass that hangs never holds up the guards.
 * The caches and the reconcilers are the manager's (manager.ts): the controller only schedules.
 */
import type { Logger } from 'pino';
import type { OperatorConfig } from './config.js';
import type { Metrics } from './metrics.js';
import type { Caches } from './caches.js';
import { enqueueAll, mapEventsToKeys, type KeySink } from './eventKeys.js';
import { WorkQueue } from './workQueue.js';
import { Workers, type PassResult } from './workers.js';

export interface ControllerDeps {
  caches: Caches;
  /** One pass of the guard reconciler for key `namespace/name`. */
  reconcileGuard: (key: string, waitedMs: number) => Promise<PassResult>;
  /** One pass of the policy reconciler for a policy's name; absent when policies are disabled. */
  reconcilePolicy?: (name: string) => Promise<PassResult>;
  config: OperatorConfig;
  metrics: Metrics;
  log: Logger;
  /** Told of every key queued and every pass ended, by both controllers (the idle collector). */
  onWork?: () => void;
  /** Asked before every pass of either controller: false stops the workers (see WorkersOptions.mayRun). */
  mayRun?: () => boolean;
  /** Work the passes left running beside them (the guards' announcements), awaited at stop after the passes. */
  settled?: () => Promise<void>;
}

export class Controller {
  /** The guards' queue and workers. */
  readonly guardWork: Workers;
  /** The policies' queue and workers; absent when policies are disabled. */
  readonly policyWork: Workers | undefined;
  private readonly keys: KeySink;
  private resyncTimer: ReturnType<typeof setTimeout> | undefined;
  private workersStarted = false;

  constructor(private readonly deps: ControllerDeps) {
    const { config } = deps;
    const queue = (batchMs = 0): WorkQueue =>
      new WorkQueue({
        baseDelayMs: config.backoffBaseMs,
        maxDelayMs: config.backoffMaxMs,
        qps: config.queueQps,
        burst: config.queueBurst,
        batchMs,
      });
    const work = {
      count: config.workers,
      metrics: deps.metrics,
      log: deps.log,
      ...(deps.onWork ? { onWork: deps.onWork } : {}),
      ...(deps.mayRun ? { mayRun: deps.mayRun } : {}),
    };
    this.guardWork = new Workers({
      name: 'guard',
      queueName: 'guards',
      queue: queue(config.batchPeriodMs),
      reconcile: deps.reconcileGuard,
      ...work,
    });
    const reconcilePolicy = deps.reconcilePolicy;
    this.policyWork =
      reconcilePolicy && new Workers({ name: 'policy', queueName: 'policies', queue: queue(), reconcile: reconcilePolicy, ...work });
    const policyWork = this.policyWork;
    this.keys = {
      guard: (key, urgent) => this.guardWork.add(key, urgent),
      ...(policyWork ? { policy: (name: string) => policyWork.add(name) } : {}),
    };
    mapEventsToKeys(deps.caches, this.keys);
  }

  /** Starts the workers (leader only) and the safety resync. */
  startWorkers(signal: AbortSignal): void {
    if (this.workersStarted) return;
    this.workersStarted = true;
    enqueueAll(this.deps.caches, this.keys);
    this.guardWork.start(signal);
    this.policyWork?.start(signal);
    this.scheduleResync();
  }

  private scheduleResync(): void {
    const base = this.deps.config.resyncMs;
    const jitter = base * 0.1 * (Math.random() * 2 - 1);
    this.resyncTimer = setTimeout(() => {
      enqueueAll(this.deps.caches, this.keys);
      this.scheduleResync();
    }, base + jitter);
    this.resyncTimer.unref();
  }

  /**
   * Graceful stop: no new keys are handed out and in-flight reconciles, then the announcements they
   * started, get `budgetMs` to finish. The watches stay open: the caches are the manager's to close,
   * after this.
   */
  async stop(budgetMs: number): Promise<void> {
    if (this.resyncTimer) clearTimeout(this.resyncTimer);
    const drained = Promise.all([this.guardWork.shutDown(), this.policyWork?.shutDown()]).then(() => this.deps.settled?.());
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      drained,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, budgetMs);
        timer.unref();
      }),
    ]);
    if (timer) clearTimeout(timer);
  }
}
