/**
 * What `rollout-guard get` reads: the DaemonSet, through the same {@link TargetObserver} as
 * `rollout-guard check`, and the RolloutGuards: for rg/NAME the guard itself, for ds/NAME those of the
 * namespace, to name the ones that target it. It writes nothing.
 */
import type { Logger } from 'pino';
import { GUARD_DEFAULTS, withDefaults } from '../api/defaults.js';
import type { GuardSpec, GuardStatus, TargetKind } from '../api/types.js';
import { DEFAULT_KIND } from '../api/kinds.js';
import type { Decision } from '../domain/decision.js';
import type { Observation } from '../domain/observation.js';
import { ApiError, isNotFound } from '../k8s/apiErrors.js';
import { type ApiClient } from '../k8s/apiClient.js';
import { guardsPath } from '../k8s/apiPaths.js';
import { Informer } from '../k8s/informer.js';
import type { SlimGuard } from '../api/objects.js';
import { slimGuard } from '../k8s/slim.js';
import { ExitCode, type Verdict } from './command.js';
import { guardSummary, guardsTargeting, type GetView, type GuardRef, type GuardSummary } from './getView.js';
import { TargetObserver, checkSpec, preflight } from './observer.js';

/** What get was asked to show. */
export interface GetTarget {
  kind: GetView['kind'];
  name: string;
  namespace: string;
}

/** Reads a guard; undefined when it does not exist. */
async function readGuard(client: ApiClient, namespace: string, name: string): Promise<SlimGuard | undefined> {
  try {
    return slimGuard(await client.request('GET', guardsPath(namespace, name)));
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** Whether the collection can be listed: false when the API does not serve it (404) or RBAC forbids it (403). */
async function canList(client: ApiClient, path: string): Promise<boolean> {
  try {
    await client.request('GET', path, { query: { limit: 1 } });
    return true;
  } catch (e) {
    if (e instanceof ApiError && (e.statusCode === 404 || e.statusCode === 403)) return false;
    throw e;
  }
}

/**
 * The guards get watches, since the operator writes their status: rg/NAME its guard; ds/NAME the guards
 * of the namespace, if the API has RolloutGuards and we may list them (else undefined).
 */
async function guardInformer(client: ApiClient, t: GetTarget, log: Logger): Promise<Informer<SlimGuard> | undefined> {
  const listPath = guardsPath(t.namespace);
  if (t.kind !== 'RolloutGuard' && !(await canList(client, listPath))) return undefined;
  return new Informer<SlimGuard>(
    client,
    {
      name: 'rolloutguards',
      listPath,
      ...(t.kind === 'RolloutGuard' ? { fieldSelector: `metadata.name=${t.name}` } : {}),
      slim: slimGuard,
      watchTimeoutSeconds: 300,
      backoff: { initialMs: 500, maxMs: 10_000 },
    },
    log,
  );
}

export class GetSource {
  private constructor(
    private readonly t: GetTarget,
    /** The target shown: the one named, or the guard's. */
    readonly target: string,
    readonly targetKind: TargetKind,
    /** The spec the rows are judged by. */
    private readonly spec: GuardSpec,
    private readonly observer: TargetObserver,
    private readonly guards: Informer<SlimGuard> | undefined,
  ) {}

  /**
   * Opens what `t` reads, its informers not started yet; or why there is nothing to show: the guard
   * does not exist, or for ds/NAME the DaemonSet does not.
   */
  static async open(t: GetTarget, client: ApiClient, log: Logger): Promise<GetSource | Verdict> {
    let target = t.name;
    let kind: TargetKind = t.kind === 'RolloutGuard' ? DEFAULT_KIND : t.kind;
    let spec = checkSpec(kind, target, GUARD_DEFAULTS.progressDeadlineSeconds, GUARD_DEFAULTS.suspectAfterSeconds);
    if (t.kind === 'RolloutGuard') {
      const guard = await readGuard(client, t.namespace, t.name);
      if (!guard)
        return { code: ExitCode.NotFound, verdict: 'not found', message: `RolloutGuard ${t.name} not found in namespace ${t.namespace}` };
      // A guard with a selector judges no workload itself: its generated guards do (status.workloads).
      if (!guard.spec.targetRef)
        return {
          code: ExitCode.Usage,
          verdict: 'selector guard',
          message: `RolloutGuard ${t.name} selects workloads by label: get one of its generated guards (status.workloads) instead`,
        };
      target = guard.spec.targetRef.name;
      kind = guard.spec.targetRef.kind;
      // The rows are judged with the guard's own deadlines; what the guard does about a stall is its business.
      const gs = withDefaults(guard.spec);
      spec = checkSpec(kind, target, gs.progressDeadlineSeconds, gs.suspectAfterSeconds);
    }
    const observed = { kind, namespace: t.namespace, name: target };
    const observer = new TargetObserver(client, observed, log);
    const early = await preflight(client, observed, Object.values(observer.paths));
    // A guard whose target is missing is still worth showing: the guard says so itself.
    if (early && t.kind !== 'RolloutGuard') return early;
    return new GetSource(t, target, kind, spec, observer, await guardInformer(client, t, log));
  }

  /** Calls `fn` after every change to the DaemonSet, its pods, its revisions, the nodes or the guards. Register before {@link start}. */
  onChange(fn: () => void): void {
    this.observer.onChange(fn);
    this.guards?.onEvent(fn);
  }

  start(): void {
    this.observer.start();
    this.guards?.start();
  }

  /** Waits for the first list of every collection. */
  async synced(): Promise<void> {
    await this.observer.synced();
    if (this.guards) await this.guards.waitForSync();
  }

  /** One pass over the DaemonSet: the observation and decide's verdict on it from `status`. */
  pass(status: GuardStatus, now: number): { obs: Observation; decision: Decision } {
    return this.observer.pass(status, { spec: this.spec, generation: 1 }, now);
  }

  /** The guards' part of the view, from the guards as read now. */
  guardsShown(): { guard?: GuardSummary; guardedBy?: GuardRef[] } {
    const { kind, namespace, name } = this.t;
    if (kind === 'RolloutGuard') return { guard: guardSummary(namespace, name, this.guards?.get(namespace, name), this.target) };
    return this.guards ? { guardedBy: guardsTargeting(this.guards.list(namespace), this.targetKind, this.target) } : {};
  }

  async stop(): Promise<void> {
    await Promise.allSettled([this.observer.stop(), this.guards?.stop()]);
  }
}
