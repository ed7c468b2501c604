/**
 * A catch-up from the store (NodeSync.fromStore: after a bus outage, a `sync` from another node, a
 * message far ahead) hands its messages to the sockets a slice per turn of the event loop, within
 * the send limits, and live messages heard meanwhile wait behind the missed ones. The sockets here
 * behave like the real transport (routes/rooms-ws-connection.ts): what a turn sends is written at
 * its end, so the send limits see it from the next turn on. Turns are counted, never timed.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CloseCode } from '../../src/protocol/close-codes.js';
import type { Message } from '../../src/protocol/messages.js';
import { encodeEnvelope, type Delivery } from '../../src/rooms/envelope.js';
import { HeldMessages, MAX_HELD_MESSAGES } from '../../src/rooms/held-messages.js';
import type { RoomHub } from '../../src/rooms/hub.js';
import type { InProcessBus } from '../../src/rooms/in-process-bus.js';
import { CATCH_UP_TURN_BYTES } from '../../src/rooms/node-sync.js';
import type { RoomOptions } from '../../src/rooms/options.js';
import type { Connection } from '../../src/rooms/types.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { silentLogger } from '../../src/logger.js';
import { hubBesideOtherNode, ROOM, until } from './helpers.js';

/**
 * Counts the bytes sent in each turn of the event loop, to the room and to each socket, and ends
 * the turn as the transport does. The room's count is of messages alone: the joins' presence,
 * coalesced over up to a second in a large room, may go out in any turn of a catch-up.
 */
class TurnMeter {
  maxRoomBytes = 0;
  maxSocketBytes = 0;
  private roomBytes = 0;
  private readonly sockets: TurnSocket[] = [];
  private scheduled = false;

  sent(socket: TurnSocket, bytes: number, message: boolean): void {
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.endTurn());
    }
    if (socket.thisTurn === 0) this.sockets.push(socket);
    socket.thisTurn += bytes;
    if (message) this.roomBytes += bytes;
  }

  private endTurn(): void {
    this.scheduled = false;
    this.maxRoomBytes = Math.max(this.maxRoomBytes, this.roomBytes);
    this.roomBytes = 0;
    for (const socket of this.sockets.splice(0)) {
      this.maxSocketBytes = Math.max(this.maxSocketBytes, socket.thisTurn);
      socket.written();
    }
  }
}

/** A socket whose client reads everything at once, or nothing. */
class TurnSocket implements Connection {
  readonly sent: string[] = [];
  bufferedAmount = 0;
  closedWith: number | null = null;
  thisTurn = 0;
  constructor(
    readonly id: string,
    private readonly reads: boolean,
    private readonly meter: TurnMeter,
  ) {}
  send(frame: string): void {
    this.sent.push(frame);
    this.meter.sent(this, Buffer.byteLength(frame), isMessage(frame));
  }
  /** The turn ended: its frames were written; a client that does not read leaves them queued. */
  written(): void {
    if (!this.reads) this.bufferedAmount += this.thisTurn;
    this.thisTurn = 0;
  }
  close(code: number): void {
    this.closedWith = code;
  }
  get welcomed(): boolean {
    return this.sent.some((f) => f.startsWith('{"type":"welcome"'));
  }
  /** The message and answer frames received, in order. */
  messages(): { type: string; message: Message }[] {
    return this.sent.filter(isMessage).map((f) => JSON.parse(f));
  }
  /** Seqs of the message and answer frames received, in order. */
  seqs(): number[] {
    return this.messages().map((f) => f.message.seq);
  }
}

/** Whether a frame carries a message (a chat message or an answer's end). */
const isMessage = (frame: string) => frame.startsWith('{"type":"message"') || frame.startsWith('{"type":"assistant.done"');

const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('a catch-up from the store', () => {
  let store: SqliteStore;
  let closeAll: () => Promise<void>;
  let hub: RoomHub;
  let other: InProcessBus;
  let meter: TurnMeter;
  let n = 0;

  async function start(options: Partial<RoomOptions> = {}): Promise<void> {
    meter = new TurnMeter();
    ({ store, hub, other, close: closeAll } = await hubBesideOtherNode(silentLogger, { newIdentitiesPerMinute: 100_000, ...options }));
  }
  afterEach(() => closeAll());

  /** Members joined at once, `readers` of them reading everything and the rest nothing. */
  async function members(readers: number, stalled = 0): Promise<TurnSocket[]> {
    const sockets: TurnSocket[] = [];
    for (let i = 0; i < readers + stalled; i++) {
      const socket = new TurnSocket(`c${++n}`, i < readers, meter);
      const session = hub.connect(socket, { roomId: ROOM, ip: `10.${n >> 16}.${(n >> 8) & 255}.${n & 255}` })!;
      session.receive(JSON.stringify({ type: 'hello', name: `M${n}` }));
      sockets.push(socket);
    }
    await until(() => sockets.every((s) => s.welcomed), 20_000);
    return sockets;
  }

  /** Messages the other node stored and this one never heard of. */
  async function storedElsewhere(count: number, chars: number): Promise<Message[]> {
    const thread = await store.ensureMainThread(ROOM);
    const out: Message[] = [];
    for (let i = 0; i < count; i++) {
      const text = `${i} `.padEnd(chars, 'x');
      out.push((await store.appendMessage({ roomId: ROOM, threadId: thread.id, author: { id: 'u_zed', name: 'Zed', kind: 'user' }, text })).message);
    }
    return out;
  }

  const publish = (delivery: Delivery, frame: string) => other.publish(ROOM, encodeEnvelope({ node: 'other', delivery, frame }));
  /** The other node says it missed what was published after `from`: this one reads the store from there. */
  const syncFrom = (from: number) => publish('sync', JSON.stringify({ from }));
  const live = (message: Message) => publish('history', JSON.stringify({ type: 'message', message }));

  it('sends 500 missed messages to 200 members a bounded slice per turn, each once and in order', async () => {
    await start();
    const sockets = await members(200);
    const missed = await storedElsewhere(500, 200);
    const frameBytes = Buffer.byteLength(JSON.stringify({ type: 'message', message: missed[0] })) + 16;
    await syncFrom(0);
    await until(() => sockets.every((s) => s.seqs().length === 500), 60_000);
    for (const s of sockets) expect(s.seqs()).toEqual(upTo(500));
    // All of it in one turn would be 500 × 200 frames (~40 MB); a turn carries at most its share plus a message.
    expect(meter.maxRoomBytes).toBeLessThanOrEqual(CATCH_UP_TURN_BYTES + 200 * frameBytes);
  });

  it('gives one member at most a soft limit of frames a turn, and closes one that does not read once its queue passes the hard limit', async () => {
    await start();
    const [reader, stalled] = await members(1, 1);
    const missed = await storedElsewhere(500, 3_000);
    const frameBytes = Buffer.byteLength(JSON.stringify({ type: 'message', message: missed[0] })) + 16;
    await syncFrom(0);
    await until(() => reader.seqs().length === 500, 60_000);
    expect(reader.seqs()).toEqual(upTo(500));
    expect(meter.maxSocketBytes).toBeLessThanOrEqual(hub.options.softBufferedBytes + frameBytes);
    // 1.6 MB were missed: the member that reads nothing is closed like a slow reader, and comes back with lastSeq.
    expect(stalled.closedWith).toBe(CloseCode.TRY_AGAIN_LATER);
    expect(stalled.bufferedAmount).toBeLessThanOrEqual(hub.options.hardBufferedBytes + hub.options.softBufferedBytes + frameBytes);
    expect(stalled.seqs()).toEqual(upTo(stalled.seqs().length));
  });

  it('keeps the node within its send budget: members that read nothing are closed once it is spent', async () => {
    const limits = { softBufferedBytes: 16 * 1024, hardBufferedBytes: 256 * 1024, nodeBufferedBytes: 512 * 1024 };
    await start(limits);
    const [reader, ...stalled] = await members(1, 8);
    // 200 KB each: under a member's own limit, but eight of them are three times the node's budget.
    const missed = await storedElsewhere(200, 1_000);
    const frameBytes = Buffer.byteLength(JSON.stringify({ type: 'message', message: missed[0] })) + 16;
    await syncFrom(0);
    await until(() => reader.seqs().length === 200, 60_000);
    expect(reader.seqs()).toEqual(upTo(200));
    const closed = stalled.filter((s) => s.closedWith !== null);
    expect(closed.length).toBeGreaterThan(0);
    for (const s of closed) expect(s.closedWith).toBe(CloseCode.TRY_AGAIN_LATER);
    const stillQueued = stalled.filter((s) => s.closedWith === null).reduce((sum, s) => sum + s.bufferedAmount, 0);
    expect(stillQueued).toBeLessThanOrEqual(limits.nodeBufferedBytes + stalled.length * (limits.softBufferedBytes + frameBytes));
  });

  it('holds live messages heard during the catch-up behind the missed ones: every member gets each seq once, in order', async () => {
    await start({ replayLimit: 100 });
    const sockets = await members(3);
    const missed = await storedElsewhere(250, 1_500);
    const read = store.messagesAfter.bind(store);
    let newest: Message | null = null;
    vi.spyOn(store, 'messagesAfter').mockImplementation(async (roomId, after, limit) => {
      const page = await read(roomId, after, limit);
      if (after === 200 && !newest) {
        // While the last page is read: a message stored since, a copy of one the page holds and the
        // end of an answer the page holds arrive live.
        [newest] = await storedElsewhere(1, 10);
        await live(newest);
        await live(missed[219]);
        await publish('history', JSON.stringify({ type: 'assistant.done', message: missed[229] }));
        await new Promise((resolve) => setImmediate(resolve));
      }
      return page;
    });
    // A live copy of a message the catch-up is about to send, heard between two of its slices.
    let echoed = false;
    const first = sockets[0];
    const send = first.send.bind(first);
    first.send = (frame) => {
      send(frame);
      if (!echoed && frame.includes('"seq":10,')) {
        echoed = true;
        void live(missed[89]);
      }
    };
    await syncFrom(0);
    await until(() => sockets.every((s) => s.seqs().length === 251), 60_000);
    expect(echoed).toBe(true);
    for (const s of sockets) {
      expect(s.seqs()).toEqual(upTo(251));
      // The answer's end is what tells a client it is finished: it goes out in the place of the stored copy.
      expect(s.messages()[229].type).toBe('assistant.done');
    }
  });
});

describe('HeldMessages', () => {
  const held = (seq: number, frame = `m${seq}`) => ({ frame, message: { seq } as Message });

  it('holds only during a catch-up, gives them back in seq order when the last one ends, and lets the catch-up take one', () => {
    const h = new HeldMessages();
    expect(h.hold(held(3), false)).toBe(false);
    h.begin();
    h.begin();
    expect(h.last).toBe(false);
    for (const seq of [7, 5, 6]) expect(h.hold(held(seq), false)).toBe(true);
    expect(h.take(6)?.frame).toBe('m6');
    expect(h.end()).toEqual([]);
    expect(h.last).toBe(true);
    expect(h.end().map((m) => m.message.seq)).toEqual([5, 7]);
    expect(h.holding).toBe(false);
  });

  it('keeps an answer’s end over a plain copy of its seq, and refuses past its cap', () => {
    const h = new HeldMessages();
    h.begin();
    h.hold(held(1, 'message'), false);
    h.hold(held(1, 'done'), true);
    h.hold(held(1, 'again'), false);
    expect(h.take(1)?.frame).toBe('done');
    for (let seq = 1; seq <= MAX_HELD_MESSAGES; seq++) expect(h.hold(held(seq), false)).toBe(true);
    expect(h.hold(held(MAX_HELD_MESSAGES + 1), false)).toBe(false);
    expect(h.drain()).toHaveLength(MAX_HELD_MESSAGES);
  });
});
