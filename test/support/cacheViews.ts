/**
 * The workload accessor of a CacheView built from plain objects, for unit tests: a cache that holds the
 * workloads given, by kind (and, when `at` is given, only under that namespace and name).
 */
import type { SlimWorkloads } from '../../src/api/objects.js';
import type { TargetKind } from '../../src/api/types.js';
import type { CacheView } from '../../src/reconcile/ports.js';

export function holding(held: Partial<SlimWorkloads>, at?: { namespace: string; name: string }): CacheView['workload'] {
  const workload = (kind: TargetKind, namespace: string, name: string): SlimWorkloads[TargetKind] | undefined =>
    at && (namespace !== at.namespace || name !== at.name) ? undefined : held[kind];
  return workload as CacheView['workload'];
}
