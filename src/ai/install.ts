/**
 * Puts the AI seams into a running app: the embedder and chat model AI_PROVIDER names (or the
 * test doubles given), readiness checks for /readyz (`ai`: provider reachable with its models;
 * `index-model`: the stored vectors were made by this embedder), and a start-up log line when the
 * index needs `salon reindex`.
 */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { checkIndexModel, indexModelHealth } from './model-check.js';
import { createProviders } from './providers.js';
import type { ChatModel, Embedder } from './types.js';

export interface AiOverrides {
  embedder?: Embedder;
  chat?: ChatModel;
}

/** Fills services.embedder and services.chat and registers the `ai` and `index-model` checks. */
export async function installAi(app: FastifyInstance, services: Services, overrides: AiOverrides = {}): Promise<void> {
  const providers = createProviders(services.config, services.store, {
    ...overrides,
    onCacheError: (err) => app.log.warn({ err }, 'embedding cache unavailable; embedding without it'),
  });
  services.embedder = providers.embedder;
  services.chat = providers.chat;
  services.readiness.set('ai', () => providers.health());
  services.readiness.set('index-model', () => indexModelHealth(services.store, providers.embedder));

  try {
    const check = await checkIndexModel(services.store, providers.embedder);
    if (!check.ok) app.log.error({ code: 'ERR_INDEX_MODEL_MISMATCH' }, check.message);
  } catch (err) {
    app.log.warn({ err }, 'could not compare the index with the embedder');
  }
}
