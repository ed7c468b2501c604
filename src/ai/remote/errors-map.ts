/**
 * Turns what goes wrong talking to a model server into ONE catalogued error that names the fix:
 * unreachable → ERR_AI_UNAVAILABLE ("is Ollama running at …? start it with `ollama serve`"; at a
 * port fetch refuses: "serve it on another port"),
 * 404 → ERR_AI_MODEL_MISSING ("run `ollama pull …`"), other HTTP failures and broken streams →
 * ERR_AI_UNAVAILABLE / ERR_AI_BAD_RESPONSE. Secrets never reach a message; the server's address and
 * its own error text reach only the full message, not the one clients see (SalonError.publicMessage).
 */
import { SalonError, errors } from '../../errors.js';
import { withoutUserinfo } from '../../url-userinfo.js';

/** How to talk about one provider in error messages. */
export interface ProviderDescription {
  /** `Ollama`, `the OpenAI-compatible server`. */
  name: string;
  /** Base URL, as configured. */
  url: string;
  /** What to do when it cannot be reached. */
  startHint: string;
  /** What to do when `model` is missing. */
  missingModelHint(model: string): string;
  /** Strings that must never appear in a message (API keys). */
  secrets?: string[];
}

/** A non-2xx answer from a model server. */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'HttpStatusError';
  }
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);
const MAX_DETAIL_CHARS = 200;

function codesOf(err: unknown): string[] {
  const out: string[] = [];
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string') out.push(e.code);
    if (e instanceof AggregateError) for (const inner of e.errors) out.push(...codesOf(inner));
  }
  return out;
}

/**
 * True when fetch refused to connect at all because the URL's port is a "bad port" of the Fetch
 * standard (1, 7, 9, …, 6000, 10080): nothing was sent, so the server is as unreachable as one
 * that is down, whatever runs on that port.
 */
function isRefusedPort(err: unknown): boolean {
  for (let e = err as { message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e instanceof Error && e.message === 'bad port') return true;
  }
  return false;
}

/** True when `err` says the server could not be reached or the connection broke. */
export function isConnectionError(err: unknown): boolean {
  return codesOf(err).some((c) => CONNECTION_CODES.has(c));
}

/**
 * What scrub reads past MAX_DETAIL_CHARS: a key cut there keeps more than the six characters that
 * mark it. Reading no further matters, since the key pattern holds a backtrack entry per character
 * and a model server's error of megabytes ran out of V8's backtrack stack (RangeError).
 */
const SCRUB_READ_CHARS = MAX_DETAIL_CHARS + 1024;

/** `text` with every secret replaced by `***`, cut to a readable length. */
export function scrub(text: string, secrets: string[] = []): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join('***');
  if (out.length > SCRUB_READ_CHARS) out = out.slice(0, SCRUB_READ_CHARS);
  out = out.replace(/\b(sk|key|Bearer)[-_ ][A-Za-z0-9_-]{6,}/g, '$1-***');
  return out.length > MAX_DETAIL_CHARS ? `${out.slice(0, MAX_DETAIL_CHARS)}…` : out;
}

/**
 * `full` (for logs and the operator) told to clients as `shown`'s message: the model server's
 * address and its own error text stay with the operator (docs/errors.md: 5xx messages carry no
 * internal details), while the fix is still named.
 */
function toldAs(full: SalonError, shown: SalonError): SalonError {
  full.publicMessage = shown.message;
  return full;
}

/** ERR_AI_UNAVAILABLE for an unreachable server. */
export function unreachable(p: ProviderDescription, cause?: unknown): SalonError {
  const causes = cause instanceof Error ? [cause] : [];
  return toldAs(
    new errors.ERR_AI_UNAVAILABLE(`is ${p.name} running at ${withoutUserinfo(p.url)}? ${p.startHint}`, ...causes),
    new errors.ERR_AI_UNAVAILABLE(`is ${p.name} running? ${p.startHint}`),
  );
}

/** ERR_AI_MODEL_MISSING naming the fix. */
export function modelMissing(p: ProviderDescription, model: string): SalonError {
  return new errors.ERR_AI_MODEL_MISSING(model, p.missingModelHint(model));
}

/**
 * The one error to report for `err`, raised while asking `model`. SalonErrors pass through.
 * Timeouts and caller aborts are told apart by the Deadline, not here.
 */
export function describeFailure(err: unknown, p: ProviderDescription, model: string): SalonError {
  if (err instanceof SalonError) return err;
  const status = err instanceof HttpStatusError ? err.status : (err as { status_code?: unknown }).status_code;
  const detail = scrub(err instanceof Error ? err.message : String(err), p.secrets);
  const at = `${p.name} at ${withoutUserinfo(p.url)}`;
  if (typeof status === 'number') {
    // A 404 that does not mention a model is a wrong URL (e.g. a base URL without /v1).
    if (status === 404) {
      return /model/i.test(detail)
        ? modelMissing(p, model)
        : toldAs(
            new errors.ERR_AI_UNAVAILABLE(`${at} answered 404 (${detail}); check the URL`),
            new errors.ERR_AI_UNAVAILABLE(`${p.name} answered 404; check its URL`),
          );
    }
    if (status === 401 || status === 403) {
      const refused = `refused the credentials (HTTP ${status}); check the API key`;
      return toldAs(new errors.ERR_AI_UNAVAILABLE(`${at} ${refused}`), new errors.ERR_AI_UNAVAILABLE(`${p.name} ${refused}`));
    }
    return toldAs(
      new errors.ERR_AI_UNAVAILABLE(`${at} answered HTTP ${status}: ${detail}`),
      new errors.ERR_AI_UNAVAILABLE(`${p.name} answered HTTP ${status}`),
    );
  }
  if (isConnectionError(err)) {
    return codesOf(err).some((c) => c === 'ECONNREFUSED' || c === 'ENOTFOUND' || c === 'EAI_AGAIN' || c === 'UND_ERR_CONNECT_TIMEOUT')
      ? unreachable(p)
      : toldAs(
          new errors.ERR_AI_BAD_RESPONSE(`the connection to ${at} broke off (${detail})`),
          new errors.ERR_AI_BAD_RESPONSE(`the connection to ${p.name} broke off`),
        );
  }
  if (isRefusedPort(err)) {
    const refused = `its port is one fetch never connects to; serve it on another port: ${p.startHint}`;
    return toldAs(
      new errors.ERR_AI_UNAVAILABLE(`${at} cannot be reached: ${refused}`),
      new errors.ERR_AI_UNAVAILABLE(`${p.name} cannot be reached: ${refused}`),
    );
  }
  return toldAs(new errors.ERR_AI_BAD_RESPONSE(`${at}: ${detail}`), new errors.ERR_AI_BAD_RESPONSE(`${p.name} failed`));
}
