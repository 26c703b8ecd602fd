import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { duration, outputFormat, parseArgs, parseDuration, text, wantsHelp } from '../../src/cli/args.js';
import { UsageError } from '../../src/runtime/config.js';

/** A command with every kind of flag: strings, a switch, and converted values. */
const SPEC = {
  namespace: { names: ['-n', '--namespace'], value: text },
  watch: { names: ['-w', '--watch'], switch: true },
  output: { names: ['-o', '--output'], value: outputFormat },
  deadline: { names: ['--deadline'], value: duration },
} as const;

describe('parseArgs', () => {
  const ok: Array<[string, string[], { target?: string; flags: Record<string, unknown> }]> = [
    ['nothing', [], { flags: {} }],
    ['a target alone', ['ds/x'], { target: 'ds/x', flags: {} }],
    ['a value as the next argument', ['-n', 'gpu', 'ds/x'], { target: 'ds/x', flags: { namespace: 'gpu' } }],
    ['a value inline', ['ds/x', '--namespace=gpu'], { target: 'ds/x', flags: { namespace: 'gpu' } }],
    ['an inline value keeps its own "="', ['--namespace=a=b'], { flags: { namespace: 'a=b' } }],
    ['an empty inline value', ['--namespace='], { flags: { namespace: '' } }],
    ['the last of a repeated flag wins', ['-n', 'a', '--namespace', 'b'], { flags: { namespace: 'b' } }],
    ['a switch', ['-w'], { flags: { watch: true } }],
    ['a switch set inline', ['--watch=true'], { flags: { watch: true } }],
    ['a switch cleared inline', ['--watch=false'], { flags: { watch: false } }],
    ['a converted value', ['--deadline', '1m30s', '-o', 'json'], { flags: { deadline: 90, output: 'json' } }],
    ['the target anywhere among the flags', ['-o', 'text', 'rg/x', '-w'], { target: 'rg/x', flags: { output: 'text', watch: true } }],
    ['a value that looks like a flag is still the value', ['-n', '-w'], { flags: { namespace: '-w' } }],
  ];
  for (const [what, args, want] of ok) {
    it(what, () => {
      const got = parseArgs(args, SPEC);
      assert.equal(got.target, want.target);
      assert.deepEqual(got.flags, want.flags);
    });
  }

  const usage: Array<[string, string[], string]> = [
    ['an unknown long flag', ['ds/x', '--follow'], 'unknown flag --follow'],
    ['an unknown flag is named with its inline value', ['--follow=1'], 'unknown flag --follow=1'],
    ['a short flag is never split at "="', ['-n=gpu'], 'unknown flag -n=gpu'],
    ['two targets', ['ds/a', 'rg/b'], 'only one target, got ds/a and rg/b'],
    ['a value missing at the end', ['ds/x', '-n'], '-n needs a value'],
    ['a value missing, long form', ['--namespace'], '--namespace needs a value'],
    ['a switch given a value', ['--watch=yes'], '--watch takes no value, got "yes"'],
    ['a converter refusing', ['-o', 'xml'], '--output wants text, json or yaml, got "xml"'],
    [
      'a duration refused, named by the spelling used',
      ['--deadline=soon'],
      '--deadline wants a duration like 90s, 5m, 1m30s or 1h, got "soon"',
    ],
    ['the first mistake in argument order is the one reported', ['ds/a', 'ds/b', '--follow'], 'only one target, got ds/a and ds/b'],
    ['... whichever kind it is', ['--follow', 'ds/a', 'ds/b'], 'unknown flag --follow'],
  ];
  for (const [what, args, message] of usage) {
    it(`usage error: ${what}`, () => {
      assert.throws(
        () => parseArgs(args, SPEC),
        (e: unknown) => e instanceof UsageError && e.message === message,
      );
    });
  }
});

describe('wantsHelp', () => {
  const cases: Array<[string[], boolean]> = [
    [['--help'], true],
    [['ds/x', '-h'], true],
    [['-n', 'gpu', 'ds/x', '--help'], true],
    [['ds/x'], false],
    [['--helpful'], false],
  ];
  for (const [args, want] of cases) {
    it(`${JSON.stringify(args)} → ${want}`, () => assert.equal(wantsHelp(args), want));
  }
});

describe('parseDuration', () => {
  it('reads whole seconds, minutes and hours, alone or compound', () => {
    assert.equal(parseDuration('--deadline', '90'), 90);
    assert.equal(parseDuration('--deadline', '2h0m10s'), 7210);
  });

  it('names the flag it was given in its error', () => {
    assert.throws(
      () => parseDuration('--timeout', '1m1m'),
      (e: unknown) => e instanceof UsageError && /^--timeout wants a duration/.test(e.message),
    );
  });
});
