/**
 * The search plugin: `GET /api/v1/search`, a `/readyz` line saying how search answers, loading the
 * index from the store when the app is ready, and closing the scan pool and workers at close.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import searchRoutes from '../routes/search.js';

async function searchPlugin(app: FastifyInstance): Promise<void> {
  const stack = app.salon.searchStack;
  // Search itself always answers (by text at worst); this line says how.
  app.salon.readiness.set('search', async () => ({ ok: true, provider: 'search', detail: stack.describe() }));
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
