/** The thread navigator's paging, thread by thread (no browser needed: fetch is a stub). */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Message } from '../../src/protocol/messages.js';
import type { CommandReply } from '../../public/src/lib/command-replies.js';
import { MessageLog } from '../../public/src/lib/message-log.js';
import type { RoomMemory } from '../../public/src/lib/room-memory.js';
import { readPrivate, writePrivate } from '../../public/src/lib/private-asks.js';
import { ThreadNavigator } from '../../public/src/lib/thread-navigator.js';
import { MAX_MERGE_HOPS } from '../../public/src/lib/unlisted-thread.js';
import { FakeStorage } from './fake-storage.js';
import { threadView } from './thread-fixture.js';

const ROOM = 'news_nav';
const OLD = { id: 'u_old', name: 'Old', kind: 'user' as const };

function msg(seq: number, threadId: string): Message {
  return { id: `m${seq}`, seq, roomId: ROOM, threadId, author: OLD, text: `message ${seq}`, ts: new Date(1_700_000_000_000 + seq * 1000).toISOString() };
}

function thread(id: string, main: boolean) {
  return threadView(id, { roomId: ROOM, main, weight: 1 });
}

/** `id` merged into `into`: archived, an emptied shell. */
const merged = (id: string, into: string) => threadView(id, { roomId: ROOM, weight: 1, status: 'archived', mergedInto: into });

const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });

/** A navigator whose host only records the merges it followed ([absorbedId, survivorId]); it sends no commands. */
function followingNavigator(): { nav: ThreadNavigator; followed: string[][] } {
  const followed: string[][] = [];
  const nav = new ThreadNavigator({
    command: () => Promise.reject(new Error('no commands here')),
    changed: () => {},
    failed: () => {},
    mainReplaced: () => {},
    followedMerge: (absorbedId, survivorId) => followed.push([absorbedId, survivorId]),
  });
  return { nav, followed };
}

/** Files a private question asked in each of `threadIds` in `memory`'s log (texts `asked in <thread>`), as the page does when it hands one to the socket. */
function askedPrivately(memory: RoomMemory, room: string, threadIds: readonly string[]): void {
  threadIds.forEach((threadId, i) => {
    memory.log.addLocal(`c_priv${i}`, `asked in ${threadId}`, OLD, threadId, room, true);
    memory.log.sentPrivately(`c_priv${i}`);
  });
}

/** Each private entry's text and the thread it is filed under. */
const filedUnder = (memory: RoomMemory) => memory.log.privateEntries().map((e) => [e.message.text, e.message.threadId]);

/** A room's memory in the page with `threadId` open (restored from the tab's copy), nothing loaded yet. */
const restoredOn = (threadId: string): RoomMemory => ({
  log: new MessageLog(),
  joined: true,
  mainThreadId: 't_main',
  threadId,
  windowFloor: 0,
  noneBelow: new Map(),
  paged: new Set(),
});

describe('ThreadNavigator', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('says "loading earlier messages" only for the thread being paged: another thread opened meanwhile gets its own first page', async () => {
    const log = new MessageLog();
    for (let seq = 100; seq < 110; seq++) log.receive(msg(seq, seq % 2 ? 't_b' : 't_main'));
    const memory: RoomMemory = { log, joined: true, mainThreadId: 't_main', threadId: '', windowFloor: 100, noneBelow: new Map(), paged: new Set() };

    let releaseMain: (r: Response) => void = () => {};
    const asked: string[] = [];
    vi.stubGlobal('fetch', (url: string) => {
      asked.push(url);
      if (url.startsWith('/api/v1/threads/t_main/messages')) return new Promise<Response>((resolve) => (releaseMain = resolve));
      if (url.startsWith('/api/v1/threads/t_b/messages')) return Promise.resolve(json({ messages: [msg(90, 't_b')], hasMore: true }));
      if (url.startsWith(`/api/v1/rooms/${ROOM}/threads`))
        return Promise.resolve(json({ threads: [thread('t_main', true), thread('t_b', false)], archivedTotal: 0 }));
      if (url.startsWith('/api/v1/threads/')) return Promise.resolve(json({ thread: thread('t_b', false), messages: 5, suggestions: [] }));
      return Promise.reject(new Error(`unexpected ${url}`));
    });

    const { nav } = followingNavigator();
    nav.attach(ROOM, memory, () => {});
    const mainPage = nav.loadOlder();
    expect(nav.loadingOlder).toBe(true);

    // The main thread's page is still on its way when the member opens another thread.
    nav.select('t_b');
    expect(nav.threadId).toBe('t_b');
    await vi.waitFor(() => expect(asked.some((u) => u.startsWith('/api/v1/threads/t_b/messages'))).toBe(true));
    await vi.waitFor(() => expect(nav.messages.map((e) => e.message.seq)).toContain(90));
    expect(nav.loadingOlder).toBe(false);

    // Back on the main thread, its page is still loading, and then it is not.
    nav.select('t_main');
    expect(nav.loadingOlder).toBe(true);
    releaseMain(json({ messages: [msg(80, 't_main')], hasMore: true }));
    await mainPage;
    expect(nav.loadingOlder).toBe(false);
    expect(nav.messages.map((e) => e.message.seq)).toContain(80);
  });

  it('tells a closed room nothing of a page still on its way: no re-render, no save, no failure shown', async () => {
    const log = new MessageLog();
    for (let seq = 100; seq < 110; seq++) log.receive(msg(seq, 't_main'));
    const memory: RoomMemory = { log, joined: true, mainThreadId: 't_main', threadId: '', windowFloor: 100, noneBelow: new Map(), paged: new Set() };
    const pages: Array<(r: Response | Error) => void> = [];
    vi.stubGlobal('fetch', () => new Promise<Response>((resolve, reject) => pages.push((r) => (r instanceof Error ? reject(r) : resolve(r)))));
    const told: string[] = [];
    const nav = new ThreadNavigator({
      command: () => Promise.reject(new Error('no commands here')),
      changed: () => told.push('changed'),
      failed: (code) => told.push(code),
      mainReplaced: () => {},
      followedMerge: () => {},
    });
    nav.attach(ROOM, memory, () => {});
    const page = nav.loadOlder();
    await vi.waitFor(() => expect(pages).toHaveLength(1));
    told.length = 0;
    // The room is closed (another room, the page leaving) before the page comes in.
    nav.attach(ROOM, null, () => {});
    pages[0](json({ messages: [msg(90, 't_main')], hasMore: true }));
    await page;
    expect(told).toEqual([]);
    // The page is kept in the room's memory for when the room comes back.
    expect(log.entries.map((e) => e.message.seq)).toContain(90);

    // A failed page of a closed room shows no notice either; of the open room it does.
    nav.attach(ROOM, memory, () => {});
    const failing = nav.loadOlder();
    await vi.waitFor(() => expect(pages).toHaveLength(2));
    told.length = 0;
    nav.attach(ROOM, null, () => {});
    pages[1](Object.assign(new Error('offline'), { code: 'ERR_NETWORK' }));
    await failing;
    expect(told).toEqual([]);
    nav.attach(ROOM, memory, () => {});
    const failingOpen = nav.loadOlder();
    await vi.waitFor(() => expect(pages).toHaveLength(3));
    pages[2](Object.assign(new Error('offline'), { code: 'ERR_NETWORK' }));
    await failingOpen;
    expect(told).toEqual(['changed', 'ERR_NETWORK', 'changed']);
  });

  it('opens the survivor when a refresh is how it hears the open thread was merged (through merges of merges), without a notice for the member’s own merge, and not when the member opens a merged thread', async () => {
    const room = 'news_nav_merge';
    const memory = restoredOn('t_b');
    const active = [thread('t_main', true), thread('t_b', false), thread('t_c', false)];
    let list: { id: string; status: string; mergedInto: string | null }[] = active;
    vi.stubGlobal('fetch', (url: string) => {
      if (url.startsWith(`/api/v1/rooms/${room}/threads`))
        return Promise.resolve(json({ threads: list, archivedTotal: list.filter((t) => t.status !== 'active').length }));
      if (/^\/api\/v1\/threads\/[^/]+\/messages/.test(url)) return Promise.resolve(json({ messages: [], hasMore: false }));
      if (url.startsWith('/api/v1/threads/')) return Promise.resolve(json({ thread: list[0], messages: 0, suggestions: [] }));
      return Promise.reject(new Error(`unexpected ${url}`));
    });
    const followed: string[][] = [];
    let reply = (): CommandReply => ({ ok: false, code: 'ERR_BAD_MESSAGE', message: 'no commands yet' });
    const nav = new ThreadNavigator({
      command: () => Promise.resolve(reply()),
      changed: () => {},
      failed: () => {},
      mainReplaced: () => {},
      followedMerge: (absorbedId, survivorId) => followed.push([absorbedId, survivorId]),
    });
    nav.attach(room, memory, () => {});
    await nav.refresh();
    expect([nav.threadId, followed]).toEqual(['t_b', []]);

    // t_b merged into t_c, and t_c into the main thread, while t_b is open.
    list = [active[0], merged('t_b', 't_c'), merged('t_c', 't_main')];
    await nav.refresh();
    expect([nav.threadId, memory.threadId, followed]).toEqual(['t_main', '', [['t_b', 't_main']]]);

    // The member opens the archived shell from the list: it stays open.
    nav.select('t_b');
    await nav.refresh();
    expect([nav.threadId, followed.length]).toEqual(['t_b', 1]);

    // The member's own merge of the open thread moves the view too, without telling them what they did.
    const shells = list;
    list = [...shells, thread('t_d', false), thread('t_e', false)];
    await nav.refresh();
    nav.select('t_e');
    reply = () => {
      list = [...shells, thread('t_d', false), merged('t_e', 't_d')];
      return { ok: true, text: 'Merged.' };
    };
    expect(await nav.merge('t_d', 't_e')).toEqual({ ok: true, text: 'Merged.' });
    expect([nav.threadId, followed.length]).toEqual(['t_d', 1]);
  });

  it('opens the survivor when the room’s first list shows the thread the page restored was merged (through merges of merges), but not one the member opens later', async () => {
    const room = 'news_nav_restored';
    // A reload restored t_b as the open thread (sessionStorage); it was merged into t_c, and t_c into t_d, meanwhile.
    const memory = restoredOn('t_b');
    const list = [thread('t_main', true), merged('t_b', 't_c'), merged('t_c', 't_d'), thread('t_d', false)];
    vi.stubGlobal('fetch', (url: string) => {
      if (url.startsWith(`/api/v1/rooms/${room}/threads`)) return Promise.resolve(json({ threads: list, archivedTotal: 2 }));
      if (/^\/api\/v1\/threads\/[^/]+\/messages/.test(url)) return Promise.resolve(json({ messages: [], hasMore: false }));
      if (url.startsWith('/api/v1/threads/')) return Promise.resolve(json({ thread: list[0], messages: 0, suggestions: [] }));
      return Promise.reject(new Error(`unexpected ${url}`));
    });
    const { nav, followed } = followingNavigator();
    nav.attach(room, memory, () => {});
    await nav.refresh();
    expect([nav.threadId, memory.threadId, followed]).toEqual(['t_d', 't_d', [['t_b', 't_d']]]);

    // The member opens the archived shell from the list afterwards: it stays open.
    nav.select('t_b');
    await nav.refresh();
    expect([nav.threadId, followed.length]).toEqual(['t_b', 1]);
  });

  /**
   * A navigator over `room` whose first list holds the main thread, `listed` and 50 archived ones
   * of 60 (so it is cut), and whose store answers `GET /api/v1/threads/:id` with `unlisted(id)`.
   */
  function cutListRoom(room: string, listed: ReturnType<typeof thread>[], unlisted: (id: string) => Response | Promise<Response>) {
    const archived = Array.from({ length: 50 }, (_, i) => ({ ...thread(`t_arch${i}`, false), status: 'archived' }));
    const list = [thread('t_main', true), ...listed, ...archived];
    const asked: string[] = [];
    vi.stubGlobal('fetch', (url: string) => {
      if (url.startsWith(`/api/v1/rooms/${room}/threads`)) return Promise.resolve(json({ threads: list, archivedTotal: 60 }));
      if (/^\/api\/v1\/threads\/[^/]+\/messages/.test(url)) return Promise.resolve(json({ messages: [], hasMore: false }));
      const id = decodeURIComponent(url.slice('/api/v1/threads/'.length));
      const inList = list.find((t) => t.id === id);
      if (inList) return Promise.resolve(json({ thread: inList, messages: 0, suggestions: [] }));
      asked.push(id);
      return Promise.resolve(unlisted(id));
    });
    const { nav, followed } = followingNavigator();
    return { nav, asked, followed };
  }

  it('asks the store about a restored thread the room’s cut list leaves out: opens its survivor through unlisted merges of merges, and files its private entries there', async () => {
    const room = 'news_nav_unlisted_merged';
    const memory = restoredOn('t_old');
    askedPrivately(memory, room, ['t_old']);
    const views: Record<string, unknown> = { t_old: merged('t_old', 't_mid'), t_mid: merged('t_mid', 't_new') };
    const { nav, asked, followed } = cutListRoom(room, [thread('t_new', false)], (id) =>
      views[id] ? json({ thread: views[id], messages: 0, suggestions: [] }) : Promise.reject(new Error(`unexpected ${id}`)),
    );
    nav.attach(room, memory, () => {});
    await nav.refresh();
    expect([nav.threadId, memory.threadId, followed]).toEqual(['t_new', 't_new', [['t_old', 't_new']]]);
    expect(asked).toEqual(['t_old', 't_mid']);
    expect(nav.threads.byId('t_old')?.title).toBe('t_old');
    expect(memory.log.privateEntries().map((e) => e.message.threadId)).toEqual(['t_new']);
  });

  it('leaves a restored thread the cut list leaves out for the main thread when the store has no such thread', async () => {
    const room = 'news_nav_unlisted_gone';
    const memory = restoredOn('t_gone');
    const notFound = new Response(JSON.stringify({ error: { code: 'ERR_THREAD_NOT_FOUND', message: 'no such thread' } }), { status: 404 });
    const { nav, asked, followed } = cutListRoom(room, [], () => notFound);
    nav.attach(room, memory, () => {});
    await nav.refresh();
    expect([nav.threadId, memory.threadId, followed, asked]).toEqual(['t_main', '', [], ['t_gone']]);
  });

  it('keeps a restored thread the cut list leaves out open while the store cannot be reached, and asks again at the next refresh', async () => {
    const room = 'news_nav_unlisted_offline';
    const memory = restoredOn('t_far');
    let reachable = false;
    const far = { ...thread('t_far', false), title: 'Far away' };
    const { nav, asked, followed } = cutListRoom(room, [], () =>
      reachable ? json({ thread: far, messages: 3, suggestions: [] }) : Promise.reject(new TypeError('Failed to fetch')),
    );
    nav.attach(room, memory, () => {});
    await nav.refresh();
    expect([nav.threadId, memory.threadId, asked]).toEqual(['t_far', 't_far', ['t_far']]);

    // The store answers at the next refresh: an active thread, kept open and known by id though the list leaves it out.
    reachable = true;
    await nav.refresh();
    expect([nav.threadId, followed]).toEqual(['t_far', []]);
    expect(asked).toEqual(['t_far', 't_far']);
    expect(nav.threads.byId('t_far')?.title).toBe('Far away');
    await nav.refresh();
    expect(nav.threadId).toBe('t_far');
  });

  /** The store's answers from `views`, by id: a thread it does not hold is ERR_THREAD_NOT_FOUND. */
  const storeOf = (views: Record<string, unknown>) => (id: string) =>
    views[id]
      ? json({ thread: views[id], messages: 0, suggestions: [] })
      : new Response(JSON.stringify({ error: { code: 'ERR_THREAD_NOT_FOUND', message: 'no such thread' } }), { status: 404 });

  it('asks the store where the threads of private entries the cut list leaves out lead, not only the open one’s, each once: the entries a reload restored follow merges of merges, a deleted thread’s are forgotten', async () => {
    const room = 'news_nav_private_unlisted';
    // The tab's copy (a reload): asked privately in t_x (twice), t_y and t_del, then back on the
    // main thread; meanwhile t_x was merged into t_mid and t_mid into t_new, t_y into t_z, and
    // t_del deleted. The cut list names t_new only.
    const storage = new FakeStorage();
    const before = restoredOn('');
    askedPrivately(before, room, ['t_x', 't_x', 't_y', 't_del']);
    writePrivate(storage, room, before.log.privateEntries());
    const memory = restoredOn('');
    memory.log.restorePrivate(readPrivate(storage, room));
    const views = { t_x: merged('t_x', 't_mid'), t_mid: merged('t_mid', 't_new'), t_y: merged('t_y', 't_z'), t_z: thread('t_z', false) };
    const { nav, asked, followed } = cutListRoom(room, [thread('t_new', false)], storeOf(views));
    nav.attach(room, memory, () => {});
    await nav.refresh();
    expect(filedUnder(memory)).toEqual([
      ['asked in t_x', 't_new'],
      ['asked in t_x', 't_new'],
      ['asked in t_y', 't_z'],
    ]);
    expect(asked).toEqual(['t_x', 't_mid', 't_y', 't_z', 't_del']);
    expect([nav.threadId, followed]).toEqual(['t_main', []]);
  });

  it('leaves private entries where they are while the store cannot say where their thread leads, and asks again at the next refresh', async () => {
    const room = 'news_nav_private_offline';
    const memory = restoredOn('');
    askedPrivately(memory, room, ['t_x']);
    let reachable = false;
    const store = storeOf({ t_x: merged('t_x', 't_new') });
    const { nav, asked } = cutListRoom(room, [thread('t_new', false)], (id) => (reachable ? store(id) : Promise.reject(new TypeError('Failed to fetch'))));
    nav.attach(room, memory, () => {});
    await nav.refresh();
    expect([filedUnder(memory), asked]).toEqual([[['asked in t_x', 't_x']], ['t_x']]);

    reachable = true;
    await nav.refresh();
    expect([filedUnder(memory), asked]).toEqual([[['asked in t_x', 't_new']], ['t_x', 't_x']]);
  });

  it('asks again, after the next list, about the active threads the list leaves out that hold private entries: a merge the list cannot show moves the entries, and the view where one is open', async () => {
    const room = 'news_nav_private_merged_later';
    // A reload restored t_near open; private entries were asked in it and in t_far. Both active, neither listed.
    const memory = restoredOn('t_near');
    askedPrivately(memory, room, ['t_near', 't_far']);
    const views: Record<string, unknown> = { t_near: thread('t_near', false), t_far: thread('t_far', false) };
    const { nav, asked, followed } = cutListRoom(room, [thread('t_new', false)], storeOf(views));
    nav.attach(room, memory, () => {});
    await nav.refresh();
    expect([nav.threadId, asked]).toEqual(['t_near', ['t_near', 't_far']]);
    expect(filedUnder(memory)).toEqual([
      ['asked in t_near', 't_near'],
      ['asked in t_far', 't_far'],
    ]);

    // Both are merged into t_new; the room is told, and the page fetches the list, which still leaves them out.
    views.t_near = merged('t_near', 't_new');
    views.t_far = merged('t_far', 't_new');
    await nav.refresh();
    expect([nav.threadId, followed]).toEqual(['t_new', [['t_near', 't_new']]]);
    expect(filedUnder(memory)).toEqual([
      ['asked in t_near', 't_new'],
      ['asked in t_far', 't_new'],
    ]);
    // The open thread's detail was the store's word on it; what it says of a merged thread stays true: neither is asked again.
    expect(asked).toEqual(['t_near', 't_far', 't_near', 't_far']);
    await nav.refresh();
    expect(asked).toHaveLength(4);
  });

  it('shares one lookup between refreshes close together, and walks at most MAX_MERGE_HOPS threads from the entries’ thread, keeping the entries where the walk ends on no active thread', async () => {
    const room = 'news_nav_private_bounded';
    const memory = restoredOn('');
    askedPrivately(memory, room, ['t_h0']);
    const chain = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`t_h${i}`, merged(`t_h${i}`, `t_h${i + 1}`)]));
    const store = storeOf(chain);
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const { nav, asked } = cutListRoom(room, [], async (id) => {
      if (id === 't_h0') await held;
      return store(id);
    });
    const stubbed = globalThis.fetch;
    let lists = 0;
    vi.stubGlobal('fetch', (url: string) => {
      if (url.startsWith(`/api/v1/rooms/${room}/threads`)) lists++;
      return stubbed(url);
    });
    nav.attach(room, memory, () => {});
    const first = nav.refresh();
    // The second refresh fetches its own list, and comes to the private entries, while the first one's lookup is still on its way.
    await vi.waitFor(() => expect(asked).toEqual(['t_h0']));
    const second = nav.refresh();
    await vi.waitFor(() => expect(lists).toBe(2));
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setTimeout(resolve, 0));
    release();
    await Promise.all([first, second]);
    expect(asked).toEqual(Array.from({ length: MAX_MERGE_HOPS }, (_, i) => `t_h${i}`));
    expect(filedUnder(memory)).toEqual([['asked in t_h0', 't_h0']]);

    await nav.refresh();
    expect(asked).toHaveLength(MAX_MERGE_HOPS);
    expect(filedUnder(memory)).toEqual([['asked in t_h0', 't_h0']]);
  });
});
