/**
 * `GET /metrics` (issue 15): Prometheus text with the node's connections, rooms, messages and
 * deliveries, asks by outcome and their stages, the assistant's queue, index sizes, ingest jobs,
 * bus traffic and store latency, every series prefixed `salon_`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RoomBus } from '../src/rooms/types.js';
import type { Store } from '../src/store/types.js';
import { LocalEmbedder } from '../src/ai/local/local-embedder.js';
import { ADMIN, idleMetrics, testApp } from './helpers.js';
import { FlakyEmbedder, itemOf, paragraphs } from './search/corpus.js';
import { joined, roomsApp, ROOM } from './rooms/helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** The value of the first sample of `series` (with its labels as written), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  it('counts what the node does, in Prometheus text, every series prefixed salon_', async () => {
    const t = await roomsApp({ ASK_LIMIT_USER: '1' });
    closers.push(t.close);
    const { app } = t;
    const scrape = async () => {
      const res = await app.inject({ method: 'GET', url: '/metrics' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      return res.body;
    };
    const before = await scrape();
    expect(sample(before, 'salon_connections')).toBe(0);
    expect(sample(before, 'salon_socket_queued_bytes')).toBe(0);
    expect(sample(before, 'salon_messages_total')).toBe(0);

    const ann = await joined(app, 'Ann');
    const bob = await joined(app, 'Bob');
    ann.client.send({ type: 'say', text: 'hello all', clientId: 'c1' });
    await bob.client.next('message');
    const asked = await app.inject({ method: 'POST', url: `/api/v1/rooms/${ROOM}/ask`, payload: { text: 'What did the Rust team ship?', name: 'Cy' } });
    expect(asked.statusCode).toBe(200);
    const refused = await app.inject({ method: 'POST', url: `/api/v1/rooms/${ROOM}/ask`, payload: { text: 'And when?', name: 'Cy' } });
    expect(refused.statusCode).toBe(429);
    const job = await app.inject({ method: 'POST', url: '/api/v1/ingest', headers: ADMIN, payload: { url: 'http://127.0.0.1:1/nothing' } });
    expect(job.statusCode).toBe(202);
    await app.salon.ingest.idle();

    const after = await scrape();
    expect(sample(after, 'salon_connections')).toBe(2);
    expect(sample(after, 'salon_rooms')).toBe(1);
    // Ann's message and the question, stored; the answer too.
    expect(sample(after, 'salon_messages_total')).toBeGreaterThanOrEqual(2);
    expect(sample(after, 'salon_deliveries_total')).toBeGreaterThan(sample(before, 'salon_deliveries_total') ?? 0);
    expect(sample(after, 'salon_delivery_lag_seconds_count')).toBeGreaterThanOrEqual(1);
    // The room's item was never indexed: the assistant says so (abstains).
    expect(sample(after, 'salon_asks_total{outcome="abstained"}')).toBe(1);
    expect(sample(after, 'salon_asks_total{outcome="refused"}')).toBe(1);
    expect(sample(after, 'salon_ask_stage_seconds_count{stage="search"}')).toBe(1);
    expect(sample(after, 'salon_ask_stage_seconds_count{stage="total"}')).toBe(1);
    expect(sample(after, 'salon_assistant_queue_depth')).toBe(0);
    expect(sample(after, 'salon_index_vectors{index="documents"}')).toBeGreaterThanOrEqual(0);
    expect(sample(after, 'salon_ingest_jobs_total{status="failed"}')).toBe(1);
    expect(sample(after, 'salon_store_seconds_count{operation="appendMessage"}')).toBeGreaterThanOrEqual(2);
    expect(sample(after, 'salon_bus_messages_total{direction="publish"}')).toBeGreaterThan(0);
    // A lone node's bus is never cut off.
    expect(sample(after, 'salon_bus_connected')).toBe(1);
    expect(sample(after, 'salon_bus_outages_total')).toBe(0);
    expect(after).toMatch(/^salon_process_cpu_user_seconds_total /m);
    const names = after
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => l.split(/[{ ]/)[0]);
    expect(names.every((n) => n.startsWith('salon_'))).toBe(true);
  });

  it('counts every failed embedding of a batch of document chunks', async () => {
    const embedder = new FlakyEmbedder(new LocalEmbedder({ dimensions: 64 }));
    const t = await testApp({}, { embedder });
    closers.push(t.close);
    await t.app.ready();
    embedder.down = true;
    const items = paragraphs(3).map((p) => {
      const { source: _source, ...item } = itemOf(p);
      return item;
    });
    for (const item of items) {
      const r = await t.app.inject({ method: 'POST', url: '/api/v1/content', headers: ADMIN, payload: item });
      expect(r.statusCode).toBe(200);
    }
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(sample(text, 'salon_embedding_failures_total{index="documents"}')).toBe(3);
  });

  it('counts the process’s CPU from its start, not from the first scrape', async () => {
    const t = await roomsApp();
    closers.push(t.close);
    // Whatever the process did before (loading modules, other apps, this one's start) is in it.
    const used = process.cpuUsage();
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    const cpu = sample(res.body, 'salon_process_cpu_seconds_total');
    expect(cpu).toBeGreaterThanOrEqual((used.user + used.system) / 1e6 - 0.01);
    expect(sample(res.body, 'salon_process_cpu_user_seconds_total')).toBeGreaterThanOrEqual(used.user / 1e6 - 0.01);
  });

  it('tells no one the Node.js version: the scrape needs no token', async () => {
    const t = await roomsApp();
    closers.push(t.close);
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(sample(res.body, 'salon_process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(res.body).not.toContain('version_info');
    expect(res.body).not.toContain(process.version);
  });
});

describe('the metered bus', () => {
  it('counts what it publishes and receives, and the lag the envelope’s send time tells', async () => {
    const { meteredBus } = await import('../src/metrics/metered-bus.js');
    const { encodeEnvelope, sentAtOf } = await import('../src/rooms/envelope.js');
    const metrics = idleMetrics();
    let deliver: (roomId: string, payload: string) => void = () => {};
    const published: string[] = [];
    const inner = {
      nodeId: 'n1',
      publish: async (_roomId: string, payload: string) => void published.push(payload),
      subscribe: (handler: (roomId: string, payload: string) => void) => void (deliver = handler),
      close: async () => {},
    };
    const bus = meteredBus(inner as unknown as RoomBus, metrics);
    const heard: string[] = [];
    bus.subscribe((_roomId, payload) => heard.push(payload));
    const payload = encodeEnvelope({ node: 'n2', delivery: 'all', frame: '{"type":"pong"}' });
    expect(sentAtOf(payload)).toBeGreaterThan(0);
    expect(sentAtOf('{"n":"x","d":"all"}\n{}')).toBeUndefined();
    await bus.publish('news_1', payload);
    deliver('news_1', payload);
    expect(published).toEqual([payload]);
    expect(heard).toEqual([payload]);
    expect(bus.nodeId).toBe('n1');
    const text = (await metrics.scrape()).body;
    expect(sample(text, 'salon_bus_messages_total{direction="publish"}')).toBe(1);
    expect(sample(text, 'salon_bus_messages_total{direction="receive"}')).toBe(1);
    expect(sample(text, 'salon_bus_bytes_total{direction="receive"}')).toBe(Buffer.byteLength(payload));
    expect(sample(text, 'salon_bus_lag_seconds_count')).toBe(1);
  });
});

describe('the metered store', () => {
  it('counts a refusal apart from a failure: a thread that changed or a forgotten exchange is not the store failing', async () => {
    const { meteredStore } = await import('../src/metrics/metered-store.js');
    const { errors } = await import('../src/errors.js');
    const { ForgottenExchange } = await import('../src/store/types.js');
    const metrics = idleMetrics();
    const inner = {
      mergeThreads: async () => {
        throw new errors.ERR_THREAD_CHANGED('t1');
      },
      getThread: () => {
        throw new errors.ERR_THREAD_NOT_FOUND('t2');
      },
      addMemoryChunk: async () => {
        throw new ForgottenExchange('r1');
      },
      getMessages: async () => {
        throw new Error('SQLITE_CORRUPT: database disk image is malformed');
      },
      countMessages: () => {
        throw new errors.ERR_INTERNAL();
      },
      getRoom: async () => ({ id: 'r1' }),
    };
    const store = meteredStore(inner as unknown as Store, metrics) as unknown as typeof inner;
    await expect(store.mergeThreads()).rejects.toThrow(/changed/);
    expect(() => store.getThread()).toThrow(/t2/);
    await expect(store.addMemoryChunk()).rejects.toBeInstanceOf(ForgottenExchange);
    await expect(store.getMessages()).rejects.toThrow(/SQLITE_CORRUPT/);
    expect(() => store.countMessages()).toThrow();
    await expect(store.getRoom()).resolves.toEqual({ id: 'r1' });

    const text = await metrics.registry.metrics();
    for (const op of ['mergeThreads', 'getThread', 'addMemoryChunk']) {
      expect(sample(text, `salon_store_refusals_total{operation="${op}"}`)).toBe(1);
      expect(sample(text, `salon_store_errors_total{operation="${op}"}`)).toBeUndefined();
    }
    for (const op of ['getMessages', 'countMessages']) {
      expect(sample(text, `salon_store_errors_total{operation="${op}"}`)).toBe(1);
      expect(sample(text, `salon_store_refusals_total{operation="${op}"}`)).toBeUndefined();
    }
    expect(sample(text, 'salon_store_errors_total{operation="getRoom"}')).toBeUndefined();
    for (const op of ['mergeThreads', 'getThread', 'addMemoryChunk', 'getMessages', 'countMessages', 'getRoom'])
      expect(sample(text, `salon_store_seconds_count{operation="${op}"}`)).toBe(1);
  });
});
