/**
 * The search plugin: `GET /api/v1/search`, a `/readyz` line saying how search answers (a failed HNSW
 * graph included), loading the index from the store when the app is ready, and closing the scan pool
 * and workers at close.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import searchRoutes from '../routes/search.js';
import { graphHealth } from '../search/graph-health.js';

async function searchPlugin(app: FastifyInstance): Promise<void> {
  const stack = app.salon.searchStack;
  // Search itself always answers (by text at worst); this line says how. A graph that failed is
  // said here but does not fail the check: exact scans answer meanwhile, and a load balancer taking
  // every node out while their graphs rebuild (or keep failing) would turn slower search into none.
  app.salon.readiness.set('search', async () => {
    const graphs = graphHealth({ documents: stack.index, memory: app.salon.memoryIndex });
    return { ok: true, provider: 'search', detail: graphs.ok ? stack.describe() : `${stack.describe()}; ${graphs.detail}` };
  });
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
