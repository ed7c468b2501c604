/**
 * The search plugin: `GET /api/v1/search`, `/readyz` lines saying how search answers and whether
 * its HNSW graphs do (`hnsw`), loading the index from the store when the app is ready, and closing
 * the scan pool and workers at close.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import searchRoutes from '../routes/search.js';
import { graphReadiness } from '../search/graph-health.js';

async function searchPlugin(app: FastifyInstance): Promise<void> {
  const stack = app.salon.searchStack;
  // Search itself always answers (by text at worst); this line says how.
  app.salon.readiness.set('search', async () => ({ ok: true, provider: 'search', detail: stack.describe() }));
  // A graph that failed is not ready until it is rebuilt: search answers, by slower exact scans.
  app.salon.readiness.set('hnsw', async () => graphReadiness({ documents: stack.index, memory: app.salon.memoryIndex }));
  await app.register(searchRoutes);
  // onReady hooks run in the order plugins registered: the index loads before content seeds it.
  // Where the change log stands is read first: what other nodes commit during the load follows it.
  app.addHook('onReady', async () => {
    await app.salon.indexSync.begin();
    await stack.indexer.load();
  });
  app.addHook('onClose', async () => stack.close());
}

export default fp(searchPlugin, { name: 'salon-search', dependencies: ['salon-ai'] });
