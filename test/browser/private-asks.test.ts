import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/protocol/messages.js';
import { MAX_LOG_ENTRIES, MessageLog, type LogEntry } from '../../public/src/lib/message-log.js';
import { MAX_PRIVATE_CHARS, MAX_PRIVATE_ENTRIES, privateKey, readPrivate, writePrivate, type StorageLike } from '../../public/src/lib/private-asks.js';
import type { RoomMemory } from '../../public/src/lib/room-memory.js';
import { entriesOf } from '../../public/src/lib/thread-paging.js';
import { FakeStorage } from './fake-storage.js';

// No browser needed: the storage is a plain object standing in for sessionStorage.

const ROOM = 'news_1';
const ADA = { id: 'u_ada', name: 'Ada', kind: 'user' as const };
const BOB = { id: 'u_bob', name: 'Bob', kind: 'user' as const };
const AI = { id: 'assistant', name: 'Salon AI', kind: 'assistant' as const };

function msg(seq: number, fields: Partial<Message> = {}): Message {
  return {
    id: `m${seq}`,
    seq,
    roomId: ROOM,
    threadId: 't1',
    author: BOB,
    text: `message ${seq}`,
    ts: new Date(1_700_000_000_000 + seq * 1000).toISOString(),
    ...fields,
  };
}

function privateAnswer(n: number, fields: Partial<Message> = {}): Message {
  return msg(0, { id: `private_${n}`, author: AI, text: `answer ${n}`, clientId: `answer_${n}`, ...fields });
}

/** A private question handed over, then its answer, as RoomController records them. */
function askPrivately(log: MessageLog, n: number): void {
  log.addLocal(`p${n}`, `question ${n}`, ADA, 't1', ROOM, true);
  log.sentPrivately(`p${n}`);
  log.receive(privateAnswer(n));
}

const texts = (entries: readonly LogEntry[]) => entries.map((e) => e.message.text);

/** What a reload does: the room's snapshot and the private copy restored, then the welcome's history. */
function reload(log: MessageLog, storage: FakeStorage, history: Message[]): MessageLog {
  writePrivate(storage, ROOM, log.privateEntries());
  const fresh = MessageLog.restore(JSON.parse(JSON.stringify(log.snapshot())));
  fresh.restorePrivate(readPrivate(storage, ROOM));
  fresh.resetTo(history);
  return fresh;
}

describe('private questions kept in the tab', () => {
  it('come back after a reload in their place among the room’s messages, questions before their answers', () => {
    const storage = new FakeStorage();
    const log = new MessageLog();
    log.receive(msg(1));
    askPrivately(log, 1);
    log.receive(msg(2));
    askPrivately(log, 2);
    log.receive(msg(3));
    const shown = texts(log.entries);
    expect(shown).toEqual(['message 1', 'question 1', 'answer 1', 'message 2', 'question 2', 'answer 2', 'message 3']);

    const after = reload(log, storage, [msg(1), msg(2), msg(3)]);
    expect(texts(after.entries)).toEqual(shown);
    expect(after.entries.filter((e) => e.message.text.startsWith('question')).every((e) => e.private && e.state === 'sent')).toBe(true);
    // The room's own snapshot does not carry them: the private copy is their one record.
    expect(JSON.stringify(log.snapshot())).not.toContain('question 1');
  });

  it('mark a question whose answer a reload cut off, and only that one, in each thread', () => {
    const storage = new FakeStorage();
    const log = new MessageLog();
    log.receive(msg(1));
    askPrivately(log, 1);
    // Asked, then the page reloaded before its answer came: asked again, answered.
    log.addLocal('p2', 'question 2', ADA, 't1', ROOM, true);
    log.sentPrivately('p2');
    askPrivately(log, 3);
    // In another thread, a question still waiting.
    log.addLocal('p4', 'question 4', ADA, 't2', ROOM, true);
    log.sentPrivately('p4');
    const after = reload(log, storage, [msg(1)]);
    const marked = after.entries.filter((e) => e.unanswered).map((e) => e.message.text);
    expect(marked).toEqual(['question 2', 'question 4']);
  });

  it('unmark a question when its answer comes after the reload: the server went on with it for the returning asker', () => {
    const storage = new FakeStorage();
    const log = new MessageLog();
    log.receive(msg(1));
    log.addLocal('p1', 'question 1', ADA, 't1', ROOM, true);
    log.sentPrivately('p1');
    const after = reload(log, storage, [msg(1)]);
    expect(after.entries.filter((e) => e.unanswered).map((e) => e.message.text)).toEqual(['question 1']);
    after.receive(privateAnswer(1));
    expect(after.entries.filter((e) => e.unanswered)).toEqual([]);
    expect(texts(after.entries)).toEqual(['message 1', 'question 1', 'answer 1']);
  });

  it('survive the server history replacing the log, and the log trimming its oldest messages', () => {
    const log = new MessageLog();
    log.receive(msg(1));
    askPrivately(log, 1);
    log.resetTo([msg(1), msg(2)]);
    expect(texts(log.entries)).toEqual(['message 1', 'question 1', 'answer 1', 'message 2']);
    for (let seq = 3; seq <= MAX_LOG_ENTRIES + 10; seq++) log.receive(msg(seq));
    expect(log.size).toBe(MAX_LOG_ENTRIES);
    expect(texts(log.privateEntries())).toEqual(['question 1', 'answer 1']);
  });

  it('are forgotten on request, by thread or all at once, and the stored copy follows', () => {
    const storage = new FakeStorage();
    const log = new MessageLog();
    askPrivately(log, 1);
    log.addLocal('p9', 'in another thread', ADA, 't2', ROOM, true);
    log.sentPrivately('p9');
    expect(log.forgetPrivate((e) => e.message.threadId === 't2')).toBe(true);
    expect(texts(log.privateEntries())).toEqual(['question 1', 'answer 1']);
    expect(log.forgetPrivate(() => true)).toBe(true);
    expect(log.forgetPrivate(() => true)).toBe(false);
    writePrivate(storage, ROOM, log.privateEntries());
    expect(storage.items.has(privateKey(ROOM))).toBe(false);
  });

  it(`keep the newest ${MAX_PRIVATE_ENTRIES} entries and at most ${MAX_PRIVATE_CHARS} characters`, () => {
    const storage = new FakeStorage();
    const log = new MessageLog();
    for (let n = 1; n <= MAX_PRIVATE_ENTRIES; n++) askPrivately(log, n);
    writePrivate(storage, ROOM, log.privateEntries());
    const kept = readPrivate(storage, ROOM);
    expect(kept).toHaveLength(MAX_PRIVATE_ENTRIES);
    expect(kept[0].message.text).toBe(`question ${MAX_PRIVATE_ENTRIES / 2 + 1}`);
    expect(kept.at(-1)!.message.text).toBe(`answer ${MAX_PRIVATE_ENTRIES}`);

    const long = new MessageLog();
    for (let n = 1; n <= 40; n++) {
      long.addLocal(`p${n}`, `${n} ${'x'.repeat(19_000)}`, ADA, 't1', ROOM, true);
      long.sentPrivately(`p${n}`);
    }
    writePrivate(storage, ROOM, long.privateEntries());
    expect(storage.getItem(privateKey(ROOM))!.length).toBeLessThanOrEqual(MAX_PRIVATE_CHARS);
    const fits = readPrivate(storage, ROOM);
    expect(fits.length).toBeGreaterThan(10);
    expect(fits.length).toBeLessThan(40);
    expect(fits.at(-1)!.message.text.startsWith('40 ')).toBe(true);
  });

  it('read back nothing from a corrupt copy, and only well-formed entries from a tampered one', () => {
    const storage = new FakeStorage();
    for (const raw of ['{', 'null', '42', '"text"', '[]', '{"v":2,"entries":[]}', '{"v":1,"entries":{}}', '{"v":1}']) {
      storage.setItem(privateKey(ROOM), raw);
      expect(readPrivate(storage, ROOM)).toEqual([]);
    }
    const good = { key: 'c:p1', order: 1.5, state: 'sent', private: true, message: msg(0, { id: '', author: ADA, text: 'kept', clientId: 'p1' }) };
    const source = { n: 1, id: 'x', kind: 'news' as const, title: 'T', url: null, sourceType: 'document' as const, snippet: 's' };
    const answer = { key: 'm:private_1', order: 1.5, state: 'sent', message: { ...privateAnswer(1), sources: [source, { n: 'two' }, null] } };
    const hostile = [
      null,
      7,
      'entry',
      { ...good, key: 'c:other' },
      { ...good, order: 'first' },
      { ...good, message: { ...good.message, roomId: 'news_2' } },
      { ...good, message: { ...good.message, seq: 5 } },
      { ...good, message: { ...good.message, author: { ...ADA, kind: 'system' } } },
      { ...good, message: { ...good.message, text: 'x'.repeat(MAX_PRIVATE_CHARS + 1) } },
      { ...good, message: { ...good.message, text: { toString: 'evil' } } },
      { ...good, key: 'm:m7', message: { ...good.message, id: 'm7' } },
      { ...answer, key: 'm:public', message: { ...answer.message, id: 'public' } },
      good,
    ];
    storage.setItem(privateKey(ROOM), JSON.stringify({ v: 1, entries: [...hostile, answer, JSON.parse('{"__proto__":{"polluted":1},"key":"c:p2"}')] }));
    const read = readPrivate(storage, ROOM);
    expect(read.map((e) => e.key)).toEqual(['c:p1', 'm:private_1']);
    expect(read[1].message.sources).toHaveLength(1);

    // A longer text than the renderer shows is cut where the renderer cuts it.
    storage.setItem(privateKey(ROOM), JSON.stringify({ v: 1, entries: [{ ...good, message: { ...good.message, text: 'y'.repeat(30_000) } }] }));
    expect(readPrivate(storage, ROOM)[0].message.text).toHaveLength(20_000);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('never throw when the storage refuses to read or write', () => {
    const broken: StorageLike = {
      getItem: () => {
        throw new Error('SecurityError');
      },
      setItem: () => {
        throw new Error('QuotaExceededError');
      },
      removeItem: () => {
        throw new Error('SecurityError');
      },
    };
    const log = new MessageLog();
    askPrivately(log, 1);
    expect(() => writePrivate(broken, ROOM, log.privateEntries())).not.toThrow();
    expect(() => writePrivate(broken, ROOM, [])).not.toThrow();
    expect(readPrivate(broken, ROOM)).toEqual([]);
    expect(readPrivate(null, ROOM)).toEqual([]);
  });

  it('show once the messages around them are loaded, not at the top of a window that starts later', () => {
    const log = new MessageLog();
    log.receive(msg(5));
    askPrivately(log, 1);
    const fresh = reload(log, new FakeStorage(), [msg(30), msg(31)]);
    const memory: RoomMemory = { log: fresh, joined: true, mainThreadId: 't1', threadId: '', windowFloor: 30, noneBelow: new Map(), paged: new Set() };
    expect(texts(entriesOf(memory, 't1'))).toEqual(['message 30', 'message 31']);
    fresh.receiveOlder([msg(5), msg(6)]);
    memory.noneBelow.set('t1', 5);
    expect(texts(entriesOf(memory, 't1'))).toEqual(['message 5', 'question 1', 'answer 1', 'message 6', 'message 30', 'message 31']);
  });
});
