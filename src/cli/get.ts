/**
 * `rollout-guard get ds/NAME | rg/NAME -n NS [--watch] [--output text|json|yaml]`: a read-only view of one
 * rollout, node by node, in the spirit of `kubectl argo rollouts get`.
 *
 * For a DaemonSet it observes exactly as `rollout-guard check` does (the same observer: informers,
 * gather and the pure decide) and prints a header (the DaemonSet's counters, the state, the
 * cause, whose fault, the revisions with their node counts) and one row per daemon pod, or per node that
 * should run one and has none: which revision it runs, whether it is ready, and for a blocked or empty
 * node why and whose fault (`ImagePullBackOff (Revision)`).
 *
 * For a RolloutGuard the header is the guard's own status, as the operator wrote it (state, cause, owner,
 * message, revisions, the undo), and the rows are computed live from its target DaemonSet.
 *
 * It writes nothing. With --watch it re-renders when the DaemonSet, its pods, its revisions, the nodes or
 * the guard change (the informers' watches, debounced) and when decide's next deadline passes; it stops
 * on SIGINT or SIGTERM.
 *
 * Exit codes: 0 shown, 1 error, 2 usage, 4 the DaemonSet or the guard does not exist.
 *
 * This file is the command: its arguments, then read (getSource.ts) → view (getView.ts) → render
 * (getRender.ts), once or, with --watch, on every change (getWatch.ts).
 */
import type { Logger } from 'pino';
import type { GuardStatus, TargetKind } from '../api/types.js';
import { kindOfResource } from '../api/kinds.js';
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
  outputFormat,
  parseArgs,
  text,
  wantsHelp,
  type OutputFormat,
  workloadTargetPattern,
  formsSentence,
  WORKLOAD_FORMS,
} from './args.js';
import { ExitCode, connect, stderrLogger } from './command.js';
import { renderJson, renderText, renderYaml, watchFrame } from './getRender.js';
import { GetSource } from './getSource.js';
import { buildView } from './getView.js';
import { Rerender } from './getWatch.js';
import { LIST_FLAGS, runList } from './list.js';

export interface GetOptions extends Connection {
  kind: TargetKind | 'RolloutGuard';
  name: string;
  /** Absent: the kubeconfig context's namespace, else `default` (as kubectl). */
  namespace?: string;
  watch: boolean;
  output: OutputFormat;
}

/** Usage of the get subcommand, printed by `get --help`. */
export const GET_USAGE = `usage: rollout-guard get ${WORKLOAD_FORMS.join('|')}|rg/NAME [-n NAMESPACE] [--watch] [--output text|json|yaml] ${CONNECTION_USAGE}
       rollout-guard get [-A | -n NAMESPACE] [-o text|wide|json|yaml|name]   (the guards, as rollout-guard list)
       kubectl rollout-guard get ${WORKLOAD_FORMS.join('|')}|rg/NAME [-n NAMESPACE] [--watch] [--output text|json|yaml] ${CONNECTION_USAGE}

Shows one rollout node by node, read-only: the DaemonSet's counters, the state, the cause and whose
fault it is, the revisions with their node counts, then a row per node: its revision, pod, readiness
and, for a blocked or empty node, the reason and the owner, e.g. ImagePullBackOff (Revision).
  ds/NAME      observe the DaemonSet as \`rollout-guard check\` does (its state is judged from the moment
               get starts: a RolloutGuard keeps the history)
  rg/NAME      the RolloutGuard's own status, plus the rows computed live from its DaemonSet
  no target    the table of guards of the namespace; -A, --all-namespaces: of every namespace (list --help)
  -w, --watch  re-render on every change (API watches) until Ctrl-C
  -o, --output text (default), json (with --watch: one JSON document per line) or yaml (with --watch:
               documents separated by ---)
  -n           the namespace (default: the kubeconfig context's, else default)
${CONNECTION_HELP}
exit codes: 0 shown, 1 error, 2 usage, 4 not found`;

/** `ds/NAME`, `sts/NAME`, … (any name of the resource, as kubectl takes it): the resource, then the name. */
const WORKLOAD_TARGET = workloadTargetPattern('.+');
const RG_TARGET = /^(?:rg|rolloutguards?|rolloutguards?\.rolloutguard\.dev)\/(.+)$/i;
/** A DNS subdomain name, as DaemonSets and RolloutGuards are named. */
const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** The flags of `get`; see {@link GET_USAGE}. */
const GET_FLAGS = {
  namespace: { names: ['-n', '--namespace'], value: text },
  watch: { names: ['-w', '--watch'], switch: true },
  output: { names: ['-o', '--output'], value: outputFormat },
  ...CONNECTION_FLAGS,
} as const;

/**
 * Whether `args` ask get for the list of guards (`get -A`, or `get` with no target), which list.ts
 * serves. Arguments get cannot parse are left to {@link parseGetArgs} to report.
 */
export function listsGuards(args: readonly string[]): boolean {
  let parsed;
  try {
    parsed = parseArgs(args, { ...GET_FLAGS, output: { names: ['-o', '--output'], value: text }, allNamespaces: LIST_FLAGS.allNamespaces });
  } catch {
    return false;
  }
  const list = parsed.target === undefined || parsed.flags.allNamespaces === true;
  if (list && parsed.flags.watch) throw new UsageError('--watch follows one rollout: name it, ds/NAME or rg/NAME');
  return list;
}

export function parseGetArgs(args: readonly string[]): GetOptions {
  const { target, flags } = parseArgs(args, GET_FLAGS);
  const { namespace } = flags;
  if (!target) throw new UsageError(`get needs a target: ${formsSentence('rg/NAME')}`);
  const workload = WORKLOAD_TARGET.exec(target);
  const rg = RG_TARGET.exec(target);
  const name = workload?.[2] ?? rg?.[1];
  if (name === undefined) throw new UsageError(`target must look like ${formsSentence('rg/NAME')}, got ${JSON.stringify(target)}`);
  if (name !== name.toLowerCase()) throw new UsageError(`a name is lowercase, got ${JSON.stringify(name)}`);
  if (!NAME.test(name)) throw new UsageError(`not a valid name: ${JSON.stringify(name)}`);
  const opts: GetOptions = {
    kind: (workload ? kindOfResource(workload[1]!) : undefined) ?? 'RolloutGuard',
    name,
    watch: flags.watch ?? false,
    output: flags.output ?? 'text',
    ...connectionOf(flags),
  };
  if (namespace !== undefined) opts.namespace = namespace;
  return opts;
}

/** Where get writes; injectable for tests. */
export interface GetIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** stdout is a terminal: --watch redraws in place. */
  tty: boolean;
  /** ANSI colours (a terminal, and NO_COLOR not set). */
  color: boolean;
  /** Resolves when the user asks to stop (SIGINT, SIGTERM); only --watch waits for it. */
  stopped: Promise<void>;
}

/** Runs get: one render, or renders until `io.stopped` with --watch. Exposed with injectable parts for tests. */
export async function get(
  opts: GetOptions & { namespace: string },
  client: ApiClient,
  clock: Clock,
  log: Logger,
  io: GetIo,
): Promise<number> {
  const { namespace } = opts;
  const source = await GetSource.open({ kind: opts.kind, name: opts.name, namespace }, client, log);
  if (!(source instanceof GetSource)) {
    io.err(`rollout-guard get: ${source.message}`);
    return source.code;
  }

  let status: GuardStatus = {};
  let last = '';
  let renders = 0;
  const render = (): number | undefined => {
    const now = clock.now();
    const { obs, decision } = source.pass(status, now);
    // A pass set aside until the caches agree shows nothing new; the next change renders again.
    if (decision.deferred && renders > 0) return decision.requeueAfterMs;
    status = decision.status;
    const view = buildView({
      kind: opts.kind,
      targetKind: source.targetKind,
      namespace,
      name: opts.name,
      obs,
      status,
      now,
      ...source.guardsShown(),
    });
    const text =
      opts.output === 'json'
        ? renderJson(view, { compact: opts.watch })
        : opts.output === 'yaml'
          ? renderYaml(view, { separated: opts.watch && renders > 0 })
          : renderText(view, { color: io.color });
    // The time alone changing is no change.
    const same = opts.output === 'text' ? text : renderJson({ ...view, at: '' }, { compact: true });
    if (same !== last) {
      last = same;
      io.out(opts.watch && opts.output === 'text' ? watchFrame(text, view.at, { tty: io.tty, first: renders === 0 }) : text);
      renders++;
    }
    return decision.requeueAfterMs;
  };

  const rerender = new Rerender(render);
  if (opts.watch) source.onChange(rerender.schedule);
  source.start();
  try {
    await source.synced();
    if (!opts.watch) {
      render();
      return ExitCode.Ok;
    }
    rerender.now();
    await io.stopped;
    return ExitCode.Ok;
  } finally {
    rerender.stop();
    await source.stop();
  }
}

/** Entry point of `rollout-guard get` (and `kubectl rollout-guard get`). */
export async function runGet(args: readonly string[]): Promise<number> {
  if (wantsHelp(args)) {
    console.log(GET_USAGE);
    return ExitCode.Ok;
  }
  if (listsGuards(args)) return runList(args, 'get');
  const opts = parseGetArgs(args);
  const log = stderrLogger('rollout-guard-get');
  const conn = connect('rollout-guard get', opts);
  if (!conn) return ExitCode.Failure;
  const { client, namespace } = conn;
  let onSignal: (() => void) | undefined;
  const stopped = new Promise<void>((resolve) => {
    onSignal = resolve;
  });
  // Only --watch runs until stopped; a single render keeps the default signal actions.
  const signals = opts.watch ? (['SIGINT', 'SIGTERM'] as const) : [];
  for (const s of signals) process.on(s, onSignal!);
  try {
    return await get({ ...opts, namespace }, client, systemClock, log, {
      out: (t) => console.log(t),
      err: (t) => console.error(t),
      tty: process.stdout.isTTY === true,
      color: process.stdout.isTTY === true && !process.env.NO_COLOR,
      stopped,
    });
  } catch (e) {
    console.error(`rollout-guard get: ${summarizeError(e)}`);
    return ExitCode.Failure;
  } finally {
    for (const s of signals) process.off(s, onSignal!);
    client.close();
  }
}
