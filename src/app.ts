/**
 * Builds a Salon Fastify app from a Config. The only place that picks implementations for the
 * seams (Store, RoomBus, Embedder, ChatModel, VectorIndex); tests pass doubles in `overrides`.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { installAi } from './ai/install.js';
import type { ChatModel, Embedder } from './ai/types.js';
import type { Config } from './config.js';
import type { IngestDeps } from './content/article.js';
import { defaultIngestDeps } from './content/ingest-deps.js';
import { installContent } from './content/install.js';
import { installErrorHandlers } from './routes/error-handler.js';
import healthRoutes from './routes/health.js';
import webRoutes from './routes/web.js';
import { installAssistant } from './rag/install.js';
import { installRooms } from './rooms/install.js';
import { installSearch } from './search/install.js';
import type { VectorIndex } from './search/types.js';
import type { RoomOptions } from './rooms/options.js';
import type { RoomAssistant, RoomBus } from './rooms/types.js';
import type { Services } from './services.js';
import { SqliteStore } from './store/sqlite.js';
import type { Store } from './store/types.js';

/** Implementations that replace the ones app.ts would build from config. */
export interface AppOverrides {
  store?: Store;
  /** A room assistant double instead of the RAG assistant. */
  assistant?: RoomAssistant;
  /** A RoomBus instead of the lone in-process one (multi-node tests). */
  roomBus?: RoomBus;
  /** Room timer and limit overrides (tests). */
  roomOptions?: Partial<RoomOptions>;
  /** An Embedder instead of the one AI_PROVIDER names. */
  embedder?: Embedder;
  /** A ChatModel instead of the one AI_PROVIDER names. */
  chat?: ChatModel;
  /** Fetching and extraction for ingestion instead of the SSRF-guarded fetcher (tests). */
  ingestDeps?: IngestDeps;
  /** A folder laid out as fixtures/demo to seed from instead of fixtures/demo. */
  demoDir?: string;
  /** A VectorIndex instead of the flat/HNSW index built from config. */
  index?: VectorIndex;
}

const BODY_LIMIT_BYTES = 1_048_576;

function createStore(config: Config): Store {
  if (config.DATABASE_URL) {
    throw new Error('DATABASE_URL: the PostgreSQL store is not part of this build yet; unset DATABASE_URL to use SQLite');
  }
  // Room messages commit on the event loop: keep WAL checkpoints (fsyncs) off it.
  return new SqliteStore({ filename: join(config.DATA_DIR, 'salon.db'), backgroundCheckpoints: true });
}

/** Builds the app; call `listen()` to serve or `inject()` to test, and always `close()`. */
export async function buildApp(config: Config, overrides: AppOverrides = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: config.LOG_LEVEL, redact: ['req.headers.authorization', 'req.headers.cookie'] },
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: false,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } },
  });

  if (config.REDIS_URL && !overrides.roomBus) {
    // Silently running single-node when the operator asked for many nodes would split rooms.
    throw new Error('REDIS_URL: the Redis room bus is not part of this build yet; unset REDIS_URL to run one node');
  }
  const store = overrides.store ?? createStore(config);
  const adminToken = config.ADMIN_TOKEN ?? randomBytes(24).toString('base64url');
  if (!config.ADMIN_TOKEN) app.log.warn(`ADMIN_TOKEN is unset; admin routes accept this generated token: ${adminToken}`);

  const services: Services = { config, store, adminToken, readiness: new Map() };
  app.decorate('salon', services);
  app.addHook('onClose', async () => {
    await store.close();
  });

  installErrorHandlers(app);
  // Before search, rooms and the assistant: they use services.embedder and services.chat.
  await installAi(app, services, { embedder: overrides.embedder, chat: overrides.chat });
  await app.register(swagger, {
    openapi: {
      info: { title: 'Salon API', version: '1' },
      components: { securitySchemes: { adminToken: { type: 'http', scheme: 'bearer' } } },
    },
  });
  await app.register(healthRoutes);
  // The browser client and the security headers of every response.
  await app.register(webRoutes);
  // Vector index, indexer and search service; loads the index from the store on ready.
  await installSearch(app, services, { index: overrides.index });
  // Content, ingest and demo images; seeds the demo on ready. After search: it feeds services.indexer.
  await installContent(app, services, { deps: overrides.ingestDeps ?? defaultIngestDeps(config), demoDir: overrides.demoDir });
  await installRooms(app, services, { bus: overrides.roomBus, options: overrides.roomOptions });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // After the AI, search and rooms parts: the assistant needs services.search and services.chat.
  await installAssistant(app, services, { assistant: overrides.assistant });

  return app;
}
