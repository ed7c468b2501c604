/**
 * Bringing a discussion in: `POST /api/v1/rooms/:id/import` (checked together, all or nothing, time
 * order, memory built from it) and `salon import` as a process over a DATA_DIR (needs the build).
 */
import { truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { openStore } from '../../src/parts.js';
import { IMPORT_MAX_BYTES, IMPORT_MAX_MESSAGES, checkImport, importMessages } from '../../src/memory/import.js';
import type { MemoryService } from '../../src/memory/memory-service.js';
import { item } from '../store/contract.js';
import { ADMIN, countedIteration, salon, tempDir, testApp } from '../helpers.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function app(): Promise<FastifyInstance> {
  const t = await testApp({ ASK_LIMIT_USER: '100' } as never, { roomOptions: { shutdownGraceMs: 100 } });
  closers.push(t.close);
  await t.app.ready();
  await t.app.salon.ingest.pipeline.put(item('news_1', { title: 'Rust 2.0 released', body: 'The Rust team shipped Rust 2.0 on Tuesday.' }));
  await t.app.salon.ingest.pipeline.put(item('news_2', { title: 'Volcano erupts', body: 'Lava reached the town.' }));
  return t.app;
}

const day = (d: number, minute = 0) => new Date(Date.UTC(2023, 4, d, 13, minute)).toISOString();
const conversation = [
  { author: { name: 'Caroline' }, text: 'I went to the LGBTQ support group yesterday and it was powerful.', ts: day(8, 0) },
  { author: { name: 'Melanie' }, text: 'That sounds great! I painted a lake sunrise last year.', ts: day(8, 1) },
  // Given out of order: stored by time.
  { author: { name: 'Caroline' }, text: 'I am researching adoption agencies now.', ts: day(25, 0) },
  { author: { name: 'Melanie' }, text: 'I ran a charity race for mental health on Saturday.', ts: day(20, 0) },
];

const post = (target: FastifyInstance, roomId: string, payload: unknown, headers: Record<string, string> = ADMIN) =>
  target.inject({ method: 'POST', url: `/api/v1/rooms/${roomId}/import`, headers, payload: payload as Record<string, unknown> });

describe('POST /api/v1/rooms/:id/import', () => {
  it('stores the messages in time order, returns their ids in the order given, and builds the thread’s memory', async () => {
    const a = await app();
    const res = await post(a, 'news_1', { messages: conversation });
    expect(res.statusCode, res.body).toBe(200);
    const { threadId, messageIds } = res.json() as { threadId: string; messageIds: string[] };
    expect(threadId).toBe((await a.salon.store.ensureMainThread('news_1')).id);
    const stored = await a.salon.store.threadMessages(threadId, 10);
    expect(stored.map((m) => m.text)).toEqual([conversation[0], conversation[1], conversation[3], conversation[2]].map((m) => m.text));
    expect(stored.map((m) => m.ts)).toEqual([day(8, 0), day(8, 1), day(20, 0), day(25, 0)]);
    expect(messageIds).toEqual([stored[0].id, stored[1].id, stored[3].id, stored[2].id]);
    expect(stored[0].author).toMatchObject({ name: 'Caroline', kind: 'user' });
    expect(stored[0].author.id).toBe(stored[3].author.id);
    await a.salon.memory.idle();
    // Days apart are quiet spells: three windows (8 May, 20 May, 25 May).
    expect((await a.salon.memory.stats(threadId)).chunks).toBe(3);
    const answer = await a.inject({ method: 'POST', url: '/api/v1/rooms/news_1/ask', payload: { text: 'When did Caroline go to the LGBTQ support group?' } });
    const sources = answer.json().sources as { sourceType: string; messageIds?: string[] }[];
    expect(sources.some((s) => s.sourceType === 'conversation' && s.messageIds?.includes(messageIds[0]))).toBe(true);
  });

  it('stores nothing twice when the same messages are imported into the same thread again, identical messages of one import included', async () => {
    const a = await app();
    const twice = [...conversation, conversation[1]];
    const first = (await post(a, 'news_1', { messages: twice })).json() as { threadId: string; messageIds: string[]; stored: number };
    expect(first.stored).toBe(5);
    expect(new Set(first.messageIds).size).toBe(5);
    await a.salon.memory.idle();
    const chunks = (await a.salon.memory.stats(first.threadId)).chunks;
    const lastSeq = await a.salon.store.lastSeq('news_1');

    const again = await post(a, 'news_1', { messages: twice });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toEqual({ threadId: first.threadId, messageIds: first.messageIds, stored: 0 });
    await a.salon.memory.idle();
    expect((await a.salon.memory.stats(first.threadId)).chunks).toBe(chunks);
    // One more message on top: only it is new.
    const more = { author: { name: 'Melanie' }, text: 'The race raised money for a clinic.', ts: day(21, 0) };
    const plusOne = (await post(a, 'news_1', { messages: [...twice, more] })).json() as { messageIds: string[]; stored: number };
    expect(plusOne.stored).toBe(1);
    expect(plusOne.messageIds.slice(0, 5)).toEqual(first.messageIds);
    await a.salon.memory.idle();
    expect(await a.salon.store.lastSeq('news_1')).toBe(lastSeq + 1);
    expect((await a.salon.store.threadMessages(first.threadId, 20)).length).toBe(6);
  });

  it('builds on a re-run the memory an import stopped before building, and nothing it had built twice', async () => {
    const a = await app();
    const thread = await a.salon.store.ensureMainThread('news_1');
    // The first import stores its messages, then stops before its memory is built (a process killed then).
    const stopped = { rememberMessages: async () => {} } as unknown as MemoryService;
    const first = await importMessages(a.salon.store, stopped, 'news_1', thread.id, checkImport(conversation.slice(0, 2), 4000));
    expect(first.stored).toBe(2);
    expect((await a.salon.memory.stats(thread.id)).chunks).toBe(0);

    const again = (await post(a, 'news_1', { messages: conversation })).json() as { messageIds: string[]; stored: number };
    expect(again.stored).toBe(2);
    expect(again.messageIds.slice(0, 2)).toEqual(first.messageIds);
    await a.salon.memory.idle();
    expect((await a.salon.memory.stats(thread.id)).chunks).toBe(3);
    const answer = await a.inject({ method: 'POST', url: '/api/v1/rooms/news_1/ask', payload: { text: 'When did Caroline go to the LGBTQ support group?' } });
    const sources = answer.json().sources as { sourceType: string; messageIds?: string[] }[];
    expect(sources.some((s) => s.sourceType === 'conversation' && s.messageIds?.includes(first.messageIds[0]))).toBe(true);

    await a.salon.memory.idle();
    const withExchange = (await a.salon.memory.stats(thread.id)).chunks;
    await post(a, 'news_1', { messages: conversation });
    await a.salon.memory.idle();
    expect((await a.salon.memory.stats(thread.id)).chunks).toBe(withExchange);
  });

  it('writes nothing when any message is bad, and refuses strangers, unknown rooms, other rooms’ threads and too many messages', async () => {
    const a = await app();
    const thread = await a.salon.store.ensureMainThread('news_1');
    const bad: [unknown, RegExp][] = [
      [[...conversation, { author: { name: 'Ann' }, text: '', ts: day(9) }], /messages\[4\]: text/],
      [[...conversation, { author: { name: 'Ann' }, text: 'hi', ts: 'yesterday' }], /messages\[4\]: ts/],
      // Times a year of five digits or before year 0 would be ordered wrong as text.
      [[...conversation, { author: { name: 'Ann' }, text: 'hi', ts: '+010000-01-01T00:00:00Z' }], /messages\[4\]: ts must be in the years/],
      [[{ author: { name: 'Ann' }, text: 'hi', ts: '-000001-06-01T00:00:00Z' }], /messages\[0\]: ts must be in the years/],
      [[{ author: { name: '  ' }, text: 'hi', ts: day(9) }], /messages\[0\]: author.name/],
      [[{ author: { name: 'Salon AI' }, text: 'I am the assistant', ts: day(9) }], /reserved/],
      [[{ author: { name: 'Ann' }, text: 'x'.repeat(4001), ts: day(9) }], /longer than 4000/],
      [[{ author: { name: 'Ann' }, text: '\u{1F3FB}'.repeat(100), ts: day(9) }], /messages\[0\]: text: .*combining marks/],
      [[null], /messages\[0\]/],
      // A list where a message should be is named as such, not as a bad author name.
      [[[conversation[0]]], /messages\[0\]: expected an object/],
    ];
    for (const [messages, why] of bad) {
      const res = await post(a, 'news_1', { messages });
      expect(res.statusCode, JSON.stringify(messages).slice(0, 80)).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'ERR_BAD_REQUEST', message: expect.stringMatching(why) });
    }
    const many = Array.from({ length: IMPORT_MAX_MESSAGES + 1 }, (_, i) => ({ author: { name: 'Ann' }, text: `m${i}`, ts: day(9) }));
    expect((await post(a, 'news_1', { messages: many })).json().error.code).toBe('ERR_BAD_REQUEST');
    expect((await post(a, 'news_1', { messages: conversation }, {})).statusCode).toBe(401);
    expect((await post(a, 'news_404', { messages: conversation })).json().error.code).toBe('ERR_ROOM_NOT_FOUND');
    expect((await post(a, 'news_2', { threadId: thread.id, messages: conversation })).json().error.code).toBe('ERR_BAD_REQUEST');
    expect((await post(a, 'news_1', { threadId: 'thr_none', messages: conversation })).json().error.code).toBe('ERR_THREAD_NOT_FOUND');
    expect(await a.salon.store.countThreadMessages(thread.id)).toBe(0);
    expect(await a.salon.store.lastSeq('news_1')).toBe(0);
  });
});

describe('importing into a merged thread', () => {
  it('goes to the thread it was merged into, as live messages do, messages and memory together', async () => {
    const a = await app();
    const main = await a.salon.store.ensureMainThread('news_1');
    const side = await a.salon.threads.create('news_1', 'Side', 'admin');
    await a.salon.threads.merge(main.id, side.id, 'admin');
    const res = await post(a, 'news_1', { threadId: side.id, messages: conversation });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().threadId).toBe(main.id);
    await a.salon.memory.idle();
    expect(await a.salon.store.countThreadMessages(main.id)).toBe(4);
    expect(await a.salon.store.countThreadMessages(side.id)).toBe(0);
    expect(await a.salon.store.countMemoryChunks(main.id)).toBeGreaterThan(0);
  });
});

describe('importing into a thread merged since', () => {
  it('finds the messages imported into the absorbed thread again, and keeps imports into two active threads apart', async () => {
    const a = await app();
    const main = await a.salon.store.ensureMainThread('news_1');
    const side = await a.salon.threads.create('news_1', 'Side', 'admin');
    const other = await a.salon.threads.create('news_1', 'Other', 'admin');
    const intoSide = (await post(a, 'news_1', { threadId: side.id, messages: conversation })).json();
    const intoOther = (await post(a, 'news_1', { threadId: other.id, messages: conversation })).json();
    expect([intoSide.stored, intoOther.stored]).toEqual([4, 4]);
    expect(intoOther.messageIds.filter((id: string) => intoSide.messageIds.includes(id))).toEqual([]);
    await a.salon.threads.merge(main.id, side.id, 'admin');
    const lastSeq = await a.salon.store.lastSeq('news_1');
    for (const threadId of [side.id, main.id]) {
      const again = await post(a, 'news_1', { threadId, messages: conversation });
      expect(again.json(), threadId).toEqual({ threadId: main.id, messageIds: intoSide.messageIds, stored: 0 });
    }
    expect((await post(a, 'news_1', { threadId: other.id, messages: conversation })).json()).toEqual({ ...intoOther, stored: 0 });
    expect(await a.salon.store.lastSeq('news_1')).toBe(lastSeq);
    await a.salon.memory.idle();
  });
});

describe('importing into a thread that absorbed thousands', () => {
  it('lists the threads merged into it without copying a list per thread (10,000 held the event loop for seconds)', async () => {
    const a = await app();
    const main = await a.salon.store.ensureMainThread('news_1');
    const n = 2_000;
    // Split children stay in the room's listing once merged away: n of them, merged into main.
    const absorbed = Array.from({ length: n }, (_, i) => ({ ...main, id: `thr_gone${i}`, main: false, mergedInto: main.id }));
    const store = new Proxy(a.salon.store, {
      get(target, key, receiver) {
        if (key === 'listThreads') return async (roomId: string) => [...(await target.listThreads(roomId)), ...absorbed];
        const value = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const { result, elements } = await countedIteration(() =>
      importMessages(store, a.salon.memory, 'news_1', main.id, checkImport(conversation.slice(0, 1), 4000)),
    );
    expect(result).toMatchObject({ threadId: main.id, stored: 1 });
    // A list copied for each thread merged into main to add one: n² / 2 elements here.
    expect(elements).toBeLessThan(20 * n);
    await a.salon.memory.idle();
  });
});

describe('salon import', () => {
  it('imports a file into a room of DATA_DIR, prints the ids and builds the memory; refuses a bad file whole', async () => {
    const { dir, cleanup } = tempDir('salon-cli-import-');
    closers.push(cleanup);
    const env = { DATA_DIR: dir, LOCAL_EMBED_DIM: '256', SEARCH_WORKERS: '1' };
    const seeded = await buildApp(testConfig({ ...env, ADMIN_TOKEN: 'test-admin-token' }));
    await seeded.ready();
    await seeded.salon.store.upsertItem(item('news_1', { title: 'Rust 2.0 released' }));
    await seeded.salon.store.upsertItem(item('news_2', { title: 'Volcano erupts' }));
    // Another room's memory, made by an embedder since replaced: the import neither reads nor re-embeds it.
    const elsewhere = await seeded.salon.store.ensureMainThread('news_2');
    const now = new Date().toISOString();
    const old = await seeded.salon.store.addMemoryChunk(
      {
        threadId: elsewhere.id,
        roomId: 'news_2',
        kind: 'window',
        text: 'Ann: the lava reached the town',
        messageIds: [],
        authors: ['Ann'],
        firstTs: now,
        lastTs: now,
        privileged: false,
        owner: null,
      },
      now,
      { vector: new Float32Array(8).fill(0.5), model: 'retired@8' },
    );
    await seeded.close();

    const file = join(dir, 'chat.json');
    writeFileSync(file, JSON.stringify({ messages: conversation }));
    const ok = await salon(['import', file, '--room', 'news_1'], env);
    expect(ok.code, ok.stderr).toBe(0);
    const result = JSON.parse(ok.stdout) as { threadId: string; messageIds: string[] };
    expect(result.messageIds).toHaveLength(4);
    expect(ok.stderr).toMatch(/import: 4 done, 0 failed of 4/);
    expect(ok.stderr).toMatch(/3 memory chunks in the thread/);
    const store = openStore(testConfig(env), { mustExist: true });
    try {
      expect((await store.getMemoryChunks([old.id]))[0]?.vectorModel).toBe('retired@8');
    } finally {
      await store.close();
    }

    writeFileSync(file, JSON.stringify([...conversation, { author: { name: 'Ann' }, text: 'bad time', ts: 'soon' }]));
    const refused = await salon(['import', file, '--room', 'news_1'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/ERR_BAD_REQUEST: .*messages\[4\]: ts/);
    expect((await salon(['import', file], env)).code).toBe(2);
    // A file past what one import takes is refused without being read whole (a sparse file: no disk used).
    const huge = join(dir, 'huge.json');
    writeFileSync(huge, '');
    truncateSync(huge, IMPORT_MAX_BYTES + 1);
    const tooBig = await salon(['import', huge, '--room', 'news_1'], env);
    expect(tooBig.code).toBe(1);
    expect(tooBig.stderr).toBe(`salon import: cannot read ${huge}: it is larger than 32 MiB, the most one import takes (5000 messages); split it\n`);

    const again = await buildApp(testConfig({ ...env, ADMIN_TOKEN: 'test-admin-token' }));
    try {
      await again.ready();
      expect(await again.salon.store.countThreadMessages(result.threadId)).toBe(4);
      expect(await again.salon.store.countMemoryChunks(result.threadId)).toBe(3);
    } finally {
      await again.close();
    }
  });
});
