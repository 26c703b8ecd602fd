/**
 * Shell completion: `rollout-guard completion bash|zsh` prints a script that completes the commands,
 * their flags, the values of `--output` and the guards' names (from `rollout-guard list -o name`, in the
 * namespace and context the command line names so far); `completion kubectl` prints the executable
 * kubectl (1.26 and later) runs to complete `kubectl rollout-guard …`, which must be on PATH as
 * `kubectl_complete-rollout_guard`. That executable calls `kubectl-rollout_guard __complete WORDS… CUR`,
 * which answers in kubectl's plugin protocol (cobra's): one candidate per line, then `:4` (no file
 * completion). Every form reads the same tables below, so the scripts and the protocol cannot disagree.
 */
import { UsageError } from '../runtime/config.js';
import type { Connection } from '../k8s/kubeConfig.js';
import { ExitCode, openConnection } from './command.js';
import { guardResourceName } from './listRender.js';
import { listGuards } from './list.js';
import { WORKLOAD_FORMS } from './args.js';

/** `ds/`, `sts/`, `deploy/`: a workload of each kind, a prefix to go on typing after. */
const WORKLOAD_PREFIXES = WORKLOAD_FORMS.map((f) => f.slice(0, f.indexOf('/') + 1));

/** The connection flags that take a value, passed on to `list -o name` so names come from the same cluster. */
const CONNECTION_VALUE_FLAGS = ['--kubeconfig', '--context', '--cluster', '--user', '--as', '--as-group'];

interface CommandSpec {
  flags: readonly string[];
  /** The values `-o` offers. */
  outputs?: readonly string[];
  /** What a positional word completes to: guard names (and the workload prefixes), the workload prefixes, or fixed words. */
  targets?: 'guards' | 'workloads' | readonly string[];
}

const NS = ['-n', '--namespace'];
const OUT = ['-o', '--output'];

/** The commands people run, and what completes after each. */
export const COMMANDS: Readonly<Record<string, CommandSpec>> = {
  get: {
    flags: [...NS, '-w', '--watch', ...OUT, '-A', '--all-namespaces', ...CONNECTION_VALUE_FLAGS, '--help'],
    outputs: ['text', 'json', 'yaml', 'wide', 'name'],
    targets: 'guards',
  },
  list: {
    flags: [...NS, '-A', '--all-namespaces', ...OUT, ...CONNECTION_VALUE_FLAGS, '--help'],
    outputs: ['text', 'wide', 'json', 'yaml', 'name'],
  },
  check: {
    flags: [...NS, '--deadline', '--suspect', ...OUT, ...CONNECTION_VALUE_FLAGS, '--help'],
    outputs: ['text', 'json', 'yaml'],
    targets: 'workloads',
  },
  undo: { flags: [...NS, '--dry-run', ...CONNECTION_VALUE_FLAGS, '--help'], targets: 'guards' },
  dashboard: { flags: [...NS, '-A', '--all-namespaces', '--address', '--port', ...CONNECTION_VALUE_FLAGS, '--help'] },
  completion: { flags: ['--help'], targets: ['bash', 'zsh', 'kubectl'] },
  version: { flags: [] },
  help: { flags: [] },
};

/** Flags whose next word is their value (so it is neither the command nor a target). */
export const VALUE_FLAGS = [...NS, ...OUT, '--deadline', '--suspect', '--address', '--port', ...CONNECTION_VALUE_FLAGS];

/** What the words before the current one say: the command, the output flag's position, the flags to pass on. */
function scan(words: readonly string[]): { cmd: string | undefined; pass: string[] } {
  let cmd: string | undefined;
  const pass: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? '';
    if (VALUE_FLAGS.includes(w)) {
      if (NS.includes(w) || CONNECTION_VALUE_FLAGS.includes(w)) pass.push(w, words[i + 1] ?? '');
      i++;
    } else if (!w.startsWith('-') && cmd === undefined) cmd = w;
  }
  return { cmd, pass };
}

/**
 * The candidates for `cur` after `words` (the words after the program's name), filtered by prefix.
 * `guards(pass)` lists the guards' `-o name` lines with the namespace and connection flags given.
 */
export async function completions(
  words: readonly string[],
  cur: string,
  guards: (pass: readonly string[]) => Promise<string[]>,
): Promise<string[]> {
  const starts = (xs: readonly string[]): string[] => xs.filter((x) => x.startsWith(cur));
  const prev = words[words.length - 1];
  const { cmd, pass } = scan(words);
  const spec = cmd === undefined ? undefined : COMMANDS[cmd];
  if (prev !== undefined && VALUE_FLAGS.includes(prev)) return OUT.includes(prev) ? starts(spec?.outputs ?? []) : [];
  if (cmd === undefined) return starts(Object.keys(COMMANDS));
  if (!spec) return [];
  if (cur.startsWith('-')) return starts(spec.flags);
  const t = spec.targets;
  if (t === 'workloads') return starts(WORKLOAD_PREFIXES);
  if (t === 'guards') {
    const names = (await guards(pass)).map((n) => `rg/${n.slice(n.indexOf('/') + 1)}`);
    return starts([...names, ...WORKLOAD_PREFIXES]);
  }
  return starts(t ?? []);
}

/** The bash script: the tables above as bash, and the guards' names from `rollout-guard list -o name`. */
export function bashScript(): string {
  const cases = Object.entries(COMMANDS)
    .map(([name, c]) => {
      const targets =
        c.targets === 'guards'
          ? `$(__rollout_guard_names) ${WORKLOAD_PREFIXES.join(' ')}`
          : c.targets === 'workloads'
            ? WORKLOAD_PREFIXES.join(' ')
            : (c.targets ?? []).join(' ');
      return `    ${name}) flags="${c.flags.join(' ')}"; outputs="${(c.outputs ?? []).join(' ')}"; targets="${targets}";;`;
    })
    .join('\n');
  return `# bash completion for rollout-guard and kubectl-rollout_guard (rollout-guard completion bash)
# The guards' names come from \`rollout-guard list -o name\`, with the namespace and connection flags typed so far.
__rollout_guard_names() {
  "\${__rollout_guard_prog:-rollout-guard}" list -o name "\${__rollout_guard_pass[@]}" 2>/dev/null | sed 's|^[^/]*/|rg/|'
}

_rollout_guard() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmd="" i w
  local __rollout_guard_prog="\${COMP_WORDS[0]}"
  local -a __rollout_guard_pass=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in
      ${NS.join('|')}|${CONNECTION_VALUE_FLAGS.join('|')}) __rollout_guard_pass+=("$w" "\${COMP_WORDS[i+1]}"); ((i++));;
      ${[...OUT, '--deadline', '--suspect'].join('|')}) ((i++));;
      -*) ;;
      *) [[ -z "$cmd" ]] && cmd="$w";;
    esac
  done
  local flags="" outputs="" targets=""
  case "$cmd" in
${cases}
    "") COMPREPLY=($(compgen -W "${Object.keys(COMMANDS).join(' ')}" -- "$cur")); return;;
    *) COMPREPLY=(); return;;
  esac
  case "$prev" in
    ${OUT.join('|')}) COMPREPLY=($(compgen -W "$outputs" -- "$cur")); return;;
    ${VALUE_FLAGS.filter((f) => !OUT.includes(f)).join('|')}) COMPREPLY=(); return;;
  esac
  if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$flags" -- "$cur")); return; fi
  COMPREPLY=($(compgen -W "$targets" -- "$cur"))
  # ds/, sts/, deploy/ and rg/ are prefixes to go on typing after, not whole words.
  [[ \${#COMPREPLY[@]} -eq 1 && "\${COMPREPLY[0]}" == */ ]] && compopt -o nospace 2>/dev/null
  return 0
}

complete -F _rollout_guard rollout-guard
complete -F _rollout_guard kubectl-rollout_guard
`;
}

/** The zsh script: native completion over the same answers, from `rollout-guard __complete`. */
export function zshScript(): string {
  return `#compdef rollout-guard kubectl-rollout_guard
# zsh completion for rollout-guard (rollout-guard completion zsh): source it, or put it on $fpath as _rollout-guard.
_rollout_guard() {
  local -a comps
  comps=("\${(@f)$("\${words[1]}" __complete "\${(@)words[2,CURRENT-1]}" "\${words[CURRENT]}" 2>/dev/null)}")
  comps=("\${(@)comps:#:*}")
  compadd -S '' -- "\${(@M)comps:#*/}"
  compadd -- "\${(@)comps:#*/}"
}
if (( $+functions[compdef] )); then
  compdef _rollout_guard rollout-guard kubectl-rollout_guard
fi
`;
}

/** The executable kubectl runs for plugin completion; to be installed on PATH as kubectl_complete-rollout_guard. */
export function kubectlCompleteScript(): string {
  return `#!/bin/sh
# kubectl (1.26+) runs kubectl_complete-rollout_guard to complete \`kubectl rollout-guard …\`: the words
# after the plugin's name, the last one the word being completed.
exec kubectl-rollout_guard __complete "$@"
`;
}

/** Entry point of `rollout-guard completion bash|zsh|kubectl`. */
export function runCompletion(args: readonly string[]): number {
  const [shell, ...rest] = args;
  if (shell === '--help' || shell === '-h') {
    console.log(COMPLETION_USAGE);
    return ExitCode.Ok;
  }
  if (rest.length > 0) throw new UsageError(`completion takes one argument, got ${args.join(' ')}`);
  const script =
    shell === 'bash' ? bashScript() : shell === 'zsh' ? zshScript() : shell === 'kubectl' ? kubectlCompleteScript() : undefined;
  if (script === undefined) throw new UsageError(`completion wants bash, zsh or kubectl, got ${JSON.stringify(shell ?? '')}`);
  process.stdout.write(script);
  return ExitCode.Ok;
}

export const COMPLETION_USAGE = `usage: rollout-guard completion bash|zsh|kubectl

  bash     source <(rollout-guard completion bash)        (in ~/.bashrc)
  zsh      source <(rollout-guard completion zsh)         (in ~/.zshrc, after compinit)
  kubectl  the completion of \`kubectl rollout-guard …\` (kubectl 1.26+): install it as an executable
           named kubectl_complete-rollout_guard on PATH:
             rollout-guard completion kubectl > ~/.local/bin/kubectl_complete-rollout_guard
             chmod +x ~/.local/bin/kubectl_complete-rollout_guard`;

/** The value of the last of `names` in `pass` (flag, value pairs). */
function passed(pass: readonly string[], names: readonly string[]): string | undefined {
  let v: string | undefined;
  for (let i = 0; i < pass.length; i += 2) if (names.includes(pass[i] ?? '')) v = pass[i + 1] || undefined;
  return v;
}

/** The guards' `-o name` lines for `pass` (namespace and connection flags); none when they cannot be read. */
async function guardNames(pass: readonly string[]): Promise<string[]> {
  const groups = pass.filter((_, i) => i % 2 === 1 && pass[i - 1] === '--as-group');
  const opts: Connection & { namespace?: string } = {};
  const keys = [
    ['namespace', NS],
    ['kubeconfig', ['--kubeconfig']],
    ['context', ['--context']],
    ['cluster', ['--cluster']],
    ['user', ['--user']],
    ['as', ['--as']],
  ] as const;
  for (const [k, f] of keys) {
    const v = passed(pass, f);
    if (v) opts[k] = v;
  }
  if (groups.length > 0 && opts.as) opts.asGroups = groups;
  let conn;
  try {
    conn = openConnection(opts);
  } catch {
    // Completion stays quiet: a shell prompt is no place for a kubeconfig error.
    return [];
  }
  try {
    return (await listGuards(conn.client, conn.namespace)).map((g) => guardResourceName(g.metadata?.name ?? ''));
  } catch {
    return [];
  } finally {
    conn.client.close();
  }
}

/** `__complete WORDS… CUR`: kubectl's plugin completion protocol (see the top of this file). */
export async function runComplete(args: readonly string[]): Promise<number> {
  const words = args.slice(0, -1);
  const cur = args[args.length - 1] ?? '';
  for (const c of await completions(words, cur, guardNames)) console.log(c);
  // cobra's ShellCompDirectiveNoFileComp: no file names after ours.
  console.log(':4');
  return ExitCode.Ok;
}
