/**
 * Where the time of an explanation went, in the operator: for each status write that newly names a node
 * blocked for a definite reason (the write a person waits for), its parts in the explanation histogram
 * and one log line with the moments themselves.
 *
 * The parts, on the operator's own clocks:
 * - `fromEvent`: from the failing pod's watch event arriving (the pod watches stamp it) to the write's
 *   answer: the whole of the operator's share, whatever the key waited for;
 * - `queue`: the key's wait for a worker since it was first queued (which may be before the failure came);
 * - `pass`: gather and decide; `write`: the status PATCH; `total`: queue + pass + write.
 *
 * The log line carries the same moments as wall-clock times, with the written status's resourceVersion,
 * so a reader of both ends (a watch of the pods and of the guard, as the benchmark is) can account for
 * every second of a slow explanation: the watch's delivery before, the reader's after.
 *
 * @module
 */
import type { Logger } from 'pino';
import type { BlockedNode } from '../api/types.js';
import type { FailureSighting, ReconcileObserver } from './ports.js';

/** At most this many newly failing nodes are named in the log line; the count says how many there were. */
const NAMED = 5;

/** A pass's moments, as performance.now() (monotonic ms). */
export interface ExplanationMoments {
  /** How long the key waited for its worker. */
  queueWaitMs: number;
  /** The pass began. */
  started: number;
  /** The status PATCH was sent, and its answer came. */
  writeStarted: number;
  wroteAt: number;
}

/** What the write named and what the caches know of it. */
export interface ExplainingWrite {
  newlyFailing: readonly BlockedNode[];
  /** When the watch first saw each pod failing, and the write stamp of what it saw, where it did. */
  failureSeen: (pod: string) => FailureSighting | undefined;
  /** The written status's resourceVersion. */
  resourceVersion?: string;
}

/**
 * Observes the parts and logs the moments. `wallNow` and `monoNow` are read together, so a monotonic
 * moment `t` is the wall time `wallNow - (monoNow - t)`.
 */
export function recordExplanation(
  metrics: Pick<ReconcileObserver, 'explanation'>,
  log: Logger,
  t: ExplanationMoments,
  w: ExplainingWrite,
  clocks: { wallNow: number; monoNow: number },
): void {
  const m = metrics.explanation;
  m.observe({ part: 'queue' }, t.queueWaitMs / 1000);
  m.observe({ part: 'pass' }, (t.writeStarted - t.started) / 1000);
  m.observe({ part: 'write' }, (t.wroteAt - t.writeStarted) / 1000);
  m.observe({ part: 'total' }, (t.queueWaitMs + t.wroteAt - t.started) / 1000);
  const wall = (mono: number): number => clocks.wallNow - (clocks.monoNow - mono);
  let first: { pod: string; seen: FailureSighting } | undefined;
  for (const b of w.newlyFailing) {
    const seen = b.pod === undefined ? undefined : w.failureSeen(b.pod);
    if (b.pod !== undefined && seen !== undefined && (first === undefined || seen.at < first.seen.at)) first = { pod: b.pod, seen };
  }
  const firstSeen = first?.seen.at;
  const wroteAt = wall(t.wroteAt);
  if (firstSeen !== undefined) m.observe({ part: 'fromEvent' }, Math.max(0, wroteAt - firstSeen) / 1000);
  const stamp = (ms: number): string => new Date(Math.round(ms)).toISOString();
  log.info(
    {
      nodes: w.newlyFailing.slice(0, NAMED).map((b) => (b.pod === undefined ? b.node : `${b.node} (${b.pod})`)),
      newlyFailing: w.newlyFailing.length,
      // The earliest failure this write names: its pod, when its watch saw it, and the write stamp of the
      // event it came in. A sighting long after its stamp is a watch behind; a pod other than the first
      // that failed is a failure the status named late.
      ...(first !== undefined ? { failurePod: first.pod, failureSeenAt: stamp(first.seen.at) } : {}),
      ...(first?.seen.writtenAt !== undefined ? { failureWrittenAt: stamp(first.seen.writtenAt) } : {}),
      queuedAt: stamp(wall(t.started - t.queueWaitMs)),
      passStartedAt: stamp(wall(t.started)),
      writeStartedAt: stamp(wall(t.writeStarted)),
      wroteAt: stamp(wroteAt),
      ...(w.resourceVersion !== undefined ? { resourceVersion: w.resourceVersion } : {}),
    },
    'status names newly failing nodes',
  );
}
