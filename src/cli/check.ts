/**
 * `rollout-guard check ds/NAME -n NS`: the operator's observe-and-decide logic without the operator,
 * for CI pipelines where `kubectl rollout status` would hang. It watches one DaemonSet through the same
 * informers and the same pure decide(), prints the per-node split as it changes, and exits:
 *
 *   0  the rollout completed (updated = available = desired once the controller has observed the
 *      current generation, no node lost)
 *   1  an internal error (cannot reach the API server, RBAC forbids a read, …); reported at once
 *      rather than retried forever, since a pipeline waiting on check must not hang
 *   2  usage error
 *   3  the rollout stalled (no progress for --deadline); the cause is printed
 *   4  the DaemonSet does not exist (at the start, or deleted during the check)
 *   5  the DaemonSet cannot be checked by deadline (updateStrategy OnDelete)
 */
import { pino, type Logger } from 'pino';
import { GUARD_DEFAULTS } from '../api/defaults.js';
import { fmtDuration, fmtRev } from '../domain/messages.js';
import type { Decision } from '../domain/decision.js';
import type { GuardSpec, GuardStatus } from '../api/types.js';
import type { Observation } from '../domain/observation.js';
import type { GuardPolicy } from '../domain/decide/pass.js';
import { ApiClient, isNotFound, summarizeError } from '../k8s/apiClient.js';
import { Informer } from '../k8s/informer.js';
import { loadConnection, type Connection } from '../k8s/kubeConfig.js';
import { controllerRevisionsPath, daemonSetsPath, nodesPath, podsPath } from '../k8s/apiPaths.js';
import { slimDaemonSet, slimNode, slimPod, slimRevision } from '../k8s/slim.js';
import { DAEMONSET_KIND, HASH_LABEL } from '../api/names.js';
import { controllerOf, type SlimDaemonSet, type SlimNode, type SlimPod, type SlimRevision } from '../api/objects.js';
import { GuardPass } from '../reconcile/guardPass.js';
import type { CacheView } from '../reconcile/ports.js';
import { systemClock, type Clock } from '../runtime/clock.js';
import { UsageError } from '../runtime/config.js';
import { CONNECTION_FLAGS, CONNECTION_USAGE, connectionOf, duration, outputFormat, parseArgs, text, wantsHelp } from './args.js';

/** Exit codes shared by every subcommand. */
export const ExitCode = { Ok: 0, Failure: 1, Usage: 2, Stalled: 3, NotFound: 4, NotGuardable: 5 } as const;

export interface CheckOptions extends Connection {
  name: string;
  /** Absent: the kubeconfig context's namespace, else `default`, as kubectl. */
  namespace?: string;
  deadlineSeconds: number;
  suspectSeconds: number;
  output: 'text' | 'json';
}

/** Re-exported: the demo and the tests read durations through the check module. */
export { parseDuration } from './args.js';

/** Usage of the check subcommand, printed by `check --help`. */
export const CHECK_USAGE = `usage: rollout-guard check ds/NAME [-n NAMESPACE] [--deadline 10m] [--suspect 2m] [--output text|json]
         ${CONNECTION_USAGE}

Watches one DaemonSet rollout and exits when it completes or stalls (no progress for --deadline).
  --deadline   time without progress before the rollout counts as stalled (default 10m)
  --suspect    time without progress before it is reported as suspect (default deadline/5)
  --output     text (default: the per-node split as it changes) or json (one document at the end)
  -n           the namespace (default: the kubeconfig context's, else default)
  --kubeconfig, --context, --cluster, --user   as kubectl's (a --kubeconfig list is merged as kubectl merges $KUBECONFIG)
exit codes: 0 complete, 1 error, 2 usage, 3 stalled, 4 DaemonSet not found, 5 updateStrategy OnDelete`;

/** The flags of `check`; see {@link CHECK_USAGE}. */
const CHECK_FLAGS = {
  namespace: { names: ['-n', '--namespace'], value: text },
  deadline: { names: ['--deadline'], value: duration },
  suspect: { names: ['--suspect'], value: duration },
  output: { names: ['-o', '--output'], value: outputFormat },
  ...CONNECTION_FLAGS,
} as const;

export function parseCheckArgs(args: readonly string[]): CheckOptions {
  const { target, flags } = parseArgs(args, CHECK_FLAGS);
  const { namespace, deadline = 600, suspect, output = 'text' } = flags;
  if (!target) throw new UsageError('check needs a target: ds/NAME');
  // The resource part is case-insensitive, as in kubectl (`DaemonSet/x` works there); the name is not.
  const m = /^(?:ds|daemonsets?|daemonsets?\.apps)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/i.exec(target);
  if (m?.[1] && m[1] !== m[1].toLowerCase()) throw new UsageError(`a DaemonSet name is lowercase, got ${JSON.stringify(m[1])}`);
  if (!m?.[1]) throw new UsageError(`target must look like ds/NAME, got ${JSON.stringify(target)}`);
  if (deadline < 2) throw new UsageError('--deadline must be at least 2s');
  const suspectSeconds = suspect ?? Math.max(1, Math.floor(deadline / 5));
  if (suspectSeconds >= deadline) throw new UsageError('--suspect must be shorter than --deadline');
  const opts: CheckOptions = { name: m[1], deadlineSeconds: deadline, suspectSeconds, output, ...connectionOf(flags) };
  if (namespace !== undefined) opts.namespace = namespace;
  return opts;
}

/** The split: one line per revision present, then one per blocked or empty node. */
function splitLines(s: GuardStatus): string[] {
  const lines: string[] = [];
  for (const g of s.generations ?? []) lines.push(`  ${fmtRev(g)}: ${g.nodes} node(s), ${g.ready} ready, images ${g.images.join(',')}`);
  for (const b of s.blockedNodes ?? []) lines.push(`  blocked ${b.node}: ${b.reason}${b.message ? ` — ${b.message}` : ''}`);
  for (const e of s.emptyNodes ?? []) lines.push(`  empty   ${e.node}: ${e.message}`);
  return lines;
}

/** How a check ends: the exit code, a short verdict and the sentence explaining it. */
export interface Verdict {
  code: number;
  verdict: string;
  message: string;
}

/**
 * The check's end condition for one pass, or undefined to keep watching. Pure, so the rules are unit-tested.
 *
 * `unobservedForMs` is how long the DaemonSet controller has not observed the current generation: until it
 * has, the DaemonSet's counters describe the previous template, and decide() (which tracks no rollout yet
 * on a first pass) reports Healthy. Right after `kubectl apply` or `kubectl set image`, which is exactly
 * when a pipeline runs `check`, that would be a false "complete"; kubectl rollout status waits for
 * observedGeneration for the same reason.
 */
export function verdictOf(obs: Observation, status: GuardStatus, unobservedForMs: number, deadlineMs: number): Verdict | undefined {
  if (obs.kind === 'TargetMissing')
    return { code: ExitCode.NotFound, verdict: 'not found', message: status.message ?? `DaemonSet ${obs.targetName} not found` };
  const ds = obs.ds;
  if (ds.strategy === 'OnDelete')
    return { code: ExitCode.NotGuardable, verdict: 'not checkable', message: status.message ?? 'updateStrategy OnDelete' };
  const msg = status.message ?? '';
  if (status.state === 'Stalled' || status.cause === 'NoNodesMatched')
    return { code: ExitCode.Stalled, verdict: 'rollout stalled', message: msg };
  // The new revision crashes after starting on Ready nodes: a pipeline should stop here, not at the deadline.
  if (status.state === 'Failed') return { code: ExitCode.Stalled, verdict: 'revision failed', message: msg };
  if (ds.observedGeneration < ds.generation) {
    if (unobservedForMs < deadlineMs) return undefined;
    return {
      code: ExitCode.Stalled,
      verdict: 'rollout stalled',
      message: `The DaemonSet controller has not observed generation ${ds.generation} for ${fmtDuration(unobservedForMs)} (observed ${ds.observedGeneration}): is kube-controller-manager running?`,
    };
  }
  if (status.state === 'Healthy') return { code: ExitCode.Ok, verdict: 'rollout complete', message: msg };
  return undefined;
}

/**
 * Fails fast, with the API server's words, when the DaemonSet `namespace/name` is missing or a collection
 * cannot be read. Shared with `rollout-guard get`.
 */
export async function preflight(
  client: ApiClient,
  target: { namespace: string; name: string },
  paths: readonly string[],
): Promise<Verdict | undefined> {
  try {
    await client.request('GET', daemonSetsPath(target.namespace, target.name));
  } catch (e) {
    if (isNotFound(e)) {
      return {
        code: ExitCode.NotFound,
        verdict: 'not found',
        message: `DaemonSet ${target.name} not found in namespace ${target.namespace}`,
      };
    }
    throw e;
  }
  // The informers would retry a 403 forever with backoff, and a CI job would hang: the one thing check
  // exists to prevent. One cheap list per collection turns a missing RBAC rule into an error at once.
  for (const p of paths) await client.request('GET', p, { query: { limit: 1 } });
  return undefined;
}

/** How long check waits for the first list of every collection before giving up. */
export const SYNC_TIMEOUT_MS = 30_000;

/**
 * The spec check judges a rollout by: its deadlines, Report only, no bake. `rollout-guard get ds/…` uses
 * it with check's default deadlines.
 */
export function checkSpec(name: string, deadlineSeconds: number, suspectSeconds: number): GuardSpec {
  return {
    targetRef: { kind: DAEMONSET_KIND, name },
    suspectAfterSeconds: suspectSeconds,
    progressDeadlineSeconds: deadlineSeconds,
    onStall: { action: 'Report', delaySeconds: 0 },
    failedNodesThreshold: GUARD_DEFAULTS.failedNodesThreshold,
    // A pipeline step ends when the rollout does; crashes after that are the operator's to catch.
    bakeSeconds: 0,
    suspend: false,
  };
}

/**
 * One DaemonSet observed the way the operator observes it, without the operator: its own informers over
 * the DaemonSet, the namespace's daemon pods and ControllerRevisions and the nodes, then gather and the
 * pure decide on each pass. `rollout-guard check` and `rollout-guard get` both run on it.
 */
export class DaemonSetObserver {
  /** The collections read; {@link preflight} lists each once before the informers start. */
  readonly paths: { ds: string; pods: string; revs: string; nodes: string };
  private readonly informers: readonly [Informer<SlimDaemonSet>, Informer<SlimPod>, Informer<SlimRevision>, Informer<SlimNode>];
  private readonly cache: CacheView;
  private readonly guardPass: GuardPass;

  constructor(
    client: ApiClient,
    namespace: string,
    private readonly name: string,
    log: Logger,
  ) {
    // check judges the DaemonSet as a guard of the same name in its namespace would.
    this.guardPass = new GuardPass(`${namespace}/${name}`);
    const common = { watchTimeoutSeconds: 300, backoff: { initialMs: 500, maxMs: 10_000 } };
    this.paths = {
      ds: daemonSetsPath(namespace),
      pods: podsPath(namespace),
      revs: controllerRevisionsPath(namespace),
      nodes: nodesPath(),
    };
    const dsInf = new Informer<SlimDaemonSet>(
      client,
      { name: 'daemonsets', listPath: this.paths.ds, fieldSelector: `metadata.name=${name}`, slim: slimDaemonSet, ...common },
      log,
    );
    const podInf = new Informer<SlimPod>(
      client,
      { name: 'pods', listPath: this.paths.pods, labelSelector: HASH_LABEL, slim: slimPod, ...common },
      log,
    );
    const revInf = new Informer<SlimRevision>(
      client,
      { name: 'controllerrevisions', listPath: this.paths.revs, slim: slimRevision, ...common },
      log,
    );
    const nodeInf = new Informer<SlimNode>(client, { name: 'nodes', listPath: this.paths.nodes, slim: slimNode, ...common }, log);
    const owner = (o: SlimPod | SlimRevision): string[] => {
      const c = controllerOf(o.metadata, DAEMONSET_KIND);
      return c ? [c.uid] : [];
    };
    podInf.addIndex('owner', owner);
    revInf.addIndex('owner', owner);
    this.informers = [dsInf, podInf, revInf, nodeInf];
    this.cache = {
      daemonSet: (n, nm) => dsInf.get(n, nm),
      podsOwnedBy: (uid) => podInf.byIndex('owner', uid),
      revisionsOwnedBy: (uid) => revInf.byIndex('owner', uid),
      nodes: () => nodeInf.list(),
    };
  }

  /** Calls `fn` after every change to any of the caches. Register before {@link start}. */
  onChange(fn: () => void): void {
    for (const i of this.informers) i.onEvent(fn);
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
    const r = this.guardPass.observe(this.cache, { targetName: this.name, prev: status, policy, now });
    // The check lists every pod of its DaemonSet itself: its cache is never without them.
    if (r.kind === 'PodsPending') throw new Error(`the pods of DaemonSet ${r.daemonSet} are not cached`);
    // The check keeps its status in memory: it is "persisted" as soon as it is decided. A one-shot check
    // has its own deadline and no informers to relist, so only decide's own cache-wait limit matters,
    // and it writes nothing, so there is no write to hold.
    r.commit();
    return { obs: r.obs, decision: r.decision };
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.informers.map((i) => i.stop()));
  }
}

/** Runs the check until the rollout completes or stalls. Exposed with injectable parts for tests. */
export async function check(
  opts: CheckOptions & { namespace: string },
  client: ApiClient,
  clock: Clock,
  log: Logger,
  out: (line: string) => void,
): Promise<number> {
  const key = `${opts.namespace}/${opts.name}`;
  const started = clock.now();
  const finish = (v: Verdict, status: GuardStatus, now: number): number => {
    if (opts.output === 'json') {
      out(
        JSON.stringify(
          {
            verdict: v.verdict,
            exitCode: v.code,
            target: key,
            message: v.message,
            elapsedSeconds: Math.round((now - started) / 1000),
            status,
          },
          null,
          2,
        ),
      );
      return v.code;
    }
    // decide() words the undo plan for a guard in Report mode; check has no onStall setting to point at.
    out(`${v.verdict}: ${v.message.replace(' (onStall.action is Report).', '.')}`);
    const plan = status.undoPlan;
    if (v.code === ExitCode.Stalled && plan?.toRevision !== undefined) {
      out(`to undo: kubectl rollout undo daemonset/${opts.name} -n ${opts.namespace} --to-revision=${plan.toRevision}`);
    }
    return v.code;
  };

  const observer = new DaemonSetObserver(client, opts.namespace, opts.name, log);
  const early = await preflight(client, opts, Object.values(observer.paths));
  if (early) return finish(early, {}, clock.now());

  let wake: (() => void) | undefined;
  observer.onChange(() => wake?.());
  const spec = checkSpec(opts.name, opts.deadlineSeconds, opts.suspectSeconds);
  const deadlineMs = opts.deadlineSeconds * 1000;
  let status: GuardStatus = {};
  let lastPrinted = '';
  let unobservedSince: number | undefined;

  observer.start();
  try {
    await observer.synced();
    for (;;) {
      const now = clock.now();
      const { obs, decision: d } = observer.pass(status, { spec, generation: 1 }, now);
      status = d.status;
      const unobserved = obs.kind === 'Target' && obs.ds.observedGeneration < obs.ds.generation;
      if (!unobserved) unobservedSince = undefined;
      else unobservedSince ??= now;
      const unobservedForMs = unobservedSince === undefined ? 0 : now - unobservedSince;
      const snapshot = JSON.stringify([
        status.state,
        status.cause,
        status.generations,
        status.blockedNodes,
        status.emptyNodes,
        status.desired,
        status.updated,
        status.available,
      ]);
      if (opts.output === 'text' && snapshot !== lastPrinted) {
        lastPrinted = snapshot;
        const t = ((now - started) / 1000).toFixed(0).padStart(4);
        // "Healthy" before the controller has seen the new template would contradict the verdict that follows.
        const state = unobserved && status.state === 'Healthy' ? 'Waiting' : (status.state ?? 'Unknown');
        out(
          `[${t}s] ${state}  desired ${status.desired ?? 0}  updated ${status.updated ?? 0}  ready ${status.ready ?? 0}  available ${status.available ?? 0}${status.cause ? `  cause ${status.cause}` : ''}`,
        );
        for (const l of splitLines(status)) out(l);
      }
      const v = verdictOf(obs, status, unobservedForMs, deadlineMs);
      if (v) return finish(v, status, now);
      // Wait for a cache change or the next deadline, whichever comes first.
      let waitMs = d.requeueAfterMs ?? 30_000;
      if (unobserved) waitMs = Math.min(waitMs, Math.max(500, deadlineMs - unobservedForMs + 100));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    await observer.stop();
  }
}

/** Entry point of `rollout-guard check`. */
export async function runCheck(args: readonly string[]): Promise<number> {
  if (wantsHelp(args)) {
    console.log(CHECK_USAGE);
    return ExitCode.Ok;
  }
  const opts = parseCheckArgs(args);
  // Logs go to stderr: stdout carries the check's own output, which must stay parseable with --output json.
  const log = pino(
    { level: process.env.LOG_LEVEL ?? 'warn', base: { component: 'rollout-guard-check' }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination(2),
  );
  let client: ApiClient;
  let namespace: string;
  try {
    const c = loadConnection(opts);
    client = ApiClient.fromKubeConfig(c.kc);
    namespace = opts.namespace ?? c.namespace;
  } catch (e) {
    console.error(`rollout-guard check: cannot load kubeconfig${opts.kubeconfig ? ` ${opts.kubeconfig}` : ''}: ${summarizeError(e)}`);
    return ExitCode.Failure;
  }
  try {
    return await check({ ...opts, namespace }, client, systemClock, log, (l) => console.log(l));
  } catch (e) {
    console.error(`rollout-guard check: ${summarizeError(e)}`);
    return ExitCode.Failure;
  } finally {
    client.close();
  }
}
