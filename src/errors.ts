/**
 * The one catalogue of Salon's error codes. Each entry has a stable code, an HTTP status and a
 * message template (`%s` placeholders filled from the constructor's arguments). Call sites throw
 * `new errors.ERR_ROOM_NOT_FOUND(id)`; the HTTP error handler and the WebSocket route turn a
 * SalonError into `{error: {code, message}}` or an `error` frame.
 *
 * Every code is documented in docs/errors.md; test/errors.test.ts keeps the two in step.
 */

/** Base class of every error Salon reports to a client. */
export class SalonError extends Error {
  readonly code: string;
  readonly statusCode: number;
  /**
   * What a client is told instead of `message` when the message carries what only the operator
   * should read (a model server's address, its own error text); see clientMessage.
   */
  publicMessage?: string;
  /**
   * Whole milliseconds (1 or more) until the limit that refused takes the same request or frame,
   * when that is known (see withRetryAfterMs); an ERR_RATE_LIMITED `error` frame carries it as
   * `retryAfterMs`, and an HTTP answer as Retry-After, rounded up to whole seconds.
   */
  retryAfterMs?: number;
  /**
   * Set when asking again would fail the same way: the server answered, and its answer was refused
   * for what it held (a 404, a body too large or not JSON). Unset, the failure may pass later (a
   * timeout, a cut connection, a 503); see permanently.
   */
  permanent?: boolean;
  constructor(code: string, statusCode: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SalonError';
    this.code = code;
    this.statusCode = statusCode;
  }
}

/**
 * The text a client (an `error` frame, an HTTP error body) is given for `err`: its public message
 * when it has one. Logs, the CLI and the admin's /readyz keep the full message.
 */
export function clientMessage(err: SalonError): string {
  return err.publicMessage ?? err.message;
}

/** Sets `err.retryAfterMs` to `waitMs` (rounded up, at least 1) when that is a finite wait; returns `err`. */
export function withRetryAfterMs<E extends SalonError>(err: E, waitMs: number): E {
  if (Number.isFinite(waitMs)) err.retryAfterMs = Math.max(1, Math.ceil(waitMs));
  return err;
}

/** Marks `err` as a failure that asking again would only repeat (SalonError.permanent); returns `err`. */
export function permanently<E extends SalonError>(err: E): E {
  err.permanent = true;
  return err;
}

/** A constructor for one catalogued error; `new` it with the template's arguments. */
export interface SalonErrorClass {
  new (...args: unknown[]): SalonError;
  readonly code: string;
  readonly statusCode: number;
  readonly template: string;
}

function format(template: string, args: unknown[]): string {
  let i = 0;
  return template.replace(/%s/g, () => (i < args.length ? String(args[i++]) : ''));
}

function define(code: string, statusCode: number, template: string): SalonErrorClass {
  const cls = class extends SalonError {
    static readonly code = code;
    static readonly statusCode = statusCode;
    static readonly template = template;
    constructor(...args: unknown[]) {
      const last = args[args.length - 1];
      const cause = last instanceof Error ? last : undefined;
      super(code, statusCode, format(template, cause ? args.slice(0, -1) : args), cause ? { cause } : undefined);
    }
  };
  Object.defineProperty(cls, 'name', { value: code });
  return cls as unknown as SalonErrorClass;
}

export const errors = {
  // generic HTTP
  ERR_BAD_REQUEST: define('ERR_BAD_REQUEST', 400, 'Bad request: %s'),
  ERR_UNAUTHORIZED: define('ERR_UNAUTHORIZED', 401, 'This route needs Authorization: Bearer <ADMIN_TOKEN>'),
  ERR_NOT_FOUND: define('ERR_NOT_FOUND', 404, 'No route %s'),
  ERR_PAYLOAD_TOO_LARGE: define('ERR_PAYLOAD_TOO_LARGE', 413, 'Request body is too large'),
  ERR_UPGRADE_REQUIRED: define('ERR_UPGRADE_REQUIRED', 426, '%s is a WebSocket endpoint: open it with a WebSocket client (Upgrade: websocket)'),
  ERR_UNSUPPORTED_MEDIA_TYPE: define('ERR_UNSUPPORTED_MEDIA_TYPE', 415, 'Unsupported content type: %s'),
  ERR_PRECONDITION_FAILED: define('ERR_PRECONDITION_FAILED', 412, 'Precondition failed: %s'),
  ERR_RANGE_NOT_SATISFIABLE: define('ERR_RANGE_NOT_SATISFIABLE', 416, 'Range not satisfiable: %s'),
  ERR_INTERNAL: define('ERR_INTERNAL', 500, 'Internal error'),
  ERR_NOT_READY: define('ERR_NOT_READY', 503, 'Not ready: %s'),

  // content
  ERR_CONTENT_NOT_FOUND: define('ERR_CONTENT_NOT_FOUND', 404, 'No content item %s'),
  ERR_INVALID_CONTENT: define('ERR_INVALID_CONTENT', 400, 'Invalid content item: %s'),
  ERR_INVALID_CURSOR: define('ERR_INVALID_CURSOR', 400, 'Invalid cursor'),
  ERR_JOB_NOT_FOUND: define('ERR_JOB_NOT_FOUND', 404, 'No ingest job %s'),
  ERR_JOB_CANCELLED: define('ERR_JOB_CANCELLED', 503, 'Ingest stopped: %s'),
  ERR_INGEST_BUSY: define('ERR_INGEST_BUSY', 429, '%s ingest jobs are running or queued already; submit more once some have ended'),
  ERR_SOURCE_NOT_FOUND: define('ERR_SOURCE_NOT_FOUND', 404, 'No source %s'),
  ERR_SOURCE_EXISTS: define('ERR_SOURCE_EXISTS', 409, 'Source %s already exists'),
  ERR_SOURCE_FIXED: define('ERR_SOURCE_FIXED', 409, 'Source %s comes from the configuration (SOURCES or DATA_DIR/sources); change it there'),
  ERR_JOB_BUDGET: define('ERR_JOB_BUDGET', 504, 'The ingest job ran past its budget of %s ms (INGEST_JOB_BUDGET_MS)'),

  // fetching
  ERR_FETCH_BLOCKED_ADDRESS: define('ERR_FETCH_BLOCKED_ADDRESS', 422, 'Refusing to fetch %s: it resolves to a private or reserved address'),
  ERR_FETCH_BAD_URL: define('ERR_FETCH_BAD_URL', 422, 'Cannot fetch %s: only http and https URLs are allowed'),
  ERR_FETCH_BLOCKED_PORT: define('ERR_FETCH_BLOCKED_PORT', 422, 'Refusing to fetch %s: port %s belongs to a service that is not a web server'),
  ERR_FETCH_TOO_LARGE: define('ERR_FETCH_TOO_LARGE', 422, 'Response from %s is larger than %s bytes'),
  ERR_FETCH_CONTENT_TYPE: define('ERR_FETCH_CONTENT_TYPE', 422, 'Response from %s has content type %s, not HTML or XML'),
  ERR_FETCH_TOO_MANY_REDIRECTS: define('ERR_FETCH_TOO_MANY_REDIRECTS', 422, 'Too many redirects from %s'),
  ERR_FETCH_HTTP_STATUS: define('ERR_FETCH_HTTP_STATUS', 502, 'Fetching %s failed with HTTP %s'),
  ERR_FETCH_FAILED: define('ERR_FETCH_FAILED', 502, 'Fetching %s failed: %s'),
  ERR_FETCH_TIMEOUT: define('ERR_FETCH_TIMEOUT', 504, 'Fetching %s timed out (timeout %s ms)'),
  ERR_EXTRACTION_FAILED: define('ERR_EXTRACTION_FAILED', 422, 'Could not extract an article from %s: %s'),
  ERR_FEED_PARSE: define('ERR_FEED_PARSE', 422, 'Not a feed: %s'),
  ERR_PROCESSING_TIMEOUT: define('ERR_PROCESSING_TIMEOUT', 422, 'Processing %s took longer than %s ms; the worker was restarted'),
  ERR_PROCESSING_TOO_LARGE: define('ERR_PROCESSING_TOO_LARGE', 422, 'Processing %s needed more than %s MB of memory; the worker was restarted'),

  // AI
  ERR_AI_UNAVAILABLE: define('ERR_AI_UNAVAILABLE', 503, 'AI provider unavailable: %s'),
  ERR_AI_MODEL_MISSING: define('ERR_AI_MODEL_MISSING', 503, 'Model %s is missing: %s'),
  ERR_AI_TIMEOUT: define('ERR_AI_TIMEOUT', 504, 'AI provider timed out after %s ms'),
  ERR_AI_BAD_RESPONSE: define('ERR_AI_BAD_RESPONSE', 502, 'AI provider gave an unusable answer: %s'),
  ERR_INDEX_MODEL_MISMATCH: define('ERR_INDEX_MODEL_MISMATCH', 503, 'Stored vectors were made with %s; the configured embedder is %s. Run `salon reindex`.'),

  // search
  ERR_SEARCH_BUSY: define('ERR_SEARCH_BUSY', 503, 'Search is overloaded (%s); try again shortly'),
  ERR_INDEX_FULL: define('ERR_INDEX_FULL', 507, 'The vector index is full: %s'),

  // rooms and the assistant
  ERR_BAD_MESSAGE: define('ERR_BAD_MESSAGE', 400, 'Bad message: %s'),
  ERR_NAME_RESERVED: define('ERR_NAME_RESERVED', 400, 'The name %s is reserved; choose another'),
  ERR_ROOM_NOT_FOUND: define('ERR_ROOM_NOT_FOUND', 404, 'No room %s'),
  ERR_THREAD_NOT_FOUND: define('ERR_THREAD_NOT_FOUND', 404, 'No thread %s'),
  ERR_FORBIDDEN: define('ERR_FORBIDDEN', 403, 'Not allowed: %s'),
  ERR_THREAD_LOCKED: define('ERR_THREAD_LOCKED', 409, 'Thread %s is split-locked (%s); unlock it first'),
  ERR_THREAD_ARCHIVED: define('ERR_THREAD_ARCHIVED', 409, 'Thread %s is archived (%s)'),
  ERR_THREAD_CHANGED: define('ERR_THREAD_CHANGED', 409, 'Thread %s changed while this operation ran; nothing was changed, try again'),
  ERR_BAD_THREAD_OP: define('ERR_BAD_THREAD_OP', 400, 'Cannot do that: %s'),
  ERR_BAD_TOKEN: define('ERR_BAD_TOKEN', 401, 'The identity token is invalid'),
  ERR_TOKEN_EXPIRED: define('ERR_TOKEN_EXPIRED', 401, 'The identity token has expired: it was issued more than %s days ago'),
  ERR_ORIGIN_NOT_ALLOWED: define('ERR_ORIGIN_NOT_ALLOWED', 403, 'Origin %s may not open room sockets'),
  ERR_HOST_NOT_ALLOWED: define('ERR_HOST_NOT_ALLOWED', 403, 'Host %s is not this server: open it as localhost or 127.0.0.1 with its port'),
  ERR_RATE_LIMITED: define('ERR_RATE_LIMITED', 429, 'Slow down: %s'),
  ERR_TOO_MANY_CONNECTIONS: define('ERR_TOO_MANY_CONNECTIONS', 429, 'Too many connections from this address'),
  ERR_SERVER_FULL: define('ERR_SERVER_FULL', 503, 'The server holds as many connections as it can; try again shortly'),
  ERR_MESSAGE_TOO_LONG: define('ERR_MESSAGE_TOO_LONG', 400, 'Message is longer than %s characters'),
  ERR_NOT_JOINED: define('ERR_NOT_JOINED', 400, 'Send hello before %s'),
  ERR_HELLO_TIMEOUT: define('ERR_HELLO_TIMEOUT', 408, 'No hello within %s ms'),
  ERR_ASSISTANT_BUSY: define('ERR_ASSISTANT_BUSY', 429, 'The assistant queue is full; try again shortly'),
  ERR_ASSISTANT_FAILED: define('ERR_ASSISTANT_FAILED', 502, 'The assistant could not answer: %s'),
} as const satisfies Record<string, SalonErrorClass>;

export type ErrorCode = keyof typeof errors;
