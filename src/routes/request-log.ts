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

/** The pino options Fastify's `logger` takes. */
type LoggerOptions = Exclude<FastifyServerOptions['logger'], boolean | undefined>;

/** A request URL as the log keeps it: the path, without its query. */
export function loggedPath(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * A relative URL's query in free text: after a space, quote, bracket, colon or `=`, one `/`, a
 * path, then `?…` up to a space or a double quote. A URL's path and query may hold `'`, `(` and
 * `)` (encodeURIComponent leaves them as they are, so a search for "salon (2)" sends them), and
 * stopping at them logged the rest: a query runs on past them, and a path goes on through them.
 * The path stops where another such URL could begin (a `'`, `(`, colon or `=` before one `/`):
 * running on past it, each of n starts (`=/=/=/…`) read to the text's end, quadratic.
 */
const RELATIVE_URL_QUERY = /(^|[\s"'(:=])(\/(?!\/)(?:[^\s"'(?:=]|['(:=](?!\/(?!\/)))*)\?[^\s"]*/g;

/** `text` with the query of every request-like URL in it dropped. */
export function withoutQueries(text: string): string {
  return text.replace(RELATIVE_URL_QUERY, '$1$2');
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
 * A URL field as the log keeps it: a request's URL (starting with `/`, as a request line's does,
 * `//` included) is cut at its first `?` whatever comes before it, as the `req` serializer cuts
 * it; other text (an absolute URL, a message) has the queries of the request URLs in it dropped.
 * @fastify/websocket logs the raw URL of an upgrade to a route without a socket as `path`.
 */
function fieldForLog(value: string): string {
  return value.startsWith('/') ? loggedPath(value)! : withoutQueries(value);
}

/**
 * A URL's userinfo in free text (`http://alice:s3cret@host`): an error may name the address it
 * could not reach, and OLLAMA_HOST, REDIS_URL or DATABASE_URL may carry a password. Up to the last
 * `@` before the host, as URL parsers read it: a password may hold one (`postgres://u:p@ss@db`, a
 * URL pg and ioredis take), and stopping at the first logged its rest.
 */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#"'<>]*@/gi;

/** Free text as the log keeps it: without queries or credentials in URLs, printable. */
export function textForLog(text: string): string {
  return printable(withoutQueries(text).replace(URL_USERINFO, '$1'));
}

/** How deep an error's causes and aggregated errors are logged (a cause may be its own). */
const MAX_ERROR_DEPTH = 5;

/** A cause or an aggregated error as the log keeps it: scrubbed as its top error is; past MAX_ERROR_DEPTH, left out. */
function nestedForLog(value: unknown, depth: number): unknown {
  if (depth > MAX_ERROR_DEPTH) return undefined;
  if (value instanceof Error) return errorForLog(value, depth);
  return typeof value === 'string' ? textForLog(value) : value;
}

/**
 * `err` with the queries and URL credentials scrubbed from its message and stack, its causes and
 * an AggregateError's errors scrubbed alike, without the parser's `rawPacket` (the bytes of a
 * malformed request, its request line among them, that Node puts on a client error) and without a
 * PostgreSQL error's `detail` (`Key (text)=(…)`: a row's values, people's text): a copy with the
 * same prototype, so the log's error serializer reads it as it would `err`.
 */
export function errorForLog(err: Error, depth = 0): Error {
  const raw = err as Error & { rawPacket?: unknown; detail?: unknown; errors?: unknown };
  const message = textForLog(err.message);
  const stack = err.stack === undefined ? undefined : textForLog(err.stack);
  const cause = err.cause === undefined ? undefined : nestedForLog(err.cause, depth + 1);
  const errs = Array.isArray(raw.errors) ? raw.errors.map((e) => nestedForLog(e, depth + 1)) : raw.errors;
  const errsChanged = Array.isArray(errs) && errs.some((e, i) => e !== (raw.errors as unknown[])[i]);
  if (raw.rawPacket === undefined && raw.detail === undefined && message === err.message && stack === err.stack && cause === err.cause && !errsChanged) {
    return err;
  }
  const copy = Object.assign(Object.create(Object.getPrototypeOf(err) as object) as Error & { rawPacket?: unknown; detail?: unknown }, err);
  delete copy.rawPacket;
  delete copy.detail;
  const hidden = (name: string, value: unknown) => Object.defineProperty(copy, name, { value, enumerable: false, writable: true, configurable: true });
  hidden('message', message);
  hidden('stack', stack);
  if (cause !== undefined) hidden('cause', cause);
  else delete copy.cause;
  if (Array.isArray(errs))
    hidden(
      'errors',
      errs.filter((e) => e !== undefined),
    );
  return copy;
}

/** A log call's details with the URL fields and the error scrubbed of queries and printable (the same object when nothing changes). */
function detailsForLog(details: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  const set = (name: string, value: unknown) => {
    if (value === details[name]) return;
    copy ??= { ...details };
    copy[name] = value;
  };
  for (const name of URL_FIELDS) if (typeof details[name] === 'string') set(name, printable(fieldForLog(details[name] as string)));
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
