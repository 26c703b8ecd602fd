/** lastWrittenAt: the newest write stamp of a raw object, defensively read. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lastWrittenAt } from '../../src/k8s/writtenAt.js';

describe('lastWrittenAt', () => {
  it("is the newest entry's time, whoever the manager", () => {
    const raw = {
      metadata: {
        managedFields: [
          { manager: 'kube-controller-manager', operation: 'Update', time: '2026-12-06T10:00:00Z' },
          { manager: 'kubelet', operation: 'Update', subresource: 'status', time: '2026-12-06T10:00:07Z' },
          { manager: 'kube-scheduler', operation: 'Update', subresource: 'status', time: '2026-12-06T10:00:03Z' },
        ],
      },
    };
    assert.equal(lastWrittenAt(raw), Date.parse('2026-12-06T10:00:07Z'));
  });

  it('counts the stamps a write leaves outside managedFields: creation, a condition, a graceful delete', () => {
    const fields = [{ manager: 'kube-controller-manager', time: '2026-12-06T10:00:00Z' }];
    assert.equal(
      lastWrittenAt({ metadata: { creationTimestamp: '2026-12-06T10:00:00Z', managedFields: fields } }),
      Date.parse('2026-12-06T10:00:00Z'),
    );
    const bound = {
      metadata: { managedFields: fields },
      status: { conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-12-06T10:00:04Z' }] },
    };
    assert.equal(lastWrittenAt(bound), Date.parse('2026-12-06T10:00:04Z'), 'bound to its node without a managedFields change');
    const deleting = { metadata: { managedFields: fields, deletionTimestamp: '2026-12-06T10:01:00Z', deletionGracePeriodSeconds: 30 } };
    assert.equal(lastWrittenAt(deleting), Date.parse('2026-12-06T10:00:30Z'), 'marked for deletion 30 s before its deadline');
    assert.equal(
      lastWrittenAt({ metadata: { managedFields: fields, deletionTimestamp: '2026-12-06T10:00:09Z' } }),
      Date.parse('2026-12-06T10:00:09Z'),
      'no grace period given: the deletion timestamp itself',
    );
  });

  it('is absent without managedFields or usable times, and skips entries it cannot read', () => {
    assert.equal(lastWrittenAt({ metadata: {} }), undefined);
    assert.equal(lastWrittenAt(null), undefined);
    assert.equal(lastWrittenAt({ metadata: { managedFields: 'x' } }), undefined);
    assert.equal(
      lastWrittenAt({ metadata: { managedFields: [{ time: 'soon' }, null, { time: 3 }] }, status: { conditions: [null, {}] } }),
      undefined,
    );
    assert.equal(
      lastWrittenAt({ metadata: { managedFields: [{ time: 'soon' }, { time: '2026-12-06T10:00:01Z' }] } }),
      Date.parse('2026-12-06T10:00:01Z'),
    );
  });
});
