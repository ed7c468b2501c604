/**
 * The node's Prometheus metrics (`GET /metrics`, listed in docs/api.md): one registry per app, every
 * series prefixed `salon_`. Parts of the app report through the typed methods here, so none of them
 * depends on prom-client; levels that already exist somewhere (open sockets, queue depth, index
 * sizes) are read when Prometheus scrapes, not copied on every change.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** How an ask ended. */
export type AskOutcome = 'answered' | 'abstained' | 'failed' | 'refused';

/** How a store call ended (SalonMetrics.storeOperation). */
export type StoreOutcome = 'ok' | 'failed' | 'refused';

/** Latency buckets in seconds, from a fast store read to a slow model answer. */
const SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * Process metrics (CPU, memory, event-loop lag, GC), collected once per process however many apps
 * it runs (tests build hundreds): prom-client's collectors install observers that would pile up.
 * They start with the first SalonMetrics, at start-up: started at the first scrape, they missed
 * the index load, the seeding and every GC before it. prom-client's CPU counters count from when
 * they were created, so they are given the CPU time the process had used by then, and count it
 * from its start, as Prometheus's `process_cpu_seconds_total` does. `/metrics` is open to anyone:
 * prom-client's `nodejs_version_info` (the exact Node.js version, to match against its advisories)
 * is left out, as every other version is.
 */
let processRegistry: Registry | null = null;
function processMetrics(): Registry {
  if (!processRegistry) {
    const before = process.cpuUsage();
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: 'salon_' });
    processRegistry.removeSingleMetric('salon_nodejs_version_info');
    const add = (name: string, micros: number) => (processRegistry!.getSingleMetric(`salon_${name}`) as Counter | undefined)?.inc(micros / 1e6);
    add('process_cpu_user_seconds_total', before.user);
    add('process_cpu_system_seconds_total', before.system);
    add('process_cpu_seconds_total', before.user + before.system);
  }
  return processRegistry;
}

/** Levels read at scrape time. */
export interface MetricSources {
  connections(): number;
  /** Bytes the room sockets have queued and not yet sent. */
  queuedBytes(): number;
  /** Rooms with a member on this node. */
  rooms(): number;
  /** Asks waiting for the assistant. */
  queueDepth(): number;
  /** Vectors in the documents' and the memory's indexes. */
  indexSize(): { documents: number; memory: number };
  /** Whether each index's HNSW graph has failed and not yet been rebuilt (exact scans answer meanwhile). */
  graphFailed(): { documents: boolean; memory: boolean };
  /** Ingest jobs running in the background. */
  ingestRunning(): number;
  /** Rooms with members on this node whose bus channel is not subscribed though Redis is up (RoomBus.unheardRooms); 0 while it is away. */
  busRoomsUnheard(): number;
  /** Whether the bus reaches the other nodes and hears every room it joined again (RoomBus.connected); true for a bus never cut off. */
  busConnected(): boolean;
  /** Frames written to room sockets since the process started (a running total). */
  deliveries(): number;
}

export class SalonMetrics {
  readonly registry = new Registry();
  private readonly messages: Counter;
  private readonly deliveries: Counter;
  private readonly deliveryLag: Histogram;
  private readonly asks: Counter<'outcome'>;
  private readonly askStage: Histogram<'stage'>;
  private readonly busMessages: Counter<'direction'>;
  private readonly busBytes: Counter<'direction'>;
  private readonly busLag: Histogram;
  private readonly busOutages: Counter;
  private readonly ingestJobs: Counter<'status'>;
  private readonly storeLatency: Histogram<'operation'>;
  private readonly storeErrors: Counter<'operation'>;
  private readonly storeRefusals: Counter<'operation'>;
  private readonly embeddingFailures: Counter<'index'>;
  private readonly refusedConnections: Counter<'limit'>;
  private readonly refusedRoomSockets: Counter<'reason'>;

  constructor(sources: MetricSources) {
    processMetrics();
    const registers = [this.registry];
    this.messages = new Counter({ name: 'salon_messages_total', help: 'Messages stored by this node (people, the assistant, imports)', registers });
    let counted = 0;
    this.deliveries = new Counter({
      name: 'salon_deliveries_total',
      help: 'Frames written to room sockets on this node',
      registers,
      collect() {
        const total = sources.deliveries();
        if (total > counted) this.inc(total - counted);
        counted = total;
      },
    });
    this.deliveryLag = new Histogram({
      name: 'salon_delivery_lag_seconds',
      help: 'Time from a message being stored to its delivery on this node',
      buckets: SECONDS,
      registers,
    });
    this.asks = new Counter({ name: 'salon_asks_total', help: 'Questions to the assistant by how they ended', labelNames: ['outcome'], registers });
    this.askStage = new Histogram({
      name: 'salon_ask_stage_seconds',
      help: 'Time of each stage of an answer (room, search, rerank, context, write, done, total)',
      labelNames: ['stage'],
      buckets: SECONDS,
      registers,
    });
    this.busMessages = new Counter({
      name: 'salon_bus_messages_total',
      help: 'Room bus messages published and received',
      labelNames: ['direction'],
      registers,
    });
    this.busBytes = new Counter({ name: 'salon_bus_bytes_total', help: 'Room bus payload bytes published and received', labelNames: ['direction'], registers });
    this.busLag = new Histogram({
      name: 'salon_bus_lag_seconds',
      help: 'Time from a publish on another node to its receipt here',
      buckets: SECONDS,
      registers,
    });
    // The gauge misses an outage shorter than the scrape interval; the counter does not.
    this.busOutages = new Counter({
      name: 'salon_bus_outages_total',
      help: 'Outages of the room bus: times this node lost Redis (salon_bus_connected went to 0), and a start at which its first attempt to reach Redis failed (a start that reaches Redis is none)',
      registers,
    });
    this.ingestJobs = new Counter({ name: 'salon_ingest_jobs_total', help: 'Ingest jobs by how they ended', labelNames: ['status'], registers });
    this.storeLatency = new Histogram({
      name: 'salon_store_seconds',
      help: 'Time of each store operation',
      labelNames: ['operation'],
      buckets: SECONDS,
      registers,
    });
    this.storeErrors = new Counter({ name: 'salon_store_errors_total', help: 'Store operations that failed', labelNames: ['operation'], registers });
    this.storeRefusals = new Counter({
      name: 'salon_store_refusals_total',
      help: 'Store operations that refused what they were asked for its own reason (a thread changed or gone, a forgotten private exchange): answered, not failed',
      labelNames: ['operation'],
      registers,
    });
    this.embeddingFailures = new Counter({
      name: 'salon_embedding_failures_total',
      help: 'Embeddings for an index that failed, by index: a batch of document chunks, a conversation memory chunk (each counted; the log summarises them)',
      labelNames: ['index'],
      registers,
    });
    this.refusedConnections = new Counter({
      name: 'salon_connections_refused_total',
      help: 'TCP connections (and requests on the reserve past HTTP_MAX_CONNECTIONS) refused, by the cap that refused them (node, address)',
      labelNames: ['limit'],
      registers,
    });
    this.refusedRoomSockets = new Counter({
      name: 'salon_room_sockets_refused_total',
      help: 'Room sockets closed before their hello, by why: the address opened too many a minute (rate), holds too many (address), or the node holds too many (node)',
      labelNames: ['reason'],
      registers,
    });
    const level = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    level('salon_connections', 'Open room sockets on this node', sources.connections);
    level('salon_socket_queued_bytes', 'Bytes the room sockets on this node have queued and not yet sent', sources.queuedBytes);
    level('salon_rooms', 'Rooms with a member on this node', sources.rooms);
    level('salon_assistant_queue_depth', 'Asks waiting for the assistant', sources.queueDepth);
    level('salon_ingest_jobs_running', 'Ingest jobs running in the background', sources.ingestRunning);
    level(
      'salon_bus_rooms_unheard',
      "Rooms with members on this node that the bus does not hear though Redis is up (their SUBSCRIBE failed or was refused; tried again less and less often): their members miss other nodes' messages, and /readyz fails unless Redis refused them (NOPERM). 0 while Redis is away, which /readyz reports (every room is unheard then)",
      sources.busRoomsUnheard,
    );
    level(
      'salon_bus_connected',
      'Whether the room bus reaches the other nodes and hears every room with members here: 0 while Redis is away and until the rooms are subscribed again (/readyz fails meanwhile), 1 otherwise (always on a lone node)',
      () => (sources.busConnected() ? 1 : 0),
    );
    new Gauge({
      name: 'salon_index_vectors',
      help: 'Vectors in the vector indexes',
      labelNames: ['index'],
      registers,
      collect() {
        const { documents, memory } = sources.indexSize();
        this.set({ index: 'documents' }, documents);
        this.set({ index: 'memory' }, memory);
      },
    });
    new Gauge({
      name: 'salon_search_graph_failed',
      help: "Whether an index's HNSW graph failed (its worker died, its build failed) and is not rebuilt yet: 1 while exact scans answer in its place",
      labelNames: ['index'],
      registers,
      collect() {
        const { documents, memory } = sources.graphFailed();
        this.set({ index: 'documents' }, documents ? 1 : 0);
        this.set({ index: 'memory' }, memory ? 1 : 0);
      },
    });
  }

  messagesStored(count: number): void {
    if (count > 0) this.messages.inc(count);
  }

  /** A message stored at `storedAt` reached this node's members. */
  delivered(storedAt: string): void {
    const lag = (Date.now() - Date.parse(storedAt)) / 1000;
    if (lag >= 0 && Number.isFinite(lag)) this.deliveryLag.observe(lag);
  }

  /** An ask ended; `stages` as the answer reports them (`{search: {ms}, …, totalMs}`). */
  askEnded(outcome: AskOutcome, stages?: Record<string, unknown>): void {
    this.asks.inc({ outcome });
    if (!stages) return;
    for (const [stage, value] of Object.entries(stages)) {
      const ms = stage === 'totalMs' ? value : (value as { ms?: unknown } | null)?.ms;
      if (typeof ms === 'number' && ms >= 0) this.askStage.observe({ stage: stage === 'totalMs' ? 'total' : stage }, ms / 1000);
    }
  }

  busPublished(bytes: number): void {
    this.busMessages.inc({ direction: 'publish' });
    this.busBytes.inc({ direction: 'publish' }, bytes);
  }

  /** A bus message arrived; `sentAt` (epoch ms) when the envelope tells it. */
  busReceived(bytes: number, sentAt?: number): void {
    this.busMessages.inc({ direction: 'receive' });
    this.busBytes.inc({ direction: 'receive' }, bytes);
    if (sentAt !== undefined) this.busLag.observe(Math.max(0, Date.now() - sentAt) / 1000);
  }

  /** The bus lost Redis, or could not reach it at start (RoomBus.onConnectionChange told `false`). */
  busCutOff(): void {
    this.busOutages.inc();
  }

  ingestJobEnded(status: string): void {
    this.ingestJobs.inc({ status });
  }

  /** Embedding chunks for an index failed: an indexer's batch (its chunks wait for a retry) or a memory chunk being stored. */
  embeddingFailed(index: 'documents' | 'memory'): void {
    this.embeddingFailures.inc({ index });
  }

  /** A store call ended: `ok`, `failed` (the store could not do it) or `refused` (see storeOutcome). */
  storeOperation(operation: string, seconds: number, outcome: StoreOutcome): void {
    this.storeLatency.observe({ operation }, seconds);
    if (outcome === 'failed') this.storeErrors.inc({ operation });
    else if (outcome === 'refused') this.storeRefusals.inc({ operation });
  }

  /** A connection was refused by the node's cap or its address's (routes/connection-cap.ts). */
  connectionRefused(limit: 'node' | 'address'): void {
    this.refusedConnections.inc({ limit });
  }

  /** A new room socket was refused and closed by the rooms core (rooms/hub.ts). */
  roomSocketRefused(reason: 'rate' | 'address' | 'node'): void {
    this.refusedRoomSockets.inc({ reason });
  }

  /** The exposition text (this app's series and the process's) and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    const both = Registry.merge([processMetrics(), this.registry]);
    return { contentType: this.registry.contentType, body: await both.metrics() };
  }
}
