/**
 * What end-to-end suites read of a guard and its target, on the shared cluster or a private one: the
 * guard's status, waits on it that say what they last saw, the Events on an object, and the wait for a
 * DaemonSet to be available everywhere.
 *
 * @module
 */
import type { KubectlOptions } from '../../cluster/kubectl.js';
import {
  createNamespace,
  createNodePool,
  decoderDaemonSet,
  ensureCluster,
  kubectlJson as sharedKubectlJson,
  uniqueName,
  waitFor,
  type DecoderDaemonSetOptions,
  type NodePool,
  type NodePoolOptions,
} from './cluster.js';
import { OperatorProcess, apply, guard, installCrds } from './operator.js';

/** Runs kubectl with `-o json` against one cluster and parses the output. */
export type KubectlJson = <T>(args: readonly string[], opts?: KubectlOptions) => Promise<T>;

/** A node entry of `status.blockedNodes` / `status.emptyNodes`. */
export interface NodeEntry {
  node: string;
  /** The node the unit's pod runs on, when the unit is not a node (a StatefulSet's ordinal, a Deployment's pod). */
  host?: string;
  pod?: string;
  owner?: string;
  cause?: string;
  reason: string;
  message: string;
  restarts?: number;
  comparison?: string;
  hash?: string;
}

/** The parts of a RolloutGuard the suites read. */
export interface GuardObj {
  metadata?: { name: string; resourceVersion?: string };
  status?: {
    state?: string;
    cause?: string;
    owner?: string;
    message?: string;
    inCharge?: string;
    currentRevision?: { revision?: number; hash: string };
    generations?: Array<{ revision?: number; hash: string; nodes: number; ready: number; images?: string[] }>;
    lastUndo?: {
      at: string;
      result: string;
      fromHash: string;
      toHash: string;
      fromRevision?: number;
      toRevision?: number;
      message: string;
    };
    undoSkipped?: { reason: string; message: string };
    undoPlan?: { toRevision?: number; toHash: string; nodes: number; dryRun?: string };
    undoneRevisions?: string[];
    forcedRollback?: {
      forHash: string;
      evictions: Array<{ pod: string; uid: string; result: string; attempts: number; message?: string }>;
    };
    blockedNodes?: NodeEntry[];
    blockedNodeCount?: number;
    emptyNodes?: NodeEntry[];
    rollout?: {
      rollback?: boolean;
      startedAt?: string;
      updatedAt?: string;
      completedAt?: string;
      lastProgressAt?: string;
      failedAt?: string;
      failures?: { count: number; nodes: Array<{ node: string; restarts: number; at: string; reason: string }> };
      fromRevision?: { revision?: number; hash: string };
      toRevision?: { revision?: number; hash: string };
      superseded?: Array<{ revision?: number; hash: string }>;
      restored?: boolean;
      unavailableAtStart?: Array<{ node: string; cause: string }>;
      unavailableAtStartUnlisted?: number;
      admission?: { result: string; revisionName: string; message: string };
    };
    conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
  };
}

/** An Event as `kubectl get events -o json` shows it. */
export interface EventItem {
  reason: string;
  type?: string;
  message?: string;
  note?: string;
  /** How many times the Event happened, as the core view counts a repeated Event (and its series). */
  count?: number;
  series?: { count?: number };
}

/** Reads guards, Events and DaemonSets of one cluster (the shared one unless another kubectl is given). */
export class GuardReader {
  constructor(
    private readonly kubectlJson: KubectlJson = sharedKubectlJson,
    /** The operator's last log lines, added to a failed wait's message. */
    private readonly logs: () => string[] = () => [],
  ) {}

  guard(ns: string, name = 'decoder'): Promise<GuardObj> {
    return this.kubectlJson<GuardObj>(['get', 'rolloutguard', name], { ns });
  }

  /** Waits until `pred` holds for the guard; on timeout the error carries its last status and the logs. */
  async waitGuard(ns: string, pred: (g: GuardObj) => boolean, what: string, timeoutMs = 90_000, name = 'decoder'): Promise<GuardObj> {
    let last: GuardObj | undefined;
    try {
      await waitFor(
        async () => {
          last = await this.guard(ns, name);
          return pred(last);
        },
        { timeoutMs, intervalMs: 200, describe: what },
      );
    } catch (e) {
      throw new Error(
        `${e instanceof Error ? e.message : String(e)}; last status: ${JSON.stringify(last?.status)}\n${this.logs().slice(-15).join('\n')}`,
      );
    }
    return last!;
  }

  /** Events about `kind` `ns/name`, oldest first as the API lists them. */
  async events(ns: string, kind: string, name = 'decoder'): Promise<EventItem[]> {
    return (
      await this.kubectlJson<{ items: EventItem[] }>(
        ['get', 'events', `--field-selector=involvedObject.kind=${kind},involvedObject.name=${name}`],
        { ns },
      )
    ).items;
  }

  async reasons(ns: string, kind: string, name = 'decoder'): Promise<string[]> {
    return (await this.events(ns, kind, name)).map((e) => e.reason);
  }

  /** The first container's image of DaemonSet `ns/name`. */
  async image(ns: string, name = 'decoder'): Promise<string> {
    const ds = await this.kubectlJson<{ spec: { template: { spec: { containers: Array<{ image: string }> } } } }>(['get', 'ds', name], {
      ns,
    });
    return ds.spec.template.spec.containers[0]!.image;
  }

  /**
   * Waits until DaemonSet `ns/name` wants `count` pods and all of them are available. (`rollout status`
   * also says "successfully rolled out" while DESIRED is still 0, before the pool's nodes are counted.)
   */
  async availableOn(ns: string, count: number, name = 'decoder'): Promise<void> {
    await waitFor(
      async () => {
        const ds = await this.kubectlJson<{
          status: { desiredNumberScheduled?: number; numberAvailable?: number; updatedNumberScheduled?: number };
        }>(['get', 'ds', name], { ns });
        return (
          ds.status.desiredNumberScheduled === count && ds.status.numberAvailable === count && ds.status.updatedNumberScheduled === count
        );
      },
      { timeoutMs: 120_000, describe: `${name} available on all ${count} nodes` },
    );
  }
}

/** How many scenarios of a suite are set up, or torn down, at once. */
const SCENARIO_SETUP_CONCURRENCY = 4;

/** Runs `fn` on every item, at most `limit` at once; rejects with the first failure once all have ended. */
async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++]!;
      await fn(item).catch((e: unknown) => void errors.push(e));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (errors.length > 0) throw errors[0];
}

/**
 * The scaffolding of a shared-cluster suite whose cases run concurrently: per scenario a namespace and
 * a kwok node pool of its own, one operator watching all of them, and everything removed afterwards.
 * Call {@link GuardSuite.setUp} from `before` and {@link GuardSuite.tearDown} from `after`.
 */
export class GuardSuite<S extends string> {
  readonly ns = {} as Record<S, string>;
  readonly pools = {} as Record<S, NodePool>;
  readonly read = new GuardReader(undefined, () => this.operator?.logs ?? []);
  private operator: OperatorProcess | undefined;
  private readonly cleanups: Array<() => Promise<void>> = [];

  constructor(
    private readonly prefix: string,
    private readonly scenarios: readonly S[],
    private readonly nodesFor: (s: S) => number = () => 3,
    /** Node pool options per scenario (allocatable, labels, taints). */
    private readonly poolFor: (s: S) => NodePoolOptions = () => ({}),
  ) {}

  get op(): OperatorProcess {
    if (!this.operator) throw new Error('GuardSuite.setUp() has not run');
    return this.operator;
  }

  async setUp(): Promise<void> {
    await ensureCluster();
    await installCrds();
    // A few scenarios at a time: each waits mostly on the API server and kwok (a namespace, nodes
    // turning Ready), so a suite of 25 scenarios need not wait for them one after another.
    await eachLimited(this.scenarios, SCENARIO_SETUP_CONCURRENCY, async (s) => {
      const n = await createNamespace(`${this.prefix}-${s}`);
      this.ns[s] = n.name;
      // Torn down in the reverse order: the pool (its pods force-deleted), then the namespace; the
      // namespace even when the pool was never made.
      this.cleanups.push(async () => {
        await this.pools[s]?.cleanup().catch(() => undefined);
        await n.cleanup();
      });
      this.pools[s] = await createNodePool(uniqueName(`${this.prefix.slice(0, 2)}-${s}`), this.nodesFor(s), this.poolFor(s));
    });
    this.operator = await OperatorProcess.start({ namespaces: this.scenarios.map((s) => this.ns[s]) });
  }

  async tearDown(): Promise<void> {
    if (this.operator) await this.operator.stop();
    await eachLimited(this.cleanups.splice(0), SCENARIO_SETUP_CONCURRENCY, (c) => c().catch(() => undefined));
  }

  /**
   * Scenario `s`'s `decoder` DaemonSet rolled out on its pool (image `registry.local/decoder:1` unless
   * `extra` says otherwise), then a guard with `spec`, once Healthy. Returns the namespace and the guard.
   */
  async guarded(s: S, spec: Record<string, unknown>, extra: Partial<DecoderDaemonSetOptions> = {}): Promise<{ n: string; g: GuardObj }> {
    const n = this.ns[s];
    await apply(decoderDaemonSet({ name: 'decoder', ns: n, pool: this.pools[s].name, image: 'registry.local/decoder:1', ...extra }));
    await this.read.availableOn(n, this.pools[s].nodes.length);
    await apply(guard('decoder', n, 'decoder', spec));
    const g = await this.read.waitGuard(n, (x) => x.status?.state === 'Healthy', 'Healthy');
    return { n, g };
  }
}
