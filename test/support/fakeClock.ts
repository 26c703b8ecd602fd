/**
 * A fake clock and timer source for deterministic tests: time moves only when the test calls `advance`, which
 * fires due timers in deadline order (ties in scheduling order), including timers scheduled by fired callbacks
 * that fall inside the advanced window.
 */
import type { Clock, Timers } from '../../src/reconcile/ports.js';

interface FakeTimer {
  id: number;
  at: number;
  fn: () => void;
}

interface ScheduleWaiter {
  pred: (ms: number) => boolean;
  resolve: (ms: number) => void;
}

/** Fake {@link Clock} + {@link Timers}; inject one instance as both. */
export class FakeClock implements Clock, Timers {
  private t: number;
  private nextId = 1;
  private readonly timers = new Map<number, FakeTimer>();
  private waiters: ScheduleWaiter[] = [];

  /** @param start initial time in ms */
  constructor(start = 0) {
    this.t = start;
  }

  /** Current fake time in ms. */
  now(): number {
    return this.t;
  }

  /** Schedules `fn` at now + ms (negative delays count as 0). */
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { id, at: this.t + Math.max(0, ms), fn });
    const matched = this.waiters.filter((w) => w.pred(ms));
    this.waiters = this.waiters.filter((w) => !w.pred(ms));
    for (const w of matched) w.resolve(ms);
    return id;
  }

  /** Cancels a timer; unknown handles are ignored. */
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Moves time forward by `ms`, firing every timer that becomes due, in order. */
  advance(ms: number): void {
    const target = this.t + ms;
    for (;;) {
      let next: FakeTimer | undefined;
      for (const timer of this.timers.values()) {
        if (timer.at <= target && (!next || timer.at < next.at || (timer.at === next.at && timer.id < next.id))) next = timer;
      }
      if (!next) break;
      this.timers.delete(next.id);
      this.t = next.at;
      next.fn();
    }
    this.t = target;
  }

  /** Sets the time without firing timers (simulates a clock step; only meaningful for wall-clock users). */
  set(ms: number): void {
    this.t = ms;
  }

  /** Number of scheduled, unfired timers. */
  pending(): number {
    return this.timers.size;
  }

  /** Delays from now of all pending timers, ascending. */
  pendingDelays(): number[] {
    return [...this.timers.values()].map((t) => t.at - this.t).sort((a, b) => a - b);
  }

  /** Delay of the earliest pending timer from now, or undefined. */
  nextDelay(): number | undefined {
    let min: number | undefined;
    for (const timer of this.timers.values()) min = min === undefined ? timer.at : Math.min(min, timer.at);
    return min === undefined ? undefined : min - this.t;
  }

  /**
   * Resolves (with the delay) the next time a timer whose delay matches `pred` is scheduled. Register it before
   * the action that schedules the timer, so the schedule cannot be missed.
   */
  nextTimer(pred: (ms: number) => boolean = () => true): Promise<number> {
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }
}
