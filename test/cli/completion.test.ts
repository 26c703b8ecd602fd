/**
 * Shell completion: the answers of `__complete` (kubectl's plugin protocol), and the bash script run by
 * the real bash: sourced, its function called with COMP_WORDS as bash sets them, COMPREPLY read back.
 * The zsh script runs in Debian's zsh (from cluster/build.sh) in test/e2e/cliCommands.test.ts.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { bashScript, completions, kubectlCompleteScript, zshScript } from '../../src/cli/completion.js';

const NAMES = ['rolloutguard.rolloutguard.dev/decoder', 'rolloutguard.rolloutguard.dev/agent'];

describe('completions (the __complete protocol)', () => {
  const calls: string[][] = [];
  const guards = (pass: readonly string[]): Promise<string[]> => {
    calls.push([...pass]);
    return Promise.resolve(NAMES);
  };
  const cases: Array<[string, string[], string, string[]]> = [
    ['the commands', [], '', ['get', 'list', 'check', 'undo', 'dashboard', 'completion', 'version', 'help']],
    ['a command by prefix', [], 'un', ['undo']],
    ['flags of a command', ['get'], '--w', ['--watch']],
    ['the outputs of get', ['get', '-o'], '', ['text', 'json', 'yaml', 'wide', 'name']],
    ['the outputs of check', ['check', 'ds/x', '--output'], 'y', ['yaml']],
    ['guards after get', ['get'], '', ['rg/decoder', 'rg/agent', 'ds/', 'sts/', 'deploy/']],
    ['guards by prefix after undo', ['undo'], 'rg/d', ['rg/decoder']],
    ['a prefix per kind after check', ['check'], '', ['ds/', 'sts/', 'deploy/']],
    ['one prefix once typed far enough', ['check'], 'de', ['deploy/']],
    ['the shells', ['completion'], 'z', ['zsh']],
    ['nothing for a namespace', ['get', '-n'], '', []],
    [
      'the command found after flags and their values',
      ['-n', 'gpu', 'list'],
      '-',
      [
        '-n',
        '--namespace',
        '-A',
        '--all-namespaces',
        '-o',
        '--output',
        '--kubeconfig',
        '--context',
        '--cluster',
        '--user',
        '--as',
        '--as-group',
        '--help',
      ],
    ],
  ];
  for (const [what, words, cur, want] of cases) {
    it(what, async () => assert.deepEqual(await completions(words, cur, guards), want));
  }
  it('names are listed with the namespace and connection flags typed so far', async () => {
    calls.length = 0;
    await completions(['get', '-n', 'gpu', '--context', 'kind', '-o', 'json'], '', guards);
    assert.deepEqual(calls, [['-n', 'gpu', '--context', 'kind']]);
  });
});

/** COMPREPLY after the real bash completes `line` (the cursor at its end), `rollout-guard` faked as a function. */
function bashComplete(line: string): { reply: string[]; listed: string } {
  const words = line.split(' ');
  const script = `${bashScript()}
__listed=$(mktemp)
# The names are read in a command substitution, a subshell: what it was called with goes through a file.
rollout-guard() { printf '%s' "$*" > "$__listed"; printf '%s\\n' ${NAMES.join(' ')}; }
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})
COMP_CWORD=${words.length - 1}
COMP_LINE='${line}'
COMP_POINT=${line.length}
_rollout_guard
printf '%s\\n' "\${COMPREPLY[@]}"
printf 'LISTED:%s\\n' "$(cat "$__listed")"
rm -f "$__listed"
`;
  const out = execFileSync('bash', ['--norc', '--noprofile', '-c', script], { encoding: 'utf8' });
  const lines = out.split('\n').filter((l) => l !== '');
  const listed = lines.pop() ?? '';
  return { reply: lines, listed: listed.replace(/^LISTED:/, '') };
}

describe('the bash script, in bash', () => {
  it('is valid bash and registers the function for both names', () => {
    const out = execFileSync('bash', ['--norc', '-c', `${bashScript()}\ncomplete -p rollout-guard kubectl-rollout_guard`], {
      encoding: 'utf8',
    });
    assert.match(out, /complete -F _rollout_guard rollout-guard/);
    assert.match(out, /complete -F _rollout_guard kubectl-rollout_guard/);
  });
  const cases: Array<[string, string[]]> = [
    ['rollout-guard ', ['get', 'list', 'check', 'undo', 'dashboard', 'completion', 'version', 'help']],
    ['rollout-guard l', ['list']],
    ['rollout-guard get --a', ['--all-namespaces', '--as', '--as-group']],
    ['rollout-guard list -o ', ['text', 'wide', 'json', 'yaml', 'name']],
    ['rollout-guard check ds/x -o j', ['json']],
    ['rollout-guard check ', ['ds/', 'sts/', 'deploy/']],
    ['rollout-guard check st', ['sts/']],
    ['rollout-guard completion ', ['bash', 'zsh', 'kubectl']],
    ['rollout-guard undo rg/', ['rg/decoder', 'rg/agent']],
    ['rollout-guard -n gpu get rg/a', ['rg/agent']],
    ['rollout-guard get -n ', []],
    ['rollout-guard dashboard --p', ['--port']],
    ['rollout-guard dashboard --port ', []],
  ];
  for (const [line, want] of cases) {
    it(JSON.stringify(line), () => assert.deepEqual(bashComplete(line).reply, want));
  }
  it('lists names in the namespace and context typed so far', () => {
    assert.equal(bashComplete('rollout-guard get -n gpu --context kind ').listed, 'list -o name -n gpu --context kind');
  });
});

describe('the zsh script', () => {
  // Run in Debian's zsh against the cluster by test/e2e/cliCommands.test.ts.
  it('completes through __complete, for both names', () => {
    assert.match(zshScript(), /^#compdef rollout-guard kubectl-rollout_guard$/m);
    assert.match(zshScript(), /__complete/);
  });
});

describe('the kubectl plugin completion executable', () => {
  it('is a shell script that runs the plugin’s __complete with every word', () => {
    const s = kubectlCompleteScript();
    assert.match(s, /^#!\/bin\/sh\n/);
    assert.match(s, /^exec kubectl-rollout_guard __complete "\$@"$/m);
    execFileSync('sh', ['-n', '-c', s]);
  });
});
