/**
 * Thread operations from a room (issue 14): the slash commands answer the sender alone, act on
 * this room's threads only, refuse with catalogue codes, and leave changes to the admin when
 * THREAD_OPS=admin. The same operations from the command line: `salon threads …`.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { ADMIN, salon, tempDir } from '../helpers.js';
import { Client, connect, joined, listen, roomsApp, ROOM, OTHER_ROOM, item, until } from '../rooms/helpers.js';
import { ROOM_MAX_ACTIVE_THREADS } from '../../src/protocol/threads.js';
import { ARCHIVED_LISTED, fusedReply } from '../../src/memory/threads/thread-commands.js';
import { FUSION_FALLBACK_NOTICE } from '../../src/memory/threads/thread-service.js';
import type { Thread } from '../../src/store/types.js';
import { MEMBER_THREAD_CHANGES_PER_MINUTE } from '../../src/memory/threads/change-gate.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function app(env: Record<string, string> = {}): Promise<FastifyInstance> {
  const t = await roomsApp({ API_RATE_LIMIT_PER_MINUTE: '100000', ...env }, { roomOptions: { ratePerSecond: 1000, rateBurst: 1000 } });
  closers.push(t.close);
  return t.app;
}

/** A room member who types commands and reads the replies meant for them. */
async function member(a: FastifyInstance, name: string, roomId = ROOM) {
  const { client } = await joined(a, name, roomId);
  let n = 0;
  /** The first frame `match` accepts, once it has come. */
  const frame = async (match: (f: Record<string, any>) => boolean) => {
    await until(() => client.frames.some(match));
    return client.frames.find(match)!;
  };
  return {
    client,
    /** The system reply to `text`, or the error frame it got. */
    async command(text: string): Promise<{ text?: string; code?: string; message?: string }> {
      const clientId = `c${++n}`;
      client.send({ type: 'say', text, clientId });
      const f = await frame((x) => (x.type === 'message' && x.message.clientId === clientId) || (x.type === 'error' && x.clientId === clientId));
      return f.type === 'error' ? { code: f.code, message: f.message } : { text: f.message.text };
    },
    async say(text: string, threadId?: string): Promise<string> {
      const clientId = `s${++n}`;
      client.send({ type: 'say', text, clientId, ...(threadId ? { threadId } : {}) });
      return (await frame((x) => x.type === 'message' && x.message.clientId === clientId && x.message.seq > 0)).message.id;
    },
  };
}

const threadIdIn = (text: string) => /\((thr_[0-9a-f-]+)\)/.exec(text)![1];

describe('thread slash commands', () => {
  it('start, list, split with short ids, refuse a locked merge, unlock, merge and fuse, all answered to the sender alone', async () => {
    const a = await app();
    const ann = await member(a, 'Ann');
    const bob = await member(a, 'Bob');
    const started = await ann.command('/thread new Night trains');
    expect(started.text).toMatch(/^Started thread “Night trains” \(thr_/);
    const trains = threadIdIn(started.text!);
    const ids = [
      await ann.say('The night train leaves at 22:10', trains),
      await ann.say('Cabins cost 120 euros', trains),
      await bob.say('Goulash until midnight', trains),
    ];

    const list = await ann.command('/threads');
    expect(list.text).toContain(`${trains} · Night trains · active · 3 messages`);
    expect(list.text).toMatch(/thr_[0-9a-f-]+ · Main · main, active/);

    const listing = await ann.command(`/split ${trains}`);
    expect(listing.text).toContain(`${ids[2].slice(0, 8)} · Bob: Goulash until midnight`);
    const split = await ann.command(`/split ${trains} confirm titles=Food_talk msgs_0=${ids[2].slice(0, 8)} lock=agent_release`);
    expect(split.text).toContain('Food talk · locked (agent_release)');
    const food = /(thr_[0-9a-f-]+) · Food talk/.exec(split.text!)![1];
    expect(await a.salon.store.countThreadMessages(food)).toBe(1);

    expect(await ann.command(`/merge ${trains} ${food}`)).toMatchObject({ code: 'ERR_THREAD_LOCKED' });
    expect((await ann.command(`/unlock ${food}`)).text).toContain('Unlocked “Food talk”');
    expect((await ann.command(`/merge ${trains} ${food}`)).text).toContain(`Merged ${food} into “Night trains”`);
    expect(await a.salon.store.countThreadMessages(trains)).toBe(3);
    // A client still on the absorbed thread talks on in the survivor.
    await ann.say('Still here', food);
    expect(await a.salon.store.countThreadMessages(trains)).toBe(4);

    const other = threadIdIn((await ann.command('/thread new Gardening')).text!);
    await ann.say('Tomatoes need six hours of sun', other);
    await a.salon.memory.idle();
    const fused = await ann.command(`/fuse ${trains} ${other}`);
    // In words: what the new thread holds, not the fusion plan's terms.
    expect(fused.text).toMatch(
      /^Fused “Night trains” and “Gardening” into a new thread, “Night trains \+ Gardening” \(thr_[0-9a-f-]+\)\. It copies no messages; its memory holds what “Night trains” remembers and (\d+ passages?|nothing more from) /,
    );
    expect(fused.text).not.toMatch(/pairs|made one/);
    // Bob saw none of the replies; everyone hears what changed, without it being stored.
    const notices = bob.client.frames.filter((f) => f.type === 'message' && f.message.author.kind === 'system');
    expect(notices.filter((f) => f.message.clientId)).toEqual([]);
    expect(notices.map((f) => f.message.text)).toEqual([
      'A new thread started: “Night trains”.',
      '“Night trains” was split: “Food talk” is a thread of its own now.',
      '“Food talk” is no longer split-locked.',
      '“Food talk” was merged into “Night trains”.',
      'A new thread started: “Gardening”.',
    ]);
    expect(notices.every((f) => f.message.seq === 0)).toBe(true);
  });

  it('tells a fusion in plain words: what the new thread holds from each source', () => {
    const t = (id: string, title: string) => ({ id, title }) as Thread;
    const [a, b, f] = [t('thr_a', 'Night trains'), t('thr_b', 'Sleepers'), t('thr_f', 'Night trains + Sleepers')];
    expect(fusedReply(a, b, { thread: f, fused: 2, kept: 1 })).toBe(
      'Fused “Night trains” and “Sleepers” into a new thread, “Night trains + Sleepers” (thr_f). It copies no messages; ' +
        'its memory holds what “Night trains” remembers and 1 passage only “Sleepers” had (2 passages said in both are kept once).',
    );
    expect(fusedReply(a, b, { thread: f, fused: 1, kept: 0, fallback: 'internal detail' })).toBe(
      'Fused “Night trains” and “Sleepers” into a new thread, “Night trains + Sleepers” (thr_f). It copies no messages; ' +
        'its memory holds what “Night trains” remembers and nothing more from “Sleepers” (1 passage said in both is kept once). ' +
        FUSION_FALLBACK_NOTICE,
    );
    expect(fusedReply(a, b, { thread: f, fused: 0, kept: 3 })).toMatch(/and 3 passages only “Sleepers” had\.$/);
  });

  it('counts in its replies in words that agree with the numbers: 1 message, 2 messages', async () => {
    const a = await app();
    const ann = await member(a, 'Ann');
    const one = threadIdIn((await ann.command('/thread new One')).text!);
    await ann.say('The only message here', one);
    const two = threadIdIn((await ann.command('/thread new Two')).text!);
    await ann.say('A first message', two);
    await ann.say('A second message', two);
    const listed = (await ann.command('/threads')).text!;
    expect(listed).toContain(`${one} · One · active · 1 message, `);
    expect(listed).toContain(`${two} · Two · active · 2 messages, `);
    expect(listed).toMatch(/ · Main · main, active · 0 messages, /);
    expect(listed).not.toMatch(/\b1 messages\b/);

    // One message in the memory's open window, none remembered yet.
    const said = await member(a, 'Cy');
    const main = (await a.salon.store.ensureMainThread(ROOM)).id;
    await said.say('Only this one so far', main);
    expect((await said.command('/memory')).text).toBe('Memory is on in this thread: 0 remembered passages, 1 message waiting.');
    a.salon.memory.flush(main);
    await a.salon.memory.idle();
    expect((await said.command('/memory')).text).toBe('Memory is on in this thread: 1 remembered passage.');

    // One archived thread past those listed.
    for (let i = 0; i <= ARCHIVED_LISTED; i++) {
      const t = await a.salon.threads.create(ROOM, `Old ${i}`, 'u_someone');
      await a.salon.threads.merge(main, t.id, 'u_someone');
    }
    expect((await ann.command('/threads')).text).toContain('… and 1 older archived thread (GET');
  });

  it('refuses bad arguments, threads of other rooms, and changes when THREAD_OPS=admin', async () => {
    const a = await app();
    const ann = await member(a, 'Ann');
    expect(await ann.command('/thread')).toMatchObject({ code: 'ERR_BAD_MESSAGE' });
    expect(await ann.command('/merge')).toMatchObject({ code: 'ERR_BAD_MESSAGE' });
    expect(await ann.command('/split thr_nope')).toMatchObject({ code: 'ERR_THREAD_NOT_FOUND' });
    const res = await a.inject({ method: 'POST', url: `/api/v1/rooms/${OTHER_ROOM}/threads`, headers: ADMIN, payload: { title: 'Elsewhere' } });
    const elsewhere = res.json().thread.id as string;
    const mine = threadIdIn((await ann.command('/thread new Mine')).text!);
    expect(await ann.command(`/merge ${mine} ${elsewhere}`)).toMatchObject({ code: 'ERR_THREAD_NOT_FOUND' });
    expect(await ann.command(`/unlock ${mine}`)).toMatchObject({ code: 'ERR_BAD_THREAD_OP' });
    const id = await ann.say('hello', mine);
    expect(await ann.command(`/split ${mine} confirm titles=A msgs_0=${id.slice(0, 4)}`)).toMatchObject({ code: 'ERR_BAD_MESSAGE' });
    expect(await ann.command(`/split ${mine} confirm titles=A,B msgs_0=${id} msgs_1=${id}`)).toMatchObject({ code: 'ERR_BAD_THREAD_OP' });
    // A title is one line, with nothing hidden in it: it is quoted in system messages to the whole room.
    for (const title of ['Trains\u202e', 'a\u200bb', 'x\u0000y', 'Night\u2066 trains'])
      expect(await ann.command(`/thread new ${title}`)).toMatchObject({ code: 'ERR_BAD_THREAD_OP' });
    expect((await ann.command('/thread new Night trains”.\nSalon: Everyone must log in again')).text).toMatch(
      /^Started thread “Night trains”\. Salon: Everyone must log in again” \(thr_/,
    );

    const locked = await app({ THREAD_OPS: 'admin' });
    const cy = await member(locked, 'Cy');
    expect(await cy.command('/thread new Nope')).toMatchObject({ code: 'ERR_FORBIDDEN' });
    expect((await cy.command('/threads')).text).toContain('Threads of this room:');
  });

  it('lists a room’s threads without reading their bridges: a room of bridged threads costs no more to list', async () => {
    const a = await app();
    const ann = await member(a, 'Ann');
    const { store, threads } = a.salon;
    const ids = [(await store.ensureMainThread(ROOM)).id];
    for (let i = 0; i < 30; i++) ids.push((await threads.create(ROOM, `T${i}`, 'u_someone')).id);
    // Members who say the same thing in every thread get them all bridged: here directly.
    const setBridges = ids.flatMap((x, i) => ids.slice(i + 1).map((y) => ({ threadId: x, otherId: y, weight: 0.9 })));
    await store.applyThreadChange({ at: new Date().toISOString(), expect: [], setBridges });
    expect(await store.threadBridges(ids[1])).toHaveLength(30);
    const getThread = vi.spyOn(store, 'getThread');
    const threadBridges = vi.spyOn(store, 'threadBridges');
    try {
      const listed = (await ann.command('/threads')).text!;
      for (const id of ids) expect(listed).toContain(`${id} · `);
      expect(listed).toContain('· T29 · active · 0 messages, 0 remembered');
      // The whole detail read each thread's bridges and every bridged thread: 31 × 30 reads here.
      expect(threadBridges).not.toHaveBeenCalled();
      expect(getThread.mock.calls.length).toBeLessThan(ids.length);
    } finally {
      getThread.mockRestore();
      threadBridges.mockRestore();
    }
  });

  it('lists and resolves a long thread’s messages in work proportional to what is asked, not to messages × ids', async () => {
    const a = await app();
    const ann = await member(a, 'Ann');
    const thread = await a.salon.store.ensureMainThread(ROOM);
    const long = `${'word '.repeat(10)}${' '.repeat(30)}`.repeat(100).slice(0, 4000);
    const messages = Array.from({ length: 300 }, (_, i) => ({
      author: { name: 'Bo' },
      text: `${i} ${long}`.slice(0, 4000),
      ts: new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString(),
    }));
    const res = await a.inject({ method: 'POST', url: `/api/v1/rooms/${ROOM}/import`, headers: ADMIN, payload: { messages } });
    expect(res.statusCode, res.body).toBe(200);
    const ids = res.json().messageIds as string[];
    a.salon.memory.flush();
    await a.salon.memory.idle();
    // Counted on String.prototype: the longest text a replace ran over while listing, and the id prefix tests.
    const replace = String.prototype.replace;
    const startsWith = String.prototype.startsWith;
    let longest = 0;
    let prefixTests = 0;
    String.prototype.replace = function (this: string, ...args: unknown[]) {
      longest = Math.max(longest, this.length);
      return (replace as (...a: unknown[]) => string).apply(this, args);
    } as typeof replace;
    String.prototype.startsWith = function (this: string, ...args: unknown[]) {
      prefixTests++;
      return (startsWith as (...a: unknown[]) => boolean).apply(this, args);
    } as typeof startsWith;
    let listing: { text?: string };
    let listed = 0;
    let split: { text?: string; code?: string };
    try {
      listing = await ann.command(`/split ${thread.id}`);
      listed = longest;
      split = await ann.command(
        `/split ${thread.id} confirm titles=Part msgs_0=${ids
          .slice(0, 200)
          .map((id) => id.slice(0, 8))
          .join(',')}`,
      );
    } finally {
      String.prototype.replace = replace;
      String.prototype.startsWith = startsWith;
    }
    expect(listing.text).toContain(`${ids[299].slice(0, 8)} · Bo: 299 word word`);
    expect(listing.text).toContain('(300, the last 60 shown)');
    expect(listing.text).not.toContain(`${ids[239].slice(0, 8)} ·`);
    expect(split.text).toMatch(/^Split “Main”/);
    expect(await a.salon.store.countThreadMessages(thread.id)).toBe(100);
    // Each listed text is cut before it is squashed; each id is tested against the messages sharing its first 8 characters.
    expect(listed).toBeLessThan(1000);
    expect(prefixTests).toBeLessThan(200 * 10);
  });

  it('reads only the messages a room listing shows, and refuses a split it cannot make before reading any', async () => {
    const a = await app();
    const ann = await member(a, 'Ann');
    const thread = await a.salon.store.ensureMainThread(ROOM);
    const messages = Array.from({ length: 150 }, (_, i) => ({
      author: { name: 'Bo' },
      text: `message ${i}`,
      ts: new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString(),
    }));
    expect((await a.inject({ method: 'POST', url: `/api/v1/rooms/${ROOM}/import`, headers: ADMIN, payload: { messages } })).statusCode).toBe(200);
    const reads: number[] = [];
    const threadMessages = a.salon.store.threadMessages.bind(a.salon.store);
    a.salon.store.threadMessages = async (id, limit, before) => {
      reads.push(limit);
      return threadMessages(id, limit, before);
    };
    expect((await ann.command(`/split ${thread.id}`)).text).toMatch(/^Messages of “Main” \(150, the last 60 shown\):\n[^\n]+message 90\n/);
    expect(reads).toEqual([60]);
    expect(await ann.command(`/split ${thread.id} confirm msgs_0=abc`)).toMatchObject({ code: 'ERR_BAD_MESSAGE' });
    expect(await ann.command(`/split ${thread.id} confirm titles=A lock=never`)).toMatchObject({ code: 'ERR_BAD_THREAD_OP' });
    expect(await ann.command(`/split ${thread.id} confirm titles=A oops`)).toMatchObject({ code: 'ERR_BAD_MESSAGE' });
    expect(reads).toEqual([60]);

    const locked = await app({ THREAD_OPS: 'admin' });
    const cy = await member(locked, 'Cy');
    const main = await locked.salon.store.ensureMainThread(ROOM);
    const lockedReads: number[] = [];
    const lockedThreadMessages = locked.salon.store.threadMessages.bind(locked.salon.store);
    locked.salon.store.threadMessages = async (id, limit, before) => {
      lockedReads.push(limit);
      return lockedThreadMessages(id, limit, before);
    };
    expect(await cy.command(`/split ${main.id} confirm titles=A msgs_0=abcdefgh`)).toMatchObject({ code: 'ERR_FORBIDDEN' });
    expect(lockedReads).toEqual([]);
    // The listing stays open to members there.
    expect((await cy.command(`/split ${main.id}`)).text).toMatch(/^Messages of “Main” \(0\):/);
  });

  it('bounds the active threads of a room (members may start them; bridges compare every pair) and lists the newest archived ones only', async () => {
    const a = await app();
    const ann = await member(a, 'Ann');
    const first = threadIdIn((await ann.command('/thread new First')).text!);
    const msg = await ann.say('The night train leaves at 22:10', first);
    // The main thread and First, then as many as the room may hold.
    for (let i = 2; i < ROOM_MAX_ACTIVE_THREADS; i++) await a.salon.threads.create(ROOM, `T${i}`, 'u_someone');
    const main = (await a.salon.store.ensureMainThread(ROOM)).id;
    const full = /at most 100 active threads/;
    expect(await ann.command('/thread new One too many')).toMatchObject({ code: 'ERR_BAD_THREAD_OP', message: expect.stringMatching(full) });
    expect(await ann.command(`/fuse ${main} ${first}`)).toMatchObject({ code: 'ERR_BAD_THREAD_OP', message: expect.stringMatching(full) });
    expect(await ann.command(`/split ${first} confirm titles=Part msgs_0=${msg}`)).toMatchObject({
      code: 'ERR_BAD_THREAD_OP',
      message: expect.stringMatching(full),
    });
    const { threads } = await a.salon.threads.list(ROOM);
    expect(threads.filter((t) => t.status === 'active')).toHaveLength(ROOM_MAX_ACTIVE_THREADS);
    // A merge makes room again; the archived threads it leaves are listed up to ARCHIVED_LISTED, newest first kept.
    const others = threads.filter((t) => !t.main && t.id !== first);
    for (const t of others.slice(0, ARCHIVED_LISTED + 5)) await a.salon.threads.merge(main, t.id, 'u_someone');
    expect((await ann.command('/thread new Room again')).text).toMatch(/^Started thread “Room again”/);
    const listed = (await ann.command('/threads')).text!;
    expect(listed.match(/· archived, merged into/g)).toHaveLength(ARCHIVED_LISTED);
    expect(listed).toContain('… and 5 older archived threads');
    expect(listed).not.toContain(others[0].id);
    expect(listed).toContain(others[ARCHIVED_LISTED + 4].id);
  });

  it('bounds how many thread changes a member makes from the room a minute', async () => {
    const a = await app();
    const ann = await member(a, 'Ann');
    const bob = await member(a, 'Bob');
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      for (let i = 0; i < MEMBER_THREAD_CHANGES_PER_MINUTE; i++) expect((await ann.command(`/thread new T${i}`)).text).toMatch(/^Started thread/);
      expect(await ann.command('/thread new One more')).toMatchObject({ code: 'ERR_RATE_LIMITED' });
      expect((await bob.command('/thread new Bob’s')).text).toMatch(/^Started thread/);
      // Listing is not a change.
      const listed = (await ann.command('/threads')).text!;
      expect(listed).toContain('· T9 ·');
      expect(listed).not.toContain('One more');
    } finally {
      vi.useRealTimers();
    }
  });

  it('never lets threads started at the same moment take more places than the room has left', async () => {
    const a = await app();
    const { threads } = a.salon;
    await a.salon.store.ensureMainThread(ROOM);
    for (let i = 1; i < ROOM_MAX_ACTIVE_THREADS - 2; i++) await threads.create(ROOM, `T${i}`, 'u_someone');
    // Two places left; five people start a thread at once (each passes the early count before any is written).
    const results = await Promise.allSettled([1, 2, 3, 4, 5].map((n) => threads.create(ROOM, `Racer ${n}`, `u_${n}`)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    for (const r of results)
      if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'ERR_BAD_THREAD_OP', message: expect.stringMatching(/at most 100 active/) });
    expect((await threads.list(ROOM)).threads.filter((t) => t.status === 'active')).toHaveLength(ROOM_MAX_ACTIVE_THREADS);
  });
});

describe('the memory switch in a room', () => {
  it('goes through the thread changes’ gate: a member switching it over and over is refused like any change', async () => {
    const a = await app();
    const ann = await member(a, 'Ann');
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      for (let i = 0; i < MEMBER_THREAD_CHANGES_PER_MINUTE; i++) expect((await ann.command(i % 2 ? '/memory on' : '/memory off')).text).toMatch(/^Memory is o/);
      expect(await ann.command('/memory on')).toMatchObject({ code: 'ERR_RATE_LIMITED' });
      // Thread changes share the budget: the switch spent it.
      expect(await ann.command('/thread new One more')).toMatchObject({ code: 'ERR_RATE_LIMITED' });
      // Asking whether it is on is no change.
      expect((await ann.command('/memory')).text).toMatch(/^Memory is on in this thread/);
    } finally {
      vi.useRealTimers();
    }
  });

  it('tells every member of the room when /memory or the API switches a thread’s memory, and only when it changed', async () => {
    const a = await app();
    const url = await listen(a);
    const ann = await connect(url());
    const { threadId } = await ann.hello('Ann');
    const cy = await connect(url());
    await cy.hello('Cy');
    const told = (client: Client) => client.all('message').filter((f) => f.message.author.kind === 'system' && !f.message.clientId);
    const command = async (text: string, clientId: string) => {
      ann.send({ type: 'say', text, clientId });
      return (await ann.next('message', (f) => f.message.clientId === clientId)).message.text as string;
    };

    expect(await command('/memory off', 'm1')).toMatch(/^Memory is off/);
    const off = await cy.next('message', (f) => f.message.author.kind === 'system');
    expect(off.message).toMatchObject({ seq: 0, threadId, author: { id: 'system', name: 'Salon' } });
    expect(off.message.clientId).toBeUndefined();
    expect(off.message.text).toBe(
      'Memory is off in “Main”: the assistant no longer searches or cites what this thread discussed before (the recent chat still counts).',
    );
    // The one who switched it hears it too, as for every thread operation.
    await until(() => told(ann).length === 1);

    // Switching it to what it already is changes nothing, and nobody is told.
    expect(await command('/memory off', 'm2')).toMatch(/^Memory is off/);
    expect(await command('/memory on', 'm3')).toMatch(/^Memory is on/);
    expect((await cy.next('message', (f) => f.message.author.kind === 'system')).message.text).toMatch(/^Memory is on in “Main”/);
    expect(told(cy)).toHaveLength(2);

    const put = await a.inject({ method: 'PUT', url: `/api/v1/threads/${threadId}/config`, headers: ADMIN, payload: { enable_chat_history_rag: false } });
    expect(put.statusCode).toBe(200);
    expect(put.json().thread.config.enable_chat_history_rag).toBe(false);
    expect((await cy.next('message', (f) => f.message.author.kind === 'system')).message.text).toMatch(/^Memory is off in “Main”/);
    const privileged = await a.inject({ method: 'PUT', url: `/api/v1/threads/${threadId}/config`, headers: ADMIN, payload: { privileged: true } });
    expect(privileged.json().thread.config).toEqual({ enable_chat_history_rag: false, privileged: true });
    // Making it privileged changes whose memory each exchange goes to: told as a switch is.
    await until(() => told(ann).length === 4 && told(cy).length === 4);
    expect(told(cy)[3].message.text).toMatch(/^“Main” is privileged now/);
  });
});

describe('salon threads', () => {
  it('lists, shows, splits, refuses, unlocks, merges, fuses, compacts and tells the history, on the store in DATA_DIR', async () => {
    const { dir, cleanup } = tempDir('salon-cli-threads-');
    closers.push(cleanup);
    const env = { DATA_DIR: dir, LOCAL_EMBED_DIM: '256', SEARCH_WORKERS: '1' };
    const seeded = await buildApp(testConfig({ ...env, ADMIN_TOKEN: 'test-admin-token' }));
    await seeded.ready();
    const { store } = seeded.salon;
    await store.upsertItem(item(ROOM, { title: 'Rust 2.0 released' }));
    const t = await seeded.salon.threads.create(ROOM, 'Trains', 'admin');
    const u = await seeded.salon.threads.create(ROOM, 'Garden', 'admin');
    const author = { id: 'u_ann', name: 'Ann', kind: 'user' as const };
    const said = await store.appendMessages(
      ['The night train leaves at 22:10', 'Cabins cost 120 euros'].map((text) => ({ roomId: ROOM, threadId: t.id, author, text })),
    );
    await store.appendMessage({ roomId: ROOM, threadId: u.id, author, text: 'Tomatoes need six hours of sun' });
    const overHttp = await seeded.inject({ url: `/api/v1/threads/${t.id}`, headers: ADMIN });
    const httpKeys = Object.keys(overHttp.json().thread).sort();
    await seeded.close();

    const run = async (args: string[], code = 0) => {
      const r = await salon(['threads', ...args], env);
      expect(r.code, r.stderr).toBe(code);
      return r;
    };
    expect((await run(['list', '--room', ROOM])).stdout).toContain(`${t.id}  Trains  [active]  2 messages`);
    // A room that does not exist is refused, and gets no main thread for being named.
    expect((await run(['list', '--room', 'news_nope'], 1)).stderr).toContain('ERR_ROOM_NOT_FOUND');
    expect((await run(['list', '--room', 'news_nope'], 1)).stderr).toContain('ERR_ROOM_NOT_FOUND');
    const shown = JSON.parse((await run(['show', t.id])).stdout);
    expect(shown).toMatchObject({ thread: { id: t.id, title: 'Trains', config: { enable_chat_history_rag: true, privileged: false } }, messages: 2 });
    // As the HTTP API shows a thread, not as the store keeps it.
    expect(shown.thread).not.toHaveProperty('memoryEnabled');
    expect(Object.keys(shown.thread).sort()).toEqual(httpKeys);
    const listing = JSON.parse((await run(['split', t.id])).stdout);
    expect(listing.messages.map((m: { id: string }) => m.id)).toEqual(said.map((s) => s.message.id));
    // The listing's thread too, as GET /api/v1/threads/:id/split shows it (it printed the store's record).
    expect(Object.keys(listing.thread).sort()).toEqual(httpKeys);
    const partsFile = join(dir, 'parts.json');
    writeFileSync(partsFile, JSON.stringify([{ title: 'Prices', messageIds: [said[1].message.id] }]));
    const split = JSON.parse((await run(['split', t.id, '--parts', `@${partsFile}`, '--lock', 'force'])).stdout);
    const child = split.threads[0].id as string;
    expect(split.threads[0]).toMatchObject({ parentId: t.id, splitLockedUntil: 'force' });
    expect((await run(['merge', t.id, child], 1)).stderr).toContain('ERR_THREAD_LOCKED');
    expect((await run(['split', t.id, '--parts', '[{"title": "X", "messageIds": ["m_nope"]}]'], 1)).stderr).toContain('ERR_BAD_THREAD_OP');
    // A parts file that is not there, or not a file, is named with the reason, not a bare "salon: ENOENT".
    const missing = join(dir, 'no-such-parts.json');
    expect((await run(['split', t.id, '--parts', `@${missing}`], 1)).stderr).toBe(
      `salon threads: ERR_BAD_THREAD_OP: Cannot do that: --parts @${missing}: cannot read the file (no such file)\n`,
    );
    expect((await run(['split', t.id, '--parts', `@${dir}`], 1)).stderr).toContain(`--parts @${dir}: cannot read the file (it is a directory)`);
    expect((await run(['split', t.id, '--parts', '{"title": "X"}'], 1)).stderr).toContain('--parts must be a JSON array');
    await run(['unlock', child]);
    expect(JSON.parse((await run(['merge', t.id, child])).stdout).thread.id).toBe(t.id);
    // A threshold without a value, or written as Number reads 0x1 or 9e-1, is a usage error, and nothing is fused.
    for (const value of [[], ['0x1'], ['9e-1'], ['0'], ['1.5']]) {
      expect((await run(['fuse', t.id, u.id, '--threshold', ...value], 2)).stderr).toMatch(/^salon threads: --threshold (needs a value|must be)/);
    }
    const fused = JSON.parse((await run(['fuse', t.id, u.id, '--threshold', '0.9'])).stdout);
    expect(fused.thread).toMatchObject({ isMerged: true, origin: 'fused' });
    expect(JSON.parse((await run(['compact', t.id])).stdout)).toMatchObject({ released: false });
    const history = (await run(['history', t.id])).stdout;
    expect(
      history
        .trim()
        .split('\n')
        .map((l) => l.split('  ')[2]),
    ).toEqual(['created', 'split', 'merge', 'fuse', 'compact']);
    expect((await run(['merge', t.id], 2)).stderr).toContain('salon threads merge SURVIVOR ABSORBED');
    // Twelve CLI processes, each a Node start with the app's modules: on a loaded two-core machine
    // they took over the default 30 s.
  }, 120_000);
});
