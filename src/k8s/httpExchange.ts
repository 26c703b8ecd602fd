/**
 * One non-watch HTTP exchange with the API server: send the (already built) request, collect the whole response
 * body, and give up at a whole-request deadline or when the caller aborts.
 */
import type http from 'node:http';
import { RequestTimeoutError, abortError } from './apiErrors.js';

/** A finished response, undecoded. */
export interface RawResponse {
  /** HTTP status code, 0 when the response had none. */
  status: number;
  /** The whole body as text. */
  body: string;
  /** The `Retry-After` header, when sent. */
  retryAfter?: string;
}

/** Options of {@link exchange}. */
export interface ExchangeOptions {
  /** HTTP method and path, for the timeout error. */
  method: string;
  path: string;
  /** Request body, sent as is. */
  payload: Buffer | undefined;
  /** Aborts the exchange; the promise then rejects with an `AbortError`. */
  signal: AbortSignal | undefined;
  /** Whole-request deadline in ms. */
  timeoutMs: number;
  /** Sees the response as soon as its headers arrive (the clock skew estimate reads its `Date`). */
  onResponse: (res: http.IncomingMessage) => void;
}

/**
 * Ends `req` with the payload and resolves with the response. Rejects with {@link RequestTimeoutError} after the
 * deadline, an `AbortError` when the signal aborts, or the socket error on network failure.
 */
export function exchange(req: http.ClientRequest, o: ExchangeOptions): Promise<RawResponse> {
  return new Promise<RawResponse>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const fail = (err: Error): void => {
      finish(() => reject(err));
      req.destroy();
    };
    const onAbort = (): void => fail(abortError(o.signal));
    // Whole-request deadline (not an idle-socket timeout): a trickling response must not hold a reconcile.
    const timer = setTimeout(() => fail(new RequestTimeoutError(o.method, o.path, o.timeoutMs)), o.timeoutMs);
    // The error listener goes first: destroying the request below emits 'error', which must not go unhandled.
    req.on('error', (err) => finish(() => reject(err)));
    if (o.signal?.aborted) {
      fail(abortError(o.signal));
      return;
    }
    o.signal?.addEventListener('abort', onAbort, { once: true });
    req.on('response', (res) => {
      o.onResponse(res);
      res.setEncoding('utf8');
      let body = '';
      res.on('data', (chunk: string) => (body += chunk));
      res.on('error', (err) => finish(() => reject(err)));
      res.on('end', () => {
        const retryAfter = headerValue(res.headers['retry-after']);
        finish(() => resolve({ status: res.statusCode ?? 0, body, ...(retryAfter !== undefined ? { retryAfter } : {}) }));
      });
    });
    req.end(o.payload);
  });
}

/** The first value of a response header that may repeat. */
export function headerValue(h: string | string[] | undefined): string | undefined {
  return Array.isArray(h) ? h[0] : h;
}
