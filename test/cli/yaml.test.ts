/**
 * The YAML emitter of `--output yaml`: what it quotes and how it nests, table by table, and a property
 * test that the `yaml` package reads back exactly the JSON value written.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parse } from 'yaml';
import { emitYaml, plainSafe } from '../../src/cli/yaml.js';

describe('emitYaml: scalars', () => {
  const cases: Array<[string, unknown, string]> = [
    ['a plain word', 'decoder', 'decoder'],
    ['a sentence', 'no progress for 60s', 'no progress for 60s'],
    ['an image', 'registry.example/decoder:v2', 'registry.example/decoder:v2'],
    ['the empty string', '', '""'],
    ['a leading space', ' x', '" x"'],
    ['a trailing space', 'x ', '"x "'],
    ['a mapping indicator', 'a: b', '"a: b"'],
    ['a trailing colon', 'a:', '"a:"'],
    ['a comment', 'a #b', '"a #b"'],
    ['a hash inside a word', 'a#b', 'a#b'],
    ['true', 'true', '"true"'],
    ['False', 'False', '"False"'],
    ['null', 'null', '"null"'],
    ['yes', 'yes', '"yes"'],
    ['No', 'No', '"No"'],
    ['on', 'on', '"on"'],
    ['OFF', 'OFF', '"OFF"'],
    ['a tilde', '~', '"~"'],
    ['an integer-looking string', '42', '"42"'],
    ['a float-looking string', '1e3', '"1e3"'],
    ['a leading dot number', '.5', '".5"'],
    ['.inf', '.inf', '".inf"'],
    ['a signed number', '+1', '"+1"'],
    ['a date', '2024-01-01T00:00:00Z', '"2024-01-01T00:00:00Z"'],
    ['a dash', '- x', '"- x"'],
    ['a leading dash word', '-x', '"-x"'],
    ['a question mark', '?x', '"?x"'],
    ['a bracket', '[x]', '"[x]"'],
    ['a brace', '{x}', '"{x}"'],
    ['an anchor', '&a', '"&a"'],
    ['an alias', '*a', '"*a"'],
    ['a tag', '!t', '"!t"'],
    ['a literal block indicator', '|x', '"|x"'],
    ['a folded block indicator', '>x', '">x"'],
    ['a single quote', "'x", '"\'x"'],
    ['a double quote', '"x', '"\\"x"'],
    ['a directive', '%x', '"%x"'],
    ['an at sign', '@x', '"@x"'],
    ['a backtick', '`x', '"`x"'],
    ['a comma', ',x', '",x"'],
    ['a document end', '...', '"..."'],
    ['a newline', 'a\nb', '"a\\nb"'],
    ['a tab', 'a\tb', '"a\\tb"'],
    ['a control character', 'a\u0001', '"a\\u0001"'],
    ['a backslash, quoted', 'a\\b\n', '"a\\\\b\\n"'],
    ['non-ASCII text stays plain', 'revision 2 → 1', 'revision 2 → 1'],
    ['a byte order mark', '\ufeffx', '"\\ufeffx"'],
    ['null', null, 'null'],
    ['true', true, 'true'],
    ['a number', 3, '3'],
    ['a negative fraction', -1.5, '-1.5'],
    ['minus zero', -0, '-0'],
    ['an empty object', {}, '{}'],
    ['an empty array', [], '[]'],
  ];
  for (const [name, value, want] of cases) {
    it(`${name}: ${JSON.stringify(value)} → ${want}`, () => {
      assert.equal(emitYaml(value), `${want}\n`);
      assert.deepEqual(parse(emitYaml(value)), value);
    });
  }
});

describe('emitYaml: collections', () => {
  it('nests maps and sequences in block style, empty ones inline, undefined left out', () => {
    const doc = {
      kind: 'RolloutGuard',
      metadata: { name: 'decoder', labels: {} },
      status: {
        state: 'Stalled',
        generations: [
          { hash: 'bbb222', nodes: 1, images: ['registry.example/decoder:bbb222'] },
          { hash: 'aaa111', nodes: 2, images: [] },
        ],
        matrix: [[1, 2], []],
        skipped: undefined,
      },
    };
    const want = [
      'kind: RolloutGuard',
      'metadata:',
      '  name: decoder',
      '  labels: {}',
      'status:',
      '  state: Stalled',
      '  generations:',
      '    - hash: bbb222',
      '      nodes: 1',
      '      images:',
      '        - registry.example/decoder:bbb222',
      '    - hash: aaa111',
      '      nodes: 2',
      '      images: []',
      '  matrix:',
      '    - - 1',
      '      - 2',
      '    - []',
      '',
    ].join('\n');
    assert.equal(emitYaml(doc), want);
    assert.deepEqual(parse(want), JSON.parse(JSON.stringify(doc)));
  });

  it('quotes keys by the same rule as values', () => {
    assert.equal(
      emitYaml({ '': 1, 'a: b': 2, true: 3, 'rolloutguard.dev/undo': 'disabled' }),
      '"": 1\n"a: b": 2\n"true": 3\nrolloutguard.dev/undo: disabled\n',
    );
  });

  it('plainSafe says which strings stay unquoted', () => {
    assert.equal(plainSafe('ImagePullBackOff (Revision)'), true);
    assert.equal(plainSafe('3'), false);
  });
});

describe('emitYaml: property', () => {
  /** `v` with every object an ordinary one, as a reader makes them (fast-check also makes null-prototype ones). */
  const ordinary = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(ordinary);
    if (typeof v !== 'object' || v === null) return v;
    const o: Record<string, unknown> = {};
    // defineProperty, so that a key `__proto__` is a key and not the prototype.
    for (const [k, x] of Object.entries(v))
      Object.defineProperty(o, k, { value: ordinary(x), enumerable: true, writable: true, configurable: true });
    return o;
  };
  const roundTrips = (v: unknown): void => {
    const text = emitYaml(v);
    assert.deepEqual(parse(text), ordinary(v), text);
  };

  it('yaml.parse(emitYaml(x)) deep-equals x for any JSON value', () => {
    fc.assert(fc.property(fc.jsonValue(), roundTrips), { numRuns: 2000 });
  });

  it('and for JSON values with strings of any Unicode, lone surrogates included', () => {
    const s = fc.string({ unit: 'binary' });
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.boolean(),
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        s,
        fc.array(tie('value')),
        fc.dictionary(s, tie('value')),
      ),
    })).value;
    fc.assert(fc.property(json, roundTrips), { numRuns: 2000 });
  });

  it('and for strings made of the characters YAML gives meaning to', () => {
    const tricky = fc.string({ unit: fc.constantFrom(...'-?:,[]{}#&*!|>\'"%@` \n\t.0123456789eE+~yYnN<=\\') });
    fc.assert(fc.property(tricky, roundTrips), { numRuns: 5000 });
    fc.assert(fc.property(fc.dictionary(tricky, tricky), roundTrips), { numRuns: 2000 });
  });
});
