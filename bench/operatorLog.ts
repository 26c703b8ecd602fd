/**
 * What the bench reads from the operator's log: the lines that carry moments no metric holds. The
 * figures themselves come from /metrics and the bench's own watches; these lines only join the two ends
 * of a slow explanation (bench/explanationParts.ts) and say why a pod watch was opened or ended.
 *
 * - `status names newly failing nodes` (reconcile/explanationTiming.ts): the moments of each write that
 *   newly names a failing node, with the written status's resourceVersion;
 * - `watching the pods of the target` / `no longer watching the pods of the target` (runtime/podWatches.ts),
 *   with why;
 * - a pod watch's own restarts: the API server ending it early, its history expiring (410), a relist.
 *
 * @module
 */

/** One explaining write, its moments in ms since the epoch. */
export interface LoggedExplainingWrite {
  /** `namespace/name` of the guard. */
  guard: string;
  resourceVersion?: string;
  failureSeenAt?: number;
  /** The write stamp of the pod event in which the operator first saw that failure (whole seconds). */
  failureWrittenAt?: number;
  /** The pod of that failure: the earliest-seen failure this write newly names. */
  failurePod?: string;
  queuedAt: number;
  passStartedAt: number;
  writeStartedAt: number;
  wroteAt: number;
}

/** A pod watch opened, ended, or restarted, for one target. */
export interface PodWatchChange {
  at: number;
  /** `namespace/name` of the target. */
  target: string;
  what: 'opened' | 'ended' | 'endedEarly' | 'expired' | 'relisted' | 'failed';
  why?: string;
  watchedMs?: number;
  /** An ended watch: its events, and the most one arrived behind its write stamp. */
  events?: number;
  maxLagMs?: number;
}

export class OperatorLog {
  readonly explained: LoggedExplainingWrite[] = [];
  readonly podWatches: PodWatchChange[] = [];

  /** Takes one line of the operator's output; lines that are not JSON or not of interest are skipped. */
  line(text: string): void {
    if (!text.startsWith('{')) return;
    let l: Record<string, unknown>;
    try {
      l = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    const msg = l.msg;
    if (msg === 'status names newly failing nodes') {
      const w = loggedExplainingWrite(l);
      if (w) this.explained.push(w);
      return;
    }
    const target = typeof l.daemonSet === 'string' ? l.daemonSet : typeof l.statefulSet === 'string' ? l.statefulSet : undefined;
    const at = ms(l.time);
    if (target === undefined || at === undefined) return;
    const what = podWatchChange(msg, l.informer);
    if (what === undefined) return;
    this.podWatches.push({
      at,
      target,
      what,
      ...(typeof l.why === 'string' ? { why: l.why } : {}),
      ...(typeof l.watchedMs === 'number' ? { watchedMs: l.watchedMs } : {}),
      ...(typeof l.events === 'number' ? { events: l.events } : {}),
      ...(typeof l.maxLagMs === 'number' ? { maxLagMs: l.maxLagMs } : {}),
    });
  }

  /**
   * The explaining write of guard `namespace/name` that stored resourceVersion `rv`, else the last one it
   * answered by `before` (ms): the status that explained came with a later write, which named no node
   * anew (the cause settled after the node was named).
   */
  writeFor(guard: string, rv: string | undefined, before: number): { write: LoggedExplainingWrite; same: boolean } | undefined {
    const same = this.write(guard, rv);
    if (same) return { write: same, same: true };
    const earlier = this.explained.filter((w) => w.guard === guard && w.wroteAt <= before).at(-1);
    return earlier ? { write: earlier, same: false } : undefined;
  }

  /** The explaining write of guard `namespace/name` that stored resourceVersion `rv`. */
  write(guard: string, rv: string | undefined): LoggedExplainingWrite | undefined {
    if (rv === undefined) return undefined;
    return this.explained.find((w) => w.guard === guard && w.resourceVersion === rv);
  }
}

function podWatchChange(msg: unknown, informer: unknown): PodWatchChange['what'] | undefined {
  if (msg === 'watching the pods of the target') return 'opened';
  if (msg === 'no longer watching the pods of the target') return 'ended';
  if (informer !== 'pods') return undefined;
  if (msg === 'the API server ended the watch before its timeout, re-watching') return 'endedEarly';
  if (msg === 'watch history expired (410), relisting') return 'expired';
  if (msg === 'relisted') return 'relisted';
  if (msg === 'list/watch failed, restarting after backoff') return 'failed';
  return undefined;
}

function ms(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

function loggedExplainingWrite(l: Record<string, unknown>): LoggedExplainingWrite | undefined {
  const [queuedAt, passStartedAt, writeStartedAt, wroteAt] = [l.queuedAt, l.passStartedAt, l.writeStartedAt, l.wroteAt].map(ms);
  if (typeof l.guard !== 'string' || queuedAt === undefined || passStartedAt === undefined) return undefined;
  if (writeStartedAt === undefined || wroteAt === undefined) return undefined;
  const failureSeenAt = ms(l.failureSeenAt);
  const failureWrittenAt = ms(l.failureWrittenAt);
  return {
    guard: l.guard,
    ...(typeof l.resourceVersion === 'string' ? { resourceVersion: l.resourceVersion } : {}),
    ...(failureSeenAt !== undefined ? { failureSeenAt } : {}),
    ...(failureWrittenAt !== undefined ? { failureWrittenAt } : {}),
    ...(typeof l.failurePod === 'string' ? { failurePod: l.failurePod } : {}),
    queuedAt,
    passStartedAt,
    writeStartedAt,
    wroteAt,
  };
}
