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
import { HeldMessages, MAX_HELD_FRAMES, MAX_HELD_MESSAGES } from '../../src/rooms/held-messages.js';
import type { RoomHub } from '../../src/rooms/hub.js';
import { InProcessBusNetwork, type InProcessBus } from '../../src/rooms/in-process-bus.js';
import { CATCH_UP_TURN_BYTES, GAP_WAIT_MS, MAX_SEQ_LEAD, NodeSync } from '../../src/rooms/node-sync.js';
import { roomOptions, type RoomOptions } from '../../src/rooms/options.js';
import { Room } from '../../src/rooms/room.js';
import type { Session } from '../../src/rooms/session.js';
import type { Connection } from '../../src/rooms/types.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { silentLogger } from '../../src/logger.js';
import { hubBesideOtherNode, OTHER_ROOM, ROOM, until } from './helpers.js';

/**
 * Counts the bytes sent in each turn of the event loop, to the room and to each socket, and ends
 * the turn as the transport does. The counts are of messages alone: the joins' presence,
 * coalesced over up to a second in a large room, may go out in any turn of a catch-up (on a busy
 * machine, a member's in the turn that already carried its soft limit of messages).
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
    if (message) {
      this.roomBytes += bytes;
      socket.messageBytesThisTurn += bytes;
    }
  }

  private endTurn(): void {
    this.scheduled = false;
    this.maxRoomBytes = Math.max(this.maxRoomBytes, this.roomBytes);
    this.roomBytes = 0;
    for (const socket of this.sockets.splice(0)) {
      this.maxSocketBytes = Math.max(this.maxSocketBytes, socket.messageBytesThisTurn);
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
  messageBytesThisTurn = 0;
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
    this.messageBytesThisTurn = 0;
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

const ZED = { id: 'u_zed', name: 'Zed', kind: 'user' as const };

const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('a catch-up from the store', () => {
  let store: SqliteStore;
  let closeAll: () => Promise<void>;
  let hub: RoomHub;
  let other: InProcessBus;
  let meter: TurnMeter;
  let n = 0;

  /** Messages the hub told its listener it heard, by seq, and the gaps it told (GAP). */
  let heard: number[] = [];
  const GAP = 0;
  async function start(options: Partial<RoomOptions> = {}): Promise<void> {
    meter = new TurnMeter();
    heard = [];
    ({
      store,
      hub,
      other,
      close: closeAll,
    } = await hubBesideOtherNode(
      silentLogger,
      { newIdentitiesPerMinute: 100_000, ...options },
      {
        onMessage: (m) => heard.push(m.seq),
        onGap: () => heard.push(GAP),
      },
    ));
  }
  afterEach(async () => {
    vi.useRealTimers();
    await closeAll();
  });

  /** The session of each socket `members` joined. */
  const sessions = new Map<TurnSocket, Session>();

  /** Members joined at once, `readers` of them reading everything and the rest nothing. */
  async function members(readers: number, stalled = 0): Promise<TurnSocket[]> {
    const sockets: TurnSocket[] = [];
    for (let i = 0; i < readers + stalled; i++) {
      const socket = new TurnSocket(`c${++n}`, i < readers, meter);
      const session = hub.connect(socket, { roomId: ROOM, ip: `10.${n >> 16}.${(n >> 8) & 255}.${n & 255}` })!;
      session.receive(JSON.stringify({ type: 'hello', name: `M${n}` }));
      sessions.set(socket, session);
      sockets.push(socket);
    }
    await until(() => sockets.every((s) => s.welcomed), 20_000);
    return sockets;
  }

  /** Messages the other node stored and this one never heard of. */
  async function storedElsewhere(count: number, chars: number, author: Message['author'] = ZED, clientId?: string): Promise<Message[]> {
    const thread = await store.ensureMainThread(ROOM);
    const out: Message[] = [];
    for (let i = 0; i < count; i++) {
      const text = `${i} `.padEnd(chars, 'x');
      out.push((await store.appendMessage({ roomId: ROOM, threadId: thread.id, author, text, clientId })).message);
    }
    return out;
  }

  const publish = (delivery: Delivery, frame: string) => other.publish(ROOM, encodeEnvelope({ node: 'other', delivery, frame }));
  /** The other node says it missed what was published after `from`: this one reads the store from there. */
  const syncFrom = (from: number) => publish('sync', JSON.stringify({ from }));
  const live = (message: Message) => publish('history', JSON.stringify({ type: 'message', message }));
  /** Every frame a socket got, parsed, in order. */
  const framesOf = (s: TurnSocket): Record<string, any>[] => s.sent.map((f) => JSON.parse(f));

  /** Makes the catch-up's store read after `at` wait until `release()`; `reached` once one does. */
  function hangRead(at: number): { reached: () => boolean; release(): void } {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reached = false;
    const read = store.messagesAfter.bind(store);
    vi.spyOn(store, 'messagesAfter').mockImplementation(async (roomId, after, limit) => {
      if (after === at) {
        reached = true;
        await gate;
      }
      return read(roomId, after, limit);
    });
    return { reached: () => reached, release };
  }

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

  it('sends an answer’s progress, deltas and failure only after the held question, drops the pieces of an answer whose end went first, and lets typing pass', async () => {
    await start({ replayLimit: 100 });
    const sockets = await members(2);
    await storedElsewhere(250, 1_500);
    const read = store.messagesAfter.bind(store);
    let question: Message | null = null;
    vi.spyOn(store, 'messagesAfter').mockImplementation(async (roomId, after, limit) => {
      if (after === 200 && !question) {
        // Before the catch-up reads its last page: a question, the start of its answer and that
        // answer's failure; typing; and the pieces and the stored end of another answer.
        [question] = await storedElsewhere(1, 10);
        await live(question);
        await publish('all', JSON.stringify({ type: 'assistant.progress', id: 'a1', stage: 'searching' }));
        await publish('all', JSON.stringify({ type: 'assistant.delta', id: 'a1', text: 'Half' }));
        await publish('all', JSON.stringify({ type: 'error', code: 'ERR_AI_TIMEOUT', message: 'too slow', clientId: 'q1' }));
        await publish('typing', JSON.stringify({ type: 'typing', user: { id: 'u_zed', name: 'Zed' }, active: true }));
        await publish('all', JSON.stringify({ type: 'assistant.progress', id: 'a2', stage: 'writing' }));
        await publish('all', JSON.stringify({ type: 'assistant.delta', id: 'a2', text: 'Who' }));
        const [answer] = await storedElsewhere(1, 10, { id: 'assistant', name: 'Salon', kind: 'assistant' }, 'a2');
        await publish('history', JSON.stringify({ type: 'assistant.done', message: answer }));
        await new Promise((resolve) => setImmediate(resolve));
      }
      return read(roomId, after, limit);
    });
    await syncFrom(0);
    // The held frames go out once the last catch-up has ended, which may be a turn after the
    // messages: the failure, the last of them, says they are all there.
    await until(() => sockets.every((s) => s.seqs().length === 252 && framesOf(s).some((f) => f.type === 'error')), 60_000);
    for (const s of sockets) {
      expect(s.seqs()).toEqual(upTo(252));
      const frames = framesOf(s);
      const at = (match: (f: Record<string, any>) => boolean) => frames.findIndex(match);
      const asked = at((f) => f.type === 'message' && f.message.seq === 251);
      const typing = at((f) => f.type === 'typing');
      expect(typing).toBeGreaterThanOrEqual(0);
      expect(typing).toBeLessThan(asked);
      expect(frames.filter((f) => f.id === 'a1').map((f) => f.type)).toEqual(['assistant.progress', 'assistant.delta']);
      expect(at((f) => f.id === 'a1')).toBeGreaterThan(asked);
      expect(at((f) => f.type === 'error')).toBeGreaterThan(at((f) => f.type === 'assistant.delta' && f.id === 'a1'));
      // The catch-up sent the stored end in its place, which holds the whole answer: the pieces
      // still waiting are not sent after it.
      expect(frames.filter((f) => f.id === 'a2')).toEqual([]);
      expect(frames[at((f) => f.message?.seq === 252)].type).toBe('assistant.done');
    }
  });

  it('builds no frame for the stored messages it finds delivered already (a sync from far back rereads up to 4,096)', async () => {
    await start();
    const [member] = await members(1);
    for (const message of await storedElsewhere(300, 100)) hub.broadcast(ROOM, { type: 'message', message });
    await until(() => member.seqs().length === 300);
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      await syncFrom(0);
      const room = (hub as unknown as { rooms: Map<string, Room> }).rooms.get(ROOM)!;
      expect(room.held.holding).toBe(true);
      await until(() => !room.held.holding);
      expect(stringify.mock.calls.filter(([v]) => (v as { type?: string } | null)?.type === 'message')).toEqual([]);
    } finally {
      stringify.mockRestore();
    }
    expect(member.seqs()).toEqual(upTo(300));
  });

  it('gives a member who joins while frames are held only those that came after its welcome', async () => {
    await start();
    const [early] = await members(1);
    for (const message of await storedElsewhere(30, 10)) hub.broadcast(ROOM, { type: 'message', message });
    await until(() => early.seqs().length === 30);
    // A rejoin from seq 5, older than the room's memory, reads the store: the join waits there.
    let letJoin!: () => void;
    const joinRead = new Promise<void>((resolve) => (letJoin = resolve));
    const before = store.messagesBefore.bind(store);
    vi.spyOn(store, 'messagesBefore').mockImplementation(async (...args) => {
      await joinRead;
      return before(...args);
    });
    const late = new TurnSocket('late', true, meter);
    hub.connect(late, { roomId: ROOM, ip: '10.8.0.1' })!.receive(JSON.stringify({ type: 'hello', name: 'Late', lastSeq: 5 }));
    const read = hangRead(30);
    await syncFrom(30);
    await publish('all', JSON.stringify({ type: 'assistant.delta', id: 'a1', text: 'before' }));
    letJoin();
    await until(() => late.welcomed);
    await publish('all', JSON.stringify({ type: 'assistant.delta', id: 'a1', text: 'after' }));
    await until(() => read.reached());
    read.release();
    await until(() => framesOf(early).filter((f) => f.type === 'assistant.delta').length === 2);
    await until(() => framesOf(late).some((f) => f.text === 'after'));
    // The welcome's `pending` already holds what came before it (the answer's text so far).
    expect(
      framesOf(late)
        .filter((f) => f.type === 'assistant.delta')
        .map((f) => f.text),
    ).toEqual(['after']);
    expect(
      framesOf(early)
        .filter((f) => f.type === 'assistant.delta')
        .map((f) => f.text),
    ).toEqual(['before', 'after']);
  });

  it('stores a post made during a catch-up at once, acks it to its poster, and echoes it in seq order after the missed ones', async () => {
    await start({ replayLimit: 100 });
    const [poster, neighbour] = await members(2);
    await storedElsewhere(250, 1_500);
    const heard: string[] = [];
    other.subscribe((_roomId, payload) => heard.push(payload));
    const read = hangRead(100);
    await syncFrom(0);
    await until(() => read.reached() && poster.seqs().length === 100, 20_000);
    const say = () => sessions.get(poster)!.receive(JSON.stringify({ type: 'say', text: 'mine', clientId: 'c-mine' }));
    const acks = () => framesOf(poster).filter((f) => f.type === 'ack');
    say();
    // Stored and on its way to the other node while the catch-up still waits for the store.
    await until(() => acks().length === 1);
    expect(heard.some((p) => p.includes('"clientId":"c-mine"'))).toBe(true);
    // Sent again meanwhile (a client resends what it has no echo of): acked again, not echoed ahead of the missed ones.
    say();
    await until(() => acks().length === 2);
    expect(poster.messages().some((f) => f.message.clientId === 'c-mine')).toBe(false);
    read.release();
    await until(() => [poster, neighbour].every((s) => s.seqs().length === 251), 60_000);
    for (const s of [poster, neighbour]) expect(s.seqs()).toEqual(upTo(251));
    const echo = poster.messages().find((f) => f.message.clientId === 'c-mine')!;
    expect(echo.message.seq).toBe(251);
    expect(acks()).toEqual([
      { type: 'ack', clientId: 'c-mine', id: echo.message.id },
      { type: 'ack', clientId: 'c-mine', id: echo.message.id },
    ]);
    expect(framesOf(neighbour).some((f) => f.type === 'ack')).toBe(false);
  });

  /** The hub's live room. */
  const liveRoom = () => (hub as unknown as { rooms: Map<string, Room> }).rooms.get(ROOM)!;

  /**
   * A member who got messages 1–`count` (and whatever `first` sends then), and a catch-up from
   * `count` whose store read waits until released.
   */
  async function catchingUpAfter(
    count: number,
    first: (member: TurnSocket) => Promise<void> = async () => {},
  ): Promise<{ member: TurnSocket; read: ReturnType<typeof hangRead> }> {
    const [member] = await members(1);
    for (const message of await storedElsewhere(count, 10)) hub.broadcast(ROOM, { type: 'message', message });
    await until(() => member.seqs().length === count);
    await first(member);
    const read = hangRead(count);
    await syncFrom(count);
    await until(() => read.reached());
    return { member, read };
  }

  it('takes the messages it holds as heard: the next seq from the other node is no gap, and asks for no second catch-up', async () => {
    await start();
    const { member, read } = await catchingUpAfter(10);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'], shouldAdvanceTime: true });
    // The other node goes on: 11, 12, … follow one another, held behind the catch-up; 13 comes a
    // moment before 12 (two nodes' publishes), which the room then holds too.
    const fresh = await storedElsewhere(5, 10);
    for (const i of [0, 2, 1, 3, 4]) await live(fresh[i]);
    await vi.advanceTimersByTimeAsync(GAP_WAIT_MS);
    expect(liveRoom().held.last).toBe(true);
    read.release();
    await until(() => member.seqs().length === 15 && !liveRoom().held.holding);
    expect(member.seqs()).toEqual(upTo(15));
  });

  it('measures how far ahead a message from the other node is from the newest it holds, not from the last it delivered', async () => {
    await start();
    const { member, read } = await catchingUpAfter(10);
    for (const message of await storedElsewhere(MAX_SEQ_LEAD + 20, 10)) await live(message);
    expect(liveRoom().held.last).toBe(true);
    read.release();
    await until(() => member.seqs().length === MAX_SEQ_LEAD + 30 && !liveRoom().held.holding);
    expect(member.seqs()).toEqual(upTo(MAX_SEQ_LEAD + 30));
  });

  it('lets an answer that was streaming when the catch-up began go on streaming; one begun during it waits behind its question', async () => {
    await start();
    const delta = (id: string, text: string) => publish('all', JSON.stringify({ type: 'assistant.delta', id, text }));
    const deltas = (s: TurnSocket, id: string) =>
      framesOf(s)
        .filter((f) => f.type === 'assistant.delta' && f.id === id)
        .map((f) => f.text);
    const { member, read } = await catchingUpAfter(10, async (m) => {
      await delta('a1', 'Hel');
      await until(() => deltas(m, 'a1').length === 1);
    });
    // A question the room holds behind the catch-up, and the start of its answer.
    const [question] = await storedElsewhere(1, 10);
    await live(question);
    await delta('a2', 'Who');
    await delta('a1', 'lo');
    await new Promise((resolve) => setImmediate(resolve));
    expect(deltas(member, 'a1')).toEqual(['Hel', 'lo']);
    expect(deltas(member, 'a2')).toEqual([]);
    read.release();
    await until(() => deltas(member, 'a2').length === 1 && !liveRoom().held.holding);
    const frames = framesOf(member);
    const at = (match: (f: Record<string, any>) => boolean) => frames.findIndex(match);
    expect(at((f) => f.message?.seq === 11)).toBeGreaterThan(at((f) => f.text === 'lo'));
    expect(at((f) => f.id === 'a2')).toBeGreaterThan(at((f) => f.message?.seq === 11));
  });

  /** A frame of an answer from the other node, with the header that says which answer it is part of and its question's seq. */
  const tagged = (frame: Record<string, unknown>, answer: string, questionSeq: number) =>
    other.publish(ROOM, encodeEnvelope({ node: 'other', delivery: 'all', frame: JSON.stringify(frame), answer: { answer, questionSeq } }));
  const textsOf = (s: TurnSocket, id: string) =>
    framesOf(s)
      .filter((f) => f.type === 'assistant.delta' && f.id === id)
      .map((f) => f.text);
  const errorsOf = (s: TurnSocket) => framesOf(s).filter((f) => f.type === 'error');

  it('sends the failure of an answer streaming when the catch-up began at once, as its pieces; an untagged failure still waits', async () => {
    await start();
    const { member, read } = await catchingUpAfter(10, async (m) => {
      // Two answers to message 10 streaming: one written on the other node, one on this one.
      await tagged({ type: 'assistant.delta', id: 'a1', text: 'Hel' }, 'a1', 10);
      hub.broadcast(ROOM, { type: 'assistant.delta', id: 'a3', text: 'Wh' }, { answer: 'a3', questionSeq: 10 });
      await until(() => textsOf(m, 'a1').length === 1 && textsOf(m, 'a3').length === 1);
    });
    // A question the room holds behind the catch-up; then both answers fail, and a failure from a
    // node that tags none (it could be about the held question) comes.
    const [question] = await storedElsewhere(1, 10);
    await live(question);
    await tagged({ type: 'error', code: 'ERR_AI_TIMEOUT', message: 'too slow', clientId: 'q1' }, 'a1', 10);
    hub.broadcast(ROOM, { type: 'error', code: 'ERR_AI_BAD_RESPONSE', message: 'empty', clientId: 'q3' }, { answer: 'a3', questionSeq: 10 });
    await publish('all', JSON.stringify({ type: 'error', code: 'ERR_AI_TIMEOUT', message: 'too slow', clientId: 'q4' }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(errorsOf(member).map((f) => f.clientId)).toEqual(['q1', 'q3']);
    expect(member.seqs()).toEqual(upTo(10));
    read.release();
    await until(() => member.seqs().length === 11 && !liveRoom().held.holding);
    const frames = framesOf(member);
    expect(errorsOf(member).map((f) => f.clientId)).toEqual(['q1', 'q3', 'q4']);
    expect(frames.findIndex((f) => f.clientId === 'q4')).toBeGreaterThan(frames.findIndex((f) => f.message?.seq === 11));
  });

  it('lets an answer begun during the catch-up stream once the member has its question; one whose question is held waits behind it', async () => {
    await start();
    const { member, read } = await catchingUpAfter(10);
    const [question] = await storedElsewhere(1, 10);
    await live(question);
    // Answers to message 10, which the member has (one from the other node, one written here), and
    // to message 11, which the room holds.
    await tagged({ type: 'assistant.progress', id: 'a2', stage: 'searching' }, 'a2', 10);
    await tagged({ type: 'assistant.delta', id: 'a2', text: 'Who' }, 'a2', 10);
    hub.broadcast(ROOM, { type: 'assistant.delta', id: 'a4', text: 'Yes' }, { answer: 'a4', questionSeq: 10 });
    await tagged({ type: 'assistant.delta', id: 'a5', text: 'Not yet' }, 'a5', 11);
    await new Promise((resolve) => setImmediate(resolve));
    expect(
      framesOf(member)
        .filter((f) => f.id === 'a2')
        .map((f) => f.type),
    ).toEqual(['assistant.progress', 'assistant.delta']);
    expect(textsOf(member, 'a4')).toEqual(['Yes']);
    expect(textsOf(member, 'a5')).toEqual([]);
    // It goes on streaming; its end waits in seq order like any message.
    await tagged({ type: 'assistant.delta', id: 'a2', text: ' knows' }, 'a2', 10);
    const [end] = await storedElsewhere(1, 10, { id: 'assistant', name: 'Salon', kind: 'assistant' }, 'a2');
    await publish('history', JSON.stringify({ type: 'assistant.done', message: end }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(textsOf(member, 'a2')).toEqual(['Who', ' knows']);
    expect(member.seqs()).toEqual(upTo(10));
    read.release();
    await until(() => member.seqs().length === 12 && textsOf(member, 'a5').length === 1 && !liveRoom().held.holding);
    expect(member.seqs()).toEqual(upTo(12));
    const frames = framesOf(member);
    expect(frames[frames.findIndex((f) => f.message?.seq === 12)].type).toBe('assistant.done');
    expect(frames.findIndex((f) => f.id === 'a5')).toBeGreaterThan(frames.findIndex((f) => f.message?.seq === 11));
  });

  it('lets an answer to a question older than the history the room loaded stream during a catch-up, which sends none of those again', async () => {
    await start();
    // Thirty messages stored before anyone here joined: the room loads the newest (historySize, 20).
    await storedElsewhere(30, 10);
    const [member] = await members(1);
    const welcome = framesOf(member).find((f) => f.type === 'welcome')!;
    expect(welcome.history.map((m: Message) => m.seq)).toEqual(upTo(30).slice(-hub.options.historySize));
    // Twenty-five more, delivered here: the room's memory moves on to the newest 20 (36–55).
    for (const message of await storedElsewhere(25, 10)) hub.broadcast(ROOM, { type: 'message', message });
    await until(() => member.seqs().length === 25);
    // A catch-up from the room's start (a `sync` from far back) whose store read waits.
    const read = hangRead(0);
    await syncFrom(0);
    await until(() => read.reached());
    // An answer to message 5, stored before the room loaded (every member here joined after it),
    // and one to message 35, delivered here and no longer in the room's memory.
    await tagged({ type: 'assistant.progress', id: 'a1', stage: 'searching' }, 'a1', 5);
    await tagged({ type: 'assistant.delta', id: 'a1', text: 'Old' }, 'a1', 5);
    await tagged({ type: 'assistant.delta', id: 'a2', text: 'Less old' }, 'a2', 35);
    await new Promise((resolve) => setImmediate(resolve));
    expect(
      framesOf(member)
        .filter((f) => f.id === 'a1')
        .map((f) => f.type),
    ).toEqual(['assistant.progress', 'assistant.delta']);
    expect(textsOf(member, 'a2')).toEqual(['Less old']);
    read.release();
    await until(() => !liveRoom().held.holding);
    // The catch-up read messages 1–55 and found them all delivered: 1–10 are older than the
    // welcome, and sent now they would arrive after it.
    expect(member.seqs()).toEqual(upTo(55).slice(30));
  });

  it('holds an answer to a question a gap skipped, though the room delivered twenty newer ones, until the question went out', async () => {
    await start();
    const [member] = await members(1);
    const stored = await storedElsewhere(40, 10);
    // Every read from after message 10 waits: the catch-up below, and the gap's own a second on.
    const read = hangRead(10);
    // The other node's messages come as they were published, save 11 (its publish was lost): 12–40
    // go out as they come, and the room's history (its newest 20) moves past 11.
    for (const message of stored) if (message.seq !== 11) await live(message);
    await until(() => member.seqs().length === 39);
    await syncFrom(10);
    await until(() => read.reached());
    await tagged({ type: 'assistant.delta', id: 'a1', text: 'About 11' }, 'a1', 11);
    await new Promise((resolve) => setImmediate(resolve));
    expect(textsOf(member, 'a1')).toEqual([]);
    read.release();
    await until(() => textsOf(member, 'a1').length === 1 && !liveRoom().held.holding);
    const frames = framesOf(member);
    expect(frames.findIndex((f) => f.id === 'a1')).toBeGreaterThan(frames.findIndex((f) => f.message?.seq === 11));
  });

  it('sends what a room holds past its cap in slices while the catch-up’s store read hangs, each message once', async () => {
    await start();
    const sockets = await members(2);
    const stored = await storedElsewhere(MAX_HELD_MESSAGES + 100, 200);
    const frameBytes = Buffer.byteLength(JSON.stringify({ type: 'message', message: stored[0] })) + 16;
    const read = hangRead(0);
    await syncFrom(0);
    await until(() => read.reached());
    // Stored messages told to the room while it waits for the store (HTTP asks, answers, posts).
    for (const message of stored) hub.broadcast(ROOM, { type: 'message', message });
    await until(() => sockets.every((s) => s.seqs().length >= MAX_HELD_MESSAGES), 20_000);
    await new Promise((resolve) => setImmediate(resolve));
    // All 1,000 at once would be ~300 KB to each member in one turn.
    expect(meter.maxSocketBytes).toBeLessThanOrEqual(hub.options.softBufferedBytes + frameBytes);
    await until(() => sockets.every((s) => s.seqs().length === stored.length), 20_000);
    for (const s of sockets) expect(s.seqs()).toEqual(upTo(stored.length));
    read.release();
    const room = (hub as unknown as { rooms: Map<string, Room> }).rooms.get(ROOM)!;
    await until(() => !room.held.holding);
    for (const s of sockets) expect(s.seqs()).toEqual(upTo(stored.length));
  });

  it('sends an asker’s "queued" notice after the held question it is about', async () => {
    await start();
    const { member, read } = await catchingUpAfter(10);
    const asker = sessions.get(member)!;
    // The question, asked on the other node by the member (from another tab), waits behind the
    // catch-up here; the assistant there tells the asker, on every node, that it is queued.
    const [question] = await storedElsewhere(1, 10, { id: asker.userId, name: 'M', kind: 'user' });
    await live(question);
    const queued = JSON.stringify({ type: 'warning', code: 'ASSISTANT_QUEUED', message: 'The assistant is busy; your question is number 2 in line.' });
    await other.publish(ROOM, encodeEnvelope({ node: 'other', delivery: 'user', frame: queued, user: asker.userId }));
    await new Promise((resolve) => setImmediate(resolve));
    read.release();
    await until(() => member.seqs().length === 11 && framesOf(member).some((f) => f.type === 'warning'));
    const frames = framesOf(member);
    expect(frames.findIndex((f) => f.type === 'warning')).toBeGreaterThan(frames.findIndex((f) => f.message?.seq === 11));
  });

  it('keeps the order past twice its cap: what it held longest goes out first, a message at a time, and the newest waits', async () => {
    await start();
    const sockets = await members(2);
    const stored = await storedElsewhere(2 * MAX_HELD_MESSAGES + 10, 20);
    const read = hangRead(0);
    await syncFrom(0);
    await until(() => read.reached());
    // All told to the room in one turn: the slices that send what it holds past its cap cannot keep up.
    for (const message of stored) hub.broadcast(ROOM, { type: 'message', message });
    for (const s of sockets) expect(s.seqs()).toEqual(upTo(10));
    // What it took out to send goes out in slices; what came after waits for the catch-up, as below the caps.
    await until(() => sockets.every((s) => s.seqs().length === 2 * MAX_HELD_MESSAGES + 1), 20_000);
    for (const s of sockets) expect(s.seqs()).toEqual(upTo(2 * MAX_HELD_MESSAGES + 1));
    read.release();
    await until(() => !liveRoom().held.holding);
    for (const s of sockets) expect(s.seqs()).toEqual(upTo(stored.length));
  });

  const ASSISTANT = { id: 'assistant', name: 'Salon', kind: 'assistant' as const };

  it('sends the ends of answers on their way out past the cap as `assistant.done`, in place of the store’s copies, each seq once', async () => {
    await start();
    const [early] = await members(1);
    for (const message of await storedElsewhere(10, 10)) hub.broadcast(ROOM, { type: 'message', message });
    await until(() => early.seqs().length === 10);
    // A member back from seq 5, and an answer streaming to both.
    const back = new TurnSocket('back', true, meter);
    hub.connect(back, { roomId: ROOM, ip: '10.9.0.1' })!.receive(JSON.stringify({ type: 'hello', name: 'Back', lastSeq: 5 }));
    await until(() => back.welcomed);
    hub.broadcast(ROOM, { type: 'assistant.delta', id: 'a0', text: 'Hel' }, { answer: 'a0', questionSeq: 10 });
    const read = hangRead(10);
    await syncFrom(10);
    await until(() => read.reached());
    // More than the cap told to the room while the catch-up waits, every tenth the end of an answer
    // (a0's first); the read goes on as the room starts sending what it holds.
    const told: Message[] = [];
    for (let i = 0; i < MAX_HELD_MESSAGES + 100; i++) {
      const answer = i % 10 === 0 ? `a${i / 10}` : undefined;
      told.push(...(await storedElsewhere(1, 200, answer ? ASSISTANT : ZED, answer)));
    }
    for (const message of told) {
      if (message.clientId) hub.broadcast(ROOM, { type: 'assistant.done', message }, { answer: message.clientId, questionSeq: 10 });
      else hub.broadcast(ROOM, { type: 'message', message });
    }
    read.release();
    const last = told.at(-1)!.seq;
    await until(() => early.seqs().length === last && back.seqs().length === last - 10 && !liveRoom().held.holding, 20_000);
    const answers = new Set(told.filter((m) => m.clientId).map((m) => m.seq));
    for (const [s, from] of [
      [early, 1],
      [back, 11],
    ] as const) {
      expect([...s.seqs()].sort((x, y) => x - y)).toEqual(upTo(last).slice(from - 1));
      const ends = s.messages().filter((f) => answers.has(f.message.seq));
      expect(ends).toHaveLength(answers.size);
      expect(ends.filter((f) => f.type !== 'assistant.done').map((f) => f.message.seq)).toEqual([]);
      const frames = framesOf(s);
      expect(frames.findIndex((f) => f.type === 'assistant.done' && f.message.clientId === 'a0')).toBeGreaterThan(frames.findLastIndex((f) => f.id === 'a0'));
    }
  });

  it('sends an answer it reads from the store alone as `assistant.done`: what ends it for a member who saw it streaming', async () => {
    await start();
    const [member] = await members(1);
    for (const message of await storedElsewhere(10, 10)) hub.broadcast(ROOM, { type: 'message', message });
    await until(() => member.seqs().length === 10);
    await tagged({ type: 'assistant.delta', id: 'a1', text: 'Hel' }, 'a1', 10);
    // Its end is stored on the other node, whose publish of it was lost; the other node says so.
    const [end] = await storedElsewhere(1, 10, ASSISTANT, 'a1');
    await syncFrom(10);
    await until(() => member.seqs().length === 11 && !liveRoom().held.holding);
    const sent = member.messages().at(-1)!;
    expect(sent.type).toBe('assistant.done');
    expect(sent.message).toEqual(end);
  });

  it('moves the messages it holds with a thread merged or split meanwhile: members and later welcomes see them where the store has them', async () => {
    await start();
    const { member, read } = await catchingUpAfter(10);
    const main = await store.ensureMainThread(ROOM);
    const at = new Date().toISOString();
    await store.applyThreadChange({
      at,
      expect: [],
      createThreads: [
        { id: 'thr_side', roomId: ROOM, title: 'Side', origin: 'original' },
        { id: 'thr_part', roomId: ROOM, title: 'Part', origin: 'original' },
      ],
    });
    // Two messages the other node stored and published while this one catches up: the room holds them.
    const aside = (await store.appendMessage({ roomId: ROOM, threadId: 'thr_side', author: ZED, text: 'aside' })).message;
    const moving = (await store.appendMessage({ roomId: ROOM, threadId: main.id, author: ZED, text: 'moving' })).message;
    await live(aside);
    await live(moving);
    // The other node merges the side thread into the main one and splits the second message off.
    await store.applyThreadChange({
      at,
      expect: [],
      updateThreads: [{ id: 'thr_side', status: 'archived' }],
      moveThreadMessages: [{ fromThreadId: 'thr_side', threadId: main.id }],
      moveMessages: [{ ids: [moving.id], threadId: 'thr_part' }],
    });
    await publish('threads', JSON.stringify({ merged: { absorbedId: 'thr_side', survivorId: main.id } }));
    await publish('threads', JSON.stringify({ moves: [{ ids: [moving.id], threadId: 'thr_part' }] }));
    read.release();
    await until(() => member.seqs().length === 12 && !liveRoom().held.holding);
    const threadsOf = (messages: Message[]) => messages.slice(-2).map((m) => [m.seq, m.threadId]);
    const stored = await store.messagesAfter(ROOM, 10, 10);
    expect(threadsOf(stored)).toEqual([
      [11, main.id],
      [12, 'thr_part'],
    ]);
    expect(threadsOf(member.messages().map((f) => f.message))).toEqual(threadsOf(stored));
    const [late] = await members(1);
    expect(threadsOf(framesOf(late).find((f) => f.type === 'welcome')!.history)).toEqual(threadsOf(stored));
  });

  it('tells its listener of each message once it is delivered, and of the live ones it held when the room goes before the catch-up sent them', async () => {
    await start();
    const [socket] = await members(1);
    const missed = await storedElsewhere(3, 10);
    const hang = hangRead(0);
    await syncFrom(0);
    await until(() => hang.reached(), 10_000);
    const [held] = await storedElsewhere(1, 10);
    await live(held);
    await until(() => liveRoom().held.has(held.seq), 10_000);
    expect(heard).toEqual([]);
    // The last member leaves while the store read hangs: the room is dropped with what it held.
    sessions.get(socket)!.closed();
    // The room's first message heard here: the listener heard nothing of the room before it.
    expect(heard).toEqual([GAP, held.seq]);
    hang.release();
    // The catch-up's missed messages were never delivered here: the node that stored them windowed them.
    expect(heard).not.toContain(missed[0].seq);
  });

  it('tells its listener of a gap before the live messages it held past seqs the catch-up never brought, when the room goes', async () => {
    await start();
    const [socket] = await members(1);
    const [first] = await storedElsewhere(1, 10);
    await live(first);
    await until(() => heard.includes(first.seq), 10_000);
    const missed = await storedElsewhere(2, 10);
    const hang = hangRead(first.seq);
    await syncFrom(first.seq);
    await until(() => hang.reached(), 10_000);
    const [held] = await storedElsewhere(1, 10);
    await live(held);
    await until(() => liveRoom().held.has(held.seq), 10_000);
    sessions.get(socket)!.closed();
    hang.release();
    // Memory's window of the first must not run on into the held one across the two never delivered here.
    expect(heard).toEqual([GAP, first.seq, GAP, held.seq]);
    expect(heard).not.toContain(missed[0].seq);
  });

  it('keeps a message it held out of later welcomes when its thread was deleted meanwhile', async () => {
    await start();
    const { member, read } = await catchingUpAfter(10);
    await store.applyThreadChange({
      at: new Date().toISOString(),
      expect: [],
      createThreads: [{ id: 'thr_gone', roomId: ROOM, title: 'Gone', origin: 'original' }],
    });
    const doomed = (await store.appendMessage({ roomId: ROOM, threadId: 'thr_gone', author: ZED, text: 'doomed' })).message;
    await live(doomed);
    // The other node deletes the thread: the store first, then the word on the room's channel.
    expect(await store.deleteThread('thr_gone')).not.toBeNull();
    await publish('threads', JSON.stringify({ deleted: 'thr_gone' }));
    read.release();
    await until(() => member.seqs().length === 11 && !liveRoom().held.holding);
    const [late] = await members(1);
    const history: Message[] = framesOf(late).find((f) => f.type === 'welcome')!.history;
    expect(history.map((m) => m.seq)).toEqual(upTo(10));
  });
});

describe('HeldMessages', () => {
  const held = (seq: number, frame = `m${seq}`) => ({ frame, message: { seq } as Message });

  it('lists the live messages it holds or still has to send, in seq order, leaving out frames and what went out', () => {
    const h = new HeldMessages();
    h.begin();
    for (const seq of [4, 2, 3]) h.hold(held(seq), false);
    h.holdFrame('typing');
    h.release();
    expect(h.next()?.message?.seq).toBe(2);
    h.hold(held(1), false);
    expect(h.messages().map((m) => m.seq)).toEqual([1, 3, 4]);
  });

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
    expect(h.end().map((m) => m.message?.seq)).toEqual([5, 7]);
    expect(h.holding).toBe(false);
  });

  it('keeps an answer’s end over a plain copy of its seq, is full at its cap, and past twice it gives its oldest, counting what it released', () => {
    const h = new HeldMessages();
    h.begin();
    h.hold(held(1, 'message'), false);
    h.hold(held(1, 'done'), true);
    h.hold(held(1, 'again'), false);
    expect(h.take(1)?.frame).toBe('done');
    for (let seq = 1; seq < MAX_HELD_MESSAGES; seq++) expect(h.hold(held(seq), false)).toBe(true);
    expect(h.full).toBe(false);
    expect(h.hold(held(MAX_HELD_MESSAGES), false)).toBe(true);
    expect(h.full).toBe(true);
    // Taken out to go out in slices: no longer full, but still counted, and still held as far as the bus is concerned.
    h.release();
    expect(h.full).toBe(false);
    expect(h.has(1)).toBe(true);
    expect(h.next()?.message?.seq).toBe(1);
    expect(h.has(1)).toBe(false);
    for (let seq = MAX_HELD_MESSAGES + 1; seq <= 2 * MAX_HELD_MESSAGES + 2; seq++) expect(h.hold(held(seq), false)).toBe(true);
    expect(h.overfull).toBe(true);
    expect(h.oldest()?.message?.seq).toBe(2);
    expect(h.overfull).toBe(false);
    for (let i = 0; i < MAX_HELD_FRAMES; i++) h.holdFrame(`f${i}`);
    expect(h.full).toBe(true);
    // What it released goes first, then what it held since, in order.
    expect(h.end().map((x) => x.message?.seq ?? x.frame)).toEqual([
      ...Array.from({ length: 2 * MAX_HELD_MESSAGES }, (_, i) => i + 3),
      ...Array.from({ length: MAX_HELD_FRAMES }, (_, i) => `f${i}`),
    ]);
  });

  it('lets through the frames of an answer whose question went out, unless one of them waits, and forgets an answer that failed', () => {
    const h = new HeldMessages();
    h.streamed('a1');
    h.begin();
    expect(h.holdFrame('a1 piece', 'a1')).toBe(false);
    h.failed('a1');
    expect(h.holdFrame('a1 late', 'a1')).toBe(true);
    // Asked before the catch-up: it streams from its first frame on, its question asked or not.
    expect(h.holdFrame('a2 first', 'a2', undefined, true)).toBe(false);
    expect(h.holdFrame('a2 second', 'a2')).toBe(false);
    // Its question was held when it began: its frames keep their order behind it once the question is out.
    h.hold(held(4), false);
    expect(h.holdFrame('a3 first', 'a3')).toBe(true);
    expect(h.holdFrame('a3 second', 'a3', undefined, true)).toBe(true);
    expect(h.end().map((x) => x.frame)).toEqual(['a1 late', 'm4', 'a3 first', 'a3 second']);
    // The next catch-up finds none of its frames waiting.
    h.begin();
    expect(h.holdFrame('a3 after', 'a3', undefined, true)).toBe(false);
  });

  it('drops a piece of an answer on its way out (released past the cap) once the answer’s end went out before it', () => {
    const h = new HeldMessages();
    h.begin();
    h.hold(held(4), false);
    h.holdFrame('p1', 'a1');
    h.holdFrame('notice');
    h.release();
    // The catch-up sends the answer's stored end (its live one, if any, is on its way out too).
    h.ended('a1');
    const out: string[] = [];
    for (let item = h.next(); item; item = h.next()) out.push(item.frame);
    expect(out).toEqual(['m4', 'notice']);
    expect(h.releasing).toBe(false);
    expect(h.end()).toEqual([]);
  });

  it('lets the catch-up take a live copy on its way out (released past the cap), which then goes out no more', () => {
    const h = new HeldMessages();
    h.begin();
    for (const seq of [4, 5, 6]) h.hold(held(seq), false);
    h.release();
    expect(h.take(5)?.frame).toBe('m5');
    expect(h.has(5)).toBe(false);
    expect(h.take(5)).toBeUndefined();
    expect([h.next(), h.next(), h.next()].map((x) => x?.frame)).toEqual(['m4', 'm6', undefined]);
    expect(h.releasing).toBe(false);
    expect(h.end()).toEqual([]);
  });

  it('gives frames without a seq back behind the message held before them, and drops the pieces of an answer that ended', () => {
    const h = new HeldMessages();
    expect(h.holdFrame('early')).toBe(false);
    h.begin();
    h.holdFrame('first');
    h.hold(held(5), false);
    h.holdFrame('p1', 'a1');
    h.holdFrame('p2', 'a2');
    h.hold(held(3), false);
    h.hold(held(7), false);
    h.holdFrame('p1 again', 'a1');
    h.holdFrame('p3', 'a3');
    h.ended('a2');
    expect(h.holdFrame('p2 late', 'a2')).toBe(true);
    const a3end = { frame: 'a3 done', message: { seq: 6, author: { kind: 'assistant' }, clientId: 'a3' } as Message };
    h.hold(a3end, true);
    expect(h.end().map((x) => x.frame)).toEqual(['first', 'm3', 'm5', 'p1', 'a3 done', 'm7', 'p1 again']);
    expect(h.holding).toBe(false);
  });
});

describe('NodeSync', () => {
  it('stops a room’s wait for the seqs a message skipped when the room is dropped, and every room’s when the node closes', () => {
    vi.useFakeTimers();
    try {
      const rooms = new Map<string, Room>();
      const sync = new NodeSync({
        bus: new InProcessBusNetwork().node('here'),
        store: {} as SqliteStore,
        room: (id) => rooms.get(id),
        rooms: () => rooms.values(),
        deliverMissed: () => 0,
        deliverHeld: () => 0,
        pageSize: 100,
        memberSliceBytes: 64 * 1024,
        log: silentLogger,
      });
      for (const id of [ROOM, OTHER_ROOM]) rooms.set(id, new Room(id, roomOptions(), () => {}));
      expect(vi.getTimerCount()).toBe(0);
      for (const room of rooms.values()) sync.gap(room, 1, 3);
      expect(vi.getTimerCount()).toBe(2);
      rooms.delete(ROOM);
      sync.closed(ROOM);
      expect(vi.getTimerCount()).toBe(1);
      sync.close();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
