/**
 * Free text and errors as every log keeps them, the server's (src/routes/request-log.ts), the
 * CLI's (src/logger.ts) and /readyz's details: without the queries of request URLs, without
 * credentials in URLs, printable (src/cli/printable.ts), an error's causes scrubbed alike.
 */
import { printable } from './cli/printable.js';

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

/** A TCP port, 0 to 65535, or none (`host:` then a space). */
const PORT = String.raw`(?:6553[0-5]|655[0-2]\d|65[0-4]\d\d|6[0-4]\d{3}|[1-5]\d{4}|\d{1,4})?`;

/**
 * A quote or closing bracket that ends a port or its path, when one opens right before the URL's
 * scheme (`"redis://cache:6379/0", ask ops@…`, `(redis://cache:6379) ask …`), then a space,
 * punctuation or the text's end. Unpaired (`redis://u:12) x@h`) it is a password's. Neither the
 * path nor the look back passes another `://`: each URL's try read the rest of a line of them
 * (`a://b:1/a://b:1/…`), quadratic.
 */
const PORT_CLOSED = String.raw`(?:[/?#](?:(?!:\/\/)[^\s"'<>)\]])*)?["')\]>](?<=[("'<[][a-z0-9+.-]*:\/\/(?:(?!:\/\/)\S)*)(?=[\s"'<>),;.]|$)`;

/**
 * A password after `user:`: the rest of its line, then lines holding no space or tab (a newline
 * pasted into a secret, `u:pa⏎ss@h`); the `@` that ends it is the last these reach.
 */
const PASSWORD = String.raw`(?:(?!:\/\/).)*(?:[\r\n]+(?:(?!:\/\/)\S)*)*`;

/**
 * A URL's userinfo in free text (`http://alice:s3cret@host`): an error may name the address it
 * could not reach, and OLLAMA_HOST, REDIS_URL or DATABASE_URL may carry a password. Up to the last
 * `@` before the host, as URL parsers read it: a password may hold one (`postgres://u:p@ss@db`, a
 * URL pg and ioredis take), and stopping at the first logged its rest.
 *
 * A password may also hold what a URL should have escaped (a space, a quote, `/`, `?`, `#`): the
 * URL is malformed, but it is still the secret someone set. After `user:`, the userinfo then runs
 * to the last `@` on the line that a host follows, short of another URL. That reading goes first:
 * a password holding an `@` and a space (`u:p@ss w@h`) would otherwise end at its first `@` and
 * log the rest. So a `host:port` or a `user:password@host` with an `@` later on its line (an
 * address, then someone's email) loses that stretch from the log, which is the price of never
 * logging such a password. A port alone (`host:6379 failed`) starts none, nor does an IPv6
 * address (`[::1]:3000`), and a port followed by a path (`host:6379/0`) only reaches an `@` in the
 * same word.
 *
 * A password of digits before a space or tab (`redis://u:12 hunter@cache`) reads like a port
 * followed by words, and was logged: only the words after it could tell `host:12` followed by
 * someone's address from it, so it is scrubbed as any other password with a space is, to the last
 * `@` on its line that a host follows. So are digits then a comma, a `/` or an unpaired bracket
 * (`u:12, x@h`, `u:12/x y@h`, `u:12) x@h`): `host:6379/0 for ann@…` loses that stretch too. A
 * port that the text's end closes, or a quote or bracket opened right before the URL
 * (`"redis://cache:6379", ask ops@…`), or spaces then an opening quote or bracket
 * (`redis://cache:6379 (ask ops@example.com)`), is still read as a port. A password may go on
 * over line breaks through lines holding no space (PASSWORD), and its `:` may be written `%3A`.
 */
const URL_USERINFO = new RegExp(
  [
    // The scheme is read from the start of a run of scheme characters only (see schemeKept).
    String.raw`(?<![a-z0-9+.-])([a-z0-9+.-]*:\/\/)`,
    String.raw`(?:(?:[^\s/?#@:"'<>[\]]+?(?::|%3A)(?!${PORT}(?:${PORT_CLOSED}|\s+[("'<[]|$))${PASSWORD}|(?::|%3A)${PASSWORD})@(?=[\w[%])`,
    String.raw`|[^\s/?#"'<>]*@)`,
  ].join(''),
  'gi',
);

const SCHEME_JOINER = /[+.-]/;
const WORD_CHAR = /\w/;

/**
 * What a match of URL_USERINFO leaves: its scheme when a scheme (`\b[a-z]…`) begins within the run
 * of scheme characters it starts with, else the match as it was. Read from each word of that run
 * (`\b[a-z][a-z0-9+.-]*:\/\/`), a run with no `://` after it (`a-a-a-…`, a long dotted name) was
 * read to its end once per word, quadratic; every such start shares the run's end and what
 * follows it, so the first is the only one that can match.
 */
function schemeKept(match: string, run: string, offset: number, text: string): string {
  for (let i = 0; i < run.length - 3; i++) {
    if (!/[a-z]/i.test(run[i])) continue;
    if (i === 0 ? offset === 0 || !WORD_CHAR.test(text[offset - 1]) : SCHEME_JOINER.test(run[i - 1])) return run;
  }
  return match;
}

/**
 * The most of one text the log keeps. The scrubbing regexes hold a backtrack entry per character of
 * a password or a path they read, and over megabytes on one line that ran out of V8's backtrack
 * stack (RangeError: Maximum call stack size exceeded) in the middle of logging an error.
 */
export const MAX_LOG_TEXT_CHARS = 65_536;

/** A line break, later a line holding a space or tab: no password (PASSWORD) runs on past it. */
const SPACED_LINE_AFTER = /[\r\n][^\r\n]*?[^\S\r\n]/;

/**
 * `text` cut to MAX_LOG_TEXT_CHARS, with how much was left out. A userinfo cut in two would lose
 * the `@` that marks it: the kept text ends at the last `scheme://` of its last line, and what could
 * follow it there is left out. No userinfo runs past another URL's `://` or a line's end.
 */
function bounded(text: string): string {
  if (text.length <= MAX_LOG_TEXT_CHARS) return text;
  let cut = MAX_LOG_TEXT_CHARS;
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--;
  let kept = text.slice(0, cut);
  const scheme = kept.lastIndexOf('://');
  if (scheme >= 0 && !SPACED_LINE_AFTER.test(kept.slice(scheme))) kept = kept.slice(0, scheme + 3);
  return `${kept}… [${text.length - kept.length} more characters]`;
}

/** Free text as the log keeps it: without queries or credentials in URLs, printable, at most MAX_LOG_TEXT_CHARS of it. */
export function textForLog(text: string): string {
  return printable(withoutQueries(bounded(text)).replace(URL_USERINFO, schemeKept));
}

/** How deep an error's causes and aggregated errors are logged (a cause may be its own). */
export const MAX_ERROR_DEPTH = 5;

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
