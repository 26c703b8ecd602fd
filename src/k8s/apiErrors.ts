/**
 * How the API server and the network fail, and how callers classify a failure: a non-2xx answer decoded from its
 * `metav1.Status` ({@link ApiError}), a request that ran out of time, a caller's abort, and the predicates that
 * tell a retry from a re-read from giving up.
 */
import { errorMessage, type PortErrorKind } from '../reconcile/portErrors.js';

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
    const kind = KIND_OF_STATUS[init.statusCode] ?? (isStatusSchemaRefusal(init) ? 'SchemaOutdated' : undefined);
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

/** What the API server says of a status value its schema does not know: an enum value, an undeclared field. */
const UNKNOWN_TO_SCHEMA = /Unsupported value|field not declared in schema/;
/** A field path under status, as a validation cause names it (`status.cause`) or its message quotes it (`.status.x`). */
const STATUS_FIELD = /^\.?status(\.|\[|$)/;

/**
 * True for the 422 Invalid a CRD older than the operator answers a status write with: the Status names
 * only `status.` fields, each refused as a value the schema does not know (`FieldValueNotSupported`,
 * "Unsupported value", "field not declared in schema"). Not for a spec field, nor for a value the schema
 * knows and bounds (too long, out of range): those are no sign of an older CRD.
 */
export function isStatusSchemaRefusal(init: { statusCode: number; reason?: string; body?: unknown }): boolean {
  if (init.statusCode !== 422 || init.reason !== 'Invalid' || !isRecord(init.body)) return false;
  const details = isRecord(init.body.details) ? init.body.details : {};
  // A CRD with CEL rules adds a cause of its own to any schema refusal (no field: "some validation rules
  // were not checked because the object was invalid"); it says nothing about which field was refused.
  const causes = (Array.isArray(details.causes) ? details.causes.filter(isRecord) : []).filter((c) => !isUncheckedRulesNote(c));
  if (causes.length > 0) {
    return causes.every(
      (c) =>
        typeof c.field === 'string' &&
        STATUS_FIELD.test(c.field) &&
        (c.reason === 'FieldValueNotSupported' || (typeof c.message === 'string' && UNKNOWN_TO_SCHEMA.test(c.message))),
    );
  }
  // No causes (an older server, or a refusal from the field manager): read the message, `<field>: <why>`.
  const message = typeof init.body.message === 'string' ? init.body.message : '';
  return /(^|[\s:])\.?status[.[][^\s:]*: (Unsupported value|field not declared in schema)/.test(message);
}

function isUncheckedRulesNote(c: Record<string, unknown>): boolean {
  const noField = c.field === undefined || c.field === '' || c.field === '<nil>';
  return noField && typeof c.message === 'string' && c.message.includes('validation rules were not checked');
}

/**
 * True for the API server's refusal to create anything in a namespace that is being deleted (the
 * NamespaceLifecycle admission plugin: 403 Forbidden, "unable to create new content in namespace X
 * because it is being terminated", with a cause of type `NamespaceTerminating`). Retrying cannot help.
 */
export function isNamespaceTerminating(e: unknown): boolean {
  if (!(e instanceof ApiError) || e.statusCode !== 403 || !isRecord(e.body)) return false;
  const details = isRecord(e.body.details) ? e.body.details : {};
  const causes = Array.isArray(details.causes) ? details.causes.filter(isRecord) : [];
  if (causes.some((c) => c.type === 'NamespaceTerminating')) return true;
  return typeof e.body.message === 'string' && /because it is being terminated/.test(e.body.message);
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

/** The error an aborted request rejects with: the signal's own `AbortError` reason, or one wrapping that reason. */
export function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const err = new Error('request aborted', { cause: reason });
  err.name = 'AbortError';
  return err;
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

/** Log-friendly error summary: message, status code and reason, never a whole object. */
export function errorFields(err: unknown): { message: string; statusCode?: number; reason?: string; code?: string } {
  if (err instanceof ApiError) {
    return { message: err.message, statusCode: err.statusCode, ...(err.reason !== undefined ? { reason: err.reason } : {}) };
  }
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { message: err.message, ...(typeof code === 'string' ? { code } : {}) };
  }
  return { message: String(err) };
}
