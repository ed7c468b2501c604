/**
 * A `hello {lastSeq}` whose replay is read from the store while other writes land: every message
 * reaches the joiner once, in its welcome or live. The store read is held open by the test, and the
 * writes go around the room's queue as HTTP asks, answers, fusions and other nodes' messages do
 * (appended, then broadcast).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Message } from '../../src/protocol/messages.js';
import { RoomHub } from '../../src/rooms/hub.js';
import { Identity } from '../../src/rooms/identity.js';
import { InProcessBus } from '../../src/rooms/in-process-bus.js';
import type { RoomOptions } from '../../src/rooms/options.js';
import type { Store } from '../../src/store/types.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { tempStore } from '../helpers.js';
import { FakeConnection, until } from './helpers.js';

const ROOM_ID = 'news_1';

/**
 * The store with its history reads held until `release()`: `snapshot: 'before'` reads, then waits
 * (writes made while held are not in the page); `'after'` waits, then reads (they are).
 */
function heldReads(store: SqliteStore) {
  let hold: { snapshot: 'before' | 'after'; entered: () => void; released: Promise<void> } | null = null;
  let release = () => {};
  const held = async <T>(read: () => Promise<T>): Promise<T> => {
    const h = hold;
    if (!h) return read();
    if (h.snapshot === 'after') {
      h.entered();
      await h.released;
      return read();
    }
    const page = await read();
    h.entered();
    await h.released;
    return page;
  };
  const wrapped = Object.create(store) as Store;
  wrapped.messagesBefore = (...args) => held(() => store.messagesBefore(...args));
  wrapped.messagesAfter = (...args) => held(() => store.messagesAfter(...args));
  return {
    store: wrapped,
    /** Holds the next reads; resolves once one is held. */
    arm(snapshot: 'before' | 'after'): Promise<void> {
      return new Promise<void>((entered) => {
        let open!: () => void;
        const released = new Promise<void>((r) => (open = r));
        hold = { snapshot, entered, released };
        release = () => {
          hold = null;
          open();
        };
      });
    },
    release: () => release(),
  };
}

describe('a replay read from the store while messages arrive', () => {
  let temp: ReturnType<typeof tempStore>;
  let reads: ReturnType<typeof heldReads>;
  let hub: RoomHub;
  let threadId: string;
  let n = 0;

  const makeHub = async (options: Partial<RoomOptions> = {}) => {
    await hub?.close();
    hub = new RoomHub({
      store: reads.store,
      identity: new Identity(Buffer.alloc(32, 7)),
      bus: new InProcessBus(),
      resolver: async (id) => (id === ROOM_ID ? { id, kind: 'news', title: 'T', url: null, context: 'T' } : null),
      options: { maxConnectionsPerIp: 1_000, ...options },
    });
  };

  beforeEach(async () => {
    temp = tempStore();
    reads = heldReads(temp.store);
    threadId = (await temp.store.ensureMainThread(ROOM_ID)).id;
    for (let i = 1; i <= 30; i++) await append(`old ${i}`);
    await makeHub();
  });
  afterEach(async () => {
    reads.release();
    await hub.close();
    await temp.close();
  });

  /** Stores a message as an HTTP ask's question is stored: outside the room's queue. */
  function append(text: string): Promise<Message> {
    return temp.store.appendMessage({ roomId: ROOM_ID, threadId, author: { id: 'u_http', name: 'Guest', kind: 'user' }, text }).then((r) => r.message);
  }
  function deliver(message: Message): void {
    hub.broadcast(ROOM_ID, { type: 'message', message });
  }

  function connect(hello: Record<string, unknown>) {
    const conn = new FakeConnection(`c${++n}`);
    hub.connect(conn, { roomId: ROOM_ID, ip: `10.0.0.${n}` })!.receive(JSON.stringify({ type: 'hello', ...hello }));
    return conn;
  }
  async function member(name: string): Promise<FakeConnection> {
    const conn = connect({ name });
    await until(() => conn.frames('welcome').length === 1);
    return conn;
  }

  /** With Ana in the room, Bo reconnects with lastSeq 2; resolves with Bo's connection once his replay's read is held at `phase`. */
  async function boReadingReplay(phase: 'before' | 'after'): Promise<FakeConnection> {
    await member('Ana');
    const held = reads.arm(phase);
    const bo = connect({ name: 'Bo', lastSeq: 2 });
    await held;
    return bo;
  }

  /** Seqs the connection got, from its welcome's history and then live, in the order received. */
  function received(conn: FakeConnection): number[] {
    const seqs: number[] = [];
    for (const f of conn.sent.map((s) => JSON.parse(s))) {
      if (f.type === 'welcome') seqs.push(...f.history.map((m: Message) => m.seq));
      if ((f.type === 'message' || f.type === 'assistant.done') && f.message.seq > 0) seqs.push(f.message.seq);
    }
    return seqs;
  }

  async function stored(): Promise<number[]> {
    return (await temp.store.messagesAfter(ROOM_ID, 0, 10_000)).map((m) => m.seq);
  }

  it('gives a message delivered during the read in the welcome', async () => {
    const ana = await member('Ana');
    const held = reads.arm('before');
    const bo = connect({ name: 'Bo', lastSeq: 2 });
    await held;
    deliver(await append('asked over HTTP while Bo reads'));
    expect(ana.frames('message').map((f) => f.message.seq)).toEqual([31]);
    reads.release();
    await until(() => bo.frames('welcome').length === 1);
    deliver(await append('after the join'));
    await until(() => bo.frames('message').length === 1);
    expect(received(bo)).toEqual(Array.from({ length: 30 }, (_, i) => i + 3));
    expect(bo.frames('welcome')[0].seq).toBe(31);
  });

  it('gives more messages than the room keeps in memory, when all of them arrive during the read', async () => {
    const bo = await boReadingReplay('before');
    for (let i = 0; i < 25; i++) deliver(await append(`burst ${i}`));
    reads.release();
    await until(() => bo.frames('welcome').length === 1);
    expect(received(bo)).toEqual(Array.from({ length: 53 }, (_, i) => i + 3));
  });

  it('does not repeat live a message the welcome read from the store before the room delivered it', async () => {
    const bo = await boReadingReplay('after');
    const late = await append('stored, not yet delivered');
    reads.release();
    await until(() => bo.frames('welcome').length === 1);
    expect(bo.frames('welcome')[0].history.at(-1).seq).toBe(31);
    expect(bo.frames('welcome')[0].seq).toBe(31);
    deliver(late);
    deliver(await append('after the join'));
    await until(() => bo.frames('message').length >= 1);
    expect(received(bo)).toEqual(Array.from({ length: 30 }, (_, i) => i + 3));
  });

  it('still sends the end of an answer the welcome carried before the room delivered it, so the client stops waiting for it', async () => {
    const bo = await boReadingReplay('after');
    const answer = await append('an answer stored, its assistant.done not yet sent');
    reads.release();
    await until(() => bo.frames('welcome').length === 1);
    expect(bo.frames('welcome')[0].history.at(-1).seq).toBe(answer.seq);
    hub.broadcast(ROOM_ID, { type: 'assistant.done', message: answer });
    await until(() => bo.frames('assistant.done').length === 1);
    // A plain message the welcome carried is not sent again.
    expect(bo.frames('message')).toEqual([]);
  });

  it('delivers live a message stored before another but delivered after the join', async () => {
    const bo = await boReadingReplay('before');
    const first = await append('stored first, delivered last');
    deliver(await append('stored second, delivered first'));
    reads.release();
    await until(() => bo.frames('welcome').length === 1);
    deliver(first);
    await until(() => bo.frames('message').length === 1);
    expect(received(bo).sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, i) => i + 3));
  });

  it('cuts a replay to its byte limit from the oldest end only, with what arrived during the read', async () => {
    await makeHub({ replayMaxBytes: 4_000 });
    const bo = await boReadingReplay('before');
    for (let i = 0; i < 25; i++) deliver(await append(`burst ${i}`));
    reads.release();
    await until(() => bo.frames('welcome').length === 1);
    deliver(await append('after the join'));
    await until(() => bo.frames('message').length === 1);
    const welcome = bo.frames('welcome')[0];
    expect(welcome.truncated).toBe(true);
    const got = received(bo);
    const all = await stored();
    // The newest messages, none missing between the oldest kept and the newest; none twice.
    expect(got).toEqual(all.slice(all.indexOf(got[0])));
    expect(got.length).toBeLessThan(all.length - 2);
  });
});
