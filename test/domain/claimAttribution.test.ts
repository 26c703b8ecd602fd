/**
 * A StatefulSet ordinal blocked by its claim: which claim states explain a pod (or its absence), and
 * that none of them is ever the revision's fault.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { claimFault } from '../../src/domain/claimAttribution.js';
import type { ClaimView, PodView } from '../../src/domain/observation.js';

const pod = (scheduled: boolean): PodView => ({
  name: 'store-2',
  hash: 'bbb',
  ready: false,
  available: false,
  deleting: false,
  phase: 'Pending',
  scheduled,
  restartCount: 0,
  images: [],
  createdAt: '2026-01-01T00:00:00Z',
});

const deleting: ClaimView = { name: 'data-store-2', phase: 'Bound', deletingSince: '2026-01-01T00:00:00Z' };
const pending: ClaimView = { name: 'data-store-2', phase: 'Pending', storageClass: 'local' };
const lost: ClaimView = { name: 'data-store-2', phase: 'Lost' };
const missing: ClaimView = { name: 'data-store-2', phase: 'Missing' };
const unit = (...claims: ClaimView[]): { node: string; claims: ClaimView[] } => ({ node: 'store-2', claims });

describe('claimFault', () => {
  const cases: Array<[string, ReturnType<typeof unit>, PodView | undefined, string, string | undefined]> = [
    [
      'a claim being deleted, unscheduled pod',
      unit(deleting),
      pod(false),
      'persistentvolumeclaim "data-store-2" is being deleted',
      'ClaimDeleting',
    ],
    ['a claim being deleted, no pod (the controller will not create it)', unit(deleting), undefined, '', 'ClaimDeleting'],
    ['a Lost claim', unit(lost), pod(false), '', 'ClaimLost'],
    ['a missing claim, unscheduled pod', unit(missing), pod(false), 'persistentvolumeclaim "data-store-2" not found', 'ClaimMissing'],
    ['a missing claim and no pod yet: the controller creates both', unit(missing), undefined, '', undefined],
    [
      'Pending, the scheduler waits for it to bind',
      unit(pending),
      pod(false),
      '0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims',
      'ClaimPending',
    ],
    [
      'Pending, no volume to bind (WaitForFirstConsumer)',
      unit(pending),
      pod(false),
      "0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind",
      'ClaimPending',
    ],
    [
      'Pending under WaitForFirstConsumer while the pod lacks cpu: not the claim',
      unit(pending),
      pod(false),
      '0/3 nodes are available: 3 Insufficient cpu',
      undefined,
    ],
    ['a scheduled pod is not waiting for its claim', unit(deleting), pod(true), '', undefined],
    ['no claims', unit(), pod(false), 'pod has unbound immediate PersistentVolumeClaims', undefined],
    ['the deleting claim wins over a Pending one', unit(pending, { ...deleting, name: 'logs-store-2' }), pod(false), 'x', 'ClaimDeleting'],
  ];
  for (const [name, u, p, message, want] of cases) {
    it(`${name} → ${want ?? 'not the claim'}`, () => {
      const got = claimFault(u, p, message);
      assert.equal(got?.reason, want);
      if (got) {
        assert.equal(got.cause, 'VolumeClaimUnavailable');
        assert.equal(got.owner, 'Configuration', 'a claim is never the revision: an undo cannot help');
        assert.match(got.comparison, /a pod of the previous revision would wait for the same claim/);
      }
    });
  }

  it('names the claim, and the pod to delete once a claim being deleted is gone', () => {
    const got = claimFault(unit(deleting), pod(false), '');
    assert.match(got?.message ?? '', /^claim data-store-2 is being deleted \(since 2026-01-01T00:00:00Z\): pod store-2 waits/);
    assert.match(got?.message ?? '', /deleting pod store-2 then has the StatefulSet controller create claim and pod again/);
    assert.match(
      claimFault(unit(pending), pod(false), 'pod has unbound immediate PersistentVolumeClaims')?.message ?? '',
      /claim data-store-2 of StorageClass local is Pending/,
    );
  });
});
