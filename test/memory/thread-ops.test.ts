/**
 * Thread operations through the HTTP API (issue 14): start, merge, split in two steps, unlock,
 * compaction and fusion, each one transaction with a catalogue code on refusal, and every one
 * recorded in the thread's history.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { errors } from '../../src/errors.js';
import { SPLIT_MAX_MESSAGES } from '../../src/memory/threads/thread-service.js';
import { joined, roomsApp, ROOM, OTHER_ROOM } from '../rooms/helpers.js';
import { countedIteration } from '../helpers.js';
import { call, GARDEN, threadsApp, threadWith, TRAINS, type Json } from './thread-helpers.js';
import { createThread } from '../store/new-thread.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

describe('starting and listing threads', () => {
  it('starts a thread beside the main one and lists both with the full thread shape', async () => {
    const a = await threadsApp(closers);
    const { thread } = await call(a, 'POST', `/api/v1/rooms/${ROOM}/threads`, { title: 'Night trains' });
    expect(thread).toMatchObject({
      roomId: ROOM,
      title: 'Night trains',
      status: 'active',
      origin: 'original',
      splitLocked: false,
      isMerged: false,
      weight: 1,
      childIds: [],
      childCount: 0,
    });
    const { threads } = await call(a, 'GET', `/api/v1/rooms/${ROOM}/threads`);
    expect(threads.map((t: Json) => [t.title, t.main])).toEqual([
      ['Main', true],
      ['Night trains', false],
    ]);
    const detail = await call(a, 'GET', `/api/v1/threads/${thread.id}`);
    expect(detail.history.map((e: Json) => e.action)).toEqual(['created']);
    expect(detail.memory).toEqual({ chunks: 0, pending: 0, fused: 0, kept: 0 });
    await call(a, 'POST', `/api/v1/rooms/${ROOM}/threads`, { title: '' }, 400);
    await call(a, 'POST', `/api/v1/rooms/nope_1/threads`, { title: 'x' }, 404);
    expect((await a.inject({ method: 'POST', url: `/api/v1/rooms/${ROOM}/threads`, payload: { title: 'x' } })).statusCode).toBe(401);
  });

  it('counts a title in characters as the docs do: 120 emoji fit, 121 are refused', async () => {
    const a = await threadsApp(closers);
    const { thread } = await call(a, 'POST', `/api/v1/rooms/${ROOM}/threads`, { title: '🚆'.repeat(120) });
    expect(thread.title).toBe('🚆'.repeat(120));
    await call(a, 'POST', `/api/v1/rooms/${ROOM}/threads`, { title: '🚆'.repeat(121) }, 400);
  });

  it('refuses a title that reads as the main thread’s (case, spacing, lookalike letters), whether started, split off or fused', async () => {
    const a = await threadsApp(closers);
    const refused = async (title: string) => (await call(a, 'POST', `/api/v1/rooms/${ROOM}/threads`, { title }, 400)).error;
    // Before, each was a second thread the client showed as the room's main one.
    for (const title of ['Main', 'main', 'MAIN ', ' M a i n', 'Маin', 'Ｍａｉｎ', 'Ma1n'])
      expect(await refused(title), title).toMatchObject({ code: 'ERR_BAD_THREAD_OP', message: expect.stringContaining('reads as “Main”') });
    for (const title of ['Main line', 'Maine', 'Domain']) expect((await call(a, 'POST', `/api/v1/rooms/${ROOM}/threads`, { title })).thread.title).toBe(title);
    const trains = await threadWith(a, ROOM, 'Trains', TRAINS);
    const split = { parts: [{ title: 'main', messageIds: [trains.messageIds[0]] }] };
    expect((await call(a, 'POST', `/api/v1/threads/${trains.id}/split`, split, 400)).error.message).toMatch(/^Cannot do that: parts\[0\]\.title reads as/);
    expect((await call(a, 'GET', `/api/v1/threads/${trains.id}`)).messages).toBe(3);
    // Two titles that join into one reading as Main: the fusion's title says what it is.
    const [ma, inn] = [await threadWith(a, ROOM, 'Ma', GARDEN), await threadWith(a, ROOM, 'in', GARDEN)];
    expect((await call(a, 'POST', '/api/v1/threads/fuse', { sourceIds: [ma.id, inn.id] })).thread.title).toBe('Ma + in (fused)');
    // Cut to the longest title, the mark included.
    const loud = await threadWith(a, ROOM, `in${'!'.repeat(118)}`, GARDEN);
    const long = (await call(a, 'POST', '/api/v1/threads/fuse', { sourceIds: [ma.id, loud.id] })).thread.title as string;
    expect([long.length, long.startsWith('Ma + in!!!'), long.endsWith('… (fused)')]).toEqual([120, true, true]);
  });

  it('lists every active thread and the newest archived ones, with how many are archived in all', async () => {
    const a = await threadsApp(closers);
    const { store } = a.salon;
    await store.ensureMainThread(ROOM);
    for (let i = 1; i <= 53; i++) {
      const id = `thr_arch_${String(i).padStart(2, '0')}`;
      await createThread(store, { id, roomId: ROOM, title: `Archived ${i}` }, 'admin');
      await store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id, status: 'archived' }] });
    }
    await call(a, 'POST', `/api/v1/rooms/${ROOM}/threads`, { title: 'Live' });
    const byDefault = await call(a, 'GET', `/api/v1/rooms/${ROOM}/threads`);
    expect(byDefault.archivedTotal).toBe(53);
    const titles = byDefault.threads.map((t: Json) => t.title);
    expect(titles.filter((t: string) => t.startsWith('Archived'))).toHaveLength(50);
    expect(titles).toEqual(['Main', ...Array.from({ length: 50 }, (_, i) => `Archived ${i + 4}`), 'Live']);
    const none = await call(a, 'GET', `/api/v1/rooms/${ROOM}/threads?archived=0`);
    expect(none.threads.map((t: Json) => t.title)).toEqual(['Main', 'Live']);
    expect(none.archivedTotal).toBe(53);
    expect((await call(a, 'GET', `/api/v1/rooms/${ROOM}/threads?archived=500`)).threads).toHaveLength(55);
    for (const bad of ['501', '-1', 'many'])
      expect((await call(a, 'GET', `/api/v1/rooms/${ROOM}/threads?archived=${bad}`, undefined, 400)).error.code).toBe('ERR_BAD_REQUEST');
  });
});

describe('merge', () => {
  it('moves the absorbed thread’s messages and memory into the survivor, archives and tags it, and records both sides', async () => {
    const a = await threadsApp(closers);
    const trains = await threadWith(a, ROOM, 'Trains', TRAINS);
    const garden = await threadWith(a, ROOM, 'Garden', GARDEN, Date.UTC(2026, 10, 1, 11));
    const { store } = a.salon;
    // Live talk alternating between the two threads.
    const live: string[] = [];
    for (let i = 0; i < 4; i++) {
      const threadId = i % 2 ? garden.id : trains.id;
      const { message } = await store.appendMessage({ roomId: ROOM, threadId, author: { id: 'u_ann', name: 'Ann', kind: 'user' }, text: `live ${i}` });
      live.push(message.id);
    }
    await store.applyThreadChange({
      at: new Date().toISOString(),
      expect: [],
      updateThreads: [
        { id: trains.id, tags: ['travel'], weight: 1.5 },
        { id: garden.id, tags: ['plants'] },
      ],
    });
    const gardenChunks = (await store.scanThreadMemory(garden.id, 0, 100)).map((c) => c.id);
    expect(gardenChunks.length).toBeGreaterThan(0);

    const { thread } = await call(a, 'POST', '/api/v1/threads/merge', { survivorId: trains.id, absorbedId: garden.id });
    expect(thread).toMatchObject({ id: trains.id, origin: 'merged', weight: 1.6, status: 'active' });
    expect(thread.tags).toEqual(['travel', 'plants']);
    // Both threads' messages, in time order.
    const { messages } = await call(a, 'GET', `/api/v1/threads/${trains.id}/messages?limit=100`);
    expect(messages.map((m: Json) => m.id)).toEqual([...trains.messageIds, ...garden.messageIds, ...live]);
    expect(messages.map((m: Json) => m.ts)).toEqual([...messages.map((m: Json) => m.ts)].sort());
    // Memory came along and is searched in the survivor.
    expect((await store.scanThreadMemory(trains.id, 0, 100)).map((c) => c.id)).toEqual(expect.arrayContaining(gardenChunks));
    const hits = await a.salon.memory.search('tomatoes sun hours', { threadId: trains.id, userId: 'u', private: false }, 4);
    expect(hits[0].chunk.text).toContain('Tomatoes');
    expect(await a.salon.memory.search('tomatoes sun hours', { threadId: garden.id, userId: 'u', private: false }, 4)).toEqual([]);

    const absorbed = await call(a, 'GET', `/api/v1/threads/${garden.id}`);
    expect(absorbed.thread).toMatchObject({ status: 'archived', mergedInto: trains.id });
    expect(absorbed.thread.tags).toEqual(['plants', `merged_into:${trains.id}`]);
    expect(absorbed.messages).toBe(0);
    expect(absorbed.history.map((e: Json) => e.action)).toEqual(['created', 'merged_into']);
    // The survivor's summary is regenerated from its messages, in the background.
    await vi.waitFor(async () => expect((await store.getThread(trains.id))!.summary).toMatch(/\w/));
    const survivor = await call(a, 'GET', `/api/v1/threads/${trains.id}`);
    expect(survivor.history.at(-1)).toMatchObject({ actor: 'admin', action: 'merge', details: { absorbedId: garden.id, messages: 5 } });
  });

  it('deletes with a thread the threads merged into it, through merges of merges, and leaves the others', async () => {
    const a = await threadsApp(closers);
    const [x, y, z, w] = [
      await threadWith(a, ROOM, 'X', TRAINS),
      await threadWith(a, ROOM, 'Y', GARDEN),
      await threadWith(a, ROOM, 'Z', GARDEN),
      await threadWith(a, ROOM, 'W', TRAINS),
    ];
    await call(a, 'POST', '/api/v1/threads/merge', { survivorId: y.id, absorbedId: z.id });
    await call(a, 'POST', '/api/v1/threads/merge', { survivorId: x.id, absorbedId: y.id });
    const res = await call(a, 'DELETE', `/api/v1/threads/${x.id}`);
    expect(res).toMatchObject({ deleted: x.id, fusedInto: [] });
    expect([...res.absorbed].sort()).toEqual([y.id, z.id].sort());
    expect(res.messages).toBe(TRAINS.length + 2 * GARDEN.length);
    for (const gone of [x, y, z]) await call(a, 'GET', `/api/v1/threads/${gone.id}`, undefined, 404);
    const { threads } = await call(a, 'GET', `/api/v1/rooms/${ROOM}/threads`);
    expect(threads.map((t: Json) => t.id)).toContain(w.id);
    expect(threads.some((t: Json) => t.mergedInto)).toBe(false);
  });

  it('finds the shells a thread absorbed copying no list per shell: a main thread may absorb thousands', async () => {
    const a = await threadsApp(closers);
    const { store, threads } = a.salon;
    const main = await store.ensureMainThread(ROOM);
    const n = 2_000;
    const shells = Array.from({ length: n }, (_, i) => ({
      id: `thr_shell${i}`,
      roomId: ROOM,
      title: `S${i}`,
      status: 'archived' as const,
      mergedInto: main.id,
    }));
    await store.applyThreadChange({ at: new Date().toISOString(), expect: [], createThreads: shells });
    const { result, elements } = await countedIteration(() => threads.absorbedBy(main));
    expect(result.sort()).toEqual(shells.map((t) => t.id).sort());
    // Each shell's survivor's list copied whole to add it: n² / 2 elements.
    expect(elements).toBeLessThan(50 * n);
  });

  it('rewires bridges: the absorbed thread’s move to the survivor, and theirs disappears', async () => {
    const a = await threadsApp(closers);
    const [x, y, z] = [await threadWith(a, ROOM, 'X', TRAINS), await threadWith(a, ROOM, 'Y', GARDEN), await threadWith(a, ROOM, 'Z', GARDEN)];
    await a.salon.store.applyThreadChange({
      at: new Date().toISOString(),
      expect: [],
      setBridges: [
        { threadId: x.id, otherId: y.id, weight: 0.9 },
        { threadId: y.id, otherId: z.id, weight: 0.7 },
      ],
    });
    await call(a, 'POST', '/api/v1/threads/merge', { survivorId: x.id, absorbedId: y.id });
    expect((await call(a, 'GET', `/api/v1/threads/${x.id}`)).bridges).toEqual([{ threadId: x.id, otherId: z.id, weight: 0.7 }]);
    expect((await call(a, 'GET', `/api/v1/threads/${z.id}`)).bridges).toEqual([{ threadId: z.id, otherId: x.id, weight: 0.7 }]);
    expect((await call(a, 'GET', `/api/v1/threads/${y.id}`)).bridges).toEqual([]);
  });

  it('finishes a committed merge when the embedder is down: the room is told, and what is said in the absorbed thread goes to the survivor', async () => {
    let down = false;
    class FlakyEmbedder extends LocalEmbedder {
      override async embed(...args: Parameters<LocalEmbedder['embed']>): Promise<Float32Array[]> {
        if (down) throw new errors.ERR_AI_UNAVAILABLE('the model server is down');
        return super.embed(...args);
      }
    }
    const t = await roomsApp({}, { embedder: new FlakyEmbedder() });
    closers.push(t.close);
    const a = t.app;
    const trains = await threadWith(a, ROOM, 'Trains', TRAINS);
    const garden = await threadWith(a, ROOM, 'Garden', GARDEN);
    down = true;
    // Said while the model server is down: remembered without a vector, indexed at the next start.
    await threadWith(a, ROOM, 'Flowers', [['Bo', 'Marigolds keep the aphids off too.']]).then(({ id }) =>
      call(a, 'POST', '/api/v1/threads/merge', { survivorId: garden.id, absorbedId: id }),
    );
    const { client } = await joined(a, 'Ann');
    await call(a, 'POST', '/api/v1/threads/merge', { survivorId: trains.id, absorbedId: garden.id });
    await client.next('message', (f) => f.message.text.includes('was merged into'));
    client.send({ type: 'say', text: 'Do sunflowers need as much sun?', clientId: 'c1', threadId: garden.id });
    const echo = await client.next('message', (f) => f.message.clientId === 'c1');
    expect(echo.message.threadId).toBe(trains.id);
    // The survivor holds the garden's memory: what has a vector is indexed, the passage said while
    // the model server was down is not (the next start's load embeds it), and the archived thread holds none.
    const { memory, memoryIndex, store } = a.salon;
    const held = await store.scanThreadMemory(trains.id, 0, 100, false);
    expect(held.some((c) => c.text.includes('Marigolds'))).toBe(true);
    const heads = memoryIndex.heads!(held.map((c) => c.id));
    held.forEach((c, i) => expect(heads[i] !== undefined, c.text).toBe(!c.text.includes('Marigolds')));
    expect(await memory.stats(garden.id)).toMatchObject({ chunks: 0 });
    // The failed embedding is counted in the metrics.
    const failures = await a.salon.metrics.registry.getSingleMetric('salon_embedding_failures_total')!.get();
    expect(failures.values.find((v) => v.labels.index === 'memory')?.value).toBeGreaterThanOrEqual(1);
  });

  it('finishes a committed merge when the memory index refuses the moved passages: the room is told, and its messages go to the survivor', async () => {
    const a = await threadsApp(closers);
    const trains = await threadWith(a, ROOM, 'Trains', TRAINS);
    const garden = await threadWith(a, ROOM, 'Garden', GARDEN);
    const { memory, rooms } = a.salon;
    vi.spyOn(memory, 'reindex').mockRejectedValueOnce(new errors.ERR_INDEX_FULL('the index is full'));
    const merged = vi.spyOn(rooms, 'threadMerged');
    const { client } = await joined(a, 'Ann');
    // Stored before the index is told: the refusal answered an error for a merge that was made, and the room never heard of it.
    const r = await call(a, 'POST', '/api/v1/threads/merge', { survivorId: trains.id, absorbedId: garden.id });
    expect(r.thread.id).toBe(trains.id);
    expect(merged).toHaveBeenCalledWith(ROOM, garden.id, trains.id);
    await client.next('message', (f) => f.message.text.includes('was merged into'));
  });

  it('takes along what the absorbed thread remembered after the merge read its memory, searchable in the survivor', async () => {
    const a = await threadsApp(closers);
    const trains = await threadWith(a, ROOM, 'Trains', TRAINS);
    const garden = await threadWith(a, ROOM, 'Garden', GARDEN);
    const { embedder, memory, memoryIndex, store } = a.salon;
    const late = 'Marigolds keep the aphids off the tomatoes too.';
    // Between the merge's read of the garden's memory and its commit, the garden remembers one more passage.
    const apply = store.applyThreadChange.bind(store);
    let intercepted = false;
    store.applyThreadChange = async (change) => {
      store.applyThreadChange = apply;
      intercepted = true;
      await call(a, 'POST', `/api/v1/rooms/${ROOM}/import`, {
        threadId: garden.id,
        messages: [{ author: { name: 'Bo' }, text: late, ts: new Date().toISOString() }],
      });
      await memory.idle();
      return apply(change);
    };
    await call(a, 'POST', '/api/v1/threads/merge', { survivorId: trains.id, absorbedId: garden.id });
    expect(intercepted).toBe(true);
    const held = await store.scanThreadMemory(trains.id, 0, 100, false);
    const lateChunk = held.find((c) => c.text.includes('Marigolds'));
    expect(lateChunk).toBeDefined();
    expect(await store.countMemoryChunks(garden.id)).toBe(0);
    const [vector] = await embedder.embed([late]);
    const inTrains = await memoryIndex.search(vector, 10, { scopes: [trains.id] });
    expect(inTrains.map((h) => h.rowId)).toContain(lateChunk!.id);
    expect(await memoryIndex.search(vector, 10, { scopes: [garden.id] })).toEqual([]);
    const found = await memory.search('What keeps the aphids off?', { threadId: trains.id, userId: 'u_x', private: false }, 6);
    expect(found.map((h) => h.chunk.id)).toContain(lateChunk!.id);
  });

  it('remembers a window open in the absorbed thread when it closes after the merge in the survivor', async () => {
    const a = await threadsApp(closers);
    const trains = await threadWith(a, ROOM, 'Trains', TRAINS);
    const garden = await threadWith(a, ROOM, 'Garden', GARDEN);
    const { client } = await joined(a, 'Ann');
    client.send({ type: 'say', text: 'Marigolds keep the aphids off the tomatoes too.', clientId: 'c1', threadId: garden.id });
    await client.next('message', (f) => f.message.clientId === 'c1');
    await call(a, 'POST', '/api/v1/threads/merge', { survivorId: trains.id, absorbedId: garden.id });
    const { memory, store } = a.salon;
    memory.flush();
    await memory.idle();
    const texts = async (id: string) => (await store.scanThreadMemory(id, 0, 100, false)).map((c) => c.text).join('\n');
    expect(await texts(trains.id)).toContain('Marigolds');
    expect(await store.countMemoryChunks(garden.id)).toBe(0);
  });

  it('refuses locked, archived, main-absorbing, cross-room and self merges, changing nothing', async () => {
    const a = await threadsApp(closers);
    const x = await threadWith(a, ROOM, 'X', TRAINS);
    const y = await threadWith(a, ROOM, 'Y', GARDEN);
    const other = await threadWith(a, OTHER_ROOM, 'Elsewhere', GARDEN);
    const main = await a.salon.store.ensureMainThread(ROOM);
    const merge = (survivorId: string, absorbedId: string, status: number) => call(a, 'POST', '/api/v1/threads/merge', { survivorId, absorbedId }, status);
    expect((await merge(x.id, x.id, 400)).error.code).toBe('ERR_BAD_THREAD_OP');
    expect((await merge(x.id, main.id, 400)).error.code).toBe('ERR_BAD_THREAD_OP');
    expect((await merge(x.id, other.id, 400)).error.message).toContain('fuse');
    expect((await merge(x.id, 'thr_nope', 404)).error.code).toBe('ERR_THREAD_NOT_FOUND');
    const { threads } = await call(a, 'POST', `/api/v1/threads/${y.id}/split`, { parts: [{ title: 'Part', messageIds: [y.messageIds[0]] }], lock: 'force' });
    const locked = threads[0].id;
    expect((await merge(x.id, locked, 409)).error.code).toBe('ERR_THREAD_LOCKED');
    expect((await merge(locked, x.id, 409)).error.code).toBe('ERR_THREAD_LOCKED');
    await merge(main.id, y.id, 200);
    expect((await merge(x.id, y.id, 409)).error.code).toBe('ERR_THREAD_ARCHIVED');
    expect((await call(a, 'GET', `/api/v1/threads/${x.id}`)).messages).toBe(3);
  });

  it('archives a thread only by merging it: no other operation changes a status, so every archived thread has a survivor', async () => {
    const a = await threadsApp(closers);
    const { store } = a.salon;
    const writes = vi.spyOn(store, 'applyThreadChange');
    const x = await threadWith(a, ROOM, 'X', TRAINS);
    const y = await threadWith(a, ROOM, 'Y', GARDEN);
    const { threads } = await call(a, 'POST', `/api/v1/threads/${y.id}/split`, { parts: [{ title: 'Part', messageIds: [y.messageIds[0]] }], lock: 'force' });
    await call(a, 'POST', `/api/v1/threads/${threads[0].id}/unlock`);
    await call(a, 'POST', `/api/v1/threads/${x.id}/compact`);
    const fused = (await call(a, 'POST', '/api/v1/threads/fuse', { sourceIds: [x.id, y.id] })).thread;
    await call(a, 'PUT', `/api/v1/threads/${fused.id}/config`, { privileged: true, enable_chat_history_rag: false });
    await call(a, 'POST', '/api/v1/threads/merge', { survivorId: fused.id, absorbedId: threads[0].id });
    await call(a, 'POST', '/api/v1/threads/merge', { survivorId: x.id, absorbedId: fused.id });
    await call(a, 'DELETE', `/api/v1/threads/${y.id}`);
    const statusWrites = writes.mock.calls.flatMap(([change]) => (change.updateThreads ?? []).filter((u) => u.status !== undefined));
    expect(statusWrites.map((u) => [u.id, u.status, u.mergedInto])).toEqual([
      [threads[0].id, 'archived', fused.id],
      [fused.id, 'archived', x.id],
    ]);
    const archived = (await store.listThreads(ROOM)).filter((t) => t.status !== 'active');
    expect(new Map(archived.map((t) => [t.id, t.mergedInto]))).toEqual(
      new Map([
        [threads[0].id, fused.id],
        [fused.id, x.id],
      ]),
    );
  });
});

describe('split', () => {
  it('lists messages (step 1), then makes locked children with their messages and rebuilt memory (step 2)', async () => {
    const a = await threadsApp(closers);
    const t = await threadWith(a, ROOM, 'Mixed', [...TRAINS, ...GARDEN]);
    const listing = await call(a, 'GET', `/api/v1/threads/${t.id}/split`);
    expect(listing.messages.map((m: Json) => [m.id, m.role, m.author])).toEqual(t.messageIds.map((id, i) => [id, 'user', [...TRAINS, ...GARDEN][i][0]]));
    expect(listing.messages[0].text).toBe(TRAINS[0][1]);

    const r = await call(a, 'POST', `/api/v1/threads/${t.id}/split`, { parts: [{ title: 'Garden', messageIds: t.messageIds.slice(3) }] });
    const [child] = r.threads;
    expect(child).toMatchObject({ title: 'Garden', origin: 'split', parentId: t.id, splitLocked: true, splitLockedUntil: 'compaction', weight: 0.8 });
    expect(r.parent).toMatchObject({ childIds: [child.id], childCount: 1 });
    const parentMessages = (await call(a, 'GET', `/api/v1/threads/${t.id}/messages`)).messages.map((m: Json) => m.id);
    const childMessages = (await call(a, 'GET', `/api/v1/threads/${child.id}/messages`)).messages.map((m: Json) => m.id);
    expect(parentMessages).toEqual(t.messageIds.slice(0, 3));
    expect(childMessages).toEqual(t.messageIds.slice(3));
    await a.salon.memory.idle();
    // The window that straddled both parts is rebuilt on each side.
    const childMemory = await a.salon.store.scanThreadMemory(child.id, 0, 100);
    const parentMemory = await a.salon.store.scanThreadMemory(t.id, 0, 100);
    expect(childMemory.flatMap((c) => c.messageIds).sort()).toEqual(t.messageIds.slice(3).sort());
    expect(parentMemory.flatMap((c) => c.messageIds).sort()).toEqual(t.messageIds.slice(0, 3).sort());
    const found = await a.salon.memory.search('basil pests', { threadId: child.id, userId: 'u', private: false }, 2);
    expect(found[0].chunk.text).toContain('Basil');
    expect((await call(a, 'GET', `/api/v1/threads/${t.id}`)).bridges).toEqual([{ threadId: t.id, otherId: child.id, weight: 0.8 }]);
    expect((await call(a, 'GET', `/api/v1/threads/${t.id}`)).history.at(-1)).toMatchObject({ action: 'split', details: { lock: 'compaction' } });
    expect((await call(a, 'GET', `/api/v1/threads/${child.id}`)).history).toMatchObject([{ action: 'split_off', details: { parentId: t.id } }]);
  });

  it('rebuilds straddling windows from the rows it read, regrouping their messages without copying a list per message', async () => {
    const a = await threadsApp(closers);
    const { store, threads, memory } = a.salon;
    const t = await threads.create(ROOM, 'Long', 'admin');
    const n = 1_000;
    const author = { id: 'u_ann', name: 'Ann', kind: 'user' as const };
    const at = (i: number) => new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString();
    const ids = (await store.appendMessages(Array.from({ length: n }, (_, i) => ({ roomId: ROOM, threadId: t.id, author, text: `line ${i}`, ts: at(i) })))).map(
      (s) => s.message.id,
    );
    // Windows of two messages each, every one of which the split parts.
    const windows: number[] = [];
    for (let i = 0; i < n; i += 2) {
      const window = {
        roomId: ROOM,
        threadId: t.id,
        kind: 'window' as const,
        authors: ['Ann'],
        firstTs: at(i),
        lastTs: at(i + 1),
        privileged: false,
        owner: null,
      };
      windows.push((await store.addMemoryChunk({ ...window, messageIds: [ids[i], ids[i + 1]], text: `Ann: line ${i}. Ann: line ${i + 1}.` }, at(i))).id);
    }
    await memory.load();
    const read = vi.spyOn(store, 'getMemoryChunks');
    const rebuilt = new Set(windows);
    try {
      const { result, elements } = await countedIteration(() =>
        threads.split(t.id, [{ title: 'Odd', messageIds: ids.filter((_, i) => i % 2) }], 'compaction', 'admin'),
      );
      expect(result.threads[0].title).toBe('Odd');
      // Each straddled message's thread's list copied whole to add it: n² / 4 elements.
      expect(elements).toBeLessThan(100 * n);
      // The windows it deletes were read again, with their vectors (8 KB each), only for their message ids.
      expect(read.mock.calls.flatMap(([chunkIds]) => chunkIds).filter((id) => rebuilt.has(id))).toEqual([]);
    } finally {
      read.mockRestore();
    }
    await memory.idle();
    const memoryOf = async (id: string) => (await store.scanThreadMemory(id, 0, 10_000)).flatMap((c) => c.messageIds).sort();
    expect(await memoryOf(t.id)).toEqual(ids.filter((_, i) => i % 2 === 0).sort());
  });

  it('takes along what was filed in the thread between the split reading its memory and committing: a whole window moves, a parted one is windowed again', async () => {
    const a = await threadsApp(closers);
    const { store, threads, memory } = a.salon;
    const t = await threads.create(ROOM, 'Mixed', 'admin');
    const author = { id: 'u_ann', name: 'Ann', kind: 'user' as const };
    const at = (i: number) => new Date(Date.UTC(2026, 10, 1, 10, i)).toISOString();
    const lines = [...TRAINS, ...GARDEN].map(([, text]) => text);
    const ids = (await store.appendMessages(lines.map((text, i) => ({ roomId: ROOM, threadId: t.id, author, text, ts: at(i) })))).map((s) => s.message.id);
    const window = (from: number, to: number) => ({
      roomId: ROOM,
      threadId: t.id,
      kind: 'window' as const,
      text: lines
        .slice(from, to)
        .map((l) => `Ann: ${l}`)
        .join('\n'),
      messageIds: ids.slice(from, to),
      authors: ['Ann'],
      firstTs: at(from),
      lastTs: at(to - 1),
      privileged: false,
      owner: null,
      live: true as const,
    });
    const apply = store.applyThreadChange.bind(store);
    const late: number[] = [];
    // Two windows filed once the split has read the thread's memory, before its change commits.
    const writes = vi.spyOn(store, 'applyThreadChange').mockImplementation(async (change) => {
      if (change.moveMessages && !late.length)
        for (const [from, to] of [
          [4, 6],
          [2, 4],
        ])
          late.push((await store.addMemoryChunk(window(from, to), at(9))).id);
      return apply(change);
    });
    let child: string;
    try {
      child = (await threads.split(t.id, [{ title: 'Garden', messageIds: ids.slice(3) }], 'compaction', 'admin')).threads[0].id;
    } finally {
      writes.mockRestore();
    }
    memory.flush();
    await memory.idle();
    const [whole, parted] = late;
    const memoryOf = async (id: string) => await store.scanThreadMemory(id, 0, 100);
    // Before, both stayed in the parent, citing there messages said in the child now.
    expect((await memoryOf(t.id)).flatMap((c) => c.messageIds)).toEqual([ids[2]]);
    expect((await memoryOf(child)).map((c) => [c.id === whole ? 'whole' : c.id === parted ? 'parted' : 'rebuilt', c.messageIds])).toEqual([
      ['whole', ids.slice(4, 6)],
      ['rebuilt', [ids[3]]],
    ]);
    const found = await memory.search('basil planted next to tomatoes keeps pests away', { threadId: child, userId: 'u', private: false }, 3);
    expect(found[0].chunk.id).toBe(whole);
  });

  it('windows again in the parent a straddling window’s messages older than the newest SPLIT_MAX_MESSAGES it read', async () => {
    const a = await threadsApp(closers);
    const { store, threads, memory } = a.salon;
    const t = await threads.create(ROOM, 'Long', 'admin');
    const n = SPLIT_MAX_MESSAGES + 2;
    const author = { id: 'u_ann', name: 'Ann', kind: 'user' as const };
    const at = (i: number) => new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString();
    const text = (i: number) => (i === 1 ? 'The ferry to Hvar leaves at dawn.' : `line ${i}`);
    const ids = (await store.appendMessages(Array.from({ length: n }, (_, i) => ({ roomId: ROOM, threadId: t.id, author, text: text(i), ts: at(i) })))).map(
      (s) => s.message.id,
    );
    // One window of messages 1 and 2: the split reads the newest SPLIT_MAX_MESSAGES (2 onwards) and takes 2.
    const window = { roomId: ROOM, threadId: t.id, kind: 'window' as const, authors: ['Ann'], privileged: false, owner: null };
    await store.addMemoryChunk({ ...window, firstTs: at(1), lastTs: at(2), messageIds: [ids[1], ids[2]], text: `Ann: ${text(1)} Ann: line 2.` }, at(2));
    await memory.load();
    const r = await threads.split(t.id, [{ title: 'Two', messageIds: [ids[2]] }], 'compaction', 'admin');
    await memory.idle();
    const memoryOf = async (id: string) => (await store.scanThreadMemory(id, 0, 100)).flatMap((c) => c.messageIds);
    expect(await memoryOf(r.threads[0].id)).toEqual([ids[2]]);
    // Message 1 stayed in the parent: its window was deleted, and it was remembered nowhere.
    expect(await memoryOf(t.id)).toEqual([ids[1]]);
    const found = await memory.search('ferry to Hvar', { threadId: t.id, userId: 'u', private: false }, 1);
    expect(found[0].chunk.text).toContain('Hvar');
    // Message 0 is now the one older than the newest SPLIT_MAX_MESSAGES. The split is committed before
    // such messages are read: a read that fails fails nothing, and the room is still told.
    await store.addMemoryChunk({ ...window, firstTs: at(3), lastTs: at(4), messageIds: [ids[0], ids[3]], text: 'Ann: line 0. Ann: line 3.' }, at(4));
    await memory.load();
    const read = store.threadMessages.bind(store);
    vi.spyOn(store, 'threadMessages').mockImplementation((id, limit, before) =>
      before === undefined ? read(id, limit) : Promise.reject(new Error('disk gone')),
    );
    const moved = vi.spyOn(a.salon.rooms, 'messagesMoved');
    const again = await threads.split(t.id, [{ title: 'Three', messageIds: [ids[3]] }], 'compaction', 'admin');
    expect(again.threads[0].title).toBe('Three');
    expect(moved).toHaveBeenCalledWith(ROOM, [{ ids: [ids[3]], threadId: again.threads[0].id }]);
  });

  it('finishes a committed split when the memory index refuses to drop what it deleted: the room is told, the window rebuilt', async () => {
    const a = await threadsApp(closers);
    const t = await threadWith(a, ROOM, 'Mixed', [...TRAINS, ...GARDEN]);
    const { memory, rooms, store } = a.salon;
    vi.spyOn(memory, 'forget').mockRejectedValueOnce(new Error('the index worker is gone'));
    const moved = vi.spyOn(rooms, 'messagesMoved');
    // Stored before the index is told: the refusal answered an error for a split that was made, and the room never heard of it.
    const r = await call(a, 'POST', `/api/v1/threads/${t.id}/split`, { parts: [{ title: 'Garden', messageIds: t.messageIds.slice(3) }] });
    expect(moved).toHaveBeenCalledWith(ROOM, [{ ids: t.messageIds.slice(3), threadId: r.threads[0].id }]);
    await memory.idle();
    expect((await store.scanThreadMemory(r.threads[0].id, 0, 100)).flatMap((c) => c.messageIds).sort()).toEqual(t.messageIds.slice(3).sort());
  });

  it('refuses unknown ids, a message in two parts and empty parts, changing nothing', async () => {
    const a = await threadsApp(closers);
    const t = await threadWith(a, ROOM, 'Mixed', [...TRAINS, ...GARDEN]);
    const split = (body: unknown) => call(a, 'POST', `/api/v1/threads/${t.id}/split`, body, 400);
    expect((await split({ parts: [{ title: 'A', messageIds: ['m_nope'] }] })).error.message).toContain('m_nope');
    expect(
      (
        await split({
          parts: [
            { title: 'A', messageIds: [t.messageIds[0]] },
            { title: 'B', messageIds: [t.messageIds[0]] },
          ],
        })
      ).error.message,
    ).toContain('parts[0] and parts[1]');
    expect((await split({ parts: [{ title: 'A', messageIds: [t.messageIds[0], t.messageIds[0]] }] })).error.message).toContain(
      `message ${t.messageIds[0]} is twice in parts[0]`,
    );
    expect((await split({ parts: [{ title: 'A', messageIds: [] }] })).error.code).toBe('ERR_BAD_REQUEST');
    expect((await split({ parts: [{ title: 'A', messageIds: [t.messageIds[0]] }], lock: 'forever' })).error.code).toBe('ERR_BAD_REQUEST');
    expect((await call(a, 'GET', `/api/v1/rooms/${ROOM}/threads`)).threads).toHaveLength(2);
    expect((await call(a, 'GET', `/api/v1/threads/${t.id}`)).messages).toBe(6);
  });

  it('unlock releases any lock; compaction releases only its own', async () => {
    const a = await threadsApp(closers);
    const t = await threadWith(a, ROOM, 'Mixed', [...TRAINS, ...GARDEN]);
    const { threads } = await call(a, 'POST', `/api/v1/threads/${t.id}/split`, {
      parts: [
        { title: 'A', messageIds: [t.messageIds[0]] },
        { title: 'B', messageIds: [t.messageIds[1]] },
      ],
      lock: 'agent_release',
    });
    const [first, second] = threads;
    expect((await call(a, 'POST', `/api/v1/threads/${first.id}/compact`, {})).released).toBe(false);
    expect((await call(a, 'GET', `/api/v1/threads/${first.id}`)).thread.splitLockedUntil).toBe('agent_release');
    expect((await call(a, 'POST', `/api/v1/threads/${first.id}/unlock`)).thread.splitLocked).toBe(false);
    expect((await call(a, 'POST', `/api/v1/threads/${first.id}/unlock`, undefined, 400)).error.code).toBe('ERR_BAD_THREAD_OP');
    expect((await call(a, 'GET', `/api/v1/threads/${first.id}`)).history.map((e: Json) => e.action)).toEqual(['split_off', 'compact', 'unlock']);

    const { threads: again } = await call(a, 'POST', `/api/v1/threads/${t.id}/split`, { parts: [{ title: 'C', messageIds: [t.messageIds[2]] }] });
    const compacted = await call(a, 'POST', `/api/v1/threads/${again[0].id}/compact`);
    expect(compacted).toMatchObject({ released: true, thread: { splitLocked: false } });
    expect(second.splitLockedUntil).toBe('agent_release');
  });
});

describe('split of messages still in an open memory window', () => {
  it('windows them in the thread they went to, citing them there, and keeps the rest in the parent’s window', async () => {
    const a = await threadsApp(closers);
    const { store, threads, memory } = a.salon;
    const t = await threads.create(ROOM, 'Mixed', 'admin');
    const author = { id: 'u_ann', name: 'Ann', kind: 'user' as const };
    const lines = [...TRAINS, ...GARDEN].slice(2, 5).map(([, text]) => text);
    const stored = await store.appendMessages(
      lines.map((text, i) => ({ roomId: ROOM, threadId: t.id, author, text, ts: new Date(Date.UTC(2026, 10, 1, 10, i)).toISOString() })),
    );
    for (const { message } of stored) memory.onMessage(message);
    const ids = stored.map((s) => s.message.id);
    expect((await memory.stats(t.id)).pending).toBe(3);
    const r = await threads.split(t.id, [{ title: 'Garden', messageIds: ids.slice(1) }], 'compaction', 'admin');
    const child = r.threads[0].id;
    expect((await memory.stats(t.id)).pending).toBe(1);
    expect((await memory.stats(child)).pending).toBe(2);
    memory.flush();
    await memory.idle();
    // Before, the parent's window kept all three and cited the child's messages; the child remembered none.
    expect((await store.scanThreadMemory(t.id, 0, 10)).map((c) => c.messageIds)).toEqual([ids.slice(0, 1)]);
    expect((await store.scanThreadMemory(child, 0, 10)).map((c) => c.messageIds)).toEqual([ids.slice(1)]);
  });
});

describe('thread config', () => {
  it('a privileged thread remembers each exchange for its asker alone; the switch and the flag are in the thread', async () => {
    const a = await threadsApp(closers);
    const t = await threadWith(a, ROOM, 'Trains', TRAINS);
    const set = await call(a, 'PUT', `/api/v1/threads/${t.id}/config`, { privileged: true });
    expect(set.thread.config).toEqual({ enable_chat_history_rag: true, privileged: true });
    await call(a, 'PUT', `/api/v1/threads/${t.id}/config`, {}, 400);
    const asked = await a.inject({
      method: 'POST',
      url: `/api/v1/rooms/${ROOM}/ask`,
      payload: { text: 'When does the night train to Vienna leave?', threadId: t.id, name: 'Ann' },
    });
    expect(asked.statusCode, asked.body).toBe(200);
    await a.salon.memory.idle();
    const exchanges = (await a.salon.store.scanThreadMemory(t.id, 0, 100)).filter((c) => c.kind === 'exchange');
    expect(exchanges).toHaveLength(1);
    const owner = exchanges[0].owner!;
    expect(exchanges[0].privileged).toBe(true);
    const search = (userId: string, isPrivate: boolean) => a.salon.memory.search('night train Vienna', { threadId: t.id, userId, private: isPrivate }, 8);
    expect((await search(owner, false)).some((h) => h.chunk.kind === 'exchange')).toBe(false);
    expect((await search('u_other', true)).some((h) => h.chunk.kind === 'exchange')).toBe(false);
    expect((await search(owner, true)).some((h) => h.chunk.kind === 'exchange')).toBe(true);
  });

  it('keeps a privileged exchange whole and its asker’s alone when a split parts its question from its answer', async () => {
    const a = await threadsApp(closers);
    const t = await threadWith(a, ROOM, 'Trains', TRAINS);
    await call(a, 'PUT', `/api/v1/threads/${t.id}/config`, { privileged: true });
    const asked = await a.inject({
      method: 'POST',
      url: `/api/v1/rooms/${ROOM}/ask`,
      payload: { text: 'When does the night train to Vienna leave?', threadId: t.id, name: 'Ann' },
    });
    expect(asked.statusCode, asked.body).toBe(200);
    await a.salon.memory.idle();
    const [exchange] = (await a.salon.store.scanThreadMemory(t.id, 0, 100)).filter((c) => c.kind === 'exchange');
    const [questionId, answerId] = exchange.messageIds;
    expect(answerId).toBe(asked.json().message.id);

    // The question goes to a thread of its own; the answer stays.
    const { threads } = await call(a, 'POST', `/api/v1/threads/${t.id}/split`, { parts: [{ title: 'Vienna', messageIds: [questionId] }] });
    await a.salon.memory.idle();
    const exchangesOf = async (id: string) => (await a.salon.store.scanThreadMemory(id, 0, 100)).filter((c) => c.kind === 'exchange');
    expect(await exchangesOf(t.id)).toEqual([]);
    expect(await exchangesOf(threads[0].id)).toEqual([
      expect.objectContaining({ text: exchange.text, messageIds: [questionId, answerId], privileged: true, owner: exchange.owner }),
    ]);
    const search = (userId: string, isPrivate: boolean) =>
      a.salon.memory.search('night train Vienna', { threadId: threads[0].id, userId, private: isPrivate }, 8);
    expect((await search(exchange.owner!, true)).filter((h) => h.chunk.kind === 'exchange').map((h) => h.chunk.text)).toEqual([exchange.text]);
    expect((await search(exchange.owner!, false)).some((h) => h.chunk.kind === 'exchange')).toBe(false);
    expect((await search('u_other', true)).some((h) => h.chunk.kind === 'exchange')).toBe(false);
  });
});

describe('privileged threads through merges and fusions', () => {
  it('keeps a privileged thread’s choice in the survivor of a merge and in a fusion of it', async () => {
    const a = await threadsApp(closers);
    const open = await threadWith(a, ROOM, 'Trains', TRAINS);
    const secret = await threadWith(a, ROOM, 'Garden', GARDEN);
    await call(a, 'PUT', `/api/v1/threads/${secret.id}/config`, { privileged: true });
    const fused = await call(a, 'POST', '/api/v1/threads/fuse', { sourceIds: [open.id, secret.id] });
    expect(fused.thread.config).toEqual({ enable_chat_history_rag: true, privileged: true });
    const plain = await threadWith(a, ROOM, 'Bikes', TRAINS);
    expect((await call(a, 'POST', '/api/v1/threads/fuse', { sourceIds: [open.id, plain.id] })).thread.config.privileged).toBe(false);
    const { thread } = await call(a, 'POST', '/api/v1/threads/merge', { survivorId: open.id, absorbedId: secret.id });
    expect(thread.config.privileged).toBe(true);
  });

  it('keeps memory off in a fusion or a merge survivor when either thread had it off', async () => {
    const a = await threadsApp(closers);
    const off = await threadWith(a, ROOM, 'Trains', TRAINS);
    const on = await threadWith(a, ROOM, 'Garden', GARDEN);
    await call(a, 'PUT', `/api/v1/threads/${off.id}/config`, { enable_chat_history_rag: false });
    const fused = await call(a, 'POST', '/api/v1/threads/fuse', { sourceIds: [on.id, off.id] });
    expect(fused.thread.config).toEqual({ enable_chat_history_rag: false, privileged: false });
    const bikes = await threadWith(a, ROOM, 'Bikes', TRAINS);
    expect((await call(a, 'POST', '/api/v1/threads/fuse', { sourceIds: [on.id, bikes.id] })).thread.config.enable_chat_history_rag).toBe(true);
    const { thread } = await call(a, 'POST', '/api/v1/threads/merge', { survivorId: on.id, absorbedId: off.id });
    expect(thread.config.enable_chat_history_rag).toBe(false);
  });
});

describe('compaction', () => {
  it('makes near-duplicate passages one and summarises old long exchanges, keeping the newest as they are', async () => {
    const a = await threadsApp(closers);
    const t = await threadWith(a, ROOM, 'Trains', TRAINS);
    const { store, memory, threads } = a.salon;
    const cities =
      'Vienna Munich Zurich Prague Krakow Budapest Zagreb Ljubljana Venice Milan Turin Lyon Paris Brussels Amsterdam Hamburg Berlin Warsaw Vilnius Riga Tallinn Oslo'.split(
        ' ',
      );
    const sights = 'castle river bridge market museum cathedral harbour tower garden square'.split(' ');
    // Long exchanges about different cities: alike in form, different in what they say.
    const long = (i: number) =>
      `Q: What can I see from the night train to ${cities[i]}?\nA: ${sights
        .map((s) => `The ${cities[i]} ${s} is lovely at dawn, seen from the ${cities[i]} line.`)
        .join(' ')
        .repeat(2)}`;
    const chunk = (text: string, day: number) => ({
      threadId: t.id,
      roomId: ROOM,
      kind: 'exchange' as const,
      text,
      messageIds: [],
      authors: ['Ann', 'Salon AI'],
      firstTs: new Date(Date.UTC(2026, 10, day)).toISOString(),
      lastTs: new Date(Date.UTC(2026, 10, day)).toISOString(),
      privileged: false,
      owner: null,
    });
    for (let i = 0; i < 22; i++) await store.addMemoryChunk(chunk(long(i), 1 + (i % 20)), new Date().toISOString());
    await store.addMemoryChunk(chunk('Q: When does the train leave?\nA: At 22:10 from platform 4.', 21), new Date().toISOString());
    await store.addMemoryChunk(chunk('Q: when does the train leave\nA: At 22:10, from platform 4!', 22), new Date().toISOString());
    await memory.load();
    const before = await store.countMemoryChunks(t.id);
    const r = await threads.compact(t.id, 'admin');
    expect(r).toMatchObject({ fused: 1, summarised: 2, released: false });
    const after = await store.scanThreadMemory(t.id, 0, 100);
    expect(after).toHaveLength(before - 1);
    const exchanges = after.filter((c) => c.kind === 'exchange');
    expect(exchanges.filter((c) => c.text.length < 900 && c.text.includes('lovely'))).toHaveLength(2);
    expect(exchanges.filter((c) => c.text.includes('22:10'))).toHaveLength(1);
    const found = await memory.search('when does the train leave platform', { threadId: t.id, userId: 'u', private: false }, 3);
    expect(found[0].chunk.text).toContain('22:10');
    expect((await store.threadHistory(t.id, 5)).at(-1)).toMatchObject({ action: 'compact', details: { fused: 1, summarised: 2 } });
  });

  it('refuses an archived thread as config does (409 ERR_THREAD_ARCHIVED), writing nothing and releasing no lock on the shell', async () => {
    const a = await threadsApp(closers);
    const { store } = a.salon;
    const x = await threadWith(a, ROOM, 'X', TRAINS);
    const y = await threadWith(a, ROOM, 'Y', GARDEN);
    await call(a, 'POST', '/api/v1/threads/merge', { survivorId: x.id, absorbedId: y.id });
    // A shell still marked with a compaction lock: before, compacting it released the lock and told the room.
    await store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id: y.id, splitLockedUntil: 'compaction' }] });
    const shell = (await store.getThread(y.id))!;
    const history = await store.threadHistory(y.id, 50);
    const refused = await call(a, 'POST', `/api/v1/threads/${y.id}/compact`, {}, 409);
    expect(refused.error).toMatchObject({ code: 'ERR_THREAD_ARCHIVED', message: expect.stringContaining(`merged into ${x.id}`) });
    expect(await store.getThread(y.id)).toMatchObject({ version: shell.version, splitLockedUntil: 'compaction' });
    expect(await store.threadHistory(y.id, 50)).toEqual(history);
  });
});

describe('unlock', () => {
  it('refuses an archived thread as compact does (409 ERR_THREAD_ARCHIVED), writing nothing and telling nobody', async () => {
    const a = await threadsApp(closers);
    const { store } = a.salon;
    const x = await threadWith(a, ROOM, 'X', TRAINS);
    const y = await threadWith(a, ROOM, 'Y', GARDEN);
    await call(a, 'POST', '/api/v1/threads/merge', { survivorId: x.id, absorbedId: y.id });
    // A shell still marked with a lock: before, unlocking it released the lock on the shell and told the room.
    await store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id: y.id, splitLockedUntil: 'force' }] });
    const shell = (await store.getThread(y.id))!;
    const history = await store.threadHistory(y.id, 50);
    const refused = await call(a, 'POST', `/api/v1/threads/${y.id}/unlock`, undefined, 409);
    expect(refused.error).toMatchObject({ code: 'ERR_THREAD_ARCHIVED', message: expect.stringContaining(`merged into ${x.id}`) });
    expect(await store.getThread(y.id)).toMatchObject({ version: shell.version, splitLockedUntil: 'force' });
    expect(await store.threadHistory(y.id, 50)).toEqual(history);
  });
});
