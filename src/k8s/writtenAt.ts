/**
 * When the API server last wrote an object, from the object itself: the newest of the moments it
 * stamps as it writes.
 *
 * - `metadata.managedFields[].time`: stamped whenever a manager's write changes a field it owns (a
 *   kubelet's status update, the scheduler's `PodScheduled=False`, a controller's counters);
 * - `metadata.creationTimestamp`;
 * - `status.conditions[].lastTransitionTime`: a pod's binding to its node sets `PodScheduled=True`
 *   without touching managedFields;
 * - `metadata.deletionTimestamp` less `deletionGracePeriodSeconds`: a graceful delete marks the object
 *   without touching managedFields either.
 *
 * Each is a `metav1.Time`: whole seconds, truncated. A lag computed from it reads 0 to 1 s more than it
 * was; it tells a watch that is seconds behind from one that is not, nothing finer.
 *
 * @module
 */

/** The parts of a raw object this reads; anything may be missing or of another type. */
interface Stamped {
  metadata?: {
    creationTimestamp?: unknown;
    managedFields?: unknown;
    deletionTimestamp?: unknown;
    deletionGracePeriodSeconds?: unknown;
  } | null;
  status?: { conditions?: unknown } | null;
}

/** The newest write stamp of a raw API object, in ms since the epoch; absent without one. */
export function lastWrittenAt(raw: unknown): number | undefined {
  const o = raw as Stamped | null | undefined;
  const m = o?.metadata;
  let newest: number | undefined;
  const see = (t: unknown, lessMs = 0): void => {
    if (typeof t !== 'string') return;
    const ms = Date.parse(t) - lessMs;
    if (!Number.isNaN(ms) && (newest === undefined || ms > newest)) newest = ms;
  };
  const each = (list: unknown, field: 'time' | 'lastTransitionTime'): void => {
    if (Array.isArray(list)) for (const x of list as Array<Record<string, unknown> | null>) see(x?.[field]);
  };
  see(m?.creationTimestamp);
  each(m?.managedFields, 'time');
  each(o?.status?.conditions, 'lastTransitionTime');
  const grace = m?.deletionGracePeriodSeconds;
  if (m?.deletionTimestamp !== undefined) see(m.deletionTimestamp, typeof grace === 'number' ? grace * 1000 : 0);
  return newest;
}
