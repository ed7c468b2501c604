/** The two remote providers, described so one suite (remote-providers.test.ts) runs against both fakes. */
import { createServer } from 'node:net';
import { OllamaChatModel, OllamaEmbedder, ollamaHealth } from '../../src/ai/remote/ollama.js';
import { OpenAIChatModel, OpenAIEmbedder, openaiHealth } from '../../src/ai/remote/openai.js';
import type { ChatModel, Embedder, ProviderHealth } from '../../src/ai/types.js';
import type { FakeBehaviour, FakeServer } from '../fakes/common.js';
import { startFakeOllama } from '../fakes/ollama-server.js';
import { startFakeOpenAI } from '../fakes/openai-server.js';

export interface Limits {
  timeoutMs?: number;
  idleTimeoutMs?: number;
  batchSize?: number;
  maxAnswerTokens?: number;
}

export interface RemoteCase {
  name: string;
  embedModel: string;
  chatModel: string;
  embedPath: string;
  chatPath: string;
  /** Where a request body says how long a reply may be. */
  replyLimitOf(body: Record<string, any>): unknown;
  start(options?: Partial<FakeBehaviour>): Promise<FakeServer>;
  /** The provider's base URL for a fake (or any) server URL. */
  base(url: string): string;
  embedder(base: string, limits?: Limits, model?: string): Embedder;
  chat(base: string, limits?: Limits, model?: string): ChatModel;
  health(base: string): Promise<ProviderHealth>;
  /** What the missing-model message must name. */
  missingFix(model: string): string;
  /** What the unreachable message must say. */
  unreachableText(base: string): string;
}

const DEFAULT_LIMITS = { timeoutMs: 5_000, idleTimeoutMs: 5_000 };

export const REMOTE_CASES: RemoteCase[] = [
  {
    name: 'ollama',
    embedModel: 'nomic-embed-text',
    chatModel: 'llama3.2',
    embedPath: '/api/embed',
    chatPath: '/api/chat',
    replyLimitOf: (body) => body.options?.num_predict,
    start: (o) => startFakeOllama(o),
    base: (url) => url,
    embedder: (base, l, m = 'nomic-embed-text') => new OllamaEmbedder(m, { host: base, ...DEFAULT_LIMITS, ...l }),
    chat: (base, l, m = 'llama3.2') => new OllamaChatModel(m, { host: base, ...DEFAULT_LIMITS, ...l }),
    health: (base) => ollamaHealth(base, ['nomic-embed-text', 'llama3.2']),
    missingFix: (m) => `run \`ollama pull ${m}\``,
    unreachableText: (base) => `is Ollama running at ${base}? start it with \`ollama serve\``,
  },
  {
    name: 'openai',
    embedModel: 'text-embedding-3-small',
    chatModel: 'gpt-4o-mini',
    embedPath: '/v1/embeddings',
    chatPath: '/v1/chat/completions',
    replyLimitOf: (body) => body.max_tokens,
    start: (o) => startFakeOpenAI(o),
    base: (url) => `${url}/v1`,
    embedder: (base, l, m = 'text-embedding-3-small') => new OpenAIEmbedder(m, { baseUrl: base, apiKey: 'sk-test-key-123456', ...DEFAULT_LIMITS, ...l }),
    chat: (base, l, m = 'gpt-4o-mini') => new OpenAIChatModel(m, { baseUrl: base, apiKey: 'sk-test-key-123456', ...DEFAULT_LIMITS, ...l }),
    health: (base) => openaiHealth({ baseUrl: base, apiKey: 'sk-test-key-123456', ...DEFAULT_LIMITS }, ['text-embedding-3-small', 'gpt-4o-mini']),
    missingFix: (m) => `does not serve "${m}"; set the model variable`,
    unreachableText: (base) => `is the OpenAI-compatible server running at ${base}?`,
  },
];

/** A loopback URL nothing listens on (a port that was just closed). */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

/** Collects a stream's pieces. */
export async function collect(stream: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const p of stream) out.push(p);
  return out;
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected a rejection');
}
