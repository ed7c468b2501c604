/**
 * Turns every error into `{error: {code, message}}`. Catalogued SalonErrors keep their status;
 * Fastify's own 4xx errors are mapped to catalogue codes; anything else is a 500 whose details are
 * logged and never sent.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SalonError, clientMessage, errors } from '../errors.js';
import { RepeatedFailureLog } from '../repeated-failure-log.js';

/** The media type a request declared, as printable ASCII and at most 100 characters: it is echoed back. */
function declaredMediaType(request: FastifyRequest): string {
  const declared = (request.headers['content-type'] ?? '').split(';')[0].replace(/[^\x21-\x7e]/g, '');
  return declared.slice(0, 100) || 'none';
}

function toSalonError(err: FastifyError, request: FastifyRequest): SalonError {
  if (err instanceof SalonError) return err;
  if (err.validation) return new errors.ERR_BAD_REQUEST(err.message);
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new errors.ERR_PAYLOAD_TOO_LARGE();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      // Fastify 5's own message is a bare "Unsupported Media Type", which named nothing.
      return new errors.ERR_UNSUPPORTED_MEDIA_TYPE(`${declaredMediaType(request)} (send application/json)`);
    default:
      // @fastify/static refuses a directory (`/assets/`) or a dotfile with 403 and a missing file
      // with 404: no such asset, as any other path that is not there.
      if (err.statusCode === 403 || err.statusCode === 404) return new errors.ERR_NOT_FOUND(`${request.method} ${request.url.split('?')[0]}`);
      // A conditional or range request to a static file keeps its status: a client (a download
      // resuming past the end, a cache checking If-Match) reads 412 and 416, not a 400.
      if (err.statusCode === 412) return new errors.ERR_PRECONDITION_FAILED('the If-Match or If-Unmodified-Since condition does not hold');
      if (err.statusCode === 416) return new errors.ERR_RANGE_NOT_SATISFIABLE('the range is past the end of the file');
      if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
        return new errors.ERR_BAD_REQUEST(err.message);
      }
      return new errors.ERR_INTERNAL();
  }
}

/**
 * Longest path parameter the router hands to a route (Fastify's default, 100, is shorter than a
 * valid item id, `news_` + 128 characters); the routes' schemas bound their own parameters.
 */
export const MAX_PATH_PARAM_CHARS = 1024;

/**
 * Fastify's `frameworkErrors`: what its router refuses before any route runs (a path with a bad
 * %-escape such as `%ED%A0%80`, a parameter past MAX_PATH_PARAM_CHARS) is answered in the error
 * contract too, `400 ERR_BAD_REQUEST`, instead of Fastify's own body and a bare 414.
 */
export function frameworkErrors(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const e = new errors.ERR_BAD_REQUEST(err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path parameter is too long' : 'the path is not a valid URL');
  void reply.status(e.statusCode).send({ error: { code: e.code, message: e.message } });
}

/** What `installErrorHandlers` takes besides the app. */
export interface ErrorHandlerOptions {
  /**
   * The browser client's HTML shell, or null when it is not built. A browser opening an address
   * no route takes gets it with the 404, and the client says "Not found" with a way back, instead
   * of a page of JSON.
   */
  notFoundPage?: () => Promise<string | null>;
}

/**
 * A browser navigating to a page (not the API, a socket or an asset): a GET that accepts HTML, or
 * its HEAD, which must answer the GET's status and headers (it answered JSON's).
 */
function wantsPage(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  if (/^\/(api|ws|assets)(\/|$)/.test(request.url)) return false;
  return /\btext\/html\b/.test(request.headers.accept ?? '');
}

/**
 * The Retry-After of a refusal, in whole seconds (at least 1): its `retryAfterMs` rounded up (a
 * client that waits that long is never refused for the rounding); undefined when no wait is
 * known, and then no header is sent.
 */
export function retryAfterSeconds(err: SalonError): number | undefined {
  return err.retryAfterMs === undefined ? undefined : Math.max(1, Math.ceil(err.retryAfterMs / 1000));
}

/** Installs the error and not-found handlers on `app`. */
export function installErrorHandlers(app: FastifyInstance, options: ErrorHandlerOptions = {}): void {
  // A store outage fails every request that reads it: one line each filled the log with
  // thousands a minute. Per route (a bounded set), so another route's new failure is still told.
  const failures = new Map<string, RepeatedFailureLog>();
  const routeOf = (request: FastifyRequest) => `${request.method} ${request.routeOptions.url ?? '(no route)'}`;
  app.addHook('onResponse', async (request, reply) => {
    if (reply.statusCode < 500) failures.get(routeOf(request))?.succeeded();
  });
  app.addHook('onClose', async () => {
    for (const log of failures.values()) log.close();
  });
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const salonError = toSalonError(err, request);
    if (salonError.statusCode >= 500) {
      const route = routeOf(request);
      let log = failures.get(route);
      if (!log) failures.set(route, (log = new RepeatedFailureLog({ log: app.log, what: `requests to ${route}` })));
      log.failed(err, { reqId: request.id }, 'request failed');
    }
    const retryAfter = retryAfterSeconds(salonError);
    if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
    // A 416 names the file's size (@fastify/send puts `bytes */<size>` on its error).
    const range = (err as { headers?: Record<string, unknown> }).headers?.['Content-Range'];
    if (salonError.statusCode === 416 && typeof range === 'string' && /^bytes \*\/\d+$/.test(range)) reply.header('content-range', range);
    reply.status(salonError.statusCode).send({ error: { code: salonError.code, message: clientMessage(salonError) } });
  });
  const notFound = (request: FastifyRequest, reply: FastifyReply) => {
    const e = new errors.ERR_NOT_FOUND(`${request.method} ${request.url.split('?')[0]}`);
    return reply.status(404).send({ error: { code: e.code, message: e.message } });
  };
  // A request no route takes is answered before its body is read: Fastify parses the body of a
  // POST or OPTIONS to any path first, and 1 MB of nested arrays held the event loop ~100 ms, with
  // no route to limit how often. A page's GET has no body: it goes on to the not-found handler,
  // after every onRequest hook, so the page gets helmet's CSP like any other.
  app.addHook('onRequest', async (request, reply) => {
    if (request.is404 && !(options.notFoundPage && wantsPage(request))) return notFound(request, reply);
  });
  app.setNotFoundHandler(async (request, reply) => {
    const html = options.notFoundPage && wantsPage(request) ? await options.notFoundPage() : null;
    if (html === null) return notFound(request, reply);
    return reply.status(404).type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(html);
  });
}

/**
 * Answers every request that arrives once `app` has begun to close (on a keep-alive connection,
 * while the rooms drain their answers) with `503 ERR_NOT_READY` and `Connection: close`. Fastify's
 * own answer then, with its `return503OnClosing`, is a body of its own shape
 * (`{"error":"Service Unavailable",…}`), whose `error.code` a client reads as missing. Call before
 * any other preClose hook is added, so the flag is up while they run.
 */
export function answerWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    reply.header('connection', 'close');
    throw new errors.ERR_NOT_READY('the server is shutting down');
  });
}

/** JSON schema of the error body, for route schemas and the OpenAPI document. */
export const errorBodySchema = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' } },
      required: ['code', 'message'],
    },
  },
  required: ['error'],
} as const;
