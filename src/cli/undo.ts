/**
 * `rollout-guard undo rg/NAME | NAME | ds/NAME [-n NS] [--dry-run]`: the undo the operator makes, made
 * now, by a person. The DaemonSet is observed with the one observer and judged by decide with the guard's
 * spec in Undo mode without delay, over the guard's status (undoPlan.ts); the undo goes through the
 * operator's own port (k8s/templateUndo.ts), with all its re-checks, and writes the DaemonSet's undo
 * record annotation in the same patch as the template, so neither the operator nor any guard undoes that
 * revision again, and none restores it as if it were good.
 *
 * The operator writes its intent to the guard's status before the patch and the outcome after, because
 * that status is its memory across a crash. This command does not write the guard's status: that needs the
 * `rolloutguards/status` permission people are rarely given, and a second writer of one status would race
 * the operator's preconditioned writes. The durable record of the undo is the annotation, which every
 * guard reads before undoing; the operator's next pass then follows the restored revision (a return the
 * guard did not make is followed, never undone) and writes its status itself.
 *
 * ds/NAME is judged by the guard in charge of it (the oldest that targets it): without a guard there is
 * no history of the rollout to tell a stall from a start. Exit codes: 0 undone (or, with --dry-run, the
 * undo would be made), 1 error, 2 usage, 4 the guard or DaemonSet does not exist, 6 refused.
 */
import type { Logger } from 'pino';
import { withDefaults } from '../api/defaults.js';
import type { SlimGuard } from '../api/objects.js';
import { KINDS, kindOfResource, type TargetKind } from '../api/kinds.js';
import { isNotFound, summarizeError } from '../k8s/apiErrors.js';
import { type ApiClient } from '../k8s/apiClient.js';
import { guardsPath } from '../k8s/apiPaths.js';
import { TemplateUndo } from '../k8s/templateUndo.js';
import type { Connection } from '../k8s/kubeConfig.js';
import { slimGuard } from '../k8s/slim.js';
import type { ReconcilerPorts } from '../reconcile/ports.js';
import { systemClock } from '../runtime/clock.js';
import { UsageError } from '../runtime/config.js';
import {
  CONNECTION_FLAGS,
  CONNECTION_HELP,
  CONNECTION_USAGE,
  connectionOf,
  parseArgs,
  text,
  wantsHelp,
  workloadTargetPattern,
  WORKLOAD_FORMS,
} from './args.js';
import { ExitCode, connect, stderrLogger } from './command.js';
import { TargetObserver, preflight } from './observer.js';
import { guardOf, judgeUndo, outcomeVerdict, undoSpec, type UndoVerdict } from './undoPlan.js';

export interface UndoOptions extends Connection {
  /** The guard named (rg/NAME, NAME), or the kind of the workload named (ds/NAME, sts/NAME). */
  kind: 'RolloutGuard' | TargetKind;
  name: string;
  namespace?: string;
  dryRun: boolean;
}

/** Usage of the undo subcommand, printed by `undo --help`. */
/** Where the usage's descriptions start: past the longest target form. */
const WORKLOAD_COLUMN = Math.max(15, WORKLOAD_FORMS.join(', ').length + 2);

export const UNDO_USAGE = `usage: rollout-guard undo rg/NAME|NAME|${WORKLOAD_FORMS.join('|')} [-n NAMESPACE] [--dry-run] ${CONNECTION_USAGE}
       kubectl rollout-guard undo …

Undoes a stalled or failed rollout the way the operator does in onStall.action: Undo, now: judged by the
guard's spec and status, refused with the operator's reason where it would refuse (the stall blamed on
the nodes, no earlier revision, the workload annotated rolloutguard.dev/undo=disabled, already undone
once, …) and unless the operator's own status already blames this revision; then the workload's
template restored from the previous revision with the undo record annotation, so the operator never
undoes that revision again. The guard's status is left to the operator.
  ${'rg/NAME, NAME'.padEnd(WORKLOAD_COLUMN)}the RolloutGuard whose workload to undo
  ${WORKLOAD_FORMS.join(', ').padEnd(WORKLOAD_COLUMN)}the workload, judged by the guard in charge of it
  ${'--dry-run'.padEnd(WORKLOAD_COLUMN)}print the plan and ask the API server to validate the patch (dryRun=All); change nothing
  ${'-n'.padEnd(WORKLOAD_COLUMN)}the namespace (default: the kubeconfig context's, else default)
${CONNECTION_HELP}
exit codes: 0 undone (--dry-run: would be), 1 error, 2 usage, 4 not found, 6 refused`;

const UNDO_FLAGS = {
  namespace: { names: ['-n', '--namespace'], value: text },
  dryRun: { names: ['--dry-run'], switch: true },
  ...CONNECTION_FLAGS,
} as const;

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const WORKLOAD_TARGET = workloadTargetPattern('.+');

export function parseUndoArgs(args: readonly string[]): UndoOptions {
  const { target, flags } = parseArgs(args, UNDO_FLAGS);
  if (!target) throw new UsageError(`undo needs a target: rg/NAME (or the guard NAME) or ${WORKLOAD_FORMS.join(', ')}`);
  const workload = WORKLOAD_TARGET.exec(target);
  const kind = workload ? kindOfResource(workload[1]!) : undefined;
  const rg = /^(?:rg|rolloutguards?|rolloutguards?\.rolloutguard\.dev)\/(.+)$/i.exec(target);
  const name = workload?.[2] ?? rg?.[1] ?? (target.includes('/') ? undefined : target);
  if (name === undefined)
    throw new UsageError(`target must look like rg/NAME, NAME or ${WORKLOAD_FORMS.join(', ')}, got ${JSON.stringify(target)}`);
  if (!NAME.test(name)) throw new UsageError(`not a valid name: ${JSON.stringify(name)}`);
  const opts: UndoOptions = { kind: kind ?? 'RolloutGuard', name, dryRun: flags.dryRun ?? false, ...connectionOf(flags) };
  if (flags.namespace !== undefined) opts.namespace = flags.namespace;
  return opts;
}

/** The port undo writes through: the operator's (k8s/templateUndo.ts), or a fake in tests. */
export type UndoPort = Pick<ReconcilerPorts, 'undo' | 'dryRun'>;

/** The guards of the namespace, slim. */
async function readGuards(client: ApiClient, namespace: string): Promise<SlimGuard[]> {
  const list = await client.request<{ items?: unknown[] }>('GET', guardsPath(namespace));
  return (list?.items ?? []).map((g) => slimGuard(g));
}

/** The guard that judges, and the namespace's guards (to tell which one is in charge); or why none. */
async function resolveGuard(
  client: ApiClient,
  opts: UndoOptions & { namespace: string },
): Promise<{ guard: Readonly<SlimGuard>; guards: SlimGuard[] } | { code: number; message: string }> {
  const { namespace, name } = opts;
  let guards: SlimGuard[];
  try {
    guards = await readGuards(client, namespace);
  } catch (e) {
    if (isNotFound(e)) return { code: ExitCode.Failure, message: 'the API server has no RolloutGuards: is the CRD installed?' };
    throw e;
  }
  const guard = opts.kind === 'RolloutGuard' ? guards.find((g) => g.metadata.name === name) : guardOf(guards, opts.kind, name);
  if (guard && !guard.spec.targetRef)
    return {
      code: ExitCode.Usage,
      message: `RolloutGuard ${name} selects DaemonSets by label: undo one of its generated guards (status.workloads)`,
    };
  if (guard) return { guard, guards };
  if (opts.kind === 'RolloutGuard') return { code: ExitCode.NotFound, message: `RolloutGuard ${name} not found in namespace ${namespace}` };
  return {
    code: ExitCode.Refused,
    message: `undo refused: no RolloutGuard targets ${opts.kind} ${name} in namespace ${namespace}, so there is no history to tell a stall from a rollout that just started (use kubectl rollout undo, or create a guard)`,
  };
}

/** Observes the guard's DaemonSet once, and judges the undo as decide plans it. */
async function judge(
  client: ApiClient,
  guard: Readonly<SlimGuard>,
  guards: SlimGuard[],
  namespace: string,
  now: () => number,
  log: Logger,
): Promise<UndoVerdict> {
  const target = guard.spec.targetRef.name;
  const observed = { kind: guard.spec.targetRef.kind, namespace, name: target };
  const observer = new TargetObserver(client, observed, log, () => guards);
  const early = await preflight(client, observed, Object.values(observer.paths));
  if (early) return { kind: 'Refused', code: early.code, message: early.message };
  observer.start();
  try {
    await observer.synced();
    const policy = {
      spec: undoSpec(withDefaults(guard.spec)),
      generation: guard.metadata.generation ?? 1,
      name: guard.metadata.name,
      createdAt: guard.metadata.creationTimestamp ?? '',
    };
    const { obs, decision } = observer.pass(guard.status ?? {}, policy, now());
    return judgeUndo(obs, decision, { namespace, name: target }, guard.status ?? {}, withDefaults(guard.spec));
  } finally {
    await observer.stop();
  }
}

/** Runs undo: judge, then the dry run or the undo through `port`. Exposed with injectable parts for tests. */
export async function undo(
  opts: UndoOptions & { namespace: string },
  client: ApiClient,
  port: UndoPort,
  now: () => number,
  log: Logger,
  io: { out: (t: string) => void; err: (t: string) => void },
): Promise<number> {
  const resolved = await resolveGuard(client, opts);
  if (!('guard' in resolved)) {
    io.err(`rollout-guard undo: ${resolved.message}`);
    return resolved.code;
  }
  const { guard, guards } = resolved;
  const v = await judge(client, guard, guards, opts.namespace, now, log);
  if (v.kind === 'Refused') {
    io.err(`rollout-guard undo: ${v.message}`);
    return v.code;
  }
  const r = v.request;
  const where = `${r.kind} ${r.namespace}/${r.name} (RolloutGuard ${guard.metadata.name})`;
  if (opts.dryRun) {
    io.out(`would undo ${where}: ${v.summary}, from ${KINDS[r.kind].undo.from} ${r.toRevisionName}${v.then ? `; ${v.then}` : ''}`);
    const d = await port.dryRun(r.kind, r.namespace, r.name, r.toRevisionName);
    if (d.kind === 'Accepted') {
      io.out('server-side dry run: accepted (nothing was changed)');
      return ExitCode.Ok;
    }
    io.err(`rollout-guard undo: server-side dry run rejected the patch: ${d.detail}`);
    return ExitCode.Failure;
  }
  const o = outcomeVerdict(await port.undo(r), v.summary);
  (o.code === ExitCode.Ok ? io.out : io.err)(o.code === ExitCode.Ok ? `${where}: ${o.message}` : `rollout-guard undo: ${o.message}`);
  if (o.code === ExitCode.Ok && v.then) io.out(v.then);
  return o.code;
}

/** Entry point of `rollout-guard undo`. */
export async function runUndo(args: readonly string[]): Promise<number> {
  if (wantsHelp(args)) {
    console.log(UNDO_USAGE);
    return ExitCode.Ok;
  }
  const opts = parseUndoArgs(args);
  const conn = connect('rollout-guard undo', opts);
  if (!conn) return ExitCode.Failure;
  const { client, namespace } = conn;
  try {
    const io = { out: (t: string) => console.log(t), err: (t: string) => console.error(t) };
    return await undo(
      { ...opts, namespace },
      client,
      new TemplateUndo(client),
      () => systemClock.now(),
      stderrLogger('rollout-guard-undo'),
      io,
    );
  } catch (e) {
    console.error(`rollout-guard undo: ${summarizeError(e)}`);
    return ExitCode.Failure;
  } finally {
    client.close();
  }
}
