/**
 * The one Lease object an election runs on, read and written through the API (client-go's
 * `resourcelock/leaselock.go`). Every write sends the resourceVersion it was based on, so a concurrent writer
 * turns it into a 409 rather than a lost update.
 */
import type { ApiClient } from '../k8s/apiClient.js';
import { leasesPath } from '../k8s/apiPaths.js';
import type { Lease } from './leaseRecord.js';

/** GET, POST and PUT of one named Lease. */
export class LeaseLock {
  private readonly collection: string;
  private readonly item: string;

  constructor(
    private readonly client: ApiClient,
    namespace: string,
    name: string,
  ) {
    this.collection = leasesPath(namespace);
    this.item = `${this.collection}/${encodeURIComponent(name)}`;
  }

  /** The Lease as stored; rejects with a 404 ApiError when there is none. */
  get(signal: AbortSignal): Promise<Lease> {
    return this.client.request<Lease>('GET', this.item, { signal });
  }

  /** Creates the Lease; 409 when another candidate created it first, 404 when its namespace does not exist. */
  create(lease: Lease, signal: AbortSignal): Promise<Lease> {
    return this.client.request<Lease>('POST', this.collection, { body: lease, signal });
  }

  /** Replaces the Lease, checked against `lease.metadata.resourceVersion`. */
  update(lease: Lease, signal: AbortSignal): Promise<Lease> {
    return this.client.request<Lease>('PUT', this.item, { body: lease, signal });
  }
}
