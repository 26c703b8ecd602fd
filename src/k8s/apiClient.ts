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
import type { Impersonation } from './kubeConfig.js';
import { ApiError } from './apiErrors.js';
import { exchange, headerValue, type RawResponse } from './httpExchange.js';
import { streamWatch, type WatchEvent } from './watchStream.js';

// The command-line tools take the client and the error classification they need from this one module.

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
  /**
   * Who every request acts as (kubectl's `--as`, `--as-group`). client-node sets `Impersonate-User`
   * only from a kubeconfig user's `as`; this takes its place when given, and adds the groups.
   */
  impersonate?: Impersonation;
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
  private readonly impersonation: http.OutgoingHttpHeaders;
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
    this.impersonation = impersonationHeaders(opts.impersonate);
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
    let text: RawResponse;
    try {
      text = await exchange(req, {
        method,
        path,
        payload,
        signal: opts.signal,
        timeoutMs: this.requestTimeoutMs,
        onResponse: (res) => this.clockSkew?.sample(sent, Date.now(), headerValue(res.headers.date)),
      });
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
    return streamWatch(req, { path, onEvent, signal, record: (code) => this.record('WATCH', path, code) });
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
      ...this.impersonation,
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
/**
 * The API server's impersonation headers for `i`: `Impersonate-User`, and one `Impersonate-Group` line
 * per group (node sends an array value as repeated header lines). Empty without a user: groups alone
 * impersonate no one.
 */
export function impersonationHeaders(i: Impersonation | undefined): http.OutgoingHttpHeaders {
  if (!i?.as) return {};
  const h: http.OutgoingHttpHeaders = { 'Impersonate-User': i.as };
  if (i.asGroups && i.asGroups.length > 0) h['Impersonate-Group'] = [...i.asGroups];
  return h;
}

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
