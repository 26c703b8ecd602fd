import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { selectorString } from '../../src/k8s/labelSelector.js';

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
