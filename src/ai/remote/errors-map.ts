/**
 * Turns what goes wrong talking to a model server into ONE catalogued error that names the fix:
 * unreachable → ERR_AI_UNAVAILABLE ("is Ollama running at …? start it with `ollama serve`"),
 * 404 → ERR_AI_MODEL_MISSING ("run `ollama pull …`"), other HTTP failures and broken streams →
 * ERR_AI_UNAVAILABLE / ERR_AI_BAD_RESPONSE. Secrets never reach a message.
 */
import { SalonError, errors } from '../../errors.js';

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

/** True when `err` says the server could not be reached or the connection broke. */
export function isConnectionError(err: unknown): boolean {
  return codesOf(err).some((c) => CONNECTION_CODES.has(c));
}

/** `text` with every secret replaced by `***`, cut to a readable length. */
export function scrub(text: string, secrets: string[] = []): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join('***');
  out = out.replace(/\b(sk|key|Bearer)[-_ ][A-Za-z0-9_-]{6,}/g, '$1-***');
  return out.length > MAX_DETAIL_CHARS ? `${out.slice(0, MAX_DETAIL_CHARS)}…` : out;
}

/** ERR_AI_UNAVAILABLE for an unreachable server. */
export function unreachable(p: ProviderDescription, cause?: unknown): SalonError {
  return new errors.ERR_AI_UNAVAILABLE(`is ${p.name} running at ${p.url}? ${p.startHint}`, ...(cause instanceof Error ? [cause] : []));
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
  if (typeof status === 'number') {
    // A 404 that does not mention a model is a wrong URL (e.g. a base URL without /v1).
    if (status === 404) {
      return /model/i.test(detail) ? modelMissing(p, model) : new errors.ERR_AI_UNAVAILABLE(`${p.name} at ${p.url} answered 404 (${detail}); check the URL`);
    }
    if (status === 401 || status === 403) {
      return new errors.ERR_AI_UNAVAILABLE(`${p.name} at ${p.url} refused the credentials (HTTP ${status}); check the API key`);
    }
    return new errors.ERR_AI_UNAVAILABLE(`${p.name} at ${p.url} answered HTTP ${status}: ${detail}`);
  }
  if (isConnectionError(err)) {
    return codesOf(err).some((c) => c === 'ECONNREFUSED' || c === 'ENOTFOUND' || c === 'EAI_AGAIN' || c === 'UND_ERR_CONNECT_TIMEOUT')
      ? unreachable(p)
      : new errors.ERR_AI_BAD_RESPONSE(`the connection to ${p.name} at ${p.url} broke off (${detail})`);
  }
  return new errors.ERR_AI_BAD_RESPONSE(`${p.name} at ${p.url}: ${detail}`);
}
