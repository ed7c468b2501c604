/**
 * OpenAI-compatible servers (hosted APIs, vLLM, LM Studio, llama.cpp's server, Ollama's /v1):
 * `POST /embeddings` in batches and streamed `POST /chat/completions` (SSE) through undici, with
 * the same timeout, error and rerank rules as the Ollama provider. The API key travels only in
 * the Authorization header: never logged, never in a message.
 */
import { request, type Dispatcher } from 'undici';
import { errors } from '../../errors.js';
import { HttpStatusError, modelMissing, scrub, type ProviderDescription } from './errors-map.js';
import { withoutUserinfo } from '../../url-userinfo.js';
import { checkLimits, guardCall, guardStream, RemoteChatModel, type RemoteLimits } from './remote-chat.js';
import { sseData } from './sse.js';
import { AnswerGuard, MAX_ANSWER_DEPTH, MAX_STREAM_LINE_BYTES, errorBodyText, guarded, parseAnswer, readGuarded } from './answer-limits.js';
import { nestsDeeperThan } from '../../json-depth.js';
import { answeredDimensions, knownDimensions, toUnitVectors } from '../vectors.js';
import type { ChatMessage, Embedder, ProviderHealth } from '../types.js';
import { required, wholeNumber } from '../../options.js';

/** Texts per `/embeddings` request. */
export const OPENAI_EMBED_BATCH = 64;
/**
 * Cosine threshold for OpenAI-style embedders. text-embedding-3 scores unrelated text around
 * 0.1–0.2 and related text above 0.3, like nomic-embed-text.
 */
export const OPENAI_SIMILARITY_THRESHOLD = 0.3;
const HEALTH_TIMEOUT_MS = 5_000;

export interface OpenAIOptions extends RemoteLimits {
  /** OPENAI_BASE_URL, ending in /v1. */
  baseUrl: string;
  /** OPENAI_API_KEY; sent as a Bearer token when set. */
  apiKey?: string;
  batchSize?: number;
  /** For tests; the global dispatcher otherwise. */
  dispatcher?: Dispatcher;
}

function describe(options: OpenAIOptions): ProviderDescription {
  return {
    name: 'the OpenAI-compatible server',
    url: options.baseUrl,
    startHint: 'start the server or set OPENAI_BASE_URL to one that answers',
    missingModelHint: (model) =>
      `the server does not serve "${model}"; set the model variable (OPENAI_EMBED_MODEL / OPENAI_CHAT_MODEL) to one the server lists at GET /models`,
    secrets: options.apiKey ? [options.apiKey] : [],
  };
}

function checkOptions(options: OpenAIOptions): void {
  try {
    new URL(options.baseUrl);
  } catch {
    throw new TypeError(`baseUrl: expected an http(s) URL, got "${options.baseUrl}"`);
  }
  checkLimits(options);
  wholeNumber('OpenAI', 'batchSize', options.batchSize ?? OPENAI_EMBED_BATCH, 1);
}

/** Shared HTTP plumbing: JSON requests with the key, errors as HttpStatusError. */
class OpenAIClient {
  readonly provider: ProviderDescription;
  constructor(readonly options: OpenAIOptions) {
    checkOptions(options);
    this.provider = describe(options);
  }

  private headers(hasBody: boolean, stream: boolean): Record<string, string> {
    const h: Record<string, string> = { accept: stream ? 'text/event-stream' : 'application/json' };
    if (hasBody) h['content-type'] = 'application/json';
    if (this.options.apiKey) h.authorization = `Bearer ${this.options.apiKey}`;
    return h;
  }

  /** Sends a request; resolves to the body stream of a 2xx answer, throws HttpStatusError otherwise. */
  async send(method: 'GET' | 'POST', path: string, signal: AbortSignal, body?: unknown, stream = false): Promise<Dispatcher.ResponseData['body']> {
    const res = await request(`${this.options.baseUrl}${path}`, {
      method,
      headers: this.headers(body !== undefined, stream),
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      dispatcher: this.options.dispatcher,
    });
    if (res.statusCode >= 200 && res.statusCode < 300) return res.body;
    const text = await errorBodyText(res.body);
    let message = text;
    try {
      const { error } = (JSON.parse(text) ?? {}) as { error?: { message?: unknown } | string };
      // Only a string: any other `message` made scrub throw, and the status (401: "check the API key") was lost.
      const said = typeof error === 'string' ? error : error?.message;
      if (typeof said === 'string') message = said;
    } catch {
      // not JSON: keep the text
    }
    throw new HttpStatusError(res.statusCode, scrub(message || `HTTP ${res.statusCode}`, this.provider.secrets));
  }

  async json<T>(method: 'GET' | 'POST', path: string, signal: AbortSignal, body?: unknown): Promise<T> {
    const stream = await this.send(method, path, signal, body);
    return parseAnswer<T>(await readGuarded(stream, new AnswerGuard(`${method} ${path}`)), path);
  }
}

/** One row of an `/embeddings` answer, as a server may write it. */
type EmbeddingRow = { index?: unknown; embedding?: unknown } | null;

/**
 * The rows of an `/embeddings` answer in the order of the `count` texts: by their `index` (servers
 * may answer out of order), which must then name each text once; as given when no row has one.
 * A row without one is text 0 when others have one: protobuf-backed servers (Gemini's
 * OpenAI-compatible endpoint) leave out a field at its default, so the first row comes without.
 * Rows that number the texts 1 to `count` (xinference's) are read so: no 0-based numbering names
 * `count`, so that numbering is never mistaken for one, and its duplicates and gaps are still refused.
 * Sorted by index, rows naming text 1 twice (and text 0 never) gave text 0 the vector of text 1,
 * and the index and the cache kept it.
 */
function inInputOrder(data: unknown, count: number): EmbeddingRow[] | undefined {
  if (!Array.isArray(data)) return undefined;
  const rows = data as EmbeddingRow[];
  if (rows.length !== count) return rows;
  if (rows.every((row) => row?.index === undefined)) return rows;
  const base = numbersFromOne(rows, count) ? 1 : 0;
  const indexOf = (row: EmbeddingRow) => (typeof row?.index === 'number' ? row.index - base : (row?.index ?? 0));
  const ordered: EmbeddingRow[] = new Array(count);
  const named = new Set<number>();
  for (const row of rows) {
    const i = indexOf(row);
    if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= count || named.has(i)) {
      throw new errors.ERR_AI_BAD_RESPONSE(`POST /embeddings returned rows whose index does not name each of the ${count} texts once`);
    }
    named.add(i);
    ordered[i] = row;
  }
  return ordered;
}

/** True when every row has a whole-number index and they are 1 to `count`, each once. */
function numbersFromOne(rows: EmbeddingRow[], count: number): boolean {
  const seen = new Set<number>();
  for (const row of rows) {
    const i = row?.index;
    if (typeof i !== 'number' || !Number.isInteger(i) || i < 1 || i > count || seen.has(i)) return false;
    seen.add(i);
  }
  return true;
}

/** Embeddings from `POST {OPENAI_BASE_URL}/embeddings`. */
export class OpenAIEmbedder implements Embedder {
  readonly model: string;
  readonly similarityThreshold = OPENAI_SIMILARITY_THRESHOLD;
  readonly relevanceThreshold = OPENAI_SIMILARITY_THRESHOLD;
  private learned: number | undefined;
  private readonly client: OpenAIClient;

  constructor(
    private readonly modelName: string,
    options: OpenAIOptions,
  ) {
    required('model', 'name', modelName);
    this.client = new OpenAIClient(options);
    this.model = `openai:${modelName}`;
  }

  get dimensions(): number {
    return this.learned ?? knownDimensions(this.modelName) ?? 0;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const batch = this.client.options.batchSize ?? OPENAI_EMBED_BATCH;
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += batch) {
      const input = texts.slice(i, i + batch);
      const res = await guardCall(
        (s) => this.client.json<{ data?: { index?: number; embedding?: unknown }[] }>('POST', '/embeddings', s, { model: this.modelName, input }),
        this.client.options,
        this.client.provider,
        this.modelName,
        signal,
      );
      const vectors = toUnitVectors(
        inInputOrder(res?.data, input.length)?.map((r) => r?.embedding),
        input.length,
        'POST /embeddings',
      );
      this.learned = answeredDimensions(vectors, this.dimensions, 'POST /embeddings');
      out.push(...vectors);
    }
    return out;
  }
}

interface CompletionChunk {
  choices?: { delta?: { content?: string | null }; message?: { content?: string | null }; finish_reason?: string | null }[];
  error?: { message?: string } | string;
}

/** A chat model behind `POST {OPENAI_BASE_URL}/chat/completions`. */
export class OpenAIChatModel extends RemoteChatModel {
  readonly model: string;
  private readonly client: OpenAIClient;

  constructor(modelName: string, options: OpenAIOptions) {
    super();
    required('model', 'name', modelName);
    this.client = new OpenAIClient(options);
    this.model = modelName;
  }

  /** The OpenAI API's cap on a reply's length (`max_tokens`), when AI_MAX_ANSWER_TOKENS sets one. */
  private replyOptions(): { max_tokens?: number } {
    const max = this.client.options.maxAnswerTokens;
    return max ? { max_tokens: max } : {};
  }

  stream(messages: ChatMessage[], signal?: AbortSignal): AsyncIterable<string> {
    const { client, model } = this;
    const reply = this.replyOptions();
    return guardStream(
      async function* (s) {
        const body = await client.send('POST', '/chat/completions', s, { model, messages, stream: true, ...reply }, true);
        const guard = new AnswerGuard('POST /chat/completions', { maxLineBytes: MAX_STREAM_LINE_BYTES });
        // Finished only when the server says so: `[DONE]`, or a finish_reason from servers that
        // leave `[DONE]` out. A body that just ends was cut (a proxy losing its upstream).
        let finished = false;
        for await (const data of sseData(guarded(body, guard))) {
          if (data.trim() === '[DONE]') return;
          // An event's data lines join into one payload: each line's nesting was checked, not their sum.
          if (nestsDeeperThan(Buffer.from(data), MAX_ANSWER_DEPTH)) throw new errors.ERR_AI_BAD_RESPONSE('a streamed chunk nested too deep');
          let chunk: CompletionChunk;
          try {
            chunk = JSON.parse(data) as CompletionChunk;
          } catch {
            throw new errors.ERR_AI_BAD_RESPONSE('a streamed chunk was not JSON');
          }
          if (!chunk || typeof chunk !== 'object') throw new errors.ERR_AI_BAD_RESPONSE('a streamed chunk was not a JSON object');
          // A plain Error, as the Ollama client throws for its streamed `{error}`: describeFailure
          // keeps the server's words (scrubbed, cut) for the log and tells the room only that it failed.
          if (chunk.error) throw new Error(typeof chunk.error === 'string' ? chunk.error : String(chunk.error.message ?? 'error'));
          const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
          if (choice?.finish_reason) finished = true;
          const content = choice?.delta?.content;
          yield typeof content === 'string' ? content : '';
        }
        if (!finished) throw new errors.ERR_AI_BAD_RESPONSE('POST /chat/completions: the stream ended before [DONE]');
      },
      client.options,
      client.provider,
      model,
      signal,
      this.thinking.streamFilter(),
    );
  }

  protected async complete(messages: ChatMessage[], signal?: AbortSignal): Promise<string> {
    const res = await guardCall(
      (s) => this.client.json<CompletionChunk>('POST', '/chat/completions', s, { model: this.model, messages, stream: false, ...this.replyOptions() }),
      this.client.options,
      this.client.provider,
      this.model,
      signal,
    );
    const content = Array.isArray(res?.choices) ? res.choices[0]?.message?.content : undefined;
    if (typeof content !== 'string') throw new errors.ERR_AI_BAD_RESPONSE('POST /chat/completions gave no message');
    return content;
  }
}

/** Reachable (`GET /models`) and both models listed? Never throws. */
export async function openaiHealth(options: OpenAIOptions, models: string[]): Promise<ProviderHealth> {
  const client = new OpenAIClient(options);
  const limits = { timeoutMs: HEALTH_TIMEOUT_MS, idleTimeoutMs: HEALTH_TIMEOUT_MS };
  try {
    const res = await guardCall((s) => client.json<{ data?: { id?: string }[] }>('GET', '/models', s), limits, client.provider, 'models');
    const ids = (res.data ?? []).map((m) => m.id);
    const missing = models.filter((m) => !ids.includes(m));
    if (missing.length > 0) return { ok: false, provider: 'openai', detail: missing.map((m) => modelMissing(client.provider, m).message).join('; ') };
    return { ok: true, provider: 'openai', detail: `${withoutUserinfo(options.baseUrl)} answers; models ${models.join(', ')} listed` };
  } catch (err) {
    return { ok: false, provider: 'openai', detail: (err as Error).message };
  }
}
