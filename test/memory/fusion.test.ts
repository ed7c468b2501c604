/**
 * Fusion (issue 14): the second gate, the plan's sizes and lineage at several thresholds, and a
 * fused thread end to end — no copied messages, one introduction, questions about either source
 * answered from it and traced back to the original messages, the union fallback with its warning.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { saySameThing } from '../../src/memory/threads/same-meaning.js';
import { fuseMemories, consolidate, type VectorChunk } from '../../src/memory/threads/fusion.js';
import { Neighbours } from '../../src/memory/threads/neighbours.js';
import { FUSION_FALLBACK_NOTICE, ThreadService } from '../../src/memory/threads/thread-service.js';
import { threadCommands } from '../../src/memory/threads/thread-commands.js';
import type { Store, StoredMemoryChunk } from '../../src/store/types.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { cosine } from '../../src/ai/vectors.js';
import { errors } from '../../src/errors.js';
import type { Source } from '../../src/protocol/messages.js';
import { joined, roomsApp, ROOM, OTHER_ROOM } from '../rooms/helpers.js';
import { call, GARDEN, threadsApp, threadWith, TRAINS } from './thread-helpers.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

describe('the second gate: same words, same meaning', () => {
  it('refuses a negation the other side lacks, and a changed number', () => {
    expect(saySameThing('I love the new Prius', 'I no longer love the new Prius')).toBe(false);
    expect(saySameThing('The Prius is not reliable', 'The Prius is reliable')).toBe(false);
    expect(saySameThing("I don't like the new Prius", 'I like the new Prius')).toBe(false);
    expect(saySameThing('Tickets cost 120 euros', 'Tickets cost 150 euros')).toBe(false);
    expect(saySameThing('Tickets cost 1,200 euros', 'Tickets cost 1200 euros')).toBe(true);
  });

  it('compares the numbers as sets: in any order and however often, none more and none fewer', () => {
    expect(saySameThing('Trains 12 and 7 leave at 9.30', 'At 9.30 trains 7 and 12 leave, train 7 first')).toBe(true);
    expect(saySameThing('Trains 12 and 7 leave', 'Trains 12 and 7 and 8 leave')).toBe(false);
    expect(saySameThing('Trains 12, 7 and 8 leave', 'Trains 12 and 7 leave')).toBe(false);
    expect(saySameThing('The pier opens in May', 'The pier opens in May 2027')).toBe(false);
    expect(saySameThing('The pier opens in May 2027', 'The pier opens in May')).toBe(false);
    expect(saySameThing('It cost 3.5 million', 'It cost 3,5 million')).toBe(false);
    expect(saySameThing('It cost 1,2,3 euros', 'It cost 123 euros')).toBe(true);
  });

  it('accepts two tellings of one thing, chat stamps and fusion marks aside', () => {
    expect(saySameThing('Ann (1 Nov 2026, 10:00): The pier opens in May', 'Ann (3 Nov 2026, 18:45): the pier opens in May!')).toBe(true);
    expect(saySameThing('[A]: I love the new Prius', 'I really love the new Prius')).toBe(true);
    expect(saySameThing('The pier opens in May', 'Basil keeps pests off tomatoes')).toBe(false);
  });
});

/** A stored-looking chunk with a unit vector along `axes` (weights), for plans without a store. */
function chunk(id: number, threadId: string, text: string, axes: Record<number, number>, over: Partial<StoredMemoryChunk> = {}): VectorChunk {
  const vector = new Float32Array(16);
  for (const [i, w] of Object.entries(axes)) vector[Number(i)] = w;
  const norm = Math.hypot(...vector);
  for (let i = 0; i < vector.length; i++) vector[i] /= norm;
  return {
    chunk: {
      id,
      threadId,
      roomId: 'news_1',
      kind: 'window',
      text,
      messageIds: [`m${id}`],
      authors: ['Ann'],
      firstTs: '2026-11-01T10:00:00.000Z',
      lastTs: '2026-11-01T10:00:00.000Z',
      privileged: false,
      owner: null,
      createdAt: '2026-11-01T10:00:00.000Z',
      updatedAt: '2026-11-01T10:00:00.000Z',
      vector,
      vectorModel: 'test@16',
      ...over,
    },
    vector,
  };
}

/** Stores each fact as a one-line window of ROOM in thread `threadOf(i)`, seen on 1 Nov 2026 + i days. */
async function rememberDaily(store: Store, facts: string[], threadOf: (i: number) => string): Promise<void> {
  for (const [i, fact] of facts.entries()) {
    const day = new Date(Date.UTC(2026, 10, 1 + i)).toISOString();
    const window = { roomId: ROOM, kind: 'window' as const, messageIds: [], authors: ['Ann'], firstTs: day, lastTs: day, privileged: false, owner: null };
    await store.addMemoryChunk({ ...window, threadId: threadOf(i), text: `Ann (1 Nov 2026, 10:00): ${fact}` }, day);
  }
}

const target = { threadId: 'thr_f', roomId: 'news_1' };

describe('the fusion plan', () => {
  const a = [
    chunk(1, 'A', 'The night train to Vienna leaves at 22:10', { 0: 1 }),
    chunk(2, 'A', 'Sleeper cabins cost 120 euros', { 1: 1 }),
    chunk(3, 'A', 'The dining car serves goulash', { 2: 1 }),
  ];
  const b = [
    chunk(11, 'B', 'the night train to Vienna leaves at 22:10', { 0: 1, 5: 0.2 }),
    chunk(12, 'B', 'Sleeper cabins cost 150 euros', { 1: 1, 6: 0.1 }),
    chunk(13, 'B', 'Tomatoes need six hours of sun', { 3: 1 }),
    chunk(14, 'B', 'Basil keeps pests away', { 4: 1 }),
  ];

  it('fuses what both say, keeps the rest, and lands between max(|A|, |B|) and |A| + |B| at every threshold', async () => {
    const r = await fuseMemories(a, b, { target });
    expect([r.fused, r.kept, r.chunks.length]).toEqual([1, 3, 6]);
    const fused = r.chunks.find((c) => c.chunk.fusion === 'fused')!;
    expect(fused.chunk.text).toBe('[A]: The night train to Vienna leaves at 22:10\n[B]: the night train to Vienna leaves at 22:10');
    expect(fused.chunk.lineage).toEqual({ chunkIds: [1, 11], threadIds: ['A', 'B'], roomIds: ['news_1'] });
    expect(fused.chunk.messageIds).toEqual(['m1', 'm11']);
    expect(fused.chunk.threadId).toBe('thr_f');
    expect(Math.hypot(...fused.vector)).toBeCloseTo(1, 5);
    // The 120/150 pair is close by cosine but the numbers differ: kept apart.
    expect(r.chunks.filter((c) => c.chunk.text.includes('Sleeper'))).toHaveLength(2);
    for (const threshold of [0.05, 0.5, 0.82, 0.99, 1]) {
      const { chunks, fused: f, kept } = await fuseMemories(a, b, { target, threshold });
      expect(chunks.length).toBeGreaterThanOrEqual(Math.max(a.length, b.length));
      expect(chunks.length).toBeLessThanOrEqual(a.length + b.length);
      expect(f + kept).toBe(b.length);
    }
  });

  it('names no rooms in a pair one of whose sources has a lineage from before lineages named them', async () => {
    // A copy from an old fusion: its lineage names its source thread only (OLD, in some room).
    const old = chunk(11, 'B', 'the night train to Vienna leaves at 22:10', { 0: 1, 5: 0.2 }, { lineage: { chunkIds: [7], threadIds: ['OLD'] } });
    const r = await fuseMemories(a, [old, ...b.slice(1)], { target });
    const fused = r.chunks.find((c) => c.chunk.fusion === 'fused')!;
    // With A's room alone it would read as asked there and nowhere else (its old source's room unsaid).
    expect(fused.chunk.lineage).toEqual({ chunkIds: [1, 7], threadIds: ['A', 'OLD'] });
  });

  it('takes B while it is still being read: the same plan as with B in hand', async () => {
    let arrive!: (chunks: VectorChunk[]) => void;
    const pending = new Promise<VectorChunk[]>((resolve) => (arrive = resolve));
    const planning = fuseMemories(a, pending, { target });
    // A's graphs are under way before B arrives.
    await new Promise((resolve) => setImmediate(resolve));
    arrive(b);
    const late = await planning;
    const inHand = await fuseMemories(a, b, { target });
    expect(late.chunks.map((c) => [c.chunk.text, c.chunk.fusion ?? null])).toEqual(inHand.chunks.map((c) => [c.chunk.text, c.chunk.fusion ?? null]));
    expect([late.fused, late.kept]).toEqual([inHand.fused, inHand.kept]);
    await expect(fuseMemories(a, Promise.reject(new Error('B unreadable')), { target })).rejects.toThrow('B unreadable');
  });

  it('never fuses a contradiction, however close the vectors', async () => {
    const x = [chunk(1, 'A', 'I love the new Prius', { 0: 1 })];
    const y = [chunk(2, 'B', 'I no longer love the new Prius', { 0: 1 })];
    const r = await fuseMemories(x, y, { target, threshold: 0.5 });
    expect([r.fused, r.kept]).toEqual([0, 1]);
  });

  it('fuses a memory with its own copy into its own size, and never a private chunk with a public one', async () => {
    const copy = a.map((c, i) => chunk(100 + i, 'B', c.chunk.text, { [i]: 1 }));
    expect((await fuseMemories(a, copy, { target })).chunks).toHaveLength(a.length);
    const secret = [chunk(50, 'B', a[0].chunk.text, { 0: 1 }, { privileged: true, owner: 'u_ann', messageIds: [] })];
    const r = await fuseMemories(a, secret, { target });
    expect([r.fused, r.kept]).toEqual([0, 1]);
    expect(r.chunks.at(-1)!.chunk).toMatchObject({ privileged: true, owner: 'u_ann', fusion: 'kept' });
  });

  it('each chunk of A takes in at most one chunk of B', async () => {
    const twice = [chunk(21, 'B', a[0].chunk.text, { 0: 1 }), chunk(22, 'B', a[0].chunk.text, { 0: 1, 9: 0.01 })];
    const r = await fuseMemories(a, twice, { target });
    expect([r.fused, r.kept, r.chunks.length]).toEqual([1, 1, 4]);
  });

  it('finds each copy’s chunk in a batch of hundreds, and asks for more candidates once the nearest are all taken', async () => {
    // 15 clusters of 10 nearly equal vectors; B says everything of A twice, the second time after all of the first.
    const many = Array.from({ length: 150 }, (_, i) => chunk(1000 + i, 'A', `cluster ${i % 15} item ${i} says ${i * 7}`, { [i % 15]: 1, 15: (i % 10) / 100 }));
    const again = (from: number) => many.map((c, i) => chunk(from + i, 'B', c.chunk.text, { [i % 15]: 1, 15: (i % 10) / 100 }));
    const r = await fuseMemories(many, [...again(2000), ...again(3000)], { target });
    expect([r.fused, r.kept, r.chunks.length]).toEqual([150, 150, 300]);
    // Each chunk of A took in its first copy (the nearest, cosine 1); the second copies found every candidate taken.
    expect(r.chunks.slice(0, 150).map((c) => c.chunk.lineage?.chunkIds)).toEqual(many.map((c, i) => [c.chunk.id, 2000 + i]));
    expect(r.chunks.slice(150).map((c) => [c.chunk.fusion, c.copyOf])).toEqual(many.map((_, i) => ['kept', 3000 + i]));
  });

  it('looks at a near tie again: a counterpart the candidates missed is found among the free chunks of A (the second pass)', async () => {
    // At 2,048 dimensions the candidates come from a graph over 256-dimension count sketches. Ten
    // chunks of A whose sketch is exactly that of w (w moved along s_i·e_i − s_j·e_j for two
    // dimensions i, j of one bucket), close enough to pass the threshold but saying other numbers,
    // fill its 8 candidates; its true counterpart (cosine 0.99, a sketch a little off) is not among them.
    const D = 2048;
    const probe = await Neighbours.of([{ label: 0, audience: 'public', vector: new Float32Array(D).fill(1) }], D);
    const buckets = new Map<number, { i: number; sign: number }[]>();
    for (let i = 0; i < D; i++) {
      const e = new Float32Array(D);
      e[i] = 1;
      const sketch = probe.query(e);
      const bucket = sketch.findIndex((x) => x !== 0);
      buckets.set(bucket, [...(buckets.get(bucket) ?? []), { i, sign: Math.sign(sketch[bucket]) }]);
    }
    probe.close();
    const pairs = [...buckets.values()].filter((dims) => dims.length >= 2).slice(0, 10);
    const unit = (v: Float32Array) => {
      const norm = Math.hypot(...v);
      return v.map((x) => x / norm);
    };
    const w = unit(Float32Array.from({ length: D }, (_, i) => Math.sin(i * 12.9898) + 0.1));
    const big = (id: number, threadId: string, text: string, vector: Float32Array): VectorChunk => {
      const c = chunk(id, threadId, text, { 0: 1 });
      return { chunk: { ...c.chunk, vector, vectorModel: `test@${D}` }, vector };
    };
    const said = 'Ann (1 Nov 2026, 10:00): the pier opens on 3 May at 10:00';
    const decoys = pairs.map(([x, y], k) => {
      const v = Float32Array.from(w);
      v[x.i] += 0.4 * x.sign;
      v[y.i] -= 0.4 * y.sign;
      return big(200 + k, 'A', `Ann (1 Nov 2026, 10:00): the pier opens on ${4 + k} May at 10:00`, unit(v));
    });
    const counterpart = big(300, 'A', said, unit(w.map((x, i) => x + 0.1 * Math.cos(i * 7.1) * Math.abs(x))));
    const dot = (x: Float32Array, y: Float32Array) => x.reduce((sum, v, i) => sum + v * y[i], 0);
    expect(Math.min(...decoys.map((d) => dot(d.vector, w)))).toBeGreaterThan(0.82);
    expect(dot(counterpart.vector, w)).toBeGreaterThan(0.99);
    const r = await fuseMemories([...decoys, counterpart], [big(400, 'B', said, w)], { target });
    expect([r.fused, r.kept, r.chunks.length]).toEqual([1, 0, 11]);
    expect(r.chunks[10].chunk).toMatchObject({ fusion: 'fused', lineage: { chunkIds: [300, 400], threadIds: ['A', 'B'] } });
  });

  it('reads the vectors in place where they are stored, and never those of the chunks it copies', async () => {
    const stored = new Map([...a, ...b].map((c) => [c.chunk.id, c.vector]));
    const reads: number[] = [];
    const lazy = (c: VectorChunk): VectorChunk => ({
      chunk: c.chunk,
      get vector() {
        reads.push(c.chunk.id);
        return c.vector;
      },
    });
    const visit = (ids: number[], fn: (i: number, v: Float32Array) => void) => {
      ids.forEach((id, i) => stored.has(id) && fn(i, stored.get(id)!));
      return ids.filter((id) => stored.has(id)).length;
    };
    const dot = (x: Float32Array, y: Float32Array) => x.reduce((sum, v, i) => sum + v * y[i], 0);
    const cosines = (_: () => Float32Array, ids: number[], queryId?: number) => ids.map((id) => dot(stored.get(queryId!)!, stored.get(id)!));
    const plain = await fuseMemories(a, b, { target });
    const inPlace = await fuseMemories(a.map(lazy), b.map(lazy), { target, stored: visit, cosines });
    expect(inPlace.chunks.map((c) => [c.chunk, [...c.vector]])).toEqual(plain.chunks.map((c) => [c.chunk, [...c.vector]]));
    expect(inPlace.chunks.filter((c) => c.copyOf !== undefined)).toHaveLength(5);
    // Every read above was of the result's vectors; the plan itself read none of its sources'.
    expect(reads).toHaveLength(5);
  });

  it('scores B’s first candidates in blocks when it can, to the same plan, and per chunk where a block is not scored', async () => {
    const stored = new Map([...a, ...b].map((c) => [c.chunk.id, c.vector]));
    const dot = (x: Float32Array, y: Float32Array) => x.reduce((sum, v, i) => sum + v * y[i], 0);
    const perChunk: number[] = [];
    const cosines = (_: () => Float32Array, ids: number[], queryId?: number) => {
      perChunk.push(queryId!);
      return ids.map((id) => dot(stored.get(queryId!)!, stored.get(id)!));
    };
    const blocks: number[][] = [];
    const cosinesMany = (queryIds: number[], candidateIds: number[][]) => {
      blocks.push(queryIds);
      return queryIds.map((q, i) => candidateIds[i].map((id) => dot(stored.get(q)!, stored.get(id)!)));
    };
    const plain = await fuseMemories(a, b, { target, cosines });
    const perChunkCalls = perChunk.length;
    expect(perChunkCalls).toBeGreaterThan(0);
    perChunk.length = 0;
    const batched = await fuseMemories(a, b, { target, cosines, cosinesMany });
    expect(batched.chunks.map((c) => [c.chunk, [...c.vector]])).toEqual(plain.chunks.map((c) => [c.chunk, [...c.vector]]));
    expect([batched.fused, batched.kept]).toEqual([plain.fused, plain.kept]);
    expect(blocks).toEqual([b.map((c) => c.chunk.id)]);
    // What is left to `cosines`: the second pass over near ties, and chunks whose first candidates were all taken.
    expect(perChunk.length).toBeLessThan(perChunkCalls);
    // An index that cannot score at once (null) leaves every chunk to `cosines`.
    perChunk.length = 0;
    const none = await fuseMemories(a, b, { target, cosines, cosinesMany: () => null });
    expect(none.chunks.map((c) => c.chunk)).toEqual(plain.chunks.map((c) => c.chunk));
    expect(perChunk).toHaveLength(perChunkCalls);
  });

  it('compaction makes near-duplicates of one thread one, oldest first', async () => {
    const thread = [
      chunk(1, 'A', 'The pier opens in May', { 0: 1 }),
      chunk(2, 'A', 'Basil keeps pests away', { 1: 1 }),
      chunk(3, 'A', 'the pier opens in May!', { 0: 1, 2: 0.1 }),
    ];
    const r = await consolidate(thread, {});
    expect(r.fused).toBe(1);
    expect(r.replaced).toHaveLength(1);
    expect(r.replaced[0].ids).toEqual([1, 3]);
    expect(r.replaced[0].into.chunk.messageIds).toEqual(['m1', 'm3']);
  });
});

describe('a fused thread', () => {
  it('copies no messages, introduces itself, remembers both sources and traces answers back to them', async () => {
    const a = await threadsApp(closers);
    const trains = await threadWith(a, ROOM, 'Night trains', TRAINS);
    const garden = await threadWith(a, OTHER_ROOM, 'Tomato garden', GARDEN);
    const r = await call(a, 'POST', '/api/v1/threads/fuse', { sourceIds: [trains.id, garden.id] });
    expect(r.thread).toMatchObject({ roomId: ROOM, origin: 'fused', isMerged: true, title: 'Night trains + Tomato garden' });
    expect(r.fallback).toBeUndefined();
    const detail = await call(a, 'GET', `/api/v1/threads/${r.thread.id}`);
    expect(detail.messages).toBe(1);
    const { messages } = await call(a, 'GET', `/api/v1/threads/${r.thread.id}/messages`);
    expect(messages[0].author.kind).toBe('assistant');
    expect(messages[0].text).toContain('Night trains');
    expect(messages[0].text).toContain('Tomato garden');
    expect(detail.memory.chunks).toBe(r.fused + r.kept + (await a.salon.store.countMemoryChunks(trains.id)) - r.fused);
    expect(detail.memory.kept).toBe(r.kept);
    expect(detail.history).toMatchObject([{ action: 'fuse', details: { sourceIds: [trains.id, garden.id] } }]);
    expect((await call(a, 'GET', `/api/v1/threads/${trains.id}`)).history.at(-1)).toMatchObject({ action: 'fuse', details: { fusedInto: r.thread.id } });
    // The sources are untouched.
    expect((await call(a, 'GET', `/api/v1/threads/${garden.id}`)).messages).toBe(3);

    const ask = async (text: string) => {
      const res = await a.inject({ method: 'POST', url: `/api/v1/rooms/${ROOM}/ask`, payload: { text, threadId: r.thread.id, name: 'Eve' } });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as { answer: string; sources: Source[] };
      return { ...body, cited: body.sources.filter((s) => s.sourceType === 'conversation').flatMap((s) => s.messageIds ?? []) };
    };
    const train = await ask('When does the night train to Vienna leave?');
    expect(train.answer).toContain('22:10');
    expect(train.cited).toEqual(expect.arrayContaining([trains.messageIds[0]]));
    const tomato = await ask('How many hours of sun do tomatoes need?');
    expect(tomato.answer).toMatch(/six hours/);
    expect(tomato.cited).toEqual(expect.arrayContaining([garden.messageIds[0]]));
  });

  it('cuts a long title on a character, never inside an emoji, so the title it stores is the one it shows', async () => {
    const a = await threadsApp(closers);
    const long = await call(a, 'POST', `/api/v1/rooms/${ROOM}/threads`, { title: `${'a'.repeat(118)}😀` });
    const garden = await threadWith(a, ROOM, 'Tomato garden', GARDEN);
    const r = await call(a, 'POST', '/api/v1/threads/fuse', { sourceIds: [long.thread.id, garden.id] });
    expect(r.thread.title).toBe(`${'a'.repeat(118)}…`);
    expect((await a.salon.store.getThread(r.thread.id))?.title).toBe(r.thread.title);
  });

  it('stores each fused pair’s vector as its sources’ (SQLite), read back as the memory index holds it, before and after a source goes', async () => {
    const a = await threadsApp(closers);
    const first = await threadWith(a, ROOM, 'Night trains', TRAINS);
    // The same talk a day later: other chat stamps, so other vectors, and the same thing said.
    const again = await threadWith(a, OTHER_ROOM, 'Night trains again', TRAINS, Date.UTC(2026, 10, 2, 10));
    const r = await call(a, 'POST', '/api/v1/threads/fuse', { sourceIds: [first.id, again.id] });
    expect(r.fused).toBeGreaterThan(0);
    const { store, memory } = a.salon;
    const db = (store as SqliteStore).db;
    const fusedRows = async () => (await store.scanThreadMemory(r.thread.id, 0, 100)).filter((c) => c.fusion === 'fused');
    const withoutVector = () =>
      (
        db.prepare("SELECT count(*) AS n FROM memory_chunks WHERE thread_id = ? AND fusion = 'fused' AND typeof(vector) = 'null'").get(r.thread.id) as {
          n: number;
        }
      ).n;
    const pairs = await fusedRows();
    expect(pairs).toHaveLength(r.fused);
    expect(withoutVector()).toBe(r.fused);
    const indexed = await memory.indexedVectorsOf(pairs);
    pairs.forEach((c, i) => expect(cosine(c.vector!, indexed[i])).toBeCloseTo(1, 6));
    // The deletion names the thread that keeps copies of the source's memory.
    expect((await call(a, 'DELETE', `/api/v1/threads/${first.id}`)).fusedInto).toEqual([r.thread.id]);
    expect(withoutVector()).toBe(0);
    const after = await fusedRows();
    expect(after.map((c) => Array.from(c.vector!))).toEqual(pairs.map((c) => Array.from(c.vector!)));
  });

  it('falls back to a plain union when smart fusion fails, logs why, tells the admin why and the room only that it did', async () => {
    const a = await threadsApp(closers);
    const x = await threadWith(a, ROOM, 'X', TRAINS);
    const y = await threadWith(a, ROOM, 'Y', TRAINS);
    const { client: ann } = await joined(a, 'Ann');
    const logged: string[] = [];
    const { store, memory, chat, rooms } = a.salon;
    const failing = new ThreadService({
      store,
      memory,
      chat,
      bridges: a.salon.threads.bridges,
      outlet: rooms,
      gate: () => {
        throw new Error('gate offline');
      },
      log: { debug() {}, info() {}, error() {}, warn: (_d: unknown, m?: string) => void logged.push(String(m)), child: () => ({}) as never } as never,
    });
    const r = await failing.fuse([x.id, y.id], 'admin');
    expect(r).toMatchObject({ fused: 0, kept: await store.countMemoryChunks(y.id), fallback: 'gate offline' });
    expect(await store.countMemoryChunks(r.thread.id)).toBe((await store.countMemoryChunks(x.id)) + (await store.countMemoryChunks(y.id)));
    expect(logged).toContain('Smart fusion failed — fell back to simple union merge. Reason: gate offline');
    // What members and the public read names no internal detail (docs/errors.md).
    const warning = await ann.next('warning');
    expect(warning).toEqual({ type: 'warning', code: 'FUSION_FALLBACK', message: FUSION_FALLBACK_NOTICE });
    expect((await store.threadHistory(r.thread.id, 5))[0].details).toMatchObject({ fallback: FUSION_FALLBACK_NOTICE });
    const fuse = threadCommands(failing, 'members').find((c) => c.name === 'fuse')!;
    const reply = await fuse.run({ roomId: ROOM, threadId: x.id, user: { id: 'u_ann', name: 'Ann' }, address: '203.0.113.1', args: `${x.id} ${y.id}` });
    expect(reply).toContain(FUSION_FALLBACK_NOTICE);
    expect(reply).not.toContain('gate offline');
    expect((await ann.next('warning')).message).toBe(FUSION_FALLBACK_NOTICE);
  });

  it('finishes a committed fusion when the memory index refuses its rows: the room gets the introduction, the admin the thread', async () => {
    const a = await threadsApp(closers);
    const x = await threadWith(a, ROOM, 'X', TRAINS);
    const y = await threadWith(a, ROOM, 'Y', GARDEN);
    const { client: ann } = await joined(a, 'Ann');
    const { memory, store } = a.salon;
    // The change is stored before its rows are indexed: a refusal then (a full index) answered the
    // admin with an error for a fusion that was made, and the rooms were never told of it.
    vi.spyOn(memory, 'indexStored').mockRejectedValueOnce(new errors.ERR_INDEX_FULL('the index is full'));
    const r = await call(a, 'POST', '/api/v1/threads/fuse', { sourceIds: [x.id, y.id] });
    expect(r.thread.origin).toBe('fused');
    expect(await store.countMemoryChunks(r.thread.id)).toBeGreaterThan(0);
    const intro = await ann.next('message', (f) => f.message.threadId === r.thread.id);
    expect(intro.message.text).toContain('This thread fuses');
  });

  it('fails as it is when the second thread cannot be read: no fallback, no warning, no new thread', async () => {
    const a = await threadsApp(closers);
    const x = await threadWith(a, ROOM, 'X', TRAINS);
    const y = await threadWith(a, ROOM, 'Y', GARDEN);
    const { client: ann } = await joined(a, 'Ann');
    const { store, memory, chat, rooms } = a.salon;
    const before = (await store.listThreads(ROOM)).length;
    const scan = store.scanThreadMemory.bind(store);
    store.scanThreadMemory = async (threadId, ...rest) => {
      if (threadId === y.id) throw new Error('disk read failed');
      return scan(threadId, ...rest);
    };
    const warned: string[] = [];
    const service = new ThreadService({
      store,
      memory,
      chat,
      bridges: a.salon.threads.bridges,
      outlet: rooms,
      log: { debug() {}, info() {}, error() {}, warn: (_d: unknown, m?: string) => void warned.push(String(m)), child: () => ({}) as never } as never,
    });
    try {
      await expect(service.fuse([x.id, y.id], 'admin')).rejects.toThrow('disk read failed');
    } finally {
      store.scanThreadMemory = scan;
    }
    expect((await store.listThreads(ROOM)).length).toBe(before);
    expect(warned).toEqual([]);
    // The room heard nothing of it: the next frame it gets is the one sent now.
    rooms.broadcast(ROOM, { type: 'warning', code: 'PROBE', message: 'probe' });
    expect(await ann.next('warning')).toMatchObject({ code: 'PROBE' });
  });

  it('maps the memory index for the fused rows while the store writes them, and indexes them once both are done', async () => {
    const a = await threadsApp(closers);
    const x = await threadWith(a, ROOM, 'X', TRAINS);
    const y = await threadWith(a, ROOM, 'Y', GARDEN);
    const { store, memory, threads } = a.salon;
    const events: string[] = [];
    const traced = <T extends object>(target: T, name: string) => {
      const inner = (target as Record<string, (...args: unknown[]) => Promise<unknown>>)[name].bind(target);
      (target as Record<string, unknown>)[name] = async (...args: unknown[]) => {
        events.push(`${name} begins`);
        try {
          return await inner(...args);
        } finally {
          events.push(`${name} ends`);
        }
      };
    };
    traced(store, 'applyThreadChange');
    traced(memory, 'reserve');
    traced(memory, 'indexStored');
    const indexed = a.salon.memoryIndex.size;
    const fused = await threads.fuse([x.id, y.id], 'admin');
    // In huge pages the mapping hides behind the store's writes (docs/benchmarks.md, "Thirtieth
    // session"); the rows are copied only into mapped memory, and only once they are stored.
    // The mapping begins first; whether it ends before the store's change begins depends on the machine's speed.
    expect(events[0]).toBe('reserve begins');
    expect(events.indexOf('applyThreadChange begins')).toBeGreaterThan(0);
    expect(events.slice(-2)).toEqual(['indexStored begins', 'indexStored ends']);
    expect(events.indexOf('indexStored begins')).toBeGreaterThan(Math.max(events.indexOf('reserve ends'), events.indexOf('applyThreadChange ends')));
    const chunks = await store.countMemoryChunks(fused.thread.id);
    expect(chunks).toBeGreaterThan(0);
    expect(a.salon.memoryIndex.size).toBe(indexed + chunks);
  });

  it('begins A’s graphs from its ids before reading its rows, and builds them again from the rows when A changed in between', async () => {
    const a = await threadsApp(closers);
    const { store, threads } = a.salon;
    const db = (store as SqliteStore).db;
    const audiences = store.scanThreadMemoryAudiences.bind(store);
    const scan = store.scanThreadMemory.bind(store);
    const builds = vi.spyOn(Neighbours, 'of');
    closers.push(() => {
      builds.mockRestore();
      store.scanThreadMemoryAudiences = audiences;
      store.scanThreadMemory = scan;
    });
    /** Fuses two threads that say the same, `between` run once A's ids are read and before its rows are; what the plan read and built, and the pairs stored. */
    const fuseWith = async (between: (threadId: string) => void) => {
      const first = await threadWith(a, ROOM, 'Night trains', TRAINS);
      const again = await threadWith(a, OTHER_ROOM, 'Night trains again', TRAINS, Date.UTC(2026, 10, 2, 10));
      const reads: string[] = [];
      store.scanThreadMemoryAudiences = async (threadId, afterId, ...rest) => {
        if (threadId === first.id && afterId === 0) reads.push('ids');
        return audiences(threadId, afterId, ...rest);
      };
      store.scanThreadMemory = async (threadId, afterId, ...rest) => {
        if (threadId === first.id && afterId === 0) {
          reads.push('rows');
          between(first.id);
        }
        return scan(threadId, afterId, ...rest);
      };
      builds.mockClear();
      const r = await threads.fuse([first.id, again.id], 'admin');
      const pairs = (await store.scanThreadMemory(r.thread.id, 0, 100, false)).filter((c) => c.fusion === 'fused').length;
      return { reads, builds: builds.mock.calls.length, pairs };
    };
    // Nothing changed: the graphs begun from A's ids are the plan's (one build), and the pairs are made.
    const same = await fuseWith(() => {});
    expect(same.reads).toEqual(['ids', 'rows']);
    expect(same.builds).toBe(1);
    expect(same.pairs).toBeGreaterThan(0);
    // A's chunks became one member's private asks in between: the same ids, another audience. The
    // graphs begun before would offer them to B's public chunks; built again from the rows, none is
    // a candidate, and no public chunk is made one with a private one.
    const changed = await fuseWith((threadId) => db.prepare("UPDATE memory_chunks SET privileged = 1, owner = 'u_ann' WHERE thread_id = ?").run(threadId));
    expect(changed.reads).toEqual(['ids', 'rows']);
    expect(changed.builds).toBe(2);
    expect(changed.pairs).toBe(0);
  });

  it('closes the graphs begun from A’s ids when A’s rows cannot be read, and fails the fusion with the store’s error', async () => {
    const a = await threadsApp(closers);
    const { store, threads } = a.salon;
    const scan = store.scanThreadMemory.bind(store);
    const builds = vi.spyOn(Neighbours, 'of');
    const closes = vi.spyOn(Neighbours.prototype, 'close');
    closers.push(() => {
      builds.mockRestore();
      closes.mockRestore();
      store.scanThreadMemory = scan;
    });
    const first = await threadWith(a, ROOM, 'Night trains', TRAINS);
    const again = await threadWith(a, OTHER_ROOM, 'Night trains again', TRAINS, Date.UTC(2026, 10, 2, 10));
    store.scanThreadMemory = async (threadId, ...rest) => {
      if (threadId === first.id) throw new Error('disk on fire');
      return scan(threadId, ...rest);
    };
    builds.mockClear();
    await expect(threads.fuse([first.id, again.id], 'admin')).rejects.toThrow('disk on fire');
    expect(builds).toHaveBeenCalledTimes(1);
    const begun = await builds.mock.results[0].value;
    await vi.waitFor(() => expect(closes.mock.contexts).toContain(begun), { timeout: 10_000 });
  });

  it('lets the event loop run between building the change and handing it to the store', async () => {
    const a = await threadsApp(closers);
    const x = await threadWith(a, ROOM, 'X', TRAINS);
    const y = await threadWith(a, ROOM, 'Y', GARDEN);
    const { store, memory, threads } = a.salon;
    // reserve() is called just before the change is built; a turn after it runs this callback.
    let turned = false;
    let turnedBeforeStore: boolean | undefined;
    const reserve = memory.reserve.bind(memory);
    memory.reserve = (chunks: number) => {
      setImmediate(() => (turned = true));
      return reserve(chunks);
    };
    const apply = store.applyThreadChange.bind(store);
    store.applyThreadChange = (change) => {
      turnedBeforeStore = turned;
      return apply(change);
    };
    await threads.fuse([x.id, y.id], 'admin');
    expect(turnedBeforeStore).toBe(true);
  });

  it('keeps a fused memory within MEMORY_MAX_CHUNKS_PER_THREAD, leaving out the least recently seen', async () => {
    const t = await roomsApp({ MEMORY_MAX_CHUNKS_PER_THREAD: '3' });
    closers.push(t.close);
    const a = t.app;
    const { store, memory, threads } = a.salon;
    const x = await threads.create(ROOM, 'X', 'admin');
    const y = await threads.create(ROOM, 'Y', 'admin');
    const facts = ['The pier opens in May', 'The ferry runs hourly', 'The museum closes on Mondays', 'Tomatoes need sun', 'Basil keeps pests away'];
    await rememberDaily(store, facts, (i) => (i < 3 ? x.id : y.id));
    await memory.load();
    const r = await threads.fuse([x.id, y.id], 'admin');
    const kept = await store.scanThreadMemory(r.thread.id, 0, 10);
    expect(kept.map((c) => c.text.slice(25))).toEqual(['The museum closes on Mondays', 'Tomatoes need sun', 'Basil keeps pests away']);
    expect(kept.map((c) => c.updatedAt)).toEqual([3, 4, 5].map((d) => new Date(Date.UTC(2026, 10, d)).toISOString()));
    expect((await store.threadHistory(r.thread.id, 5))[0].details).toMatchObject({ chunks: 3, dropped: 2 });
  });

  it('keeps a merge within MEMORY_MAX_CHUNKS_PER_THREAD too, however often a thread absorbs a fusion of itself', async () => {
    const t = await roomsApp({ MEMORY_MAX_CHUNKS_PER_THREAD: '3' });
    closers.push(t.close);
    const { store, memory, threads, memoryIndex } = t.app.salon;
    const hoard = await threads.create(ROOM, 'Hoard', 'admin');
    const other = await threads.create(ROOM, 'Other', 'admin');
    const facts = ['The pier opens in May', 'The ferry runs hourly', 'The museum closes on Mondays', 'Tomatoes need sun'];
    await rememberDaily(store, facts, (i) => (i < 2 ? hoard.id : other.id));
    await memory.load();
    const elsewhere = memoryIndex.size - facts.length;
    await threads.merge(hoard.id, other.id, 'admin');
    const kept = await store.scanThreadMemory(hoard.id, 0, 10);
    // The least recently seen of both threads' four goes, in the merge's own change.
    expect(kept.map((c) => c.text.slice(25)).sort()).toEqual(['Tomatoes need sun', 'The ferry runs hourly', 'The museum closes on Mondays'].sort());
    expect(memoryIndex.size).toBe(elsewhere + 3);
    expect((await store.threadHistory(hoard.id, 5)).find((e) => e.action === 'merge')?.details).toMatchObject({
      absorbedId: other.id,
      memoryChunks: 2,
      dropped: 1,
    });
    for (let cycle = 0; cycle < 3; cycle++) {
      const empty = await threads.create(ROOM, `Empty ${cycle}`, 'admin');
      const fused = await threads.fuse([hoard.id, empty.id], 'admin');
      await threads.merge(hoard.id, fused.thread.id, 'admin');
      expect(await store.countMemoryChunks(hoard.id)).toBeLessThanOrEqual(3);
    }
    // What fusion copied and merge dropped left the index too: only the hoard holds memory now.
    expect(memoryIndex.size).toBe(elsewhere + (await store.countMemoryChunks(hoard.id)));
  });

  it('refuses one source, the same thread twice and an unknown thread', async () => {
    const a = await threadsApp(closers);
    const x = await threadWith(a, ROOM, 'X', TRAINS);
    expect((await call(a, 'POST', '/api/v1/threads/fuse', { sourceIds: [x.id] }, 400)).error.code).toBe('ERR_BAD_REQUEST');
    expect((await call(a, 'POST', '/api/v1/threads/fuse', { sourceIds: [x.id, x.id] }, 400)).error.code).toBe('ERR_BAD_THREAD_OP');
    expect((await call(a, 'POST', '/api/v1/threads/fuse', { sourceIds: [x.id, 'thr_none'] }, 404)).error.code).toBe('ERR_THREAD_NOT_FOUND');
    expect((await call(a, 'GET', `/api/v1/rooms/${ROOM}/threads`)).threads).toHaveLength(2);
  });
});
