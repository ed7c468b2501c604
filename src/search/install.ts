/**
 * Builds the search area from the config — the vector index (SearchIndex: flat scan pool, HNSW
 * above HNSW_THRESHOLD), the Indexer (services.indexer, the ChunkSink ingestion calls) and the
 * SearchService — and wires it into an app: the search route, a readiness line, loading the index
 * from the store at start and closing the pool and workers at close. The CLI uses createSearchStack alone.
 */
import type { FastifyInstance } from 'fastify';
import type { Embedder } from '../ai/types.js';
import type { Config } from '../config.js';
import searchRoutes from '../routes/search.js';
import type { Services } from '../services.js';
import type { Store } from '../store/types.js';
import { Indexer, type IndexTarget } from './indexer.js';
import { SearchIndex } from './search-index.js';
import { DefaultSearchService } from './search-service.js';
import type { HnswMode } from './tiered-index.js';
import type { VectorIndex } from './types.js';

type Log = { info(msg: string): void; warn(msg: string): void; error(msg: string): void };

export interface SearchStackOptions {
  config: Config;
  store: Store;
  embedder: Embedder;
  /** A VectorIndex double instead of the SearchIndex built from config. */
  index?: VectorIndex;
  /** `auto` (server, reindex) or `off` (one-shot CLI searches: an exact scan beats loading a graph). */
  hnswMode?: HnswMode;
  log?: Log;
}

export interface SearchStack {
  index: IndexTarget;
  indexer: Indexer;
  search: DefaultSearchService;
  close(): Promise<void>;
}

export function createSearchStack(options: SearchStackOptions): SearchStack {
  const { config, store, embedder, log } = options;
  const index: IndexTarget =
    options.index ??
    new SearchIndex({
      model: embedder.model,
      dimensions: embedder.dimensions,
      threads: config.SEARCH_WORKERS,
      threshold: config.HNSW_THRESHOLD,
      dir: config.DATA_DIR,
      hnswMode: options.hnswMode,
      log,
    });
  const indexer = new Indexer({ store, index, embedder, log });
  const search = new DefaultSearchService({ store, index, embedder, indexer, log });
  return {
    index,
    indexer,
    search,
    close: async () => {
      await indexer.close();
      await index.close();
    },
  };
}

function describe(index: IndexTarget, indexer: Indexer): string {
  const mode = index instanceof SearchIndex ? index.mode : 'custom';
  const pending = indexer.pending ? `, ${indexer.pending} chunks waiting for the embedder` : '';
  return indexer.state === 'mismatch' ? 'text matching only until `salon reindex`' : `${index.size} vectors, ${mode}${pending}`;
}

/** Fills services.index, services.indexer and services.search; registers GET /api/v1/search. */
export async function installSearch(app: FastifyInstance, services: Services, overrides: { index?: VectorIndex } = {}): Promise<void> {
  const { embedder } = services;
  if (!embedder) {
    app.log.warn('no embedder is configured; search is unavailable');
    return;
  }
  const log: Log = {
    info: (msg) => app.log.info(msg),
    warn: (msg) => app.log.warn(msg),
    error: (msg) => app.log.error(msg),
  };
  const stack = createSearchStack({ config: services.config, store: services.store, embedder, index: overrides.index, log });
  services.index = stack.index;
  services.indexer = stack.indexer;
  services.search = stack.search;
  // Search itself always answers (by text at worst); this line says how.
  services.readiness.set('search', async () => ({ ok: true, provider: 'search', detail: describe(stack.index, stack.indexer) }));
  await app.register(searchRoutes);
  // Before content seeding (registered later), so seeded chunks join a loaded index.
  app.addHook('onReady', async () => stack.indexer.load());
  app.addHook('onClose', async () => stack.close());
}
