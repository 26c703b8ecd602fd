/**
 * Polling until a condition holds, with a timeout message that names what was awaited and what was
 * last seen.
 *
 * @module
 */

/** Options for {@link waitFor}. */
export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** What is awaited, for the timeout message. */
  describe?: string;
}

/**
 * Polls `fn` until it returns a truthy value, and returns that value. Throws when `timeoutMs` passes;
 * the message names `describe` and the last value or error `fn` produced, which is usually the
 * most useful clue. Errors thrown by `fn` count as "not yet" (the API may be briefly unavailable).
 */
export async function waitFor<T>(
  fn: () => Promise<T | false | null | undefined> | T | false | null | undefined,
  opts: WaitOptions = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const intervalMs = opts.intervalMs ?? 250;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
      last = value;
    } catch (err) {
      if (err instanceof FatalWaitError) throw err.cause;
      last = err;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.describe ?? 'condition'}; last: ${detail}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Thrown (wrapping the real error) from a {@link waitFor} callback to stop waiting at once. */
export class FatalWaitError extends Error {
  constructor(cause: Error) {
    super(cause.message, { cause });
  }
}
