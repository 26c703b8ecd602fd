import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ObservedLease, acquiredSpec, newLease, releasedSpec, renewedSpec } from '../../src/runtime/leaseRecord.js';

const T0 = '2026-01-01T00:00:00.000000Z';
const T1 = '2026-01-01T00:00:10.000000Z';

describe('lease record', () => {
  it('a takeover starts a new term and counts a transition; keeping the lease changes neither', () => {
    const theirs = { holderIdentity: 'other', leaseDurationSeconds: 15, acquireTime: T0, renewTime: T0, leaseTransitions: 2 };
    assert.deepEqual(acquiredSpec(theirs, 'me', 15, T1), {
      holderIdentity: 'me',
      leaseDurationSeconds: 15,
      acquireTime: T1,
      renewTime: T1,
      leaseTransitions: 3,
    });
    const ours = { ...theirs, holderIdentity: 'me' };
    assert.deepEqual(acquiredSpec(ours, 'me', 15, T1), { ...ours, renewTime: T1 });
  });

  it('renewal, release and creation', () => {
    const spec = { holderIdentity: 'me', leaseDurationSeconds: 20, acquireTime: T0, renewTime: T0, leaseTransitions: 4 };
    assert.deepEqual(renewedSpec(spec, 15, T1), { ...spec, renewTime: T1, leaseDurationSeconds: 15 });
    assert.deepEqual(releasedSpec(spec, T1), {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: T1,
      renewTime: T1,
      leaseTransitions: 4,
    });
    const lease = newLease('rg', 'ns', 'me', 15, T0);
    assert.equal(lease.metadata.namespace, 'ns');
    assert.equal(lease.spec?.leaseTransitions, 0);
  });

  it('a lease is valid for its duration from when we first saw its record change, on our clock', () => {
    let now = 1_000;
    const seen = new ObservedLease({ now: () => now });
    const lease = { metadata: { name: 'rg' }, spec: { holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: T0 } };
    seen.saw(lease);
    assert.equal(seen.holder, 'other');
    now += 14_000;
    seen.saw({ ...lease }); // the same record again: the expiry clock keeps running
    assert.equal(seen.valid(), true);
    now += 1_000;
    assert.equal(seen.valid(), false);
    seen.saw({ ...lease, spec: { ...lease.spec, renewTime: T1 } }); // a renewal restarts it
    assert.equal(seen.valid(), true);
    seen.wrote({ metadata: { name: 'rg' }, spec: { holderIdentity: 'me', leaseDurationSeconds: 15 } }, 123);
    assert.equal(seen.renewedAt, 123);
    assert.equal(seen.holder, 'me');
  });
});
