/**
 * The re-render loop of `rollout-guard get --watch`: a render on every change, changes close together
 * debounced into one, and a render when decide's next deadline passes, since a rollout turns Suspect or
 * Stalled without any watch event.
 */

/** Changes closer together than this make one render. */
export const WATCH_DEBOUNCE_MS = 250;

export class Rerender {
  private debounce: NodeJS.Timeout | undefined;
  private requeue: NodeJS.Timeout | undefined;

  /** `render` renders once and returns how long until decide's next deadline, if it has one. */
  constructor(private readonly render: () => number | undefined) {}

  /** Renders {@link WATCH_DEBOUNCE_MS} from now, unless a render is already due; the change listener. */
  readonly schedule = (): void => {
    if (this.debounce) return;
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      this.now();
    }, WATCH_DEBOUNCE_MS);
  };

  /** Renders now, and again (debounced) once the deadline the render returns has passed. */
  now(): void {
    clearTimeout(this.requeue);
    const next = this.render();
    if (next !== undefined) this.requeue = setTimeout(this.schedule, next);
  }

  /** Cancels every render still due. */
  stop(): void {
    clearTimeout(this.debounce);
    clearTimeout(this.requeue);
  }
}
