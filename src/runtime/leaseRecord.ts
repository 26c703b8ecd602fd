/**
 * The election record a Lease carries, and what a candidate makes of it: the spec it writes to take, keep or give
 * up the lease, and when, on its own monotonic clock, another holder's lease runs out (client-go's
 * `resourcelock.LeaderElectionRecord` and the elector's observedRecord/observedTime).
 *
 * Validity is judged on LOCAL monotonic time: "the lease record last changed at our observedAt; it is valid until
 * observedAt + leaseDurationSeconds". The holder's `renewTime` is never compared with our clock, so clock skew
 * between nodes cannot make us steal a live lease.
 */
import { COORDINATION_API_VERSION } from '../api/names.js';
import type { Clock } from '../reconcile/ports.js';

/** `coordination.k8s.io/v1` LeaseSpec; times are MicroTime strings. */
export interface LeaseSpec {
  /** Current holder; '' or absent when free. */
  holderIdentity?: string;
  /** How long candidates wait after observing the last change; the holder's own setting applies. */
  leaseDurationSeconds?: number;
  /** When the current holder acquired the lease. */
  acquireTime?: string;
  /** When the holder last renewed (informational: other candidates never compare it with their clock). */
  renewTime?: string;
  /** Number of holder changes. */
  leaseTransitions?: number;
}

/** The parts of a Lease object we read and write. */
export interface Lease {
  /** `coordination.k8s.io/v1`. */
  apiVersion?: string;
  /** `Lease`. */
  kind?: string;
  /** Kept whole on PUT (labels, annotations); `resourceVersion` makes the PUT a compare-and-swap. */
  metadata: { name: string; namespace?: string; resourceVersion?: string; [k: string]: unknown };
  /** The election record. */
  spec?: LeaseSpec;
}

/** A new Lease held by `identity` from `now` (a MicroTime). */
export function newLease(name: string, namespace: string, identity: string, leaseDurationSeconds: number, now: string): Lease {
  return {
    apiVersion: COORDINATION_API_VERSION,
    kind: 'Lease',
    metadata: { name, namespace },
    spec: { holderIdentity: identity, leaseDurationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 },
  };
}

/** The holder's renewal of its own record: only the renew time (and our lease duration) change. */
export function renewedSpec(spec: LeaseSpec, leaseDurationSeconds: number, now: string): LeaseSpec {
  return { ...spec, renewTime: now, leaseDurationSeconds };
}

/**
 * The record `identity` writes over `old` to take the lease, or to keep it after re-reading it: a takeover
 * starts a new acquireTime and counts a transition, keeping it changes neither.
 */
export function acquiredSpec(old: LeaseSpec, identity: string, leaseDurationSeconds: number, now: string): LeaseSpec {
  const weHeldIt = (old.holderIdentity ?? '') === identity;
  return {
    holderIdentity: identity,
    leaseDurationSeconds,
    acquireTime: weHeldIt && old.acquireTime ? old.acquireTime : now,
    renewTime: now,
    leaseTransitions: (old.leaseTransitions ?? 0) + (weHeldIt ? 0 : 1),
  };
}

/** The record a holder leaves when it lets go: no holder, and a 1 s lease so a successor need barely wait. */
export function releasedSpec(spec: LeaseSpec, now: string): LeaseSpec {
  return { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: spec.leaseTransitions ?? 0 };
}

/** The last Lease we read or wrote, and when (locally) its record last changed. */
export class ObservedLease {
  /** The last Lease we read or wrote (its resourceVersion is what our next PUT is checked against). */
  lease: Lease | undefined;
  /** Monotonic time at which the write behind our last successful acquire/renew was sent. */
  renewedAt = Number.NEGATIVE_INFINITY;
  /** Serialized spec of the last observed record and the monotonic time we first saw it. */
  private record = '';
  private at = 0;

  constructor(private readonly clock: Clock) {}

  /** The current holder, '' when free or unknown. */
  get holder(): string {
    return this.lease?.spec?.holderIdentity ?? '';
  }

  /** A Lease read from the API server. */
  saw(lease: Lease): void {
    const record = recordOf(lease.spec ?? {});
    if (record !== this.record) {
      // Someone (maybe us) wrote the lease since we last looked: restart the expiry clock from now, locally.
      this.record = record;
      this.at = this.clock.now();
    }
    this.lease = lease;
  }

  /** A Lease we just wrote (the write was sent at `sentAt`): our own write counts as an observed change. */
  wrote(lease: Lease, sentAt: number): void {
    this.renewedAt = sentAt;
    this.lease = lease;
    this.record = recordOf(lease.spec ?? {});
    this.at = this.clock.now();
  }

  /** client-go `isLeaseValid`: observedAt + the record's own leaseDurationSeconds is still in the future. */
  valid(): boolean {
    const seconds = this.lease?.spec?.leaseDurationSeconds ?? 0;
    return this.at + seconds * 1000 > this.clock.now();
  }
}

function recordOf(spec: LeaseSpec): string {
  return JSON.stringify([
    spec.holderIdentity ?? '',
    spec.leaseDurationSeconds ?? 0,
    spec.acquireTime ?? '',
    spec.renewTime ?? '',
    spec.leaseTransitions ?? 0,
  ]);
}
