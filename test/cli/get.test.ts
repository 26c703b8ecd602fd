/**
 * `rollout-guard get`: argument parsing. The view is tested in getView.test.ts, its text and JSON in
 * getRender.test.ts; the command against a real control plane is in test/e2e/get.test.ts, the installed
 * package and the kubectl plugin in test/e2e/cliPackage.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseGetArgs } from '../../src/cli/get.js';
import { UsageError } from '../../src/runtime/config.js';

describe('parseGetArgs', () => {
  it('reads a DaemonSet or a RolloutGuard in the spellings kubectl accepts', () => {
    for (const t of ['ds/x', 'daemonset/x', 'DaemonSets.apps/x'])
      assert.deepEqual(parseGetArgs([t]), { kind: 'DaemonSet', name: 'x', watch: false, output: 'text' }, t);
    for (const t of ['rg/x', 'rolloutguard/x', 'rolloutguards.rolloutguard.dev/x', 'RolloutGuard/x'])
      assert.equal(parseGetArgs([t]).kind, 'RolloutGuard', t);
  });

  it('reads every flag, in both --flag value and --flag=value forms; without -n the namespace is left to the kubeconfig', () => {
    assert.deepEqual(parseGetArgs(['rg/decoder', '-n', 'gpu', '-w', '-o', 'json', '--kubeconfig', '/kc']), {
      kind: 'RolloutGuard',
      name: 'decoder',
      namespace: 'gpu',
      watch: true,
      output: 'json',
      kubeconfig: '/kc',
    });
    assert.deepEqual(parseGetArgs(['--namespace=gpu', '--watch', '--output=text', 'ds/decoder']), {
      kind: 'DaemonSet',
      name: 'decoder',
      namespace: 'gpu',
      watch: true,
      output: 'text',
    });
    assert.equal(parseGetArgs(['ds/decoder']).namespace, undefined);
  });

  const usage: Array<[string, string[], RegExp]> = [
    ['no target', [], /needs a target/],
    ['another kind', ['job/x'], /ds\/NAME, sts\/NAME, deploy\/NAME or rg\/NAME/],
    ['a bare name', ['decoder'], /ds\/NAME, sts\/NAME, deploy\/NAME or rg\/NAME/],
    ['two targets', ['ds/a', 'rg/b'], /only one target/],
    ['an uppercase name', ['rg/Decoder'], /lowercase/],
    ['an invalid name', ['ds/-x'], /not a valid name/],
    ['an unknown output', ['ds/x', '-o', 'xml'], /text, json or yaml/],
    ['an unknown flag', ['ds/x', '--follow'], /unknown flag --follow/],
    ['a flag without value', ['ds/x', '-n'], /-n needs a value/],
  ];
  for (const [what, args, re] of usage) {
    it(`usage error: ${what}`, () => {
      assert.throws(
        () => parseGetArgs(args),
        (e: unknown) => e instanceof UsageError && re.test(e.message),
      );
    });
  }
});
