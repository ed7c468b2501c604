/**
 * The AI plugin: `/readyz` checks for the provider (`ai`: reachable, models present) and for the
 * index (`index-model`: the stored vectors were made by this embedder), and a start-up line when
 * the index needs `salon reindex`.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { checkIndexModel, indexModelHealth } from '../ai/model-check.js';
import { FreshReading } from '../rooms/fresh-reading.js';

/**
 * How long one check of the AI provider answers `/readyz`, callers meanwhile sharing it. Checking
 * Ollama or an OpenAI-compatible server is two or one requests to it, with the API key, and
 * `/readyz` is open to anyone: every stranger's call was the server's call to the provider.
 */
export const AI_READINESS_FRESH_MS = 5_000;

async function aiPlugin(app: FastifyInstance): Promise<void> {
  const { store, embedder, readiness } = app.salon;
  const ai = new FreshReading(AI_READINESS_FRESH_MS, () => app.salon.aiHealth());
  readiness.set('ai', () => ai.get(null));
  readiness.set('index-model', () => indexModelHealth(store, embedder));
  // In the background: only an in-process embedder has something to warm.
  app.addHook('onReady', async () => {
    void embedder.warmUp?.().catch((err: unknown) => app.log.warn({ err }, 'embedder warm-up failed'));
  });
  try {
    const check = await checkIndexModel(store, embedder);
    if (!check.ok) app.log.error({ code: 'ERR_INDEX_MODEL_MISMATCH' }, check.message);
  } catch (err) {
    app.log.warn({ err }, 'could not compare the index with the embedder');
  }
}

export default fp(aiPlugin, { name: 'salon-ai' });
