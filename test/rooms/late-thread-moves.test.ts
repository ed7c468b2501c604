/**
 * A message stored before its thread was merged, split or deleted can reach a node after the word
 * of it (another node's publish running late), and a room's history read from the store can be
 * older than a notice heard while it was read: outside any catch-up, the room files each where the
 * store has it now, for its members and for later welcomes. A thread it never heard of (deleted
 * before the room opened here) is looked up in the store, a bounded number a second.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Message } from '../../src/protocol/messages.js';
import { encodeEnvelope, type Delivery } from '../../src/rooms/envelope.js';
import type { RoomHub } from '../../src/rooms/hub.js';
import type { InProcessBus } from '../../src/rooms/in-process-bus.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { survivorOf } from '../../src/store/thread-survivor.js';
import { UNKNOWN_THREAD_LOOKUPS_BURST } from '../../src/rooms/thread-lookups.js';
import { silentLogger } from '../../src/logger.js';
import { FakeConnection, hubBesideOtherNode, ROOM, until } from './helpers.js';

const ZED = { id: 'u_zed', name: 'Zed', kind: 'user' as const };
const BOT = { id: 'assistant', name: 'Salon', kind: 'assistant' as const };

// Each test: a hub on this node beside another node's bus, and members joining the one room.
let store: SqliteStore;
let closeAll: () => Promise<void>;
let hub: RoomHub;
let other: InProcessBus;
let n = 0;

beforeEach(async () => {
  ({ store, hub, other, close: closeAll } = await hubBesideOtherNode(silentLogger));
});
afterEach(() => {
  vi.useRealTimers();
  return closeAll();
});

async function member(name: string) {
  const conn = new FakeConnection(`c${++n}`);
  hub.connect(conn, { roomId: ROOM, ip: `10.0.0.${n}` })!.receive(JSON.stringify({ type: 'hello', name }));
  await until(() => conn.frames('welcome').length === 1);
  return { conn, welcome: conn.frames('welcome')[0] };
}

const publish = (delivery: Delivery, frame: string) => other.publish(ROOM, encodeEnvelope({ node: 'other', delivery, frame }));

describe('a message heard after its thread was merged or deleted', () => {
  /** The other node's publish of a message it stored, reaching this node now. */
  const late = (message: Message, type = 'message', extra: object = {}) => publish('history', JSON.stringify({ type, message, ...extra }));
  /** Messages and answers a member got, as [type, seq, threadId]. */
  const filed = (conn: FakeConnection) =>
    conn.sent
      .map((f) => JSON.parse(f))
      .filter((f) => f.type === 'message' || f.type === 'assistant.done')
      .map((f) => [f.type, f.message.seq, f.message.threadId]);

  async function threads(...ids: string[]): Promise<void> {
    await store.applyThreadChange({
      at: new Date().toISOString(),
      expect: [],
      createThreads: ids.map((id) => ({ id, roomId: ROOM, title: id, origin: 'original' as const })),
    });
  }

  /** What ThreadService.merge does to the store (the messages move, the absorbed thread is archived). */
  async function mergeInStore(absorbedId: string, survivorId: string): Promise<void> {
    await store.applyThreadChange({
      at: new Date().toISOString(),
      expect: [],
      updateThreads: [{ id: absorbedId, status: 'archived', mergedInto: survivorId }],
      moveThreadMessages: [{ fromThreadId: absorbedId, threadId: survivorId }],
    });
  }

  it('files a message and an answer of a thread merged here (a merge of merges too) under the survivor: live, and in later welcomes', async () => {
    const main = await store.ensureMainThread(ROOM);
    const { conn } = await member('Ana');
    await threads('thr_a', 'thr_b');
    // Stored by the other node before the merges; their publishes run late.
    const said = (await store.appendMessage({ roomId: ROOM, threadId: 'thr_a', author: ZED, text: 'late' })).message;
    const answer = (await store.appendMessage({ roomId: ROOM, threadId: 'thr_b', author: BOT, text: 'No source fits.', clientId: 'ans_1' })).message;
    await mergeInStore('thr_a', 'thr_b');
    hub.threadMerged(ROOM, 'thr_a', 'thr_b');
    await mergeInStore('thr_b', main.id);
    hub.threadMerged(ROOM, 'thr_b', main.id);
    expect((await survivorOf(store, 'thr_a'))?.id).toBe(main.id);

    await late(said);
    await late(answer, 'assistant.done', { abstained: true });
    await until(() => filed(conn).length === 2);
    const stored = (await store.messagesAfter(ROOM, 0, 10)).map((m) => [m.seq, m.threadId]);
    expect(stored).toEqual([
      [said.seq, main.id],
      [answer.seq, main.id],
    ]);
    expect(filed(conn)).toEqual([
      ['message', said.seq, main.id],
      ['assistant.done', answer.seq, main.id],
    ]);
    // The answer's end keeps what the store does not (`abstained`).
    expect(conn.frames('assistant.done')[0].abstained).toBe(true);
    const { welcome } = await member('Bo');
    expect(welcome.history.map((m: Message) => [m.seq, m.threadId])).toEqual(stored);
  });

  it('follows merges the other nodes announce, in whichever order their notices arrive', async () => {
    const main = await store.ensureMainThread(ROOM);
    const { conn } = await member('Ana');
    await threads('thr_a', 'thr_b');
    const said = (await store.appendMessage({ roomId: ROOM, threadId: 'thr_a', author: ZED, text: 'late' })).message;
    await mergeInStore('thr_a', 'thr_b');
    await mergeInStore('thr_b', main.id);
    // Two nodes merged one after the other; the second one's notice comes first.
    await publish('threads', JSON.stringify({ merged: { absorbedId: 'thr_b', survivorId: main.id } }));
    await publish('threads', JSON.stringify({ merged: { absorbedId: 'thr_a', survivorId: 'thr_b' } }));
    await late(said);
    await until(() => filed(conn).length === 1);
    expect(filed(conn)).toEqual([['message', said.seq, main.id]]);
    const { welcome } = await member('Bo');
    expect(welcome.history.map((m: Message) => [m.seq, m.threadId])).toEqual([[said.seq, main.id]]);
  });

  it('sends a message of a thread deleted meanwhile to the members, and keeps it out of later welcomes as the store does', async () => {
    const main = await store.ensureMainThread(ROOM);
    const { conn } = await member('Ana');
    await threads('thr_gone', 'thr_a');
    const kept = (await store.appendMessage({ roomId: ROOM, threadId: main.id, author: ZED, text: 'kept' })).message;
    const doomed = (await store.appendMessage({ roomId: ROOM, threadId: 'thr_gone', author: ZED, text: 'doomed' })).message;
    // A survivor deleted after its merge: what was merged into it is gone with it.
    const merged = (await store.appendMessage({ roomId: ROOM, threadId: 'thr_a', author: ZED, text: 'merged' })).message;
    await mergeInStore('thr_a', 'thr_gone');
    hub.threadMerged(ROOM, 'thr_a', 'thr_gone');
    expect(await store.deleteThread('thr_gone')).not.toBeNull();
    await publish('threads', JSON.stringify({ deleted: 'thr_gone' }));
    for (const m of [kept, doomed, merged]) await late(m);
    await until(() => filed(conn).length === 3);
    // Members get each as it was said, the last under the thread it was merged into (it may end an
    // answer whose pieces they saw).
    expect(filed(conn)).toEqual([
      ['message', kept.seq, main.id],
      ['message', doomed.seq, 'thr_gone'],
      ['message', merged.seq, 'thr_gone'],
    ]);
    const stored = (await store.messagesAfter(ROOM, 0, 10)).map((m) => [m.seq, m.threadId]);
    expect(stored).toEqual([[kept.seq, main.id]]);
    const { welcome } = await member('Bo');
    expect(welcome.history.map((m: Message) => [m.seq, m.threadId])).toEqual(stored);
  });
});

describe('a message heard after its thread was split, or of a thread the room never heard of', () => {
  const late = (message: Message) => publish('history', JSON.stringify({ type: 'message', message }));
  const filed = (conn: FakeConnection) => conn.frames('message').map((f) => [f.message.seq, f.message.threadId]);
  const threads = (...ids: string[]) =>
    store.applyThreadChange({
      at: new Date().toISOString(),
      expect: [],
      createThreads: ids.map((id) => ({ id, roomId: ROOM, title: id, origin: 'original' as const })),
    });
  const say = async (threadId: string, text: string) => (await store.appendMessage({ roomId: ROOM, threadId, author: ZED, text })).message;

  it('files a message a split moved, heard after the split notice, under the thread it moved to: live, and in later welcomes', async () => {
    const main = await store.ensureMainThread(ROOM);
    const { conn } = await member('Ana');
    await threads('thr_child');
    // Stored by the other node in the main thread; its publish runs late, behind the split's notice.
    const moved = await say(main.id, 'moved');
    const stays = await say(main.id, 'stays');
    await store.applyThreadChange({ at: new Date().toISOString(), expect: [], moveMessages: [{ ids: [moved.id], threadId: 'thr_child' }] });
    await publish('threads', JSON.stringify({ moves: [{ ids: [moved.id], threadId: 'thr_child' }] }));
    await late(moved);
    await late(stays);
    await until(() => filed(conn).length === 2);
    const stored = (await store.messagesAfter(ROOM, 0, 10)).map((m) => [m.seq, m.threadId]);
    expect(stored).toEqual([
      [moved.seq, 'thr_child'],
      [stays.seq, main.id],
    ]);
    expect(filed(conn)).toEqual(stored);
    const { welcome } = await member('Bo');
    expect(welcome.history.map((m: Message) => [m.seq, m.threadId])).toEqual(stored);
  });

  it('files the history a room loads through a merge and a split it heard while the store was read', async () => {
    const main = await store.ensureMainThread(ROOM);
    await threads('thr_a', 'thr_child');
    const merged = await say('thr_a', 'merged');
    const moved = await say(main.id, 'moved');
    const read = store.recentMessages.bind(store);
    vi.spyOn(store, 'recentMessages').mockImplementationOnce(async (...args) => {
      const before = await read(...args);
      // The other node merges and splits after the read; its notices arrive before the room is filled.
      await store.applyThreadChange({
        at: new Date().toISOString(),
        expect: [],
        updateThreads: [{ id: 'thr_a', status: 'archived', mergedInto: main.id }],
        moveThreadMessages: [{ fromThreadId: 'thr_a', threadId: main.id }],
      });
      await store.applyThreadChange({ at: new Date().toISOString(), expect: [], moveMessages: [{ ids: [moved.id], threadId: 'thr_child' }] });
      await publish('threads', JSON.stringify({ merged: { absorbedId: 'thr_a', survivorId: main.id } }));
      await publish('threads', JSON.stringify({ moves: [{ ids: [moved.id], threadId: 'thr_child' }] }));
      await new Promise((resolve) => setImmediate(resolve));
      return before;
    });
    const { welcome } = await member('Ana');
    const stored = (await store.messagesAfter(ROOM, 0, 10)).map((m) => [m.seq, m.threadId]);
    expect(stored).toEqual([
      [merged.seq, main.id],
      [moved.seq, 'thr_child'],
    ]);
    expect(welcome.history.map((m: Message) => [m.seq, m.threadId])).toEqual(stored);
  });

  it('keeps a message of a thread deleted before the room opened out of later welcomes, and files one of a new thread as it came', async () => {
    await store.ensureMainThread(ROOM);
    await threads('thr_gone');
    const doomed = await say('thr_gone', 'doomed');
    expect(await store.deleteThread('thr_gone')).not.toBeNull();
    const { conn } = await member('Ana');
    await threads('thr_new');
    const fresh = await say('thr_new', 'fresh');
    const reads = vi.spyOn(store, 'getThread');
    await late(doomed);
    await late(fresh);
    await until(() => filed(conn).length === 2);
    // The lookups (begun as each was delivered): their answers, and what the room did with them.
    await Promise.all(reads.mock.results.map((r) => r.value));
    await new Promise((resolve) => setImmediate(resolve));
    expect(filed(conn)).toEqual([
      [doomed.seq, 'thr_gone'],
      [fresh.seq, 'thr_new'],
    ]);
    const { welcome } = await member('Bo');
    expect(welcome.history.map((m: Message) => [m.seq, m.threadId])).toEqual([[fresh.seq, 'thr_new']]);
  });

  it('reads the store for a bounded number of unknown threads: made-up ids past the rate are filed as they came, without a read', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    await store.ensureMainThread(ROOM);
    const { conn } = await member('Ana');
    const reads = vi.spyOn(store, 'getThread');
    const made = Array.from({ length: 50 }, (_, i) => ({
      id: `m_made_${i}`,
      seq: 1 + i,
      roomId: ROOM,
      threadId: `thr_made_${i}`,
      author: ZED,
      text: 'flood',
      ts: new Date().toISOString(),
    }));
    for (const m of made) await late(m);
    await until(() => filed(conn).length === made.length);
    expect(reads.mock.calls.length).toBe(UNKNOWN_THREAD_LOOKUPS_BURST);
    // Each made-up id looked up is remembered as gone: the same ids again cost nothing.
    for (const m of made.slice(0, UNKNOWN_THREAD_LOOKUPS_BURST)) await late({ ...m, id: `${m.id}_again`, seq: m.seq + made.length });
    await until(() => filed(conn).length === made.length + UNKNOWN_THREAD_LOOKUPS_BURST);
    expect(reads.mock.calls.length).toBe(UNKNOWN_THREAD_LOOKUPS_BURST);
  });
});
