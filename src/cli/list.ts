/**
 * `rollout-guard list [-n NS | -A] [-o text|wide|json|yaml|name]`: the guards of one namespace (the
 * context's by default) or of all, as `kubectl get rolloutguards` shows them (listRender.ts). `get -A`
 * and `get` with no target are the same command. It writes nothing and reads only RolloutGuards.
 *
 * Exit codes: 0 listed (also when there are none), 1 error (RBAC forbids the list, the API server has no
 * RolloutGuards, …), 2 usage.
 */
import { isForbidden, isNotFound, summarizeError } from '../k8s/apiErrors.js';
import { type ApiClient } from '../k8s/apiClient.js';
import { guardsPath } from '../k8s/apiPaths.js';
import type { Connection } from '../k8s/kubeConfig.js';
import { systemClock } from '../runtime/clock.js';
import { UsageError } from '../runtime/config.js';
import { CONNECTION_FLAGS, CONNECTION_HELP, CONNECTION_USAGE, connectionOf, parseArgs, text, wantsHelp } from './args.js';
import { ExitCode, connect } from './command.js';
import { noneFound, renderList, type ListedGuard, type ListOutput } from './listRender.js';

export interface ListOptions extends Connection {
  /** Absent: the kubeconfig context's namespace, else `default` (as kubectl); ignored with allNamespaces. */
  namespace?: string;
  allNamespaces: boolean;
  output: ListOutput;
}

/** Usage of the list subcommand, printed by `list --help`. */
export const LIST_USAGE = `usage: rollout-guard list [-n NAMESPACE | -A] [-o text|wide|json|yaml|name] ${CONNECTION_USAGE}
       rollout-guard get -A [-o …]       (the same; also get with no target)
       kubectl rollout-guard list …

Lists the RolloutGuards as \`kubectl get rolloutguards\` does: NAME, TARGET, KIND, STATE, DESIRED, UPDATED,
READY, CAUSE, FAULT (whose fault the stall is) and AGE, with NAMESPACE first across namespaces.
  -A, --all-namespaces   every namespace
  -n                     the namespace (default: the kubeconfig context's, else default)
  -o, --output           text (default), wide (adds BLOCKED and MESSAGE), json or yaml (a List of the
                         guards as stored), name (rolloutguard.rolloutguard.dev/NAME, one per line)
${CONNECTION_HELP}
exit codes: 0 listed (none found is said on stderr), 1 error, 2 usage`;

/** `--output` of list: the formats of every command, and kubectl's `wide` and `name`. */
export function listOutput(v: string): ListOutput {
  if (v !== 'text' && v !== 'wide' && v !== 'json' && v !== 'yaml' && v !== 'name')
    throw new UsageError(`--output wants text, wide, json, yaml or name, got ${JSON.stringify(v)}`);
  return v;
}

/** The flags of `list`; see {@link LIST_USAGE}. */
export const LIST_FLAGS = {
  namespace: { names: ['-n', '--namespace'], value: text },
  allNamespaces: { names: ['-A', '--all-namespaces'], switch: true },
  output: { names: ['-o', '--output'], value: listOutput },
  ...CONNECTION_FLAGS,
} as const;

export function parseListArgs(args: readonly string[], command = 'list'): ListOptions {
  const { target, flags } = parseArgs(args, LIST_FLAGS);
  if (target !== undefined) {
    throw new UsageError(
      command === 'list' ? `list takes no target, got ${target}` : '-A lists the guards of every namespace: give no target',
    );
  }
  const opts: ListOptions = { allNamespaces: flags.allNamespaces ?? false, output: flags.output ?? 'text', ...connectionOf(flags) };
  if (flags.namespace !== undefined) opts.namespace = flags.namespace;
  return opts;
}

/** Every guard of `namespace` (undefined: of all), page by page. */
export async function listGuards(client: ApiClient, namespace: string | undefined): Promise<ListedGuard[]> {
  const out: ListedGuard[] = [];
  let cont: string | undefined;
  do {
    const page = await client.request<{ items?: ListedGuard[]; metadata?: { continue?: string } }>('GET', guardsPath(namespace), {
      query: { limit: 500, ...(cont ? { continue: cont } : {}) },
    });
    out.push(...(page?.items ?? []));
    cont = page?.metadata?.continue || undefined;
  } while (cont);
  return out;
}

/** Why the list failed, in the words a person acts on. */
function listError(e: unknown, namespace: string | undefined): string {
  const where = namespace === undefined ? 'in any namespace' : `in namespace ${namespace}`;
  if (isForbidden(e)) return `forbidden to list rolloutguards ${where}: ${summarizeError(e)}`;
  if (isNotFound(e)) return 'the API server has no RolloutGuards: is the CRD (config/crd/rolloutguards.yaml) installed?';
  return summarizeError(e);
}

/** Where list writes; injectable for tests. */
export interface ListIo {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** Runs list against `client`. Exposed with injectable parts for tests. */
export async function list(opts: ListOptions & { namespace: string }, client: ApiClient, now: number, io: ListIo): Promise<number> {
  const namespace = opts.allNamespaces ? undefined : opts.namespace;
  let guards: ListedGuard[];
  try {
    guards = await listGuards(client, namespace);
  } catch (e) {
    io.err(`rollout-guard list: ${listError(e, namespace)}`);
    return ExitCode.Failure;
  }
  const text = renderList(guards, opts.output, { allNamespaces: opts.allNamespaces, now });
  if (text === undefined) io.err(noneFound(namespace));
  else io.out(text);
  return ExitCode.Ok;
}

/** Entry point of `rollout-guard list` (and `get -A`, `get` with no target). */
export async function runList(args: readonly string[], command = 'list'): Promise<number> {
  if (wantsHelp(args)) {
    console.log(LIST_USAGE);
    return ExitCode.Ok;
  }
  const opts = parseListArgs(args, command);
  const conn = connect(`rollout-guard ${command}`, opts);
  if (!conn) return ExitCode.Failure;
  try {
    return await list({ ...opts, namespace: conn.namespace }, conn.client, systemClock.now(), {
      out: (t) => console.log(t),
      err: (t) => console.error(t),
    });
  } finally {
    conn.client.close();
  }
}
