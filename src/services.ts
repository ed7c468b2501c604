/**
 * The running parts of one Salon process, built by app.ts from the config and handed to routes
 * through `app.salon`. Each area adds its part here as it lands.
 */
import type { Config } from './config.js';
import type { ProviderHealth } from './ai/types.js';
import type { ChatModel, Embedder } from './ai/types.js';
import type { ChunkSink } from './content/types.js';
import type { IngestService } from './content/ingest.js';
import type { TopicSummaries } from './rag/topics.js';
import type { RoomAssistant } from './rooms/types.js';
import type { RoomHub } from './rooms/hub.js';
import type { SearchService, VectorIndex } from './search/types.js';
import type { Store } from './store/types.js';

/** A named readiness check for `/readyz` and `salon doctor`. */
export type ReadinessCheck = () => Promise<ProviderHealth>;

export interface Services {
  config: Config;
  store: Store;
  /** Bearer token for admin routes (ADMIN_TOKEN, or generated at start). */
  adminToken: string;
  /** Checks `/readyz` runs besides the store's ping. */
  readiness: Map<string, ReadinessCheck>;
  /** Filled by the AI area (src/ai). */
  embedder?: Embedder;
  chat?: ChatModel;
  /** Filled by the search area (src/search). */
  index?: VectorIndex;
  search?: SearchService;
  /** Receives chunk changes from ingestion; the search area's Indexer. */
  indexer?: ChunkSink;
  /** Ingest jobs and the item pipeline (src/content/ingest.ts); set by installContent. */
  ingest?: IngestService;
  /** Filled by the RAG area (src/rag). */
  assistant?: RoomAssistant;
  /** The rooms core (src/rooms): live rooms, presence, the assistant's RoomOutlet. */
  rooms?: RoomHub;
  /** Topic room summaries, regenerated on a timer (src/rag/topics.ts). */
  topics?: TopicSummaries;
}

declare module 'fastify' {
  interface FastifyInstance {
    salon: Services;
  }
}
