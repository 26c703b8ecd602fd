import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { selectorString, slimLabelSelector } from '../../src/k8s/labelSelector.js';

describe('selectorString', () => {
  const cases: Array<{ name: string; sel: Parameters<typeof selectorString>[0]; extra?: string[]; want: string }> = [
    { name: 'matchLabels, sorted by key', sel: { matchLabels: { name: 'agent', app: 'gpu' } }, want: 'app=gpu,name=agent' },
    {
      name: 'In and NotIn with sorted values',
      sel: {
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['b', 'a'] },
          { key: 'env', operator: 'NotIn', values: ['dev'] },
        ],
      },
      want: 'env notin (dev),tier in (a,b)',
    },
    {
      name: 'Exists and DoesNotExist',
      sel: {
        matchExpressions: [
          { key: 'x', operator: 'Exists' },
          { key: 'canary', operator: 'DoesNotExist' },
        ],
      },
      want: '!canary,x',
    },
    {
      name: 'labels, then expressions, then extra',
      sel: { matchLabels: { app: 'a' }, matchExpressions: [{ key: 'k', operator: 'Exists' }] },
      extra: ['controller-revision-hash'],
      want: 'app=a,k,controller-revision-hash',
    },
    {
      name: 'no selector: only the extra requirement',
      sel: undefined,
      extra: ['controller-revision-hash'],
      want: 'controller-revision-hash',
    },
  ];
  for (const c of cases) it(c.name, () => assert.equal(selectorString(c.sel, c.extra), c.want));

  it('refuses an operator it does not know rather than matching more or less', () => {
    assert.throws(
      () => selectorString({ matchExpressions: [{ key: 'k', operator: 'Gt', values: ['1'] }] }),
      /operator Gt is not supported/,
    );
  });
});

describe('slimLabelSelector', () => {
  const expressions = [{ key: 'tier', operator: 'In', values: ['a', 'b'] }];
  const cases: Array<{ name: string; raw: unknown; want: ReturnType<typeof slimLabelSelector> }> = [
    {
      name: 'matchLabels and matchExpressions',
      raw: { matchLabels: { app: 'agent' }, matchExpressions: expressions },
      want: { matchLabels: { app: 'agent' }, matchExpressions: expressions },
    },
    { name: 'matchLabels alone', raw: { matchLabels: { app: 'agent' } }, want: { matchLabels: { app: 'agent' } } },
    { name: 'matchExpressions that are not a list are left out', raw: { matchExpressions: { key: 'tier' } }, want: {} },
    {
      name: 'fields other than the two are left out',
      raw: { matchLabels: { app: 'agent' }, extra: 1 },
      want: { matchLabels: { app: 'agent' } },
    },
    { name: 'no selector', raw: undefined, want: {} },
    { name: 'a null selector', raw: null, want: {} },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(slimLabelSelector(c.raw), c.want));

  it('shares nothing with the raw object: a change to it after slimming is not seen', () => {
    const raw = { matchLabels: { app: 'agent' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] };
    const slim = slimLabelSelector(raw);
    raw.matchLabels.app = 'other';
    raw.matchExpressions[0]!.values.push('b');
    assert.deepEqual(slim, { matchLabels: { app: 'agent' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] });
  });
});
