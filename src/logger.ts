import { printable } from './cli/printable.js';

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

/**
 * Lines on stderr for command-line tools (stdout stays data): warnings and errors always, the rest
 * when `verbose`. A message and its error may carry a model server's own error text (`salon
 * reindex` with the server answering HTTP 500): shown printable, as every CLI path shows outside
 * text, so none of it drives the terminal, and on one line: a newline in it (which printable
 * keeps) wrote a line of the outside text's choosing, a forged `warning: …` or `done` among them.
 */
export function stderrLogger(verbose = false): Logger {
  const line = (prefix: string, details: object, msg: string) => {
    const err = (details as { err?: unknown }).err;
    // The reason may come as its message alone (the memory's failures log it so).
    const reason = err instanceof Error ? `: ${err.message}` : typeof err === 'string' && err ? `: ${err}` : '';
    console.error(`${prefix}${printable(`${msg}${reason}`).replace(/\n/g, '\\n')}`);
  };
  return {
    debug: (d, m) => verbose && line('', d, m),
    info: (d, m) => verbose && line('', d, m),
    warn: (d, m) => line('warning: ', d, m),
    error: (d, m) => line('', d, m),
  };
}
