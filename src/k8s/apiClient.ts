/**
 * A small raw-JSON Kubernetes API client over `node:https` / `node:http`.
 *
 * Why not client-node's generated API classes: they deserialize list responses into model instances with `Date`
 * timestamps, while watch events are raw JSON with string timestamps; mixing both in one cache makes every
 * comparison a trap. Here every response is plain JSON, exactly as the
 * API server sent it. `@kubernetes/client-node` is used only for kubeconfig loading and for
 * `KubeConfig.applyToHTTPSOptions()`, which resolves CA, client certificates, bearer tokens (including rotating
 * token files and exec plugins) and `rejectUnauthorized`.
 */
import type { ClockSkew } from './clockSkew.js';
import http from 'node:http';
import https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { errorMessage, type PortErrorKind } from '../reconcile/portErrors.js';

/** Default `User-Agent`, so API server audit logs and APF flow schemas can tell our requests apart. */
export const USER_AGENT = 'rollout-guard/0.1.0';

/**
 * Default timeout for non-watch requests. Long enough for a large list page on a busy API server, short enough
 * that a half-open connection does not stall a reconcile forever (the API server's own default is 60 s).
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** Content types for PATCH; the caller picks one explicitly because each has different semantics. */
export const PatchContentType = {
  /** RFC 7386 JSON merge patch: the only merge flavour custom resources accept. */
  Merge: 'application/merge-patch+json',
  /** Strategic merge patch: built-in kinds only (what `kubectl rollout undo` sends for a DaemonSet). */
  StrategicMerge: 'application/strategic-merge-patch+json',
  /** RFC 6902 JSON patch (an array of operations). */
  Json: 'application/json-patch+json',
} as const;

/** HTTP methods supported by {@link ApiClient.request}. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Query parameters; `undefined` values are omitted. */
export type Query = Record<string, string | number | boolean | undefined>;

/** Options for {@link ApiClient}. */
export interface ApiClientOptions {
  /** `User-Agent` header; defaults to {@link USER_AGENT}. */
  userAgent?: string;
  /** Timeout for non-watch requests in ms; defaults to {@link DEFAULT_REQUEST_TIMEOUT_MS}. */
  requestTimeoutMs?: number;
  /**
   * Observer for metrics: called once per finished request, and once per watch when its response starts (a
   * watch's duration says nothing useful). Must not throw; exceptions are swallowed.
   */
  onRequest?: (r: RequestRecord) => void;
  /** Fed with every response's `Date` header and the local send and receive times (see clockSkew.ts). */
  clockSkew?: ClockSkew;
}

/** What {@link ApiClientOptions.onRequest} sees: low-cardinality labels only (no names, no namespaces). */
export interface RequestRecord {
  /** HTTP method, or `WATCH`. */
  verb: string;
  /** Resource plural, with the subresource if any, e.g. `pods`, `rolloutguards/status`. */
  resource: string;
  /** HTTP status code, or `error` when no response arrived (network error, timeout, abort). */
  code: string;
  /**
   * Seconds from the start of the request (taking a pooled socket included) to the end of its response or
   * its failure; absent for a watch.
   */
  seconds?: number;
}

/** Options of one {@link ApiClient.request} call. */
export interface RequestOptions {
  /** Query parameters; `undefined` values are omitted. */
  query?: Query;
  /** Request body, serialized as JSON. */
  body?: unknown;
  /** Body content type; defaults to `application/json`. Required for PATCH (see {@link PatchContentType}). */
  contentType?: string;
  /** Aborts the request; the promise then rejects with an `AbortError`. */
  signal?: AbortSignal;
}

/** One decoded watch event. `object` is raw JSON: the resource, or a `Status` for `ERROR`. */
export interface WatchEvent {
  /** Event type as sent by the API server. */
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  /** The object, or a `metav1.Status` for `ERROR`. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw JSON of any kind; the consumer narrows it
  object: any;
}

const KIND_OF_STATUS: Readonly<Record<number, PortErrorKind>> = { 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict' };

/**
 * A non-2xx answer of the API server, decoded from its `metav1.Status` body where there is one.
 * Classify with {@link isNotFound}, {@link isConflict}, {@link isGone}, {@link isForbidden}, {@link isTransient}.
 */
export class ApiError extends Error {
  /** HTTP status code, or the Status `code` for an in-stream watch `ERROR`. */
  readonly statusCode: number;
  /** Status `reason`, e.g. `NotFound`, `Conflict`, `Expired`. */
  readonly reason?: string;
  /** From Status `details.retryAfterSeconds`, else the `Retry-After` header. */
  readonly retryAfterSeconds?: number;
  /** The decoded response body (a Status object, or the raw text when it was not JSON). */
  readonly body?: unknown;
  /** The port error kind reconcile reads (reconcile/portErrors.ts), for the statuses it acts on. */
  readonly kind?: PortErrorKind;

  /** Builds an error; prefer {@link ApiError.fromStatus} / {@link ApiError.fromResponse}. */
  constructor(message: string, init: { statusCode: number; reason?: string; retryAfterSeconds?: number; body?: unknown }) {
    super(message);
    this.name = 'ApiError';
    this.statusCode = init.statusCode;
    const kind = KIND_OF_STATUS[init.statusCode];
    if (kind !== undefined) this.kind = kind;
    if (init.reason !== undefined) this.reason = init.reason;
    if (init.retryAfterSeconds !== undefined) this.retryAfterSeconds = init.retryAfterSeconds;
    if (init.body !== undefined) this.body = init.body;
  }

  /**
   * Decodes a `metav1.Status` (e.g. the object of an in-stream watch `ERROR`). `fallbackCode` is used when the
   * Status carries no `code`.
   */
  static fromStatus(status: unknown, fallbackCode = 500, retryAfterHeader?: string): ApiError {
    const s = isRecord(status) ? status : {};
    const code = typeof s.code === 'number' && s.code > 0 ? s.code : fallbackCode;
    const reason = typeof s.reason === 'string' && s.reason !== '' ? s.reason : undefined;
    const details = isRecord(s.details) ? s.details : {};
    let retryAfterSeconds =
      typeof details.retryAfterSeconds === 'number' && details.retryAfterSeconds > 0 ? details.retryAfterSeconds : undefined;
    retryAfterSeconds ??= parseRetryAfter(retryAfterHeader);
    const text = typeof s.message === 'string' && s.message !== '' ? s.message : (reason ?? `HTTP ${code}`);
    return new ApiError(reason !== undefined ? `${code} ${reason}: ${text}` : `${code}: ${text}`, {
      statusCode: code,
      ...(reason !== undefined ? { reason } : {}),
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
      body: status,
    });
  }

  /** Decodes a non-2xx HTTP response body (JSON Status or arbitrary text, e.g. from a proxy). */
  static fromResponse(statusCode: number, rawBody: string, retryAfterHeader?: string): ApiError {
    let parsed: unknown;
    try {
      parsed = rawBody === '' ? undefined : JSON.parse(rawBody);
    } catch {
      parsed = undefined;
    }
    if (isRecord(parsed) && parsed.kind === 'Status') {
      // The HTTP status is authoritative; the Status code normally matches it anyway.
      return ApiError.fromStatus({ ...parsed, code: statusCode }, statusCode, retryAfterHeader);
    }
    const retryAfterSeconds = parseRetryAfter(retryAfterHeader);
    const snippet = rawBody.length > 200 ? `${rawBody.slice(0, 200)}…` : rawBody;
    return new ApiError(`HTTP ${statusCode}${snippet ? `: ${snippet}` : ''}`, {
      statusCode,
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
      ...(rawBody !== '' ? { body: parsed ?? rawBody } : {}),
    });
  }
}

/** One line for an error from the API server or the network, without a stack. */
export function summarizeError(e: unknown): string {
  if (e instanceof ApiError) return `${e.message} (HTTP ${e.statusCode})`;
  return errorMessage(e);
}

/** A non-watch request exceeded its timeout. Counted as transient. */
export class RequestTimeoutError extends Error {
  /** Node-style error code, so generic network-error handling recognises it. */
  readonly code = 'ETIMEDOUT';
  /** @param ms the timeout that elapsed */
  constructor(method: string, path: string, ms: number) {
    super(`${method} ${path}: no response within ${ms} ms`);
    this.name = 'RequestTimeoutError';
  }
}

/** True for 404 Not Found. */
export function isNotFound(e: unknown): boolean {
  return e instanceof ApiError && e.statusCode === 404;
}

/** True for 409 Conflict (stale resourceVersion) and AlreadyExists (also 409). */
export function isConflict(e: unknown): boolean {
  return e instanceof ApiError && e.statusCode === 409;
}

/** True for AlreadyExists: a create (POST) of a name that is taken. */
export function isAlreadyExists(e: unknown): boolean {
  return e instanceof ApiError && e.statusCode === 409 && e.reason === 'AlreadyExists';
}

/** True for 410 Gone: watch history or a list `continue` token expired; the caller must relist. */
export function isGone(e: unknown): boolean {
  return e instanceof ApiError && e.statusCode === 410;
}

/** True for 403 Forbidden (RBAC): retrying does not help until someone changes the bindings. */
export function isForbidden(e: unknown): boolean {
  return e instanceof ApiError && e.statusCode === 403;
}

/** True when the caller aborted the request through its `AbortSignal`. */
export function isAbortError(e: unknown): boolean {
  return e instanceof Error && e.name === 'AbortError';
}

/** Socket-level failures worth retrying: the API server restarting, a dropped connection, DNS hiccups. */
const TRANSIENT_NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ERR_STREAM_PREMATURE_CLOSE',
  'UND_ERR_SOCKET',
]);

/**
 * True for failures that may succeed when retried: network errors, timeouts, 429 Too Many Requests (API Priority
 * and Fairness) and 5xx. Not for caller aborts, 4xx client errors or 409 (conflicts need a re-read and re-decide,
 * not a blind retry).
 */
export function isTransient(e: unknown): boolean {
  if (e instanceof ApiError) return e.statusCode === 429 || e.statusCode >= 500;
  if (e instanceof RequestTimeoutError) return true;
  if (isAbortError(e)) return false;
  if (isRecord(e) && typeof e.code === 'string') return TRANSIENT_NETWORK_CODES.has(e.code);
  return false;
}

/** Resolves per-request auth headers and TLS material; a seam so tests or other auth sources can plug in. */
export type AuthApplier = (opts: https.RequestOptions) => Promise<void>;

/**
 * Raw JSON client for the Kubernetes API. One instance per API server; it owns a keep-alive agent, so call
 * {@link ApiClient.close} on shutdown.
 */
export class ApiClient {
  private readonly base: URL;
  private readonly userAgent: string;
  private readonly requestTimeoutMs: number;
  private readonly onRequest: ((r: RequestRecord) => void) | undefined;
  private readonly clockSkew: ClockSkew | undefined;
  private agent: http.Agent | undefined;

  /**
   * @param server API server URL (`https://host:6443`, optionally with a path prefix); the scheme picks
   *   `node:https` or `node:http`.
   * @param applyAuth fills headers (Authorization, Impersonate-User) and TLS options (ca, cert, key,
   *   rejectUnauthorized, servername) into request options; called per request so rotating tokens are picked up.
   */
  constructor(
    server: string,
    private readonly applyAuth: AuthApplier,
    opts: ApiClientOptions = {},
  ) {
    this.base = new URL(server);
    if (this.base.protocol !== 'https:' && this.base.protocol !== 'http:') {
      throw new Error(`unsupported API server scheme: ${this.base.protocol}`);
    }
    this.userAgent = opts.userAgent ?? USER_AGENT;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.onRequest = opts.onRequest;
    this.clockSkew = opts.clockSkew;
  }

  /**
   * Builds a client for the kubeconfig's current context.
   *
   * Auth is re-resolved per request through `kc.applyToHTTPSOptions` (a token file is re-read at most once a
   * minute by client-node's FileAuth; exec plugins cache until expiry), but the TLS material is taken once, from
   * the first request, into a single keep-alive agent: a new agent per request would defeat connection reuse.
   * A CA or client-certificate rotation therefore needs a process restart.
   *
   * `proxy-url` is not supported (rejected here rather than silently bypassed). A plain `http://` server is
   * accepted even without `insecure-skip-tls-verify` (client-node refuses that combination because it cannot build
   * an agent for it; TLS verification has no meaning without TLS, and the local test servers rely on it).
   */
  static fromKubeConfig(kc: KubeConfig, opts?: ApiClientOptions): ApiClient {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    if (cluster.proxyUrl) throw new Error('kubeconfig proxy-url is not supported by rollout-guard');
    let authKc = kc;
    if (cluster.server.startsWith('http:') && !cluster.skipTLSVerify) {
      // client-node's createAgent throws for http:// without skipTLSVerify; a shallow copy with the flag set
      // lets applyToHTTPSOptions run (we discard the agent it builds anyway). Users are shared, so token caches are.
      authKc = new KubeConfig();
      authKc.loadFromOptions({
        clusters: kc.clusters.map((c) => (c === cluster ? { ...c, skipTLSVerify: true } : c)),
        users: kc.users,
        contexts: kc.contexts,
        currentContext: kc.currentContext,
      });
    }
    return new ApiClient(cluster.server, (o) => authKc.applyToHTTPSOptions(o), opts);
  }

  /**
   * Sends one JSON request and returns the decoded JSON response (`undefined` for an empty body).
   * Rejects with {@link ApiError} on non-2xx, {@link RequestTimeoutError} after the request timeout, an
   * `AbortError` when `signal` aborts, or the socket error on network failure.
   */
  async request<T = unknown>(method: HttpMethod, path: string, opts: RequestOptions = {}): Promise<T> {
    if (method === 'PATCH' && opts.contentType === undefined) {
      // A silent default would pick the wrong merge semantics for one kind or another: JSON merge patch
      // replaces lists that strategic merge patch merges by key.
      throw new TypeError('PATCH needs an explicit contentType (see PatchContentType)');
    }
    const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body), 'utf8');
    // Monotonic, from before the socket is taken: the latency a caller waits, pool wait included.
    const begun = performance.now();
    const req = await this.open(method, path, opts.query, {
      ...(payload ? { 'Content-Type': opts.contentType ?? 'application/json', 'Content-Length': payload.length } : {}),
    });
    // Local send time, for the clock skew estimate: the server's Date is taken between this and the response.
    const sent = Date.now();
    const pending = new Promise<{ status: number; body: string; retryAfter?: string }>((resolve, reject) => {
      let settled = false;
      const finish = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const fail = (err: Error): void => {
        finish(() => reject(err));
        req.destroy();
      };
      const onAbort = (): void => fail(abortError(opts.signal));
      // Whole-request deadline (not an idle-socket timeout): a trickling response must not hold a reconcile.
      const timer = setTimeout(() => fail(new RequestTimeoutError(method, path, this.requestTimeoutMs)), this.requestTimeoutMs);
      // The error listener goes first: destroying the request below emits 'error', which must not go unhandled.
      req.on('error', (err) => finish(() => reject(err)));
      if (opts.signal?.aborted) {
        fail(abortError(opts.signal));
        return;
      }
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('response', (res) => {
        this.clockSkew?.sample(sent, Date.now(), headerValue(res.headers.date));
        res.setEncoding('utf8');
        let body = '';
        res.on('data', (chunk: string) => (body += chunk));
        res.on('error', (err) => finish(() => reject(err)));
        res.on('end', () => {
          const retryAfter = headerValue(res.headers['retry-after']);
          finish(() => resolve({ status: res.statusCode ?? 0, body, ...(retryAfter !== undefined ? { retryAfter } : {}) }));
        });
      });
      req.end(payload);
    });
    let text: { status: number; body: string; retryAfter?: string };
    try {
      text = await pending;
    } catch (err) {
      this.record(method, path, 'error', (performance.now() - begun) / 1000);
      throw err;
    }
    this.record(method, path, String(text.status), (performance.now() - begun) / 1000);
    if (text.status < 200 || text.status > 299) throw ApiError.fromResponse(text.status, text.body, text.retryAfter);
    if (text.body === '') return undefined as T;
    return JSON.parse(text.body) as T;
  }

  /**
   * Streams a watch (`watch=true` is added to `query`). Resolves when the server ends the stream normally
   * (e.g. `timeoutSeconds` elapsed); rejects with {@link ApiError} when the watch does not start with 200, with an
   * `AbortError` when `signal` aborts, with the socket error when the connection drops, and with the handler's
   * error if `onEvent` throws. There is deliberately no client-side timeout: idleness is the caller's watchdog.
   */
  async watch(path: string, query: Query, onEvent: (ev: WatchEvent) => void, signal: AbortSignal): Promise<void> {
    const req = await this.open('GET', path, { ...query, watch: true }, {});
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      let responded = false;
      const finish = (err?: Error): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        if (err) {
          reject(err);
          req.destroy();
        } else {
          resolve();
        }
      };
      const onAbort = (): void => finish(abortError(signal));
      // The error listener goes first: destroying the request emits 'error', which must not go unhandled.
      req.on('error', (err) => {
        if (!settled && !responded) this.record('WATCH', path, 'error');
        finish(err);
      });
      if (signal.aborted) {
        finish(abortError(signal));
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      req.on('response', (res) => {
        responded = true;
        this.record('WATCH', path, String(res.statusCode ?? 0));
        res.setEncoding('utf8');
        res.on('error', (err) => finish(err));
        if (res.statusCode !== 200) {
          let body = '';
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => finish(ApiError.fromResponse(res.statusCode ?? 0, body, headerValue(res.headers['retry-after']))));
          return;
        }
        // Newline-delimited JSON; a chunk may end mid-line, so keep the tail until its newline arrives.
        let buffered = '';
        const handleLine = (line: string): boolean => {
          if (line.trim() === '') return true;
          let ev: WatchEvent;
          try {
            ev = JSON.parse(line) as WatchEvent;
          } catch {
            // A corrupt stream means we may have missed an event: end it so the caller re-watches from the last
            // good resourceVersion (client-node silently skips such lines instead).
            finish(new Error(`watch ${path}: undecodable event line`));
            return false;
          }
          try {
            onEvent(ev);
          } catch (err) {
            finish(err instanceof Error ? err : new Error(String(err)));
            return false;
          }
          return true;
        };
        res.on('data', (chunk: string) => {
          if (settled) return;
          buffered += chunk;
          let nl: number;
          while ((nl = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, nl);
            buffered = buffered.slice(nl + 1);
            if (!handleLine(line) || settled) return;
          }
        });
        res.on('end', () => {
          if (settled) return;
          if (buffered !== '' && !handleLine(buffered)) return;
          finish();
        });
        // 'close' without 'end': the connection dropped mid-stream.
        res.on('close', () =>
          finish(
            Object.assign(new Error(`watch ${path}: stream closed prematurely`), {
              code: 'ERR_STREAM_PREMATURE_CLOSE',
            }),
          ),
        );
      });
      req.end();
    });
  }

  private record(verb: string, path: string, code: string, seconds?: number): void {
    if (!this.onRequest) return;
    try {
      this.onRequest({ verb, resource: resourceOf(path), code, ...(seconds !== undefined ? { seconds } : {}) });
    } catch {
      // Metrics must never break an API call.
    }
  }

  /** Destroys pooled keep-alive sockets (including open watches). Call on shutdown. */
  close(): void {
    this.agent?.destroy();
    this.agent = undefined;
  }

  /** Builds and returns the (not yet ended) request with auth, TLS and common headers applied. */
  private async open(
    method: HttpMethod,
    path: string,
    query: Query | undefined,
    extraHeaders: http.OutgoingHttpHeaders,
  ): Promise<http.ClientRequest> {
    const url = this.url(path, query);
    const authOpts: https.RequestOptions = { headers: {} };
    await this.applyAuth(authOpts);
    // applyToHTTPSOptions only ever fills the object form of `headers`.
    const authHeaders = authOpts.headers && !Array.isArray(authOpts.headers) ? (authOpts.headers as http.OutgoingHttpHeaders) : {};
    const headers: http.OutgoingHttpHeaders = {
      ...authHeaders,
      Accept: 'application/json',
      'User-Agent': this.userAgent,
      ...extraHeaders,
    };
    if (authOpts.auth) headers.Authorization = `Basic ${Buffer.from(authOpts.auth).toString('base64')}`;
    const agent = (this.agent ??= this.makeAgent(authOpts));
    const reqOpts: https.RequestOptions = { method, headers, agent };
    return this.base.protocol === 'https:' ? https.request(url, reqOpts) : http.request(url, reqOpts);
  }

  /**
   * One keep-alive agent for all requests: connection reuse matters with several informers and a Lease renewing
   * every 2 s. TCP keep-alive probes (keepAlive: true also sets SO_KEEPALIVE) help detect half-open watch sockets.
   */
  private makeAgent(authOpts: https.RequestOptions): http.Agent {
    const common = { keepAlive: true, keepAliveMsecs: 30_000 };
    if (this.base.protocol === 'http:') return new http.Agent(common);
    return new https.Agent({
      ...common,
      ...(authOpts.ca !== undefined ? { ca: authOpts.ca } : {}),
      ...(authOpts.cert !== undefined ? { cert: authOpts.cert } : {}),
      ...(authOpts.key !== undefined ? { key: authOpts.key } : {}),
      ...(authOpts.rejectUnauthorized !== undefined ? { rejectUnauthorized: authOpts.rejectUnauthorized } : {}),
      ...(authOpts.servername !== undefined ? { servername: authOpts.servername } : {}),
    });
  }

  private url(path: string, query: Query | undefined): URL {
    // Keep a path prefix of the server URL (e.g. Rancher's /k8s/clusters/<id>).
    const prefix = this.base.pathname.replace(/\/+$/, '');
    const url = new URL(this.base.origin + prefix + (path.startsWith('/') ? path : `/${path}`));
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    return url;
  }
}

/**
 * Resource label of an API path: `/api/v1/namespaces/ns/pods/p/status` → `pods/status`,
 * `/apis/apps/v1/daemonsets` → `daemonsets`, `/api/v1/namespaces/ns` → `namespaces`.
 */
export function resourceOf(path: string): string {
  const segs = path
    .split('?')[0]!
    .split('/')
    .filter((s) => s !== '');
  let rest: string[];
  if (segs[0] === 'api') rest = segs.slice(2);
  else if (segs[0] === 'apis') rest = segs.slice(3);
  else return 'other';
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const [resource, , sub] = rest;
  if (resource === undefined) return 'other';
  return sub !== undefined ? `${resource}/${sub}` : resource;
}

function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const err = new Error('request aborted', { cause: reason });
  err.name = 'AbortError';
  return err;
}

function headerValue(h: string | string[] | undefined): string | undefined {
  return Array.isArray(h) ? h[0] : h;
}

/** `Retry-After` is either a number of seconds or an HTTP date (e.g. `Wed, 21 Oct 2026 07:28:00 GMT`). */
function parseRetryAfter(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) {
    const n = Number(value.trim());
    return n > 0 ? n : undefined;
  }
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  const secs = Math.ceil((at - Date.now()) / 1000);
  return secs > 0 ? secs : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}
