/**
 * Picks the Embedder and ChatModel from AI_PROVIDER (DESIGN §5): `local` (built in, offline),
 * `ollama` or `openai`. Remote embedders are wrapped in the store's embedding cache; the local
 * one is cheaper to recompute than to look up.
 */
import type { Config } from '../config.js';
import type { Store } from '../store/types.js';
import { CachedEmbedder } from './cached-embedder.js';
import { LocalChatModel } from './local-chat.js';
import { LocalEmbedder } from './local-embedder.js';
import { OllamaChatModel, OllamaEmbedder, ollamaHealth } from './ollama.js';
import { OpenAIChatModel, OpenAIEmbedder, openaiHealth, type OpenAIOptions } from './openai.js';
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

function local(config: Config, overrides: ProviderOverrides): Providers {
  const embedder = overrides.embedder ?? new LocalEmbedder({ dimensions: config.LOCAL_EMBED_DIM });
  return {
    embedder,
    chat: overrides.chat ?? new LocalChatModel(embedder),
    health: async () => ({ ok: true, provider: 'local', detail: `built-in ${embedder.model}, ${embedder.dimensions} dimensions` }),
  };
}

function ollama(config: Config, overrides: ProviderOverrides): Providers {
  const options = { host: config.OLLAMA_HOST, timeoutMs: config.AI_TIMEOUT_MS, idleTimeoutMs: config.AI_IDLE_TIMEOUT_MS };
  return {
    embedder: overrides.embedder ?? new OllamaEmbedder(config.OLLAMA_EMBED_MODEL, options),
    chat: overrides.chat ?? new OllamaChatModel(config.OLLAMA_CHAT_MODEL, options),
    health: () => ollamaHealth(config.OLLAMA_HOST, [config.OLLAMA_EMBED_MODEL, config.OLLAMA_CHAT_MODEL]),
  };
}

function openai(config: Config, overrides: ProviderOverrides): Providers {
  const options: OpenAIOptions = {
    baseUrl: config.OPENAI_BASE_URL,
    apiKey: config.OPENAI_API_KEY,
    timeoutMs: config.AI_TIMEOUT_MS,
    idleTimeoutMs: config.AI_IDLE_TIMEOUT_MS,
  };
  return {
    embedder: overrides.embedder ?? new OpenAIEmbedder(config.OPENAI_EMBED_MODEL, options),
    chat: overrides.chat ?? new OpenAIChatModel(config.OPENAI_CHAT_MODEL, options),
    health: () => openaiHealth(options, [config.OPENAI_EMBED_MODEL, config.OPENAI_CHAT_MODEL]),
  };
}

/**
 * The providers AI_PROVIDER names. With a store, a remote embedder's vectors are cached in it.
 * `overrides` replace either model (tests); health still reports the configured provider.
 */
export function createProviders(config: Config, store?: Store, overrides: ProviderOverrides = {}): Providers {
  const chosen = config.AI_PROVIDER === 'ollama' ? ollama(config, overrides) : config.AI_PROVIDER === 'openai' ? openai(config, overrides) : local(config, overrides);
  if (store && config.AI_PROVIDER !== 'local' && !overrides.embedder) {
    chosen.embedder = new CachedEmbedder(chosen.embedder, store, { onCacheError: overrides.onCacheError });
  }
  return chosen;
}
