/**
 * The argument parser of the one-shot commands (`check`, `get`): kubectl's conventions, so the commands
 * read the same whether run directly or as `kubectl rollout-guard …`:
 * - one positional target (`ds/NAME`, …) anywhere among the flags;
 * - a flag's value as the next argument or inline, `--flag=value` (inline only for long flags, as kubectl);
 * - a switch (`--watch`) takes no value; inline it accepts only `=true` or `=false`.
 * Every mistake is a {@link UsageError} (exit code 2), raised in argument order so the first mistake is the
 * one reported. The operator's own flags (`run`) are read by runtime/config.ts, with environment variables.
 */
import type { Connection } from '../k8s/kubeConfig.js';
import { KINDS, TARGET_KINDS, resourceNames } from '../api/kinds.js';
import { UsageError } from '../runtime/config.js';

/**
 * One flag: its spellings, and whether it is a switch, converts its value, or may be repeated (`many`:
 * each occurrence adds a value, as kubectl's `--as-group`).
 */
export type FlagSpec<T> = { readonly names: readonly string[] } & (
  { readonly switch: true } | { readonly value: (v: string, flag: string) => T } | { readonly many: (v: string, flag: string) => T }
);

/** What the flags of `spec` parse to: a switch to a boolean, a valued flag to its converter's type, a repeated one to a list. */
export type Parsed<S extends Record<string, FlagSpec<unknown>>> = {
  [K in keyof S]?: S[K] extends { many: (v: string, flag: string) => infer T }
    ? T[]
    : S[K] extends { value: (v: string, flag: string) => infer T }
      ? T
      : boolean;
};

/** The target and the flags given (absent flags are left out, so each command applies its own defaults). */
export interface ParsedArgs<S extends Record<string, FlagSpec<unknown>>> {
  target: string | undefined;
  flags: Parsed<S>;
}

/** A flag taking any string. */
export const text = (v: string): string => v;

/** kubectl's connection flags, shared by every command that talks to the API server. */
export const CONNECTION_FLAGS = {
  kubeconfig: { names: ['--kubeconfig'], value: text },
  context: { names: ['--context'], value: text },
  cluster: { names: ['--cluster'], value: text },
  user: { names: ['--user'], value: text },
  as: { names: ['--as'], value: text },
  asGroups: { names: ['--as-group'], many: text },
} as const;

/**
 * The connection flags given, absent ones left out. As kubectl, `--as-group` impersonates groups only
 * together with a user (`--as`): the API server takes no groups without a user to add them to.
 */
export function connectionOf(flags: Parsed<typeof CONNECTION_FLAGS>): Connection {
  const c: Connection = {};
  for (const k of ['kubeconfig', 'context', 'cluster', 'user', 'as'] as const) {
    const v = flags[k];
    if (v) c[k] = v;
  }
  if (flags.asGroups && flags.asGroups.length > 0) {
    if (!c.as) throw new UsageError('--as-group impersonates groups of a user: give the user with --as');
    c.asGroups = flags.asGroups;
  }
  return c;
}

/** The usage line of the connection flags. */
export const CONNECTION_USAGE =
  '[--kubeconfig PATH[:PATH…]] [--context NAME] [--cluster NAME] [--user NAME] [--as USER [--as-group GROUP]…]';

/** The help lines of the connection flags, shared by every command's usage. */
export const CONNECTION_HELP = `  --kubeconfig, --context, --cluster, --user   as kubectl's (a --kubeconfig list is merged as kubectl merges $KUBECONFIG)
  --as USER, --as-group GROUP   impersonate a user (and groups, repeatable) on every request, as kubectl's`;

/** What `--output` may say: the formats every command prints. */
export type OutputFormat = 'text' | 'json' | 'yaml';

/** `--output`: `text`, `json` or `yaml`. */
export function outputFormat(v: string): OutputFormat {
  if (v !== 'text' && v !== 'json' && v !== 'yaml') throw new UsageError(`--output wants text, json or yaml, got ${JSON.stringify(v)}`);
  return v;
}

/**
 * "90", "90s", "5m", "1h", or Go/kubectl style compounds such as "1m30s" → seconds. Whole units only:
 * rollout deadlines are never finer than a second.
 */
export function parseDuration(flag: string, v: string): number {
  const trimmed = v.trim();
  const bad = (): UsageError => new UsageError(`${flag} wants a duration like 90s, 5m, 1m30s or 1h, got ${JSON.stringify(v)}`);
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  if (!/^(\d+[hms])+$/.test(trimmed)) throw bad();
  let total = 0;
  let lastRank = -1;
  for (const [, n, unit] of trimmed.matchAll(/(\d+)([hms])/g)) {
    const rank = 'hms'.indexOf(unit ?? '');
    // "30s1m" or "1m1m" is almost certainly a typo; Go's time.ParseDuration accepts it, we'd rather not guess.
    if (rank <= lastRank) throw bad();
    lastRank = rank;
    total += Number(n) * (unit === 'h' ? 3600 : unit === 'm' ? 60 : 1);
  }
  return total;
}

/** A duration flag, in seconds (see {@link parseDuration}). */
export const duration = (v: string, flag: string): number => parseDuration(flag, v);

/** True when the arguments ask for the command's help, wherever `--help` or `-h` stands. */
export function wantsHelp(args: readonly string[]): boolean {
  return args.includes('--help') || args.includes('-h');
}

/** Parses `args` against `spec` (keys are the names the caller reads the values by). */
export function parseArgs<S extends Record<string, FlagSpec<unknown>>>(args: readonly string[], spec: S): ParsedArgs<S> {
  const byName = new Map<string, [keyof S, FlagSpec<unknown>]>();
  for (const [key, f] of Object.entries(spec)) for (const n of f.names) byName.set(n, [key, f]);
  const flags: Record<string, unknown> = {};
  let target: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    const [flag, inline] = eq >= 0 ? [a.slice(0, eq), a.slice(eq + 1)] : [a, undefined];
    const known = byName.get(flag);
    if (!known) {
      if (a.startsWith('-')) throw new UsageError(`unknown flag ${a}`);
      if (target) throw new UsageError(`only one target, got ${target} and ${a}`);
      target = a;
      continue;
    }
    const [key, f] = known;
    if ('switch' in f) {
      if (inline !== undefined && inline !== 'true' && inline !== 'false')
        throw new UsageError(`${flag} takes no value, got ${JSON.stringify(inline)}`);
      flags[key as string] = inline !== 'false';
      continue;
    }
    const v = inline ?? args[++i];
    if (v === undefined) throw new UsageError(`${flag} needs a value`);
    if ('many' in f) flags[key as string] = [...((flags[key as string] as unknown[] | undefined) ?? []), f.many(v, flag)];
    else flags[key as string] = f.value(v, flag);
  }
  return { target, flags: flags as Parsed<S> };
}

/** `ds/NAME`, `sts/NAME`, …: a workload of each kind by kubectl's short name, as usages and refusals name them. */
export const WORKLOAD_FORMS: readonly string[] = TARGET_KINDS.map((k) => `${KINDS[k].short}/NAME`);

/** "ds/NAME, sts/NAME or deploy/NAME": the workload forms, then `last` if given, joined as a sentence says them. */
export function formsSentence(last?: string): string {
  const all = [...WORKLOAD_FORMS, ...(last ? [last] : [])];
  return all.length < 2 ? all.join('') : `${all.slice(0, -1).join(', ')} or ${all[all.length - 1]!}`;
}

/**
 * `RESOURCE/NAME` for a workload of any kind, by any name kubectl takes for its
 * resource (`ds`, `daemonsets`, `statefulset.apps`, …: api/kinds.ts resourceNames), without regard to
 * case: group 1 is the resource (kindOfResource tells its kind), group 2 the name, matched by `name`.
 */
export function workloadTargetPattern(name: string): RegExp {
  const resources = TARGET_KINDS.flatMap(resourceNames).map((r) => r.replace(/\./g, '\\.'));
  return new RegExp(`^(${resources.join('|')})\\/(${name})$`, 'i');
}
