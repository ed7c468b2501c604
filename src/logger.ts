import { printable } from './cli/printable.js';
import { errorForLog, MAX_ERROR_DEPTH, textForLog } from './log-text.js';

/**
 * The one logger type every part takes: pino's call shape, structured details first, then the
 * message. Fastify's `app.log` is one; CLI tools pass `stderrLogger`, tests a recording double.
 */

export interface Logger {
  debug(details: object, msg: string): void;
  info(details: object, msg: string): void;
  warn(details: object, msg: string): void;
  error(details: object, msg: string): void;
}

/** A logger that drops everything, for tools and tests. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** `err`'s own text: its message, with an AggregateError's errors (each with its causes) after it. */
function ownText(err: Error, depth: number): string {
  const errors = (err as { errors?: unknown }).errors;
  const each =
    Array.isArray(errors) && depth < MAX_ERROR_DEPTH
      ? errors.map((e) => (e instanceof Error ? reasonText(e, depth + 1) : typeof e === 'string' ? e : '')).filter(Boolean)
      : [];
  const message = err.message || ((err as { code?: unknown }).code as string | undefined) || err.name;
  if (each.length === 0) return message;
  return err.message ? `${message} (${each.join('; ')})` : each.join('; ');
}

/**
 * `err` and its causes on one line (`…; caused by: fetch failed; caused by: connect ECONNREFUSED …`):
 * the cause is often the only line that says what went wrong. A cause whose text the line already
 * holds (a wrapper that repeats its cause's message) is not said twice.
 */
function reasonText(err: Error, depth = 0): string {
  let text = ownText(err, depth);
  let cause = err.cause;
  for (let d = depth + 1; cause !== undefined && d <= MAX_ERROR_DEPTH; d++) {
    const own = cause instanceof Error ? ownText(cause, d) : typeof cause === 'string' ? cause : '';
    if (own && !text.includes(own)) text += `; caused by: ${own}`;
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return text;
}

/**
 * Lines on stderr for command-line tools (stdout stays data): warnings and errors always, the rest
 * when `verbose`. An error is told with its causes (an AggregateError with its errors), as deep as
 * the server's log follows them (MAX_ERROR_DEPTH). The message and the error go through that log's
 * scrubbing (src/log-text.ts, `textForLog` and `errorForLog`): a URL's credentials dropped (an
 * error may name DATABASE_URL, REDIS_URL or an OLLAMA_HOST with a password, and CLI output lands in
 * CI logs and terminals' scrollback), a
 * PostgreSQL error's quoted row left out, and outside text (a model server's error text during
 * `salon reindex`) printable, so none of it drives the terminal. Each call is one line: a newline
 * in the text (which printable keeps) wrote a line of the outside text's choosing, a forged
 * `warning: …` or `done` among them.
 */
export function stderrLogger(verbose = false): Logger {
  const line = (prefix: string, details: object, msg: string) => {
    const err = (details as { err?: unknown }).err;
    // The reason may come as its message alone (the memory's failures log it so).
    const reason = err instanceof Error ? `: ${reasonText(errorForLog(err))}` : typeof err === 'string' && err ? `: ${textForLog(err)}` : '';
    console.error(`${prefix}${printable(`${textForLog(msg)}${reason}`).replace(/\n/g, '\\n')}`);
  };
  return {
    debug: (d, m) => verbose && line('', d, m),
    info: (d, m) => verbose && line('', d, m),
    warn: (d, m) => line('warning: ', d, m),
    error: (d, m) => line('', d, m),
  };
}
