/**
 * What the log keeps of a request's URL: its path, never its query. A query holds what people
 * searched for (`/api/v1/search?q=…`) and may hold a token a client put there; the log is kept,
 * shipped and read by more people than the data. Fastify logs the URL in more than one place (the
 * `req` of "incoming request", "Route GET:/x?q=… not found", an upgrade to a route without a
 * socket handler, errors naming the URL), so besides the serializers every log call is scrubbed of
 * a request-like URL's query: a path starting with one `/` (absolute URLs, a fetched feed's, are
 * left as they are).
 *
 * What the log keeps of outside text is printable too (src/cli/printable.ts). JSON escapes the C0
 * controls only: a Host header of `x\x9b2J` (any client's, written in every "incoming request"
 * line) or a model server's error text put a CSI or a bidi override in the log as it came, which
 * a terminal showing the log (`docker logs -f`) obeys; they are written as escapes.
 */
import type { FastifyRequest, FastifyServerOptions } from 'fastify';
import { printable } from '../cli/printable.js';
import { errorForLog, textForLog } from '../log-text.js';

/** The pino options Fastify's `logger` takes. */
type LoggerOptions = Exclude<FastifyServerOptions['logger'], boolean | undefined>;

/** A request URL as the log keeps it: the path, without its query. */
export function loggedPath(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** `value` printable when it is a string (a header's value, the address a proxy's header told). */
function printableField(value: string | undefined): string | undefined {
  return typeof value === 'string' ? printable(value) : value;
}

/** Fastify's `req` serializer with the path in place of the URL, and what the client sent printable. */
function requestForLog(request: FastifyRequest) {
  return {
    method: request.method,
    url: printableField(loggedPath(request.url)),
    host: printableField(request.host),
    remoteAddress: printableField(request.ip),
    remotePort: request.socket?.remotePort,
  };
}

/** Fields of a log call's details that may carry a request URL. */
const URL_FIELDS = ['url', 'path'];

/**
 * A URL field as the log keeps it, printable: a request's URL (starting with `/`, as a request
 * line's does, `//` included) is cut at its first `?` whatever comes before it, as the `req`
 * serializer cuts it; other text (an absolute URL, a message) is scrubbed as the message is
 * (textForLog): the queries of the request URLs in it dropped, and a URL's userinfo, which an
 * absolute URL handed to the log as it was configured or given (a feed's, a model server's) may hold.
 * @fastify/websocket logs the raw URL of an upgrade to a route without a socket as `path`.
 */
function fieldForLog(value: string): string {
  return value.startsWith('/') ? printable(loggedPath(value)!) : textForLog(value);
}

/** A log call's details with the URL fields and the error scrubbed of queries and printable (the same object when nothing changes). */
function detailsForLog(details: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  const set = (name: string, value: unknown) => {
    if (value === details[name]) return;
    copy ??= { ...details };
    copy[name] = value;
  };
  for (const name of URL_FIELDS) if (typeof details[name] === 'string') set(name, fieldForLog(details[name] as string));
  if (details.err instanceof Error) set('err', errorForLog(details.err));
  // A reason logged as its message alone (the memory's failures, a room's listener).
  else if (typeof details.err === 'string') set('err', textForLog(details.err));
  return copy ?? details;
}

/** pino's logMethod hook: the message, its arguments, the details' URL fields and error scrubbed (see errorForLog) and printable. */
function scrubLogCall(this: unknown, args: unknown[], method: (...args: unknown[]) => void): void {
  const scrubbed = args.map((arg) => {
    if (typeof arg === 'string') return textForLog(arg);
    if (arg instanceof Error) return errorForLog(arg);
    if (arg === null || typeof arg !== 'object' || Array.isArray(arg)) return arg;
    return detailsForLog(arg as Record<string, unknown>);
  });
  method.apply(this, scrubbed);
}

/** The logger options that keep queries, credentials in URLs, rows quoted by errors and terminal controls out of the log. */
export const scrubbedLogging = {
  serializers: { req: requestForLog },
  hooks: { logMethod: scrubLogCall },
} satisfies LoggerOptions;
