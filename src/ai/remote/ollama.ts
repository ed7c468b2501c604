/**
 * Ollama through the `ollama` npm client (docs/architecture.md): `nomic-embed-text` embeddings in batches,
 * a streamed, abortable chat model with idle and overall timeouts, rerank and summarise by
 * prompt, and a health check (`/api/version`, `/api/tags`) for /readyz and `salon doctor`.
 */
import { Ollama, type Message } from 'ollama';
import { errors } from '../../errors.js';
import { AnswerGuard, LineSplitter, MAX_STREAM_LINE_BYTES, errorBodyText, readGuarded } from './answer-limits.js';
import { modelMissing, type ProviderDescription } from './errors-map.js';
import { withoutUserinfo } from '../../url-userinfo.js';
import { checkLimits, guardCall, guardStream, RemoteChatModel, type RemoteLimits } from './remote-chat.js';
import { answeredDimensions, knownDimensions, toUnitVectors } from '../vectors.js';
import type { ChatMessage, Embedder, ProviderHealth } from '../types.js';
import { required, wholeNumber } from '../../options.js';
import { clip } from '../../text.js';
import { oneLine } from '../../content/text.js';

/** Texts per `/api/embed` request. */
export const OLLAMA_EMBED_BATCH = 64;
/** Cosine threshold for nomic-embed-text (docs/architecture.md). */
export const OLLAMA_SIMILARITY_THRESHOLD = 0.3;
/** Health checks answer quickly or count as failed. */
export const HEALTH_TIMEOUT_MS = 5_000;

export interface OllamaOptions extends RemoteLimits {
  /** OLLAMA_HOST, e.g. http://127.0.0.1:11434. */
  host: string;
  /** Texts per request (default OLLAMA_EMBED_BATCH). */
  batchSize?: number;
}

function describe(host: string): ProviderDescription {
  const { passwords = [], authorization } = credentialsOf(host);
  return {
    name: 'Ollama',
    url: host,
    startHint: 'start it with `ollama serve` (or set OLLAMA_HOST)',
    missingModelHint: (model) => `run \`ollama pull ${model}\``,
    secrets: [...passwords, authorization].filter((s): s is string => !!s),
  };
}

/**
 * OLLAMA_HOST's user name and password (a proxy in front of Ollama) as a Basic Authorization
 * header. fetch refuses a URL that carries them, and its error, naming the URL with the password,
 * went to the log, /readyz and `salon doctor`.
 */
function credentialsOf(host: string): { passwords?: string[]; authorization?: string } {
  const url = URL.parse(host);
  if (!url || (!url.username && !url.password)) return {};
  const password = decoded(url.password);
  const token = Buffer.from(`${decoded(url.username)}:${password}`).toString('base64');
  // As written in the URL and decoded: a message may show either.
  return { passwords: [url.password, password], authorization: `Basic ${token}` };
}

/** A URL's percent-encoded part decoded; as it is when it is no valid encoding (`%zz`). */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

function checkOptions(options: OllamaOptions): void {
  try {
    new URL(options.host);
  } catch {
    throw new TypeError(`host: expected an http(s) URL, got "${options.host}"`);
  }
  checkLimits(options);
  wholeNumber('Ollama', 'batchSize', options.batchSize ?? OLLAMA_EMBED_BATCH, 1);
}

/**
 * A client whose every request also carries `signal` (the client only aborts streams itself), and
 * whose answers are checked before the client reads them (answer-limits.ts): a whole answer is read
 * here, within its limits; a streamed one is passed on line by line, each line a JSON object within
 * its limits (the client skips a line that is not JSON with a console.warn of the whole line).
 * Error answers (a redirect among them) are turned into Ollama's `{error}` shape, because the
 * client console.logs its way through plain-text errors.
 */
function client(host: string, signal: AbortSignal, streaming = false): Ollama {
  const { authorization } = credentialsOf(host);
  return new Ollama({
    host: withoutUserinfo(host),
    ...(authorization ? { headers: { authorization } } : {}),
    fetch: async (input, init) => {
      // Redirects are not followed (as undici's request does not, for the OpenAI-compatible
      // servers): fetch took a 307 elsewhere, the prompt with it, and streamed that answer to the room.
      const res = await fetch(input, { ...init, redirect: 'manual', signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal });
      const where = `Ollama ${new URL(String(input)).pathname}`;
      const headers = { 'content-type': 'application/json' };
      if (!res.ok) {
        const text = res.body ? await errorBodyText(res.body) : '';
        return new Response(JSON.stringify({ error: errorText(text) || res.statusText || `HTTP ${res.status}` }), { status: res.status, headers });
      }
      if (!res.body) return res;
      if (streaming) return new Response(res.body.pipeThrough(jsonLines(where)), { status: res.status, headers });
      return new Response((await readGuarded(res.body, new AnswerGuard(where))).toString('utf8'), { status: res.status, headers });
    },
  });
}

/** Ollama's `{error}` message in an error answer, else the answer's text. */
function errorText(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (typeof parsed?.error === 'string') return parsed.error.trim();
  } catch {
    // not JSON: the text itself
  }
  return text.trim();
}

/** Re-frames an NDJSON stream into checked lines, each one JSON object; ERR_AI_BAD_RESPONSE otherwise. */
function jsonLines(where: string): TransformStream<Uint8Array, Uint8Array> {
  const guard = new AnswerGuard(where, { maxLineBytes: MAX_STREAM_LINE_BYTES });
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  // The guard counts a line's bytes (and refuses it first): the splitter's own bound is never reached.
  const lines = new LineSplitter(Infinity);
  const emit = (line: string, out: TransformStreamDefaultController<Uint8Array>) => {
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new errors.ERR_AI_BAD_RESPONSE(`${where} streamed a line that is not JSON`);
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw new errors.ERR_AI_BAD_RESPONSE(`${where} streamed a line that is not a JSON object`);
    out.enqueue(encoder.encode(`${line}\n`));
  };
  return new TransformStream({
    transform(chunk, out) {
      guard.check(chunk);
      for (const line of lines.push(decoder.decode(chunk, { stream: true }))) emit(line, out);
    },
    flush(out) {
      emit(lines.end() + decoder.decode(), out);
    },
  });
}

/** `nomic-embed-text` embeddings through Ollama's `/api/embed`. */
export class OllamaEmbedder implements Embedder {
  readonly model: string;
  readonly similarityThreshold = OLLAMA_SIMILARITY_THRESHOLD;
  /** The seed's rule for nomic-embed-text: nothing at 0.3 or above, no answer. */
  readonly relevanceThreshold = OLLAMA_SIMILARITY_THRESHOLD;
  private learned: number | undefined;
  private readonly provider: ProviderDescription;
  private readonly batchSize: number;

  constructor(
    private readonly modelName: string,
    private readonly options: OllamaOptions,
  ) {
    required('model', 'name', modelName);
    checkOptions(options);
    this.model = `ollama:${modelName}`;
    this.provider = describe(options.host);
    this.batchSize = options.batchSize ?? OLLAMA_EMBED_BATCH;
  }

  /** Known from the model's name, then from the first answer; 0 while unknown. */
  get dimensions(): number {
    return this.learned ?? knownDimensions(this.modelName) ?? 0;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) {
      const input = texts.slice(i, i + this.batchSize);
      const res = await guardCall(
        (s) => client(this.options.host, s).embed({ model: this.modelName, input }),
        this.options,
        this.provider,
        this.modelName,
        signal,
      );
      const vectors = toUnitVectors(res?.embeddings, input.length, 'Ollama /api/embed');
      this.learned = answeredDimensions(vectors, this.dimensions, 'Ollama /api/embed');
      out.push(...vectors);
    }
    return out;
  }
}

function toOllamaMessages(messages: ChatMessage[]): Message[] {
  return messages.map((m) => ({ role: m.role, content: m.content }));
}

/** A chat model served by Ollama (`llama3.2` by default). */
export class OllamaChatModel extends RemoteChatModel {
  readonly model: string;
  private readonly provider: ProviderDescription;

  constructor(
    private readonly modelName: string,
    private readonly options: OllamaOptions,
  ) {
    super();
    required('model', 'name', modelName);
    checkOptions(options);
    this.model = modelName;
    this.provider = describe(options.host);
  }

  /** Ollama's cap on a reply's length (`num_predict`), when AI_MAX_ANSWER_TOKENS sets one. */
  private replyOptions(): { options?: { num_predict: number } } {
    const max = this.options.maxAnswerTokens;
    return max ? { options: { num_predict: max } } : {};
  }

  stream(messages: ChatMessage[], signal?: AbortSignal): AsyncIterable<string> {
    const { host } = this.options;
    const model = this.modelName;
    const reply = this.replyOptions();
    return guardStream(
      async function* (s) {
        const parts = await client(host, s, true).chat({ model, messages: toOllamaMessages(messages), stream: true, ...reply });
        for await (const part of parts) {
          const content = part.message?.content;
          yield typeof content === 'string' ? content : '';
        }
      },
      this.options,
      this.provider,
      model,
      signal,
      this.thinking.streamFilter(),
    );
  }

  protected async complete(messages: ChatMessage[], signal?: AbortSignal): Promise<string> {
    const res = await guardCall(
      (s) => client(this.options.host, s).chat({ model: this.modelName, messages: toOllamaMessages(messages), stream: false, ...this.replyOptions() }),
      this.options,
      this.provider,
      this.modelName,
      signal,
    );
    if (typeof res?.message?.content !== 'string') throw new errors.ERR_AI_BAD_RESPONSE('Ollama /api/chat gave no message');
    return res.message.content;
  }
}

/** True when Ollama's tag list holds `model` (`llama3.2` matches `llama3.2:latest`). */
export function hasOllamaModel(names: string[], model: string): boolean {
  const wanted = model.includes(':') ? model : `${model}:latest`;
  return names.some((n) => n === model || n === wanted);
}

/** Longest Ollama version shown (real ones are like `0.9.0`); /readyz is open to anyone. */
const VERSION_MAX_CHARS = 40;

/** The version a server gave, as /readyz and `salon doctor` show it: one short line, whatever it sent. */
function shownVersion(version: unknown): string {
  const line = typeof version === 'string' ? oneLine(version) : '';
  return line ? clip(line, VERSION_MAX_CHARS) : '(version not given)';
}

/** Reachable (`/api/version`) and both models pulled (`/api/tags`)? Never throws. */
export async function ollamaHealth(host: string, models: string[]): Promise<ProviderHealth> {
  const provider = describe(host);
  const limits = { timeoutMs: HEALTH_TIMEOUT_MS, idleTimeoutMs: HEALTH_TIMEOUT_MS };
  try {
    const { version } = await guardCall((s) => client(host, s).version(), limits, provider, 'version');
    const tags = await guardCall((s) => client(host, s).list(), limits, provider, 'tags');
    const names = tags.models.map((m) => m.name);
    const missing = models.filter((m) => !hasOllamaModel(names, m));
    if (missing.length > 0) {
      return { ok: false, provider: 'ollama', detail: missing.map((m) => modelMissing(provider, m).message).join('; ') };
    }
    return { ok: true, provider: 'ollama', detail: `Ollama ${shownVersion(version)} at ${withoutUserinfo(host)}; models ${models.join(', ')} present` };
  } catch (err) {
    return { ok: false, provider: 'ollama', detail: (err as Error).message };
  }
}
