/**
 * The Embedder and ChatModel of each provider, built from the config: `local` (built in, offline),
 * `ollama` or `openai`. Which one runs is decided in src/parts.ts (`createAi`).
 */
import type { Config } from '../config.js';
import { LocalChatModel } from './local/local-chat.js';
import { LocalEmbedder } from './local/local-embedder.js';
import { OllamaChatModel, OllamaEmbedder, ollamaHealth } from './remote/ollama.js';
import { OpenAIChatModel, OpenAIEmbedder, openaiHealth, type OpenAIOptions } from './remote/openai.js';
import type { ChatModel, Embedder, ProviderHealth } from './types.js';

export interface Providers {
  embedder: Embedder;
  chat: ChatModel;
  /** Reachability and models, for /readyz and `salon doctor`. Never throws. */
  health(): Promise<ProviderHealth>;
}

export interface ProviderOverrides {
  embedder?: Embedder;
  chat?: ChatModel;
  /** Told when the embedding cache cannot be read or written. */
  onCacheError?: (err: unknown) => void;
}

/** The built-in offline models. */
export function localProviders(config: Config, overrides: ProviderOverrides = {}): Providers {
  const embedder = overrides.embedder ?? new LocalEmbedder({ dimensions: config.LOCAL_EMBED_DIM });
  return {
    embedder,
    chat: overrides.chat ?? new LocalChatModel(embedder),
    health: async () => ({ ok: true, provider: 'local', detail: `built-in ${embedder.model}, ${embedder.dimensions} dimensions` }),
  };
}

/** Ollama at OLLAMA_HOST. */
export function ollamaProviders(config: Config, overrides: ProviderOverrides = {}): Providers {
  const options = {
    host: config.OLLAMA_HOST,
    timeoutMs: config.AI_TIMEOUT_MS,
    idleTimeoutMs: config.AI_IDLE_TIMEOUT_MS,
    maxAnswerTokens: config.AI_MAX_ANSWER_TOKENS,
  };
  return {
    embedder: overrides.embedder ?? new OllamaEmbedder(config.OLLAMA_EMBED_MODEL, options),
    chat: overrides.chat ?? new OllamaChatModel(config.OLLAMA_CHAT_MODEL, options),
    health: () => ollamaHealth(config.OLLAMA_HOST, [config.OLLAMA_EMBED_MODEL, config.OLLAMA_CHAT_MODEL]),
  };
}

/** An OpenAI-compatible server at OPENAI_BASE_URL. */
export function openaiProviders(config: Config, overrides: ProviderOverrides = {}): Providers {
  const options: OpenAIOptions = {
    baseUrl: config.OPENAI_BASE_URL,
    apiKey: config.OPENAI_API_KEY,
    timeoutMs: config.AI_TIMEOUT_MS,
    idleTimeoutMs: config.AI_IDLE_TIMEOUT_MS,
    maxAnswerTokens: config.AI_MAX_ANSWER_TOKENS,
  };
  return {
    embedder: overrides.embedder ?? new OpenAIEmbedder(config.OPENAI_EMBED_MODEL, options),
    chat: overrides.chat ?? new OpenAIChatModel(config.OPENAI_CHAT_MODEL, options),
    health: () => openaiHealth(options, [config.OPENAI_EMBED_MODEL, config.OPENAI_CHAT_MODEL]),
  };
}
