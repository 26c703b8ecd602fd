/**
 * Gives memory back once the operator has gone idle after a burst of work: one full garbage collection,
 * `quietMs` after the last pass or queued key.
 *
 * Why: V8 grows the young generation (its two semi-spaces) once enough objects have survived its
 * scavenges, which follows how much the process has handled since it started, and shrinks it only in a
 * collection that runs while little is being allocated. An idle operator allocates almost nothing, so
 * no such collection comes: after a large rollout its young generation, and with it its RSS, stayed at
 * the rollout's working size for as long as the operator stayed idle, although it held none of the
 * rollout's data. A collection after a quiet spell is one V8 reads as low-allocation, and it shrinks the
 * young generation back. It does not first check whether the young generation grew: the size it had
 * when the process started is not a floor (loading the modules already grows it), and one collection
 * per quiet spell costs less than the guesswork.
 *
 * ```
 *   idle ──work──> busy ──quietMs without work──> collect ──> idle
 *                   ^ └──work─┘ (the deadline moves; the timer is re-armed only when it fires early)
 * ```
 *
 * The collection blocks the event loop for as long as a full collection of the heap takes (it grows
 * with the cluster; `npm run bench` reports it), once per quiet spell, at a moment nothing is waiting.
 */
import v8 from 'node:v8';
import type { Clock, Timers } from '../reconcile/ports.js';

export interface IdleCollectorOptions {
  /** Only differences are read: the operator passes its monotonic clock. */
  clock: Clock;
  timers: Timers;
  /** How long without work before collecting. */
  quietMs: number;
  /** A full collection (`globalThis.gc` under `node --expose-gc`). */
  collect: () => void;
  /** Bytes V8 has reserved for the young generation now. */
  youngGenerationBytes: () => number;
  /** Called after each collection, with its duration and the young generation before and after. */
  onCollected?: (c: Collection) => void;
}

export interface Collection {
  ms: number;
  youngBefore: number;
  youngAfter: number;
}

export class IdleCollector {
  private lastWorkAt: number | undefined;
  private timer: unknown;
  private stopped = false;

  constructor(private readonly opts: IdleCollectorOptions) {}

  /**
   * Work happened (a key queued, a pass ended). Cheap on the hot path: it moves the deadline and arms a
   * timer only when none is armed.
   */
  worked(): void {
    if (this.stopped) return;
    this.lastWorkAt = this.opts.clock.now();
    if (this.timer === undefined) this.arm(this.opts.quietMs);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.opts.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = this.opts.timers.setTimeout(() => this.fire(), ms);
  }

  private fire(): void {
    this.timer = undefined;
    if (this.stopped || this.lastWorkAt === undefined) return;
    const quietFor = this.opts.clock.now() - this.lastWorkAt;
    if (quietFor < this.opts.quietMs) {
      this.arm(this.opts.quietMs - quietFor);
      return;
    }
    this.lastWorkAt = undefined;
    const youngBefore = this.opts.youngGenerationBytes();
    const begun = this.opts.clock.now();
    this.opts.collect();
    this.opts.onCollected?.({ ms: this.opts.clock.now() - begun, youngBefore, youngAfter: this.opts.youngGenerationBytes() });
  }
}

/** The bytes V8 has reserved for its young generation (the `new_space`), now. */
export function youngGenerationBytes(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

/** A full collection, when Node was started with `--expose-gc`; otherwise undefined. */
export function exposedGc(): (() => void) | undefined {
  const gc: unknown = (globalThis as { gc?: unknown }).gc;
  return typeof gc === 'function' ? () => void (gc as () => unknown)() : undefined;
}
