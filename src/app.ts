/**
 * Builds a Salon Fastify app from a Config. The only place that picks implementations for the
 * seams (Store, RoomBus, Embedder, ChatModel, VectorIndex); tests pass doubles in `overrides`.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { Config } from './config.js';
import { installErrorHandlers } from './routes/error-handler.js';
import healthRoutes from './routes/health.js';
import type { Services } from './services.js';
import { SqliteStore } from './store/sqlite.js';
import type { Store } from './store/types.js';

/** Implementations that replace the ones app.ts would build from config. */
export interface AppOverrides {
  store?: Store;
}

const BODY_LIMIT_BYTES = 1_048_576;

function createStore(config: Config): Store {
  if (config.DATABASE_URL) {
    throw new Error('DATABASE_URL: the PostgreSQL store is not part of this build yet; unset DATABASE_URL to use SQLite');
  }
  return new SqliteStore({ filename: join(config.DATA_DIR, 'salon.db') });
}

/** Builds the app; call `listen()` to serve or `inject()` to test, and always `close()`. */
export async function buildApp(config: Config, overrides: AppOverrides = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: config.LOG_LEVEL, redact: ['req.headers.authorization', 'req.headers.cookie'] },
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: false,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } },
  });

  const store = overrides.store ?? createStore(config);
  const adminToken = config.ADMIN_TOKEN ?? randomBytes(24).toString('base64url');
  if (!config.ADMIN_TOKEN) app.log.warn(`ADMIN_TOKEN is unset; admin routes accept this generated token: ${adminToken}`);

  const services: Services = { config, store, adminToken, readiness: new Map() };
  app.decorate('salon', services);
  app.addHook('onClose', async () => {
    await store.close();
  });

  installErrorHandlers(app);
  await app.register(swagger, {
    openapi: {
      info: { title: 'Salon API', version: '1' },
      components: { securitySchemes: { adminToken: { type: 'http', scheme: 'bearer' } } },
    },
  });
  await app.register(healthRoutes);
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  return app;
}
