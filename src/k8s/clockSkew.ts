/**
 * How far the operator's wall clock is from the API server's, estimated from the `Date` header of its
 * responses.
 *
 * `lastProgressAt`, the stall deadline and the undo time are read from this process's clock, while the
 * pods' and Events' times come from the kubelets' and the API server's. A leader whose clock is off by
 * a minute would misjudge every deadline; the verdict refuses an undo while the skew is past a bound.
 *
 * A `Date` header has a resolution of one second and is truncated, so a response sent at local time
 * `sent` and received at `received` says: server time − local time lies in
 * `[date − received, date + 1000 − sent]`. Intersecting those intervals over recent responses narrows
 * the estimate well below a second (Marzullo's idea, as NTP uses it); when they stop overlapping, one of
 * the clocks was stepped, and only the newest interval is kept.
 */

/** Responses whose intervals are intersected. */
const WINDOW = 32;

/** A response's own bounds on server time − local time, ms. */
interface Bound {
  lo: number;
  hi: number;
}

export class ClockSkew {
  private readonly bounds: Bound[] = [];

  /**
   * Records one response. `sent` and `received` are local wall-clock ms; `dateHeader` is the response's
   * `Date`. Responses without one, or with one that does not parse, are ignored.
   */
  sample(sent: number, received: number, dateHeader: string | undefined): void {
    if (!dateHeader) return;
    const date = Date.parse(dateHeader);
    if (Number.isNaN(date) || received < sent) return;
    const b = { lo: date - received, hi: date + 1000 - sent };
    this.bounds.push(b);
    if (this.bounds.length > WINDOW) this.bounds.shift();
    if (!this.overlap()) this.bounds.splice(0, this.bounds.length - 1);
  }

  /** Server time − local time in ms (positive: the operator's clock is behind), or undefined before any sample. */
  estimateMs(): number | undefined {
    const o = this.overlap();
    return o ? Math.round((o.lo + o.hi) / 2) : undefined;
  }

  private overlap(): Bound | undefined {
    if (this.bounds.length === 0) return undefined;
    let lo = -Infinity;
    let hi = Infinity;
    for (const b of this.bounds) {
      lo = Math.max(lo, b.lo);
      hi = Math.min(hi, b.hi);
    }
    return lo <= hi ? { lo, hi } : undefined;
  }
}
