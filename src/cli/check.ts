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
import type { Logger } from 'pino';
import type { GuardStatus, TargetKind } from '../api/types.js';
import { DEFAULT_KIND, kindOfResource } from '../api/kinds.js';
import { wordsOf } from '../domain/kindWords.js';
import { fmtDuration, fmtRev } from '../domain/messages.js';
import type { Observation } from '../domain/observation.js';
import { summarizeError } from '../k8s/apiErrors.js';
import { type ApiClient } from '../k8s/apiClient.js';
import type { Connection } from '../k8s/kubeConfig.js';
import { systemClock } from '../runtime/clock.js';
import { type Clock } from '../reconcile/ports.js';
import { UsageError } from '../runtime/config.js';
import {
  CONNECTION_FLAGS,
  CONNECTION_HELP,
  CONNECTION_USAGE,
  connectionOf,
  duration,
  outputFormat,
  parseArgs,
  text,
  wantsHelp,
  type OutputFormat,
  workloadTargetPattern,
  formsSentence,
  WORKLOAD_FORMS,
} from './args.js';
import { ExitCode, connect, stderrLogger, type Verdict } from './command.js';
import { TargetObserver, checkSpec, preflight } from './observer.js';
import { emitYaml } from './yaml.js';

export interface CheckOptions extends Connection {
  kind: TargetKind;
  name: string;
  /** Absent: the kubeconfig context's namespace, else `default`, as kubectl. */
  namespace?: string;
  deadlineSeconds: number;
  suspectSeconds: number;
  output: OutputFormat;
}

/** Usage of the check subcommand, printed by `check --help`. */
export const CHECK_USAGE = `usage: rollout-guard check ${WORKLOAD_FORMS.join('|')} [-n NAMESPACE] [--deadline 10m] [--suspect 2m] [--output text|json|yaml]
         ${CONNECTION_USAGE}

Watches one DaemonSet rollout and exits when it completes or stalls (no progress for --deadline).
  --deadline   time without progress before the rollout counts as stalled (default 10m)
  --suspect    time without progress before it is reported as suspect (default deadline/5)
  --output     text (default: the per-node split as it changes), json or yaml (one document at the end)
  -n           the namespace (default: the kubeconfig context's, else default)
${CONNECTION_HELP}
exit codes: 0 complete, 1 error, 2 usage, 3 stalled, 4 DaemonSet not found, 5 updateStrategy OnDelete`;

/** The flags of `check`; see {@link CHECK_USAGE}. */
const CHECK_FLAGS = {
  namespace: { names: ['-n', '--namespace'], value: text },
  deadline: { names: ['--deadline'], value: duration },
  suspect: { names: ['--suspect'], value: duration },
  output: { names: ['-o', '--output'], value: outputFormat },
  ...CONNECTION_FLAGS,
} as const;

/** `ds/NAME`, `sts/NAME`, … (any name of the resource, as kubectl takes it; the name a DNS subdomain, checked lowercase below). */
const CHECK_TARGET = workloadTargetPattern('[a-z0-9]([-a-z0-9.]*[a-z0-9])?');

export function parseCheckArgs(args: readonly string[]): CheckOptions {
  const { target, flags } = parseArgs(args, CHECK_FLAGS);
  const { namespace, deadline = 600, suspect, output = 'text' } = flags;
  if (!target) throw new UsageError(`check needs a target: ${formsSentence()}`);
  // The resource part is case-insensitive, as in kubectl (`DaemonSet/x` works there); the name is not.
  const m = CHECK_TARGET.exec(target);
  const kind = m ? kindOfResource(m[1]!) : undefined;
  if (kind && m?.[2] && m[2] !== m[2].toLowerCase()) throw new UsageError(`a ${kind} name is lowercase, got ${JSON.stringify(m[2])}`);
  if (!kind || !m?.[2]) throw new UsageError(`target must look like ${formsSentence()}, got ${JSON.stringify(target)}`);
  if (deadline < 2) throw new UsageError('--deadline must be at least 2s');
  const suspectSeconds = suspect ?? Math.max(1, Math.floor(deadline / 5));
  if (suspectSeconds >= deadline) throw new UsageError('--suspect must be shorter than --deadline');
  const opts: CheckOptions = { kind, name: m[2], deadlineSeconds: deadline, suspectSeconds, output, ...connectionOf(flags) };
  if (namespace !== undefined) opts.namespace = namespace;
  return opts;
}

/** The split: one line per revision present, then one per blocked or empty node. */
function splitLines(s: GuardStatus, kind: TargetKind): string[] {
  const lines: string[] = [];
  const unit = `${wordsOf(kind).unit}(s)`;
  for (const g of s.generations ?? []) lines.push(`  ${fmtRev(g)}: ${g.nodes} ${unit}, ${g.ready} ready, images ${g.images.join(',')}`);
  for (const b of s.blockedNodes ?? []) lines.push(`  blocked ${b.node}: ${b.reason}${b.message ? ` — ${b.message}` : ''}`);
  for (const e of s.emptyNodes ?? []) lines.push(`  empty   ${e.node}: ${e.message}`);
  return lines;
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
export function verdictOf(
  obs: Observation,
  status: GuardStatus,
  unobservedForMs: number,
  deadlineMs: number,
  kind: TargetKind = DEFAULT_KIND,
): Verdict | undefined {
  if (obs.kind === 'TargetMissing')
    return { code: ExitCode.NotFound, verdict: 'not found', message: status.message ?? `${kind} ${obs.targetName} not found` };
  // A target being deleted has no rollout left to finish: as good as gone.
  if (obs.kind === 'TargetDeleting')
    return { code: ExitCode.NotFound, verdict: 'being deleted', message: status.message ?? `${kind} ${obs.targetName} is being deleted` };
  const ds = obs.target;
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
      message: `The ${kind} controller has not observed generation ${ds.generation} for ${fmtDuration(unobservedForMs)} (observed ${ds.observedGeneration}): is kube-controller-manager running?`,
    };
  }
  if (status.state === 'Healthy') return { code: ExitCode.Ok, verdict: 'rollout complete', message: msg };
  return undefined;
}

/** What a progress line shows: a new one is printed only when this changes. */
function progressKey(s: GuardStatus): string {
  return JSON.stringify([s.state, s.cause, s.generations, s.blockedNodes, s.emptyNodes, s.desired, s.updated, s.available]);
}

/** The progress line of one pass, `elapsedMs` into the check, then the split under it. */
function progressLines(s: GuardStatus, unobserved: boolean, elapsedMs: number, kind: TargetKind): string[] {
  const t = (elapsedMs / 1000).toFixed(0).padStart(4);
  // "Healthy" before the controller has seen the new template would contradict the verdict that follows.
  const state = unobserved && s.state === 'Healthy' ? 'Waiting' : (s.state ?? 'Unknown');
  return [
    `[${t}s] ${state}  desired ${s.desired ?? 0}  updated ${s.updated ?? 0}  ready ${s.ready ?? 0}  available ${s.available ?? 0}${s.cause ? `  cause ${s.cause}` : ''}`,
    ...splitLines(s, kind),
  ];
}

/** What the check prints when it ends with `v`: one JSON document, or the verdict and how to undo a stall. */
function verdictLines(opts: CheckOptions & { namespace: string }, v: Verdict, status: GuardStatus, elapsedMs: number): string[] {
  if (opts.output !== 'text') {
    const doc = {
      verdict: v.verdict,
      exitCode: v.code,
      target: `${opts.namespace}/${opts.name}`,
      message: v.message,
      elapsedSeconds: Math.round(elapsedMs / 1000),
      status,
    };
    return [opts.output === 'yaml' ? emitYaml(doc).trimEnd() : JSON.stringify(doc, null, 2)];
  }
  // decide() words the undo plan for a guard in Report mode; check has no onStall setting to point at.
  const lines = [`${v.verdict}: ${v.message.replace(' (onStall.action is Report).', '.')}`];
  const plan = status.undoPlan;
  if (v.code === ExitCode.Stalled && plan?.toRevision !== undefined) {
    lines.push(
      `to undo: kubectl rollout undo ${opts.kind.toLowerCase()}/${opts.name} -n ${opts.namespace} --to-revision=${plan.toRevision}`,
    );
  }
  return lines;
}

/** Runs the check until the rollout completes or stalls. Exposed with injectable parts for tests. */
export async function check(
  opts: CheckOptions & { namespace: string },
  client: ApiClient,
  clock: Clock,
  log: Logger,
  out: (line: string) => void,
): Promise<number> {
  const started = clock.now();
  const finish = (v: Verdict, status: GuardStatus, now: number): number => {
    for (const l of verdictLines(opts, v, status, now - started)) out(l);
    return v.code;
  };

  const observer = new TargetObserver(client, opts, log);
  const early = await preflight(client, opts, Object.values(observer.paths));
  if (early) return finish(early, {}, clock.now());

  const spec = checkSpec(opts.kind, opts.name, opts.deadlineSeconds, opts.suspectSeconds);
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
      const unobserved = obs.kind === 'Target' && obs.target.observedGeneration < obs.target.generation;
      if (!unobserved) unobservedSince = undefined;
      else unobservedSince ??= now;
      const unobservedForMs = unobservedSince === undefined ? 0 : now - unobservedSince;
      const key = progressKey(status);
      if (opts.output === 'text' && key !== lastPrinted) {
        lastPrinted = key;
        for (const l of progressLines(status, unobserved, now - started, opts.kind)) out(l);
      }
      const v = verdictOf(obs, status, unobservedForMs, deadlineMs, opts.kind);
      if (v) return finish(v, status, now);
      // Wait for a cache change or the next deadline, whichever comes first.
      let waitMs = d.requeueAfterMs ?? 30_000;
      if (unobserved) waitMs = Math.min(waitMs, Math.max(500, deadlineMs - unobservedForMs + 100));
      await observer.nextChange(waitMs);
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
  const log = stderrLogger('rollout-guard-check');
  const conn = connect('rollout-guard check', opts);
  if (!conn) return ExitCode.Failure;
  const { client, namespace } = conn;
  try {
    return await check({ ...opts, namespace }, client, systemClock, log, (l) => console.log(l));
  } catch (e) {
    console.error(`rollout-guard check: ${summarizeError(e)}`);
    return ExitCode.Failure;
  } finally {
    client.close();
  }
}
