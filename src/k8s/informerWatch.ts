/**
 * One watch of an informer, from a resourceVersion until the server ends it, the history expires (410), the
 * watchdog finds it silent, a relist is asked for, or the informer stops.
 */
import { performance } from 'node:perf_hooks';
import type { ApiClient } from './apiClient.js';
import { ApiError, isGone } from './apiErrors.js';
import type { WatchEvent } from './watchStream.js';
import { lastWrittenAt } from './writtenAt.js';

/** Why a watch ended: normally, 410, silence, a relist request, or the informer stopping. */
export type WatchEnd = 'closed' | 'gone' | 'idle' | 'relist' | 'stopped';

/** How a watch went. */
export interface WatchOutcome {
  end: WatchEnd;
  /** Whether it delivered any event or bookmark. */
  progress: boolean;
  durationMs: number;
  /** The server-side timeout this watch asked for (`watchTimeoutSeconds`, jittered). */
  timeoutSeconds: number;
}

/**
 * Whether the server ended the watch normally before the timeout it asked for. `durationMs` counts from
 * before the request was sent, so a watch the server ends at its timeout is never early. An early end is
 * the API server's doing: a restart, or its watch cache dropping a watcher that did not read its events
 * fast enough. The informer resumes from its resourceVersion either way; the count says how often its
 * view had such a gap.
 */
export function endedEarly(o: Pick<WatchOutcome, 'end' | 'durationMs' | 'timeoutSeconds'>): boolean {
  return o.end === 'closed' && o.durationMs < o.timeoutSeconds * 1000;
}

/** What to watch, and where the events go. */
export interface WatchOnceOptions {
  /** Collection path. */
  path: string;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  /** Where to resume from. */
  resourceVersion: string | undefined;
  /** Server-side timeout, jittered ±10 % per watch. */
  watchTimeoutSeconds: number;
  /** Silence for this long aborts the stream. */
  idleTimeoutMs: number;
  /**
   * Applies one event (never an `ERROR`) to the cache, with when the server last wrote the object
   * (k8s/writtenAt.ts) for an added or changed one, when `delivered` is given and the object says.
   */
  apply: (ev: WatchEvent, writtenAtMs: number | undefined) => void;
  /** Told, after `apply`, of each write stamp given to it and when the event arrived. */
  delivered?: (writtenAtMs: number, receivedAtMs: number) => void;
  /** Given the function that ends this watch for a relist while it is open, and `undefined` once it has ended. */
  relistTrigger: (end: (() => void) | undefined) => void;
}

/**
 * Watches once. Resolves with how the watch ended; rejects with an in-stream `ERROR` other than 410, or with the
 * error that broke the stream.
 */
export async function watchOnce(client: ApiClient, o: WatchOnceOptions, stop: AbortSignal): Promise<WatchOutcome> {
  const startedAt = performance.now();
  const ac = new AbortController();
  const signal = AbortSignal.any([ac.signal, stop]);
  let progress = false;
  let end: 'gone' | 'idle' | 'relist' | undefined;
  let streamError: ApiError | undefined;
  const watchdog = setTimeout(() => {
    end ??= 'idle';
    ac.abort();
  }, o.idleTimeoutMs);
  o.relistTrigger(() => {
    end ??= 'relist';
    ac.abort();
  });
  const timeoutSeconds = Math.max(1, Math.round(o.watchTimeoutSeconds * (0.9 + Math.random() * 0.2)));
  const result = (e: WatchEnd): WatchOutcome => ({ end: e, progress, durationMs: performance.now() - startedAt, timeoutSeconds });
  try {
    await client.watch(
      o.path,
      {
        labelSelector: o.labelSelector,
        fieldSelector: o.fieldSelector,
        resourceVersion: o.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds,
      },
      (ev) => {
        if (end !== undefined || streamError !== undefined) return;
        watchdog.refresh();
        if (ev.type === 'ERROR') {
          const err = ApiError.fromStatus(ev.object, 500);
          // 410 Gone / Expired: our resourceVersion was compacted away; anything else ends this stream as an error.
          if (isGone(err)) end = 'gone';
          else streamError = err;
          ac.abort();
          return;
        }
        progress = true;
        // Read once, from the raw object (slimming drops managedFields), for the handlers and the lag.
        const written = o.delivered && (ev.type === 'ADDED' || ev.type === 'MODIFIED') ? lastWrittenAt(ev.object) : undefined;
        o.apply(ev, written);
        if (written !== undefined) o.delivered?.(written, Date.now());
      },
      signal,
    );
    return result(end ?? 'closed');
  } catch (err) {
    if (stop.aborted) return result('stopped');
    if (streamError) throw streamError;
    if (end !== undefined) return result(end);
    if (isGone(err)) return result('gone'); // 410 as the HTTP status of the watch request
    throw err;
  } finally {
    clearTimeout(watchdog);
    o.relistTrigger(undefined);
  }
}
