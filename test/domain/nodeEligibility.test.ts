/**
 * evaluateNode: the target-set part of the DaemonSet controller's NodeShouldRunDaemonPod — nodeSelector,
 * required node affinity, and NoSchedule/NoExecute taints against tolerations (plus the tolerations the
 * controller adds to every daemon pod).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateNode, type NodePlacement, type PlacementSpec } from '../../src/domain/nodeEligibility.js';
import type { Taint } from '../../src/api/objects.js';

const node = (o: Partial<NodePlacement> = {}): NodePlacement => ({ name: 'node-1', labels: {}, taints: [], ...o });
const taint = (key: string, effect: string, value?: string): Taint => (value === undefined ? { key, effect } : { key, value, effect });

interface Case {
  name: string;
  spec: PlacementSpec;
  node: NodePlacement;
  eligible: boolean;
  reason?: string;
}

function table(cases: Case[]): void {
  for (const tc of cases) {
    it(`${tc.name} → ${tc.eligible ? 'eligible' : 'not eligible'}`, () => {
      const r = evaluateNode(tc.spec, tc.node);
      assert.equal(r.eligible, tc.eligible);
      if (tc.eligible) assert.equal(r.reason, undefined);
      else assert.equal(r.reason, tc.reason);
    });
  }
}

describe('evaluateNode: nodeSelector', () => {
  table([
    { name: 'no constraints', spec: {}, node: node(), eligible: true },
    {
      name: 'all selector labels match',
      spec: { nodeSelector: { pool: 'a', zone: 'z1' } },
      node: node({ labels: { pool: 'a', zone: 'z1', extra: 'x' } }),
      eligible: true,
    },
    {
      name: 'a label value differs',
      spec: { nodeSelector: { pool: 'a' } },
      node: node({ labels: { pool: 'b' } }),
      eligible: false,
      reason: 'nodeSelector pool=a not matched',
    },
    {
      name: 'a label is missing',
      spec: { nodeSelector: { pool: 'a', zone: 'z1' } },
      node: node({ labels: { pool: 'a' } }),
      eligible: false,
      reason: 'nodeSelector zone=z1 not matched',
    },
  ]);
});

describe('evaluateNode: required node affinity', () => {
  const expr = (key: string, operator: string, values?: string[]): PlacementSpec => ({
    nodeSelectorTerms: [{ matchExpressions: [values ? { key, operator, values } : { key, operator }] }],
  });
  const NO = 'required node affinity not matched';
  const labelled = node({ labels: { pool: 'a', cores: '16' } });
  table([
    { name: 'In, value listed', spec: expr('pool', 'In', ['a', 'b']), node: labelled, eligible: true },
    { name: 'In, value not listed', spec: expr('pool', 'In', ['b']), node: labelled, eligible: false, reason: NO },
    { name: 'In, label absent', spec: expr('gpu', 'In', ['true']), node: labelled, eligible: false, reason: NO },
    { name: 'NotIn, value not listed', spec: expr('pool', 'NotIn', ['b']), node: labelled, eligible: true },
    { name: 'NotIn, value listed', spec: expr('pool', 'NotIn', ['a']), node: labelled, eligible: false, reason: NO },
    { name: 'NotIn, label absent', spec: expr('gpu', 'NotIn', ['true']), node: labelled, eligible: true },
    { name: 'Exists, present', spec: expr('pool', 'Exists'), node: labelled, eligible: true },
    { name: 'Exists, absent', spec: expr('gpu', 'Exists'), node: labelled, eligible: false, reason: NO },
    { name: 'DoesNotExist, absent', spec: expr('gpu', 'DoesNotExist'), node: labelled, eligible: true },
    { name: 'DoesNotExist, present', spec: expr('pool', 'DoesNotExist'), node: labelled, eligible: false, reason: NO },
    { name: 'Gt, larger', spec: expr('cores', 'Gt', ['8']), node: labelled, eligible: true },
    { name: 'Gt, equal', spec: expr('cores', 'Gt', ['16']), node: labelled, eligible: false, reason: NO },
    { name: 'Lt, smaller', spec: expr('cores', 'Lt', ['32']), node: labelled, eligible: true },
    { name: 'Lt, larger', spec: expr('cores', 'Lt', ['4']), node: labelled, eligible: false, reason: NO },
    { name: 'Gt, label not an integer', spec: expr('pool', 'Gt', ['1']), node: labelled, eligible: false, reason: NO },
    { name: 'Gt, label absent', spec: expr('gpu', 'Gt', ['1']), node: labelled, eligible: false, reason: NO },
    { name: 'Gt with two values is invalid', spec: expr('cores', 'Gt', ['1', '2']), node: labelled, eligible: false, reason: NO },
    { name: 'an unknown operator never matches', spec: expr('pool', 'Like', ['a']), node: labelled, eligible: false, reason: NO },
    {
      name: 'requirements within a term are ANDed',
      spec: {
        nodeSelectorTerms: [
          {
            matchExpressions: [
              { key: 'pool', operator: 'In', values: ['a'] },
              { key: 'gpu', operator: 'Exists' },
            ],
          },
        ],
      },
      node: labelled,
      eligible: false,
      reason: NO,
    },
    {
      name: 'terms are ORed',
      spec: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'gpu', operator: 'Exists' }] },
          { matchExpressions: [{ key: 'pool', operator: 'In', values: ['a'] }] },
        ],
      },
      node: labelled,
      eligible: true,
    },
    { name: 'an empty term matches nothing', spec: { nodeSelectorTerms: [{}] }, node: labelled, eligible: false, reason: NO },
    { name: 'no terms at all places no constraint', spec: { nodeSelectorTerms: [] }, node: labelled, eligible: true },
    {
      name: 'matchFields metadata.name In (how the controller pins pods)',
      spec: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-1'] }] }] },
      node: labelled,
      eligible: true,
    },
    {
      name: 'matchFields metadata.name, another node',
      spec: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-2'] }] }] },
      node: labelled,
      eligible: false,
      reason: NO,
    },
    {
      name: 'matchFields metadata.name NotIn',
      spec: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['node-2'] }] }] },
      node: labelled,
      eligible: true,
    },
    {
      name: 'matchFields on a field other than metadata.name never matches In',
      spec: { nodeSelectorTerms: [{ matchFields: [{ key: 'spec.unschedulable', operator: 'In', values: ['node-1'] }] }] },
      node: labelled,
      eligible: false,
      reason: NO,
    },
    {
      name: 'matchExpressions and matchFields in one term are ANDed',
      spec: {
        nodeSelectorTerms: [
          {
            matchExpressions: [{ key: 'pool', operator: 'In', values: ['a'] }],
            matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-9'] }],
          },
        ],
      },
      node: labelled,
      eligible: false,
      reason: NO,
    },
    {
      name: 'nodeSelector is checked before affinity',
      spec: { nodeSelector: { pool: 'b' }, nodeSelectorTerms: [{}] },
      node: labelled,
      eligible: false,
      reason: 'nodeSelector pool=b not matched',
    },
  ]);
});

describe('evaluateNode: taints and tolerations', () => {
  table([
    {
      name: 'untolerated NoSchedule',
      spec: {},
      node: node({ taints: [taint('dedicated', 'NoSchedule', 'infra')] }),
      eligible: false,
      reason: 'untolerated taint dedicated=infra:NoSchedule',
    },
    {
      name: 'untolerated NoExecute',
      spec: {},
      node: node({ taints: [taint('gpu', 'NoExecute', 'broken')] }),
      eligible: false,
      reason: 'untolerated taint gpu=broken:NoExecute',
    },
    {
      name: 'untolerated taint without value',
      spec: {},
      node: node({ taints: [taint('maintenance', 'NoSchedule')] }),
      eligible: false,
      reason: 'untolerated taint maintenance:NoSchedule',
    },
    {
      name: 'PreferNoSchedule is ignored',
      spec: {},
      node: node({ taints: [taint('dedicated', 'PreferNoSchedule', 'infra')] }),
      eligible: true,
    },
    {
      name: 'Equal toleration with the same value',
      spec: { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' }] },
      node: node({ taints: [taint('dedicated', 'NoSchedule', 'infra')] }),
      eligible: true,
    },
    {
      name: 'operator omitted means Equal',
      spec: { tolerations: [{ key: 'dedicated', value: 'infra' }] },
      node: node({ taints: [taint('dedicated', 'NoSchedule', 'infra')] }),
      eligible: true,
    },
    {
      name: 'Equal toleration with another value',
      spec: { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }] },
      node: node({ taints: [taint('dedicated', 'NoSchedule', 'infra')] }),
      eligible: false,
      reason: 'untolerated taint dedicated=infra:NoSchedule',
    },
    {
      name: 'Exists toleration on the key, any value',
      spec: { tolerations: [{ key: 'dedicated', operator: 'Exists' }] },
      node: node({ taints: [taint('dedicated', 'NoExecute', 'anything')] }),
      eligible: true,
    },
    {
      name: 'a toleration for another effect does not apply',
      spec: { tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }] },
      node: node({ taints: [taint('dedicated', 'NoExecute', 'infra')] }),
      eligible: false,
      reason: 'untolerated taint dedicated=infra:NoExecute',
    },
    {
      name: 'empty key with Exists tolerates everything',
      spec: { tolerations: [{ operator: 'Exists' }] },
      node: node({ taints: [taint('a', 'NoSchedule'), taint('b', 'NoExecute', 'x')] }),
      eligible: true,
    },
    {
      name: 'empty key with Exists and an effect tolerates only that effect',
      spec: { tolerations: [{ operator: 'Exists', effect: 'NoSchedule' }] },
      node: node({ taints: [taint('a', 'NoSchedule'), taint('b', 'NoExecute', 'x')] }),
      eligible: false,
      reason: 'untolerated taint b=x:NoExecute',
    },
    {
      name: 'every taint must be tolerated',
      spec: { tolerations: [{ key: 'a', operator: 'Exists' }] },
      node: node({ taints: [taint('a', 'NoSchedule'), taint('b', 'NoSchedule')] }),
      eligible: false,
      reason: 'untolerated taint b:NoSchedule',
    },
  ]);

  describe('tolerations the DaemonSet controller adds to every daemon pod', () => {
    const defaults: [string, string][] = [
      ['node.kubernetes.io/not-ready', 'NoExecute'],
      ['node.kubernetes.io/unreachable', 'NoExecute'],
      ['node.kubernetes.io/disk-pressure', 'NoSchedule'],
      ['node.kubernetes.io/memory-pressure', 'NoSchedule'],
      ['node.kubernetes.io/pid-pressure', 'NoSchedule'],
      ['node.kubernetes.io/unschedulable', 'NoSchedule'],
      ['node.kubernetes.io/network-unavailable', 'NoSchedule'],
    ];
    table(
      defaults.map(([key, effect]): Case => ({
        name: `${key}:${effect}`,
        spec: {},
        node: node({ taints: [taint(key, effect)] }),
        eligible: true,
      })),
    );
    table([
      {
        name: 'the defaults are effect-specific: node.kubernetes.io/unschedulable:NoExecute is not tolerated',
        spec: {},
        node: node({ taints: [taint('node.kubernetes.io/unschedulable', 'NoExecute')] }),
        eligible: false,
        reason: 'untolerated taint node.kubernetes.io/unschedulable:NoExecute',
      },
    ]);
  });
});
