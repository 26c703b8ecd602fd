/**
 * The client side of one watch: a chunked response of newline-delimited JSON events, read until the server ends
 * it, the connection drops, the caller aborts, or a line cannot be decoded or handled.
 */
import type http from 'node:http';
import { ApiError, abortError } from './apiErrors.js';
import { headerValue } from './httpExchange.js';

/** One decoded watch event. `object` is raw JSON: the resource, or a `Status` for `ERROR`. */
export interface WatchEvent {
  /** Event type as sent by the API server. */
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  /** The object, or a `metav1.Status` for `ERROR`. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw JSON of any kind; the consumer narrows it
  object: any;
}

/** Options of {@link streamWatch}. */
export interface WatchStreamOptions {
  /** The watched path, for error messages. */
  path: string;
  /** Called for every event, in order; a throw ends the watch with that error. */
  onEvent: (ev: WatchEvent) => void;
  /** Ends the watch with an `AbortError`. */
  signal: AbortSignal;
  /** Told the response status once the response starts, or `error` when the request fails before any response. */
  record: (code: string) => void;
}

/**
 * Ends `req` and reads its watch response. Resolves when the server ends the stream normally; rejects with
 * {@link ApiError} when the watch does not start with 200, an `AbortError` when the signal aborts, the socket error
 * when the connection drops, and the handler's error if `onEvent` throws.
 */
export function streamWatch(req: http.ClientRequest, o: WatchStreamOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => new WatchStream(req, o, resolve, reject).start());
}

/** The state of one watch: settled once, whatever ends it first. */
class WatchStream {
  private settled = false;
  private responded = false;
  /** The tail of the last chunk, kept until its newline arrives. */
  private buffered = '';
  private readonly onAbort = (): void => this.finish(abortError(this.o.signal));

  constructor(
    private readonly req: http.ClientRequest,
    private readonly o: WatchStreamOptions,
    private readonly resolve: () => void,
    private readonly reject: (err: Error) => void,
  ) {}

  start(): void {
    // The error listener goes first: destroying the request emits 'error', which must not go unhandled.
    this.req.on('error', (err) => {
      if (!this.settled && !this.responded) this.o.record('error');
      this.finish(err);
    });
    if (this.o.signal.aborted) {
      this.finish(abortError(this.o.signal));
      return;
    }
    this.o.signal.addEventListener('abort', this.onAbort, { once: true });
    this.req.on('response', (res) => this.onResponse(res));
    this.req.end();
  }

  private finish(err?: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.o.signal.removeEventListener('abort', this.onAbort);
    if (err) {
      this.reject(err);
      this.req.destroy();
    } else {
      this.resolve();
    }
  }

  private onResponse(res: http.IncomingMessage): void {
    this.responded = true;
    this.o.record(String(res.statusCode ?? 0));
    res.setEncoding('utf8');
    res.on('error', (err) => this.finish(err));
    if (res.statusCode !== 200) this.readRefusal(res);
    else this.readEvents(res);
  }

  /** A watch that did not start: its body is the Status saying why. */
  private readRefusal(res: http.IncomingMessage): void {
    let body = '';
    res.on('data', (chunk: string) => (body += chunk));
    res.on('end', () => this.finish(ApiError.fromResponse(res.statusCode ?? 0, body, headerValue(res.headers['retry-after']))));
  }

  private readEvents(res: http.IncomingMessage): void {
    res.on('data', (chunk: string) => {
      if (this.settled) return;
      this.buffered += chunk;
      let nl: number;
      while ((nl = this.buffered.indexOf('\n')) >= 0) {
        const line = this.buffered.slice(0, nl);
        this.buffered = this.buffered.slice(nl + 1);
        if (!this.handleLine(line) || this.settled) return;
      }
    });
    res.on('end', () => {
      if (this.settled) return;
      if (this.buffered !== '' && !this.handleLine(this.buffered)) return;
      this.finish();
    });
    // 'close' without 'end': the connection dropped mid-stream.
    res.on('close', () =>
      this.finish(
        Object.assign(new Error(`watch ${this.o.path}: stream closed prematurely`), {
          code: 'ERR_STREAM_PREMATURE_CLOSE',
        }),
      ),
    );
  }

  /** Decodes and hands on one line; false when that ended the watch. */
  private handleLine(line: string): boolean {
    if (line.trim() === '') return true;
    let ev: WatchEvent;
    try {
      ev = JSON.parse(line) as WatchEvent;
    } catch {
      // A corrupt stream means we may have missed an event: end it so the caller re-watches from the last
      // good resourceVersion (client-node silently skips such lines instead).
      this.finish(new Error(`watch ${this.o.path}: undecodable event line`));
      return false;
    }
    try {
      this.o.onEvent(ev);
    } catch (err) {
      this.finish(err instanceof Error ? err : new Error(String(err)));
      return false;
    }
    return true;
  }
}
