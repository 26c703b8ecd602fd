/**
 * `rollout-guard check ds/NAME -n NS`: the operator's observe-and-decide logic without the operator,
 * for CI pipelines where `kubectl rollout status` would hang. It watches one DaemonSet through the same
 * informers and the same pure decide(), prints the per-node split as it changes, and exits:
 *
 *   0  the rollout completed (updated = available = desired, no node lost)
 *   1  an internal error (cannot reach the API server, …)
 *   2  usage error
 *   3  the rollout stalled (no progress for --deadline); the cause is printed
 *   4  the DaemonSet does not exist
 *   5  the DaemonSet cannot be checked by deadline (updateStrategy OnDelete)
 */
import type { Logger } from 'pino';
import { decide } from './domain/stateMachine.js';
import { fmtRev } from './domain/messages.js';
import type { GuardSpec, GuardStatus } from './domain/types.js';
import { ApiClient } from './k8s/apiClient.js';
import { Informer } from './k8s/informer.js';
import { loadKubeConfig } from './k8s/kubeConfig.js';
import { HASH_LABEL, controllerOf, slimDaemonSet, slimNode, slimPod, slimRevision } from './k8s/slim.js';
import type { SlimDaemonSet, SlimNode, SlimPod, SlimRevision } from './k8s/slim.js';
import { TargetMemory, gather, type CacheView } from './reconcile/gather.js';
import { systemClock, type Clock } from './runtime/clock.js';
import { UsageError } from './runtime/config.js';
import { createLogger } from './runtime/logger.js';

/** Exit codes shared by every subcommand. */
export const ExitCode = { Ok: 0, Failure: 1, Usage: 2, Stalled: 3, NotFound: 4, NotGuardable: 5 } as const;

export interface CheckOptions {
  name: string;
  namespace: string;
  deadlineSeconds: number;
  suspectSeconds: number;
  output: 'text' | 'json';
  kubeconfig?: string;
}

/** "90", "90s", "5m", "1h" → seconds. */
export function parseDuration(flag: string, v: string): number {
  const m = /^(\d+)(s|m|h)?$/.exec(v.trim());
  if (!m) throw new UsageError(`${flag} wants a duration like 90s, 5m or 1h, got ${JSON.stringify(v)}`);
  const n = Number(m[1]);
  const mult = m[2] === 'h' ? 3600 : m[2] === 'm' ? 60 : 1;
  return n * mult;
}

export function parseCheckArgs(args: readonly string[]): CheckOptions {
  let target: string | undefined;
  let namespace = 'default';
  let deadline = 600;
  let suspect: number | undefined;
  let output: 'text' | 'json' = 'text';
  let kubeconfig: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = (): string => {
      const v = inline ?? args[++i];
      if (v === undefined) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '-n':
      case '--namespace':
        namespace = value();
        break;
      case '--deadline':
        deadline = parseDuration(flag, value());
        break;
      case '--suspect':
        suspect = parseDuration(flag, value());
        break;
      case '-o':
      case '--output': {
        const o = value();
        if (o !== 'text' && o !== 'json') throw new UsageError(`--output wants text or json, got ${JSON.stringify(o)}`);
        output = o;
        break;
      }
      case '--kubeconfig':
        kubeconfig = value();
        break;
      default:
        if (a.startsWith('-')) throw new UsageError(`unknown flag ${a}`);
        if (target) throw new UsageError(`only one target, got ${target} and ${a}`);
        target = a;
    }
  }
  if (!target) throw new UsageError('check needs a target: ds/NAME');
  const m = /^(?:ds|daemonset|daemonsets|daemonset\.apps)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/.exec(target);
  if (!m?.[1]) throw new UsageError(`target must look like ds/NAME, got ${JSON.stringify(target)}`);
  if (deadline < 2) throw new UsageError('--deadline must be at least 2s');
  const suspectSeconds = suspect ?? Math.max(1, Math.floor(deadline / 5));
  if (suspectSeconds >= deadline) throw new UsageError('--suspect must be shorter than --deadline');
  const opts: CheckOptions = { name: m[1], namespace, deadlineSeconds: deadline, suspectSeconds, output };
  if (kubeconfig) opts.kubeconfig = kubeconfig;
  return opts;
}

/** A line per node: "node-3  revision 2 (abc)  ImagePullBackOff". */
function splitLines(s: GuardStatus): string[] {
  const lines: string[] = [];
  for (const g of s.generations ?? []) lines.push(`  ${fmtRev(g)}: ${g.nodes} node(s), ${g.ready} ready, images ${g.images.join(',')}`);
  for (const b of s.blockedNodes ?? []) lines.push(`  blocked ${b.node}: ${b.reason}${b.message ? ` — ${b.message}` : ''}`);
  for (const e of s.emptyNodes ?? []) lines.push(`  empty   ${e.node}: ${e.message}`);
  return lines;
}

/** Runs the check until the rollout completes or stalls. Exposed with injectable parts for tests. */
export async function check(opts: CheckOptions, client: ApiClient, clock: Clock, log: Logger, out: (line: string) => void): Promise<number> {
  const ns = encodeURIComponent(opts.namespace);
  const common = { watchTimeoutSeconds: 300, backoff: { initialMs: 500, maxMs: 10_000 } };
  const dsInf = new Informer<SlimDaemonSet>(client, { name: 'daemonsets', listPath: `/apis/apps/v1/namespaces/${ns}/daemonsets`, fieldSelector: `metadata.name=${opts.name}`, slim: slimDaemonSet, ...common }, log);
  const podInf = new Informer<SlimPod>(client, { name: 'pods', listPath: `/api/v1/namespaces/${ns}/pods`, labelSelector: HASH_LABEL, slim: slimPod, ...common }, log);
  const revInf = new Informer<SlimRevision>(client, { name: 'controllerrevisions', listPath: `/apis/apps/v1/namespaces/${ns}/controllerrevisions`, slim: slimRevision, ...common }, log);
  const nodeInf = new Informer<SlimNode>(client, { name: 'nodes', listPath: '/api/v1/nodes', slim: slimNode, ...common }, log);
  const owner = (o: SlimPod | SlimRevision): string[] => {
    const c = controllerOf(o.metadata, 'DaemonSet');
    return c ? [c.uid] : [];
  };
  podInf.addIndex('owner', owner);
  revInf.addIndex('owner', owner);
  const informers = [dsInf, podInf, revInf, nodeInf] as const;

  let wake: (() => void) | undefined;
  const poke = (): void => wake?.();
  dsInf.onEvent(poke);
  podInf.onEvent(poke);
  revInf.onEvent(poke);
  nodeInf.onEvent(poke);

  const cache: CacheView = {
    daemonSet: (n, name) => dsInf.get(n, name),
    podsOwnedBy: (uid) => podInf.byIndex('owner', uid),
    revisionsOwnedBy: (uid) => revInf.byIndex('owner', uid),
    nodes: () => nodeInf.list(),
  };
  const spec: GuardSpec = {
    targetRef: { kind: 'DaemonSet', name: opts.name },
    suspectAfterSeconds: opts.suspectSeconds,
    progressDeadlineSeconds: opts.deadlineSeconds,
    onStall: { action: 'Report', delaySeconds: 0 },
    suspend: false,
  };
  const memory = new TargetMemory();
  const key = `${opts.namespace}/${opts.name}`;
  let status: GuardStatus = {};
  let lastPrinted = '';
  const started = clock.now();

  for (const i of informers) i.start();
  try {
    await Promise.all(informers.map((i) => i.waitForSync()));
    for (;;) {
      const now = clock.now();
      const obs = gather(cache, memory, key, opts.namespace, opts.name, now);
      const d = decide(obs, status, { spec, generation: 1 }, now);
      status = d.status;
      const snapshot = JSON.stringify([status.state, status.cause, status.generations, status.blockedNodes, status.emptyNodes, status.desired, status.updated, status.available]);
      if (opts.output === 'text' && snapshot !== lastPrinted) {
        lastPrinted = snapshot;
        const t = ((now - started) / 1000).toFixed(0).padStart(4);
        out(`[${t}s] ${status.state ?? 'Unknown'}  desired ${status.desired ?? 0}  updated ${status.updated ?? 0}  ready ${status.ready ?? 0}  available ${status.available ?? 0}${status.cause ? `  cause ${status.cause}` : ''}`);
        for (const l of splitLines(status)) out(l);
      }
      const finish = (code: number, verdict: string): number => {
        if (opts.output === 'json') out(JSON.stringify({ verdict, exitCode: code, target: key, elapsedSeconds: Math.round((now - started) / 1000), status }, null, 2));
        else out(`${verdict}: ${status.message ?? ''}`);
        return code;
      };
      if (obs.kind === 'TargetMissing') return finish(ExitCode.NotFound, 'not found');
      if (obs.ds.strategy === 'OnDelete') return finish(ExitCode.NotGuardable, 'not checkable');
      if (status.state === 'Healthy' && status.cause !== 'NoNodesMatched') return finish(ExitCode.Ok, 'rollout complete');
      if (status.state === 'Stalled' || status.cause === 'NoNodesMatched') return finish(ExitCode.Stalled, 'rollout stalled');
      // Wait for a cache change or the next deadline, whichever comes first.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, d.requeueAfterMs ?? 30_000);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    await Promise.allSettled(informers.map((i) => i.stop()));
  }
}

/** Entry point of `rollout-guard check`. */
export async function runCheck(args: readonly string[]): Promise<number> {
  const opts = parseCheckArgs(args);
  const log = createLogger(process.env.LOG_LEVEL ?? 'warn');
  const client = ApiClient.fromKubeConfig(loadKubeConfig(opts.kubeconfig));
  try {
    return await check(opts, client, systemClock, log, (l) => console.log(l));
  } catch (e) {
    console.error(`rollout-guard check: ${e instanceof Error ? e.message : String(e)}`);
    return ExitCode.Failure;
  }
}
