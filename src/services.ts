/**
 * The running parts of one Salon process, built together from the config by `createServices` and
 * handed to plugins and routes through `app.salon`. Every part is present once the app exists:
 * routes never check whether something was configured. The order of construction is the order of
 * dependence, written out below; seam implementations come from src/parts.ts.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from './logger.js';
import type { ChatModel, Embedder, ProviderHealth } from './ai/types.js';
import type { Config } from './config.js';
import type { IngestDeps } from './content/sources/article.js';
import { IngestService, JOB_SILENCE_MS } from './content/ingest/ingest.js';
import { defaultIngestDeps } from './content/ingest/ingest-deps.js';
import { createItemPipeline } from './content/ingest/pipeline.js';
import { SourceService } from './content/refresh/source-service.js';
import { createAi, createChangeFeed, createMemoryIndex, createRoomBus, createScanPool, createVectorIndex, openStore } from './parts.js';
import { forgetCommand, memoryCommand } from './memory/commands.js';
import { meteredBus } from './metrics/metered-bus.js';
import { meteredStore } from './metrics/metered-store.js';
import { SalonMetrics } from './metrics/metrics.js';
import { framesSent } from './routes/rooms-ws-connection.js';
import { MemoryService } from './memory/memory-service.js';
import { IdleGate } from './idle-gate.js';
import { ThreadBridges } from './memory/threads/bridges.js';
import { threadCommands } from './memory/threads/thread-commands.js';
import { ThreadChangeGate } from './memory/threads/change-gate.js';
import { ThreadService } from './memory/threads/thread-service.js';
import { SalonAssistant } from './rag/assistant.js';
import { CHARS_PER_TOKEN } from './rag/prompt.js';
import { roomViews } from './rag/room-context.js';
import { TopicSummaries } from './rag/topics.js';
import { createRooms, type RoomHub } from './rooms/index.js';
import type { RoomOptions } from './rooms/options.js';
import type { RoomAssistant, RoomBus } from './rooms/types.js';
import { createSearchStack, type SearchStack } from './search/search-stack.js';
import type { SearchService, VectorIndex } from './search/types.js';
import { indexGraphHealth } from './search/graph-health.js';
import type { Store } from './store/types.js';
import type { ChangeFeed } from './sync/change-feed.js';
import { IndexSync, withIndexedRows } from './sync/index-sync.js';
import { roomChangesApplier } from './sync/room-changes.js';

/** A named readiness check for `/readyz` and `salon doctor`. */
export type ReadinessCheck = () => Promise<ProviderHealth>;

export interface Services {
  config: Config;
  store: Store;
  /** Bearer token for admin routes (ADMIN_TOKEN, or generated at start). */
  adminToken: string;
  /** Checks `/readyz` runs besides the store's ping. */
  readiness: Map<string, ReadinessCheck>;
  embedder: Embedder;
  chat: ChatModel;
  /** Reachability of the AI provider and its models. */
  aiHealth(): Promise<ProviderHealth>;
  index: VectorIndex;
  /** The index, the Indexer (the ChunkSink ingestion feeds) and the search service. */
  searchStack: SearchStack;
  search: SearchService;
  /** Ingest jobs and the item pipeline (src/content/ingest/ingest.ts). */
  ingest: IngestService;
  /** Sources that refresh, polled in the background (src/content/refresh). */
  sources: SourceService;
  /** The rooms core (src/rooms): live rooms, presence, the assistant's RoomOutlet. */
  rooms: RoomHub;
  assistant: RoomAssistant;
  /** Topic room summaries, regenerated on a timer (src/rag/topics.ts). */
  topics: TopicSummaries;
  /** Conversation memory of every thread (src/memory): fed by the rooms and the assistant, searched by the assistant. */
  memory: MemoryService;
  /** The memory's own vector index (src/parts.ts). */
  memoryIndex: VectorIndex;
  /** Thread operations: start, merge, split, unlock, compact, fuse (src/memory/threads). */
  threads: ThreadService;
  /** This node's Prometheus metrics (`GET /metrics`). */
  metrics: SalonMetrics;
  /** Keeps both vector indexes in step with what other nodes commit (src/sync); idle on a lone node. */
  indexSync: IndexSync;
  /** The feed of index change notices IndexSync follows (src/parts.ts): closed after it. */
  changeFeed: ChangeFeed;
  /**
   * Aborted when a shutdown begins (src/shutdown.ts): the long start-up steps (the index load, the
   * demo seeding, the memory load) stop at their next safe point instead of running to their end
   * while the signal waits, and embedding in progress stops.
   */
  stopping: AbortController;
}

/** Implementations that replace the ones the config would choose (tests). */
export interface ServiceOverrides {
  store?: Store;
  /** A room assistant double instead of the RAG assistant. */
  assistant?: RoomAssistant;
  /** A RoomBus instead of the one REDIS_URL chooses (multi-node tests). */
  roomBus?: RoomBus;
  /** How often a node reads the store's change log whatever it heard (IndexSync.resyncMs; tests). */
  indexResyncMs?: number;
  /** Room timer and limit overrides (tests). */
  roomOptions?: Partial<RoomOptions>;
  /** An Embedder instead of the one AI_PROVIDER names. */
  embedder?: Embedder;
  /** A ChatModel instead of the one AI_PROVIDER names. */
  chat?: ChatModel;
  /** Fetching and extraction for ingestion instead of the SSRF-guarded fetcher (tests). */
  ingestDeps?: IngestDeps;
  /** A VectorIndex instead of the flat/HNSW index built from config. */
  index?: VectorIndex;
}

/** Builds every part of a process from `config`; nothing is started yet (plugins do that). */
export function createServices(config: Config, log: Logger, overrides: ServiceOverrides = {}): Services {
  // Levels are read when Prometheus scrapes, from the parts built below.
  const metrics = new SalonMetrics({
    connections: () => rooms.connectionCount,
    queuedBytes: () => rooms.queuedBytes,
    rooms: () => rooms.listRooms().length,
    queueDepth: () => (assistant instanceof SalonAssistant ? assistant.queueDepth : 0),
    indexSize: () => ({ documents: searchStack.index.size, memory: memoryIndex.size }),
    graphFailed: () => ({ documents: !indexGraphHealth(searchStack.index).ok, memory: !indexGraphHealth(memoryIndex).ok }),
    ingestRunning: () => ingest.activeJobs,
    busRoomsUnheard: () => bus.unheardRooms ?? 0,
    busConnected: () => bus.connected ?? true,
    deliveries: () => framesSent.total,
  });
  const store = meteredStore(overrides.store ?? openStore(config, { backgroundCheckpoints: true, readerThread: true }), metrics);
  const adminToken = config.ADMIN_TOKEN ?? randomBytes(24).toString('base64url');
  if (!config.ADMIN_TOKEN) log.warn({}, `ADMIN_TOKEN is unset; admin routes accept this generated token: ${adminToken}`);

  const ai = createAi(config, store, {
    embedder: overrides.embedder,
    chat: overrides.chat,
    onCacheError: (err) => log.warn({ err }, 'embedding cache unavailable; embedding without it'),
  });
  // Documents and memory scan on the same threads: each index holds the pool open until it closes.
  const scanPool = createScanPool(config);
  const stopping = new AbortController();
  const searchStack = createSearchStack({
    store,
    embedder: ai.embedder,
    index: overrides.index ?? createVectorIndex(config, ai.embedder, { log, pool: scanPool }),
    log,
    onChanged: (rowIds) => void indexSync.record('documents', rowIds),
    onEmbedFailure: () => metrics.embeddingFailed('documents'),
    signal: stopping.signal,
  });

  const pipeline = createItemPipeline({
    store,
    bodyMaxChars: config.BODY_MAX_CHARS,
    chunk: { size: config.CHUNK_SIZE, overlap: config.CHUNK_OVERLAP },
    sink: () => searchStack.indexer,
  });
  const bus = overrides.roomBus ?? createRoomBus(config, { log });
  bus.onConnectionChange((connected) => {
    if (!connected) metrics.busCutOff();
  });
  const ingest = new IngestService({
    store,
    pipeline,
    deps: overrides.ingestDeps ?? defaultIngestDeps(config),
    hn: { base: config.HN_API_BASE, commentLimit: config.HN_COMMENT_LIMIT, intervalMs: config.HN_REQUEST_INTERVAL_MS },
    reddit: { base: config.REDDIT_API_BASE, commentLimit: config.REDDIT_COMMENT_LIMIT, intervalMs: config.REDDIT_REQUEST_INTERVAL_MS },
    bodyMaxChars: config.BODY_MAX_CHARS,
    jobBudgetMs: config.INGEST_JOB_BUDGET_MS,
    onJobEnded: (status) => metrics.ingestJobEnded(status),
    nodeId: bus.nodeId,
    // A SQLite file has one server: every job another process left unfinished is an orphan at
    // start. On a shared store another node may be running it (docs/architecture.md).
    jobSilenceMs: store.kind === 'sqlite' ? 0 : JOB_SILENCE_MS,
    log,
  });

  const memoryIndex = createMemoryIndex(config, ai.embedder, { log, pool: scanPool });
  // Memory's background gate, held shut by the assistant while an answer is prepared.
  const background = new IdleGate();
  const memory = new MemoryService({
    store,
    embedder: ai.embedder,
    index: memoryIndex,
    background,
    log,
    maxChunksPerThread: config.MEMORY_MAX_CHUNKS_PER_THREAD,
    retentionDays: config.MEMORY_RETENTION_DAYS,
    onChanged: (ids) => void indexSync.record('memory', ids),
    onEmbedFailure: () => metrics.embeddingFailed('memory'),
  });
  // A poll's lease outlasts the longest poll (an ingest job's budget), so it never expires under a running poll.
  const sources = new SourceService({ store, ingest, owner: bus.nodeId, log, leaseMs: config.INGEST_JOB_BUDGET_MS + 60_000 });
  const changeFeed = createChangeFeed(bus, { log });
  const indexSync = new IndexSync({
    store,
    feed: changeFeed,
    nodeId: bus.nodeId,
    targets: {
      documents: withIndexedRows(searchStack.indexer, searchStack.index),
      memory: withIndexedRows(memory, memoryIndex),
      rooms: roomChangesApplier({
        liveRoomIds: () => rooms.liveRoomIds(),
        catchUpLocal: (roomId, after, runs) => rooms.storedUnpublished(roomId, after, false, runs),
      }),
    },
    resyncMs: overrides.indexResyncMs,
    log,
  });

  // The hub and the assistant know each other: the hub asks through it, it answers through the hub.
  let assistant: RoomAssistant | undefined;
  const rooms = createRooms(config, {
    store,
    log,
    assistant: () => assistant,
    onMessage: (message) => memory.onMessage(message),
    onGap: (roomId) => memory.roomGap(roomId),
    onDelivered: (message) => metrics.delivered(message.ts),
    onRefused: (why) => metrics.roomSocketRefused(why),
    onThreadGone: (threadId, how) => {
      memory.threadGone(threadId, how);
      bridges.invalidate([threadId]);
      if (how === 'deleted') assistant?.threadDeleted?.(threadId);
    },
    onMessagesMoved: (moves) => memory.messagesMoved(moves),
    bus: meteredBus(bus, metrics),
    options: overrides.roomOptions,
  });
  const bridges = new ThreadBridges(store, memory, { log });
  memory.onIndexed((chunk, vector) => {
    if (!chunk.privileged) bridges.chunkAdded(chunk.threadId, chunk.roomId, vector);
  });
  const threads = new ThreadService({ store, memory, chat: ai.chat, bridges, outlet: rooms, log });
  // One gate for every thread change members make from a room, the memory switch among them.
  const changeGate = new ThreadChangeGate();
  for (const command of threadCommands(threads, config.THREAD_OPS, changeGate)) rooms.commands.register(command);
  rooms.commands.register(memoryCommand(store, memory, threads, config.THREAD_OPS, changeGate));
  rooms.commands.register(forgetCommand(store, memory, threads, () => assistant));
  assistant =
    overrides.assistant ??
    new SalonAssistant({
      store,
      search: searchStack.search,
      chat: ai.chat,
      resolveRoom: roomViews(rooms.resolve),
      log,
      answerTimeoutMs: config.AI_TIMEOUT_MS,
      rerankTimeoutMs: Math.min(config.AI_TIMEOUT_MS, 15_000),
      promptMaxChars: config.PROMPT_TOKEN_BUDGET * CHARS_PER_TOKEN,
      relevanceThreshold: ai.embedder.relevanceThreshold,
      memory,
      background,
      onAnswer: (request, result, forgetMark) => memory.onAnswer(request, result, forgetMark),
      onOutcome: (outcome, result) => metrics.askEnded(outcome, result?.stages),
      userLimit: { limit: config.ASK_LIMIT_USER, windowMs: 60_000 },
      roomLimit: { limit: config.ASK_LIMIT_ROOM, windowMs: 60_000 },
      addressLimit: { limit: config.ASK_LIMIT_IP, windowMs: 60_000 },
      maxWaitingPerRoom: config.ASK_WAITING_PER_ROOM,
    });
  const topics = new TopicSummaries({ store, chat: ai.chat, intervalMs: config.TOPIC_SUMMARY_INTERVAL_MS, log });

  return {
    config,
    store,
    adminToken,
    readiness: new Map<string, ReadinessCheck>([
      ['bus', () => rooms.bus.health()],
      // Shared nodes only: one that does not hear the others' index changes serves stale searches.
      ...(changeFeed.health ? [['index-feed', () => changeFeed.health!()] as const] : []),
    ]),
    embedder: ai.embedder,
    chat: ai.chat,
    aiHealth: () => ai.health(),
    index: searchStack.index,
    searchStack,
    search: searchStack.search,
    ingest,
    sources,
    rooms,
    assistant,
    topics,
    memory,
    memoryIndex,
    threads,
    metrics,
    indexSync,
    changeFeed,
    stopping,
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    salon: Services;
  }
}
