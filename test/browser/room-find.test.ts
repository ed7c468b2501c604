/**
 * "Find in this room"'s matching (public/src/lib/room-find.ts), without a browser: what matches,
 * in which order, where in the shown text, and how a find session follows new messages and pages
 * back through older ones.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Message } from '../../src/protocol/messages.js';
import { MessageLog, type LogEntry } from '../../public/src/lib/message-log.js';
import type { RoomMemory } from '../../public/src/lib/room-memory.js';
import { ThreadNavigator } from '../../public/src/lib/thread-navigator.js';
import { FIND_MAX_PAGES, findMatches, fold, locate, RoomFind, type FindSource } from '../../public/src/lib/room-find.js';

const ADA = { id: 'u_ada', name: 'Ada', kind: 'user' as const };

function entry(seq: number, text = `message ${seq}`): LogEntry {
  const message: Message = {
    id: `m${seq}`,
    seq,
    roomId: 'news_1',
    threadId: 't1',
    author: ADA,
    text,
    ts: new Date(1_700_000_000_000 + seq * 1000).toISOString(),
  };
  return { key: `m:m${seq}`, message, state: 'sent', order: seq };
}

/** The text of each place `locate` found, read back from the pieces. */
function found(pieces: string[], query: string): string[] {
  return locate(pieces, query).map(({ start, end }) => {
    if (start.piece === end.piece) return pieces[start.piece].slice(start.offset, end.offset);
    return pieces[start.piece].slice(start.offset) + pieces.slice(start.piece + 1, end.piece).join('') + pieces[end.piece].slice(0, end.offset);
  });
}

/** A thread's history on the server, paged back 50 at a time into `messages` as the navigator does. */
function historySource(held: LogEntry[], older: LogEntry[], pageSize = 50): FindSource & { messages: readonly LogEntry[]; loads: number } {
  const source = {
    messages: held as readonly LogEntry[],
    loads: 0,
    get hasOlder() {
      return older.length > 0;
    },
    async loadOlder() {
      source.loads++;
      const page = older.splice(Math.max(0, older.length - pageSize));
      source.messages = [...page, ...source.messages];
    },
  };
  return source;
}

/** A thread's history paged back like `historySource`, but each page waits until the test lets it in. */
function gatedSource(held: LogEntry[], older: LogEntry[], pageSize = 50) {
  const inner = historySource(held, older, pageSize);
  const waiting: Array<() => void> = [];
  const source = {
    threadId: 't1',
    resets: 0,
    get messages() {
      return inner.messages;
    },
    set messages(messages: readonly LogEntry[]) {
      inner.messages = messages;
    },
    get hasOlder() {
      return inner.hasOlder;
    },
    get loads() {
      return inner.loads;
    },
    /** Pages asked for and not let in yet. */
    waiting,
    loadOlder: () => new Promise<void>((resolve) => waiting.push(() => void inner.loadOlder().then(resolve))),
    /** Lets the oldest page asked for in, and waits until the search has looked at it. */
    async release() {
      waiting.shift()!();
      await new Promise((r) => setTimeout(r, 0));
    },
  };
  return source;
}

describe('fold', () => {
  it('compares without case, accents, runs of white space or markdown emphasis marks, and knows where each character came from', () => {
    expect(fold('  Café   **Avelin**\n\n_harbour_ `VOTE`').text).toBe('cafe avelin harbour vote');
    const folded = fold('Ünter  x');
    expect(folded.text).toBe('unter x');
    // "x" comes from index 7 of the original (after the two spaces), the end is the original's length.
    expect(folded.origin?.[6]).toBe(7);
    expect(folded.origin?.at(-1)).toBe(8);
    // Plain lower-case ASCII maps one to one: no table is kept.
    expect(fold('plain words').origin).toBeNull();
  });
});

describe('findMatches', () => {
  it('finds the messages holding the words, newest first, whatever their case, accents or emphasis', () => {
    const entries = [entry(1, 'The **Port Avelin** lighthouse'), entry(2, 'nothing here'), entry(3, 'port   avelin again'), entry(4, 'Le café de PORT AVÉLIN')];
    expect(findMatches(entries, 'port avelin')).toEqual(['m:m4', 'm:m3', 'm:m1']);
    expect(findMatches(entries, '  LIGHTHOUSE ')).toEqual(['m:m1']);
    expect(findMatches(entries, 'cafe')).toEqual(['m:m4']);
    expect(findMatches(entries, 'harbour')).toEqual([]);
    // Nothing to look for finds nothing (not every message).
    expect(findMatches(entries, '   ')).toEqual([]);
    expect(findMatches(entries, '**')).toEqual([]);
  });

  it('looks through thousands of held messages, not a window of them', () => {
    const entries = Array.from({ length: 2_000 }, (_, i) => entry(i + 1, i === 4 ? 'the lighthouse keeper' : `old ${i + 1}`));
    expect(findMatches(entries, 'lighthouse')).toEqual(['m:m5']);
    expect(findMatches(entries, 'old 1999')).toEqual(['m:m1999']);
  });
});

describe('locate', () => {
  it('finds every place in the shown text, across text nodes, at the original offsets', () => {
    // "Port **Avelin** and port avelin" as shown: three text nodes.
    expect(found(['Port ', 'Avelin', ' and port  avelin'], 'port avelin')).toEqual(['Port Avelin', 'port  avelin']);
    const places = locate(['Port ', 'Avelin', ' x'], 'port avelin');
    expect(places).toEqual([{ start: { piece: 0, offset: 0 }, end: { piece: 1, offset: 6 } }]);
    // Accented and astral characters keep their whole length in the original.
    expect(found(['Un café à Orléans 🎉 café'], 'CAFE')).toEqual(['café', 'café']);
    expect(found(['a 🎉 b'], '🎉')).toEqual(['🎉']);
    expect(found(['nothing here'], 'lighthouse')).toEqual([]);
  });
});

describe('RoomFind', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('starts at the newest match, steps back and forth with wrapping, and keeps its match while new messages come in', () => {
    const entries = [entry(1, 'vote one'), entry(2, 'other'), entry(3, 'vote two'), entry(4, 'vote three')];
    const find = new RoomFind();
    expect(find.search('vote', entries)).toBe('m:m4');
    expect([find.position, find.matches.length]).toEqual([1, 3]);
    expect(find.step(1)).toBe('m:m3');
    expect(find.step(1)).toBe('m:m1');
    expect(find.atOldest).toBe(true);
    expect(find.step(1)).toBe('m:m4');
    expect(find.step(-1)).toBe('m:m1');

    // A new matching message: the count grows, the current match stays the same message.
    find.update([...entries, entry(5, 'a new vote')]);
    expect(find.currentKey).toBe('m:m1');
    expect([find.position, find.matches.length]).toEqual([4, 4]);
    // Its message trimmed away: no current match, the rest still counted.
    find.update([entry(2, 'other'), entry(3, 'vote two'), entry(5, 'a new vote')]);
    expect(find.currentKey).toBe('');
    expect(find.position).toBe(0);
    expect(find.step(1)).toBe('m:m5');
  });

  it('pages back until a page holds an older match, which becomes the current one', async () => {
    const all = Array.from({ length: 400 }, (_, i) => entry(i + 1, i + 1 === 120 || i + 1 === 3 ? `the lighthouse ${i + 1}` : `old ${i + 1}`));
    const source = historySource(all.slice(380), all.slice(0, 380));
    const find = new RoomFind();
    find.search('lighthouse', source.messages);
    expect(find.matches).toEqual([]);

    // 331–380, 281–330, …, 81–130: six pages to reach message 120.
    expect(await find.searchEarlier(source)).toEqual({ found: true, added: 300 });
    expect(source.loads).toBe(6);
    expect(find.currentKey).toBe('m:m120');
    expect(find.atOldest).toBe(true);
    expect(await find.searchEarlier(source)).toEqual({ found: true, added: 80 });
    expect(find.currentKey).toBe('m:m3');
    expect(find.position).toBe(2);
    // The thread's start: nothing more to fetch.
    expect(await find.searchEarlier(source)).toEqual({ found: false, added: 0 });
    expect(source.loads).toBe(8);
  });

  it('stops paging back once the words change: a page for the old words neither chooses a match for the new ones nor fetches more', async () => {
    // Neither "lighthouse" nor "harbour" is held; the first page back (331–380) holds "harbour" at 360.
    const all = Array.from({ length: 400 }, (_, i) => entry(i + 1, i + 1 === 360 ? 'the harbour' : `old ${i + 1}`));
    const source = gatedSource(all.slice(380), all.slice(0, 380));
    const find = new RoomFind();
    find.search('lighthouse', source.messages);
    const forOld = find.searchEarlier(source);
    expect(source.waiting).toHaveLength(1);

    // The member types other words while the page is on its way: nothing held matches them.
    expect(find.search('harbour', source.messages)).toBe('');
    await source.release();
    expect(await forOld).toEqual({ found: false, added: 0, superseded: true });
    // The page's "harbour" is counted once the bar follows its entries, but the member did not ask to go to it.
    find.update(source.messages);
    expect(find.matches).toEqual(['m:m360']);
    expect(find.currentKey).toBe('');
    // No more pages for words no longer looked for.
    expect(source.waiting).toHaveLength(0);
    expect(source.loads).toBe(1);
  });

  it('lets only the latest search of earlier pages choose the match, when one for other words is still waiting for its page', async () => {
    const all = Array.from({ length: 400 }, (_, i) => entry(i + 1, i + 1 === 300 ? 'the harbour' : i + 1 === 370 ? 'a lighthouse' : `old ${i + 1}`));
    const source = gatedSource(all.slice(380), all.slice(0, 380));
    const find = new RoomFind();
    find.search('harbour', source.messages);
    const forOld = find.searchEarlier(source);
    find.search('lighthouse', source.messages);
    const forNew = find.searchEarlier(source);
    // The old words' page comes in (331–380, "lighthouse" at 370), then the new search's (281–330).
    await source.release();
    await source.release();
    expect(await forOld).toMatchObject({ found: false, superseded: true });
    expect(await forNew).toEqual({ found: true, added: 100 });
    expect(find.currentKey).toBe('m:m370');
    expect(source.waiting).toHaveLength(0);
  });

  it('stops paging back when the member opens another thread, or the bar is closed (cancel), choosing nothing', async () => {
    const all = Array.from({ length: 400 }, (_, i) => entry(i + 1, i + 1 === 350 ? 'the lighthouse' : `old ${i + 1}`));
    const source = gatedSource(all.slice(380), all.slice(0, 380));
    const find = new RoomFind();
    find.search('lighthouse', source.messages);
    const before = find.searchEarlier(source);
    source.threadId = 't2';
    await source.release();
    expect(await before).toMatchObject({ found: false, superseded: true });
    expect(find.currentKey).toBe('');
    expect(source.waiting).toHaveLength(0);

    source.threadId = 't1';
    const closed = find.searchEarlier(source);
    find.cancel();
    await source.release();
    expect(await closed).toMatchObject({ found: false, superseded: true });
    expect(find.currentKey).toBe('');
    expect(source.loads).toBe(2);
  });

  it('chooses nothing when a reset welcome replaced the messages while a page was on its way: none of them is earlier', async () => {
    const all = Array.from({ length: 400 }, (_, i) => entry(i + 1, i + 1 === 350 ? 'the lighthouse' : `old ${i + 1}`));
    const source = gatedSource(all.slice(380), all.slice(0, 380));
    const find = new RoomFind();
    find.search('lighthouse', source.messages);
    const searching = find.searchEarlier(source);
    // The store was wiped: the welcome's history replaces the log, and someone writes "lighthouse" in it.
    source.messages = [entry(1, 'fresh start'), entry(2, 'lighthouse again')];
    source.resets++;
    await source.release();
    expect(await searching).toMatchObject({ found: false, superseded: true });
    expect(find.currentKey).toBe('');
    expect(source.waiting).toHaveLength(0);
  });

  it('goes to the match the older page brought, not to a matching message that arrived meanwhile', async () => {
    const all = Array.from({ length: 400 }, (_, i) => entry(i + 1, i + 1 === 350 ? 'the lighthouse' : `old ${i + 1}`));
    const source = gatedSource(all.slice(380), all.slice(0, 380));
    const find = new RoomFind();
    find.search('lighthouse', source.messages);
    const searching = find.searchEarlier(source);
    // Someone writes "lighthouse" in the room while the page is on its way.
    source.messages = [...source.messages, entry(401, 'lighthouse now')];
    await source.release();
    // 50 earlier messages looked through (the new one is not earlier), and the earlier match is current.
    expect(await searching).toEqual({ found: true, added: 50 });
    expect(find.currentKey).toBe('m:m350');
    expect(find.matches).toEqual(['m:m401', 'm:m350']);
  });

  it('fetches at most FIND_MAX_PAGES pages per search, and stops when a page brings nothing', async () => {
    const many = Array.from({ length: 2_000 }, (_, i) => entry(i + 1, `old ${i + 1}`));
    const source = historySource(many.slice(1_980), many.slice(0, 1_980));
    const find = new RoomFind();
    find.search('lighthouse', source.messages);
    expect(await find.searchEarlier(source)).toEqual({ found: false, added: FIND_MAX_PAGES * 50 });
    expect(source.loads).toBe(FIND_MAX_PAGES);

    // A page that brings nothing (the log is full, or the fetch failed) ends the search.
    const stuck: FindSource = { messages: [entry(1)], hasOlder: true, loadOlder: async () => {} };
    let loads = 0;
    const counting: FindSource = {
      get messages() {
        return stuck.messages;
      },
      hasOlder: true,
      loadOlder: async () => void loads++,
    };
    expect(await find.searchEarlier(counting)).toEqual({ found: false, added: 0 });
    expect(loads).toBe(1);
  });

  it('shares the page "Load earlier messages" is already fetching: the find waits for it and looks through it', async () => {
    const log = new MessageLog();
    for (let seq = 381; seq <= 400; seq++) log.receive(entry(seq).message);
    const memory: RoomMemory = { log, joined: true, mainThreadId: 't1', threadId: '', windowFloor: 381, noneBelow: new Map(), paged: new Set() };
    const pending: Array<{ before: number; release: () => void }> = [];
    vi.stubGlobal('fetch', (url: string) => {
      const before = Number(new URL(url, 'http://x').searchParams.get('before'));
      const messages = Array.from({ length: 50 }, (_, i) => entry(before - 50 + i, before - 50 + i === 350 ? 'the lighthouse' : 'old').message);
      const body = new Response(JSON.stringify({ messages, hasMore: true }), { status: 200, headers: { 'content-type': 'application/json' } });
      return new Promise<Response>((resolve) => pending.push({ before, release: () => resolve(body) }));
    });
    const nav = new ThreadNavigator({
      command: () => Promise.reject(new Error('no commands here')),
      changed: () => {},
      failed: () => {},
      mainReplaced: () => {},
      followedMerge: () => {},
    });
    nav.attach('news_1', memory, () => {});

    // The member pressed "Load earlier messages"; its page is on its way when the find asks for one.
    const pressed = nav.loadOlder();
    expect(nav.loadingOlder).toBe(true);
    const find = new RoomFind();
    find.search('lighthouse', nav.messages);
    const searching = find.searchEarlier(nav);
    await vi.waitFor(() => expect(pending).toHaveLength(1));
    pending[0].release();
    await pressed;
    expect(await searching).toEqual({ found: true, added: 50 });
    expect(find.currentKey).toBe('m:m350');
    // One request for the one page.
    expect(pending.map((p) => p.before)).toEqual([381]);
  });

  it('pages back through the room’s thread navigator and stops once the log is full, saying so', async () => {
    const log = new MessageLog();
    for (let seq = 2_061; seq <= 2_080; seq++) log.receive(entry(seq).message);
    // The member paged back already: the log holds 1,980 of the 2,000 it may.
    log.receiveOlder(Array.from({ length: 1_960 }, (_, i) => entry(101 + i).message));
    const memory: RoomMemory = { log, joined: true, mainThreadId: 't1', threadId: '', windowFloor: 2_061, noneBelow: new Map(), paged: new Set() };
    const asked: string[] = [];
    vi.stubGlobal('fetch', (url: string) => {
      asked.push(url);
      const before = Number(new URL(url, 'http://x').searchParams.get('before'));
      const messages = Array.from({ length: 50 }, (_, i) => entry(before - 50 + i, before - 50 + i === 1 ? 'lighthouse, too far back' : 'old').message).filter(
        (m) => m.seq > 0,
      );
      return Promise.resolve(new Response(JSON.stringify({ messages, hasMore: true }), { status: 200, headers: { 'content-type': 'application/json' } }));
    });
    const nav = new ThreadNavigator({
      command: () => Promise.reject(new Error('no commands here')),
      changed: () => {},
      failed: () => {},
      mainReplaced: () => {},
      followedMerge: () => {},
    });
    nav.attach('news_1', memory, () => {});
    expect([nav.full, nav.hasOlder]).toEqual([false, true]);

    const find = new RoomFind();
    find.search('lighthouse', nav.messages);
    // The first page (51–100) is taken, the log not full yet; the second, with a match, is refused: the log is full.
    const result = await find.searchEarlier(nav);
    expect(asked).toHaveLength(2);
    expect(result).toEqual({ found: false, added: 50 });
    expect(find.matches).toEqual([]);
    expect([nav.full, nav.hasOlder]).toEqual([true, false]);
  });
});
