/**
 * How the one-shot commands read the cluster: one DaemonSet or StatefulSet observed the way the operator
 * observes it, without the operator, and the preflight that turns a missing target or a forbidden read
 * into an answer at once. `rollout-guard check` and `rollout-guard get` both run on it.
 */
import type { Logger } from 'pino';
import { GUARD_DEFAULTS } from '../api/defaults.js';
import type { Decision } from '../domain/decision.js';
import type { GuardSpec, GuardStatus, TargetKind } from '../api/types.js';
import type { Observation } from '../domain/observation.js';
import type { GuardPolicy } from '../domain/decide/pass.js';
import { isNotFound } from '../k8s/apiErrors.js';
import { type ApiClient } from '../k8s/apiClient.js';
import { Informer } from '../k8s/informer.js';
import { claimsPath, controllerRevisionsPath, nodesPath, podsPath, replicaSetsPath } from '../k8s/apiPaths.js';
import { slimNode, slimPod, slimRevision } from '../k8s/slim.js';
import { slimClaim } from '../k8s/slimStatefulSet.js';
import { slimReplicaSet } from '../k8s/slimDeployment.js';
import { WORKLOAD_API } from '../k8s/workloadApi.js';
import { DEFAULT_KIND, KINDS, podControllerKind } from '../api/kinds.js';
import {
  controllerOf,
  type SlimClaim,
  type SlimGuard,
  type SlimNode,
  type SlimPod,
  type SlimReplicaSet,
  type SlimRevision,
  type SlimWorkload,
} from '../api/objects.js';
import { GuardPass } from '../reconcile/guardPass.js';
import type { CacheView } from '../reconcile/ports.js';
import { ExitCode, type Verdict } from './command.js';

/** A command's target: a DaemonSet or StatefulSet in a namespace. */
export interface CommandTarget {
  kind: TargetKind;
  namespace: string;
  name: string;
}

/**
 * Fails fast, with the API server's words, when the target is missing or a collection cannot be read.
 */
export async function preflight(client: ApiClient, target: CommandTarget, paths: readonly string[]): Promise<Verdict | undefined> {
  try {
    await client.request('GET', WORKLOAD_API[target.kind].path(target.namespace, target.name));
  } catch (e) {
    if (isNotFound(e)) {
      return {
        code: ExitCode.NotFound,
        verdict: 'not found',
        message: `${target.kind} ${target.name} not found in namespace ${target.namespace}`,
      };
    }
    throw e;
  }
  // The informers would retry a 403 forever with backoff, and a CI job would hang: the one thing check
  // exists to prevent. One cheap list per collection turns a missing RBAC rule into an error at once.
  for (const p of paths) await client.request('GET', p, { query: { limit: 1 } });
  return undefined;
}

/** How long a command waits for the first list of every collection before giving up. */
export const SYNC_TIMEOUT_MS = 30_000;

/**
 * The spec check judges a rollout by: its deadlines, Report only, no bake. `rollout-guard get ds/…` uses
 * it with check's default deadlines.
 */
export function checkSpec(kind: TargetKind, name: string, deadlineSeconds: number, suspectSeconds: number): GuardSpec {
  return {
    targetRef: { kind, name },
    suspectAfterSeconds: suspectSeconds,
    progressDeadlineSeconds: deadlineSeconds,
    onStall: { action: 'Report', delaySeconds: 0, forcedRollback: false },
    failedNodesThreshold: GUARD_DEFAULTS.failedNodesThreshold,
    // A pipeline step ends when the rollout does; crashes after that are the operator's to catch.
    bakeSeconds: 0,
    suspend: false,
  };
}

/** An index of objects by the UID of their controller of `ownerKind`. */
function ownedBy(ownerKind: string): (o: SlimPod | SlimRevision | SlimReplicaSet) => string[] {
  return (o) => {
    const c = controllerOf(o.metadata, ownerKind);
    return c ? [c.uid] : [];
  };
}

/**
 * One DaemonSet or StatefulSet observed the way the operator observes it, without the operator: its own
 * informers over the target, the namespace's pods and ControllerRevisions and the nodes, then gather and
 * the pure decide on each pass.
 */
export class TargetObserver {
  /** The collections read; {@link preflight} lists each once before the informers start. */
  readonly paths: { target: string; pods: string; revs: string; nodes: string; claims?: string };
  /** Every collection's informer, as the observer drives them all alike. */
  private readonly informers: ReadonlyArray<Pick<Informer<SlimPod>, 'start' | 'stop' | 'waitForSync'> & { onEvent(fn: () => void): void }>;
  private readonly cache: CacheView;
  private readonly guardPass: GuardPass;
  /** Ends the current {@link nextChange} wait early; unset when no one waits. */
  private wake: (() => void) | undefined;

  /**
   * @param guards the guards as read, when the caller has them: with several guards on the DaemonSet,
   *   decide then names the one in charge as the operator does (the others are in Conflict).
   */
  constructor(
    client: ApiClient,
    private readonly target: CommandTarget,
    log: Logger,
    guards?: () => ReadonlyArray<Readonly<SlimGuard>>,
  ) {
    const { kind, namespace, name } = target;
    // The target is judged as a guard of the same name in its namespace would judge it.
    this.guardPass = new GuardPass(`${namespace}/${name}`);
    const common = { watchTimeoutSeconds: 300, backoff: { initialMs: 500, maxMs: 10_000 } };
    this.paths = {
      target: WORKLOAD_API[kind].path(namespace),
      pods: podsPath(namespace),
      revs: controllerRevisionsPath(namespace),
      nodes: nodesPath(),
      // A StatefulSet's ordinals are explained by their claims too.
      ...(KINDS[kind].claims ? { claims: claimsPath(namespace) } : {}),
    };
    const targetInf = new Informer<SlimWorkload>(
      client,
      {
        name: KINDS[kind].resource,
        listPath: this.paths.target,
        fieldSelector: `metadata.name=${name}`,
        slim: WORKLOAD_API[kind].slim,
        ...common,
      },
      log,
    );
    const podInf = new Informer<SlimPod>(
      client,
      { name: 'pods', listPath: this.paths.pods, labelSelector: KINDS[kind].revisionLabel, slim: slimPod, ...common },
      log,
    );
    const revInf = new Informer<SlimRevision>(
      client,
      { name: 'controllerrevisions', listPath: this.paths.revs, slim: slimRevision, ...common },
      log,
    );
    const nodeInf = new Informer<SlimNode>(client, { name: 'nodes', listPath: this.paths.nodes, slim: slimNode, ...common }, log);
    podInf.addIndex('owner', ownedBy(podControllerKind(kind)));
    revInf.addIndex('owner', ownedBy(kind));
    // A Deployment's history is its ReplicaSets (KindDescriptor.history).
    const rsInf =
      KINDS[kind].history === 'ReplicaSets'
        ? new Informer<SlimReplicaSet>(
            client,
            { name: 'replicasets', listPath: replicaSetsPath(namespace), slim: slimReplicaSet, ...common },
            log,
          )
        : undefined;
    rsInf?.addIndex('owner', ownedBy(kind));
    const claimInf = this.paths.claims
      ? new Informer<SlimClaim>(client, { name: 'persistentvolumeclaims', listPath: this.paths.claims, slim: slimClaim, ...common }, log)
      : undefined;
    this.informers = [targetInf, podInf, revInf, nodeInf, ...(claimInf ? [claimInf] : []), ...(rsInf ? [rsInf] : [])];
    this.onChange(() => this.wake?.());
    // Only the target's kind is cached: a workload of another kind is not there.
    const workload = (k: TargetKind, n: string, nm: string): Readonly<SlimWorkload> | undefined =>
      k === kind ? targetInf.get(n, nm) : undefined;
    this.cache = {
      workload: workload as CacheView['workload'],
      podsOwnedBy: (uid) => podInf.byIndex('owner', uid),
      revisionsOwnedBy: (uid) => revInf.byIndex('owner', uid),
      ...(rsInf ? { replicaSetsOwnedBy: (uid: string) => rsInf.byIndex('owner', uid) } : {}),
      nodes: () => nodeInf.list(),
      ...(claimInf ? { claim: (n: string, nm: string) => claimInf.get(n, nm) } : {}),
      ...(guards
        ? {
            guardsTargeting: (k: TargetKind, n: string, target: string) =>
              guards().filter(
                (g) =>
                  (g.metadata.namespace ?? n) === n && g.spec.targetRef?.name === target && (g.spec.targetRef?.kind ?? DEFAULT_KIND) === k,
              ),
          }
        : {}),
    };
  }

  /** Calls `fn` after every change to any of the caches. Register before {@link start}. */
  onChange(fn: () => void): void {
    for (const i of this.informers) i.onEvent(fn);
  }

  /**
   * Resolves on the next change to any of the caches, or after `timeoutMs`. A change while no one waits
   * wakes nobody: the next pass reads the caches as they are.
   */
  async nextChange(timeoutMs: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = undefined;
  }

  start(): void {
    for (const i of this.informers) i.start();
  }

  /** Waits for the first list of every collection; rejects after `timeoutMs`. */
  async synced(timeoutMs = SYNC_TIMEOUT_MS): Promise<void> {
    let syncTimer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      syncTimer = setTimeout(
        () => reject(new Error(`the API server did not answer the first lists within ${timeoutMs / 1000}s`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([Promise.all(this.informers.map((i) => i.waitForSync())), timedOut]);
    } finally {
      clearTimeout(syncTimer);
    }
  }

  /** One pass: the observation gathered from the caches now, and decide's verdict on it from `status`. */
  pass(status: GuardStatus, policy: GuardPolicy, now: number): { obs: Observation; decision: Decision } {
    const r = this.guardPass.observe(this.cache, { targetName: this.target.name, prev: status, policy, now });
    // The observer lists every pod of its target itself: its cache is never without them.
    if (r.kind === 'PodsPending') throw new Error(`the pods of ${this.target.kind} ${r.target} are not cached`);
    // A command keeps its status in memory: it is "persisted" as soon as it is decided. A one-shot command
    // has its own deadline and no informers to relist, so only decide's own cache-wait limit matters,
    // and it writes nothing, so there is no write to hold.
    r.commit();
    return { obs: r.obs, decision: r.decision };
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.informers.map((i) => i.stop()));
  }
}
