/**
 * Wires the RAG area into an app: the room assistant (`services.assistant`), topic summaries
 * (`services.topics`) and the ask route. The assistant needs `services.search` and `services.chat`;
 * without them the route answers ERR_NOT_READY.
 */
import type { FastifyInstance } from 'fastify';
import type { RoomAssistant, RoomResolver } from '../rooms/types.js';
import { askRoutes } from '../routes/ask.js';
import type { Services } from '../services.js';
import { SalonAssistant } from './assistant.js';
import { storeResolver } from '../rooms/resolver.js';
import { roomViews } from './room-context.js';
import { TopicSummaries } from './topics.js';

export interface InstallAssistantOptions {
  /** A test double used instead of building one. */
  assistant?: RoomAssistant;
  /** Resolves room ids; default: the rooms core's resolver, else the store-backed one. */
  resolveRoom?: RoomResolver;
}

/** Builds and registers the assistant, topic summaries and `POST /api/v1/rooms/:id/ask`. */
export async function installAssistant(app: FastifyInstance, services: Services, options: InstallAssistantOptions = {}): Promise<void> {
  const { config, store, search, chat } = services;
  const resolveRoom = options.resolveRoom ?? services.rooms?.resolve ?? storeResolver(store);
  if (options.assistant) services.assistant = options.assistant;
  else if (search && chat) {
    services.assistant = new SalonAssistant({
      store,
      search,
      chat,
      resolveRoom: roomViews(resolveRoom),
      log: app.log,
      answerTimeoutMs: config.AI_TIMEOUT_MS,
      rerankTimeoutMs: Math.min(config.AI_TIMEOUT_MS, 15_000),
    });
  }
  if (chat) {
    const topics = new TopicSummaries({ store, chat, intervalMs: config.TOPIC_SUMMARY_INTERVAL_MS, log: app.log });
    services.topics = topics;
    app.addHook('onReady', async () => topics.start());
    app.addHook('onClose', async () => topics.close());
  }
  app.addHook('onClose', async () => services.assistant?.close());
  await app.register(askRoutes(resolveRoom));
}
