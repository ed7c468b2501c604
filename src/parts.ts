/**
 * The one place that picks an implementation for every seam from the config: the Store, the
 * RoomBus and the index ChangeFeed beside it, the Embedder and ChatModel, the VectorIndex and the memory's vector index. The server (app.ts), the CLI commands and
 * the benchmarks all get their parts here, so a second store or bus is added in this file alone,
 * and nothing else decides what DATABASE_URL, REDIS_URL or AI_PROVIDER mean.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CachedEmbedder } from './ai/cached-embedder.js';
import { localProviders, ollamaProviders, openaiProviders, type ProviderOverrides, type Providers } from './ai/providers.js';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import { InProcessBus } from './rooms/in-process-bus.js';
import { RedisRoomBus } from './rooms/redis-bus.js';
import type { RoomBus } from './rooms/types.js';
import { SharedScanPool } from './search/flat/shared-scan-pool.js';
import { SearchIndex } from './search/search-index.js';
import type { HnswMode } from './search/tiered-index.js';
import { PostgresStore } from './store/postgres.js';
import { SqliteStore } from './store/sqlite.js';
import type { Store } from './store/types.js';
import { LONE_NODE_FEED, type ChangeFeed } from './sync/change-feed.js';
import { RedisChangeFeed } from './sync/redis-change-feed.js';

export interface StoreOptions {
  /** Refuse to create a new store (CLI commands that read one). */
  mustExist?: boolean;
  /** Checkpoint the WAL off the event loop (the server: chat commits run on it). */
  backgroundCheckpoints?: boolean;
  /** Run the memory's line search on a reader thread (the server: it runs beside an ask's other work). */
  readerThread?: boolean;
}

/**
 * The Store DATABASE_URL names (PostgreSQL, shared by many nodes); without it, SQLite in DATA_DIR.
 * Throws a message naming the fix. PostgreSQL connects and migrates in the background: a URL it
 * cannot open fails the store's first call (at start-up, the index load) with a message naming
 * DATABASE_URL.
 */
export function openStore(config: Config, options: StoreOptions = {}): Store {
  if (config.DATABASE_URL) {
    return new PostgresStore({ connectionString: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE, mustExist: options.mustExist });
  }
  const filename = join(config.DATA_DIR, 'salon.db');
  if (options.mustExist && !existsSync(filename)) {
    throw new Error(`no Salon data in ${config.DATA_DIR} (DATA_DIR); start the server or ingest content first`);
  }
  return new SqliteStore({
    filename,
    backgroundCheckpoints: options.backgroundCheckpoints,
    readerThread: options.readerThread,
    synchronous: config.SQLITE_SYNCHRONOUS,
  });
}

/**
 * The RoomBus REDIS_URL names (Redis pub/sub and presence, shared by many nodes); without it, the
 * lone in-process bus of a single node. The Redis bus connects in the background and reports in
 * `/readyz` until it is connected.
 */
export function createRoomBus(config: Config, options: { log?: Logger } = {}): RoomBus {
  if (config.REDIS_URL) return new RedisRoomBus({ url: config.REDIS_URL, prefix: config.REDIS_KEY_PREFIX, log: options.log });
  return new InProcessBus();
}

/**
 * The feed of index change notices (src/sync): on a Redis bus, a channel of its own on the bus's
 * connections; a lone node's otherwise.
 */
export function createChangeFeed(bus: RoomBus, options: { log?: Logger } = {}): ChangeFeed {
  if (bus instanceof RedisRoomBus) return new RedisChangeFeed({ link: bus.link, prefix: bus.prefix, log: options.log });
  return LONE_NODE_FEED;
}

/**
 * The Embedder and ChatModel AI_PROVIDER names: `local` (built in, offline), `ollama` or `openai`.
 * With a store, a remote embedder's document vectors are cached in it (the local one is cheaper to
 * recompute than to look up). `overrides` replace either model (tests); health still reports the
 * configured provider.
 */
export function createAi(config: Config, store?: Store, overrides: ProviderOverrides = {}): Providers {
  const chosen =
    config.AI_PROVIDER === 'ollama'
      ? ollamaProviders(config, overrides)
      : config.AI_PROVIDER === 'openai'
        ? openaiProviders(config, overrides)
        : localProviders(config, overrides);
  if (store && config.AI_PROVIDER !== 'local' && !overrides.embedder) {
    chosen.embedder = new CachedEmbedder(chosen.embedder, store, { onCacheError: overrides.onCacheError, maxEntries: config.EMBED_CACHE_MAX_ENTRIES });
  }
  return chosen;
}

export interface VectorIndexOptions {
  /** `auto` (server, reindex) or `off` (one-shot CLI searches: an exact scan beats loading a graph). */
  hnswMode?: HnswMode;
  log?: Logger;
  /** The scan threads the process's indexes share (createScanPool); default: threads of its own. */
  pool?: SharedScanPool;
}

/** The SEARCH_WORKERS scan threads a process's vector indexes share, started when the first of them needs threads. */
export function createScanPool(config: Config): SharedScanPool {
  return new SharedScanPool({ threads: config.SEARCH_WORKERS, kernel: config.SEARCH_KERNEL });
}

/** The VectorIndex: an exact scan on the worker pool, with an HNSW graph above HNSW_THRESHOLD. */
export function createVectorIndex(config: Config, embedder: { model: string; dimensions: number }, options: VectorIndexOptions = {}): SearchIndex {
  return new SearchIndex({
    model: embedder.model,
    dimensions: embedder.dimensions,
    threads: config.SEARCH_WORKERS,
    kernel: config.SEARCH_KERNEL,
    threshold: config.HNSW_THRESHOLD,
    hnswParams: { efSearch: config.HNSW_EF_SEARCH },
    dir: config.DATA_DIR,
    hnswMode: options.hnswMode,
    log: options.log,
    pool: options.pool,
  });
}

/**
 * The vector index of conversation memory, on the scan threads given (the documents' in a server). A search
 * covers one thread's chunks, which the index lists by scope: a thread of few chunks is scanned
 * exactly; above MEMORY_HNSW_THRESHOLD chunks in all, a thread holding many of them (one long
 * discussion) is searched through an HNSW graph, as documents are (TieredIndex). Neither is saved:
 * both are rebuilt from the store at every start, so they always match the embedder.
 */
export function createMemoryIndex(config: Config, embedder: { model: string; dimensions: number }, options: VectorIndexOptions = {}): SearchIndex {
  return new SearchIndex({
    model: embedder.model,
    dimensions: embedder.dimensions,
    threads: config.SEARCH_WORKERS,
    kernel: config.SEARCH_KERNEL,
    threshold: config.MEMORY_HNSW_THRESHOLD,
    hnswParams: { efSearch: config.HNSW_EF_SEARCH },
    hnswMode: options.hnswMode,
    log: options.log,
    pool: options.pool,
  });
}
