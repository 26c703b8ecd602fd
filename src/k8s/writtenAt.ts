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

/* eslint-disable @typescript-eslint/no-explicit-any -- raw API JSON, read defensively */
/** The newest write stamp of a raw API object, in ms since the epoch; absent without one. */
export function lastWrittenAt(raw: unknown): number | undefined {
  const o = raw as any;
  const m = o?.metadata;
  let newest: number | undefined;
  const see = (t: unknown, lessMs = 0): void => {
    if (typeof t !== 'string') return;
    const ms = Date.parse(t) - lessMs;
    if (!Number.isNaN(ms) && (newest === undefined || ms > newest)) newest = ms;
  };
  see(m?.creationTimestamp);
  if (Array.isArray(m?.managedFields)) for (const f of m.managedFields) see(f?.time);
  const conditions = o?.status?.conditions;
  if (Array.isArray(conditions)) for (const c of conditions) see(c?.lastTransitionTime);
  const grace = m?.deletionGracePeriodSeconds;
  if (m?.deletionTimestamp !== undefined) see(m.deletionTimestamp, typeof grace === 'number' ? grace * 1000 : 0);
  return newest;
}
/* eslint-enable @typescript-eslint/no-explicit-any */
