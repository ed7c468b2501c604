/** Presence, typing and room lifetime over real sockets on 127.0.0.1 (closes must reach the server). */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { roomOptions } from '../../src/rooms/options.js';
import { Room, type RoomSession } from '../../src/rooms/room.js';
import { ROOM, connect, listen, roomsApp, until } from './helpers.js';

describe('presence and typing', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  let url: (roomId?: string) => string;
  beforeEach(async () => {
    ({ app, close } = await roomsApp({}, { roomOptions: { typingForwardMs: 400, typingExpireMs: 600 } }));
    url = await listen(app);
  });
  afterEach(async () => close());

  const join = async (name: string, extra: Record<string, unknown> = {}) => {
    const client = await connect(url());
    const welcome = await client.hello(name, extra);
    return { client, welcome };
  };

  it('announces joins and leaves with the member list', async () => {
    const a = await join('Ana');
    const b = await join('Ben');
    const joinedFrame = await a.client.next('presence', (f) => f.joined?.id === b.welcome.you.id);
    expect(joinedFrame.members).toEqual([a.welcome.members[0], { id: b.welcome.you.id, name: 'Ben' }]);
    a.client.close();
    const left = await b.client.next('presence', (f) => f.left?.id === a.welcome.you.id);
    expect(left.members).toEqual([{ id: b.welcome.you.id, name: 'Ben' }]);
    expect(left.count).toBe(1);
  });

  it('counts a user with two tabs once, and lets them leave with their last tab', async () => {
    const a = await join('Ana');
    const tab1 = await join('Ben');
    const tab2 = await join('Ben', { token: tab1.welcome.you.token });
    expect(tab2.welcome.memberCount).toBe(2);
    await a.client.next('presence', (f) => f.joined?.id === tab1.welcome.you.id);
    expect((await app.inject(`/api/v1/rooms/${ROOM}`)).json().memberCount).toBe(2);

    tab1.client.close();
    await tab1.client.closed;
    a.client.send({ type: 'say', text: 'still there?', clientId: 'q' });
    expect((await tab2.client.next('message')).message.text).toBe('still there?');
    expect(a.client.all('presence').filter((f) => f.left)).toEqual([]);
    expect(a.client.all('presence').filter((f) => f.joined?.id === tab1.welcome.you.id)).toHaveLength(1);

    tab2.client.close();
    const left = await a.client.next('presence', (f) => f.left?.id === tab1.welcome.you.id);
    expect(left.members).toHaveLength(1);
  });

  it('creates a room on first join and drops it when the last member leaves', async () => {
    const rooms = async () => (await app.inject('/api/v1/rooms')).json().rooms;
    expect(await rooms()).toEqual([]);
    const a = await join('Ana');
    expect(await rooms()).toEqual([{ id: ROOM, kind: 'news', title: 'Rust 2.0 released', members: 1 }]);
    a.client.close();
    await a.client.closed;
    await until(() => app.salon.rooms!.listRooms().length === 0);
    const b = await join('Ben');
    expect(b.welcome.members).toEqual([{ id: b.welcome.you.id, name: 'Ben' }]);
  });

  it('forwards typing at once, throttles refreshes, never echoes, and expires silent typists', async () => {
    const a = await join('Ana');
    const b = await join('Ben');
    a.client.send({ type: 'typing', active: true });
    const first = await b.client.next('typing');
    expect(first).toEqual({ type: 'typing', user: { id: a.welcome.you.id, name: 'Ana' }, active: true });

    a.client.send({ type: 'typing', active: true });
    a.client.send({ type: 'typing', active: true });
    await new Promise((r) => setTimeout(r, 150));
    expect(b.client.all('typing')).toHaveLength(1);

    a.client.send({ type: 'typing', active: false });
    expect((await b.client.next('typing')).active).toBe(false);

    // A restart inside the interval is held back (toggling must not beat the throttle); the message
    // sent after it arrives with no typing frame before it.
    a.client.send({ type: 'typing', active: true });
    a.client.send({ type: 'say', text: 'sent', clientId: 's' });
    await b.client.next('message');
    expect(b.client.all('typing')).toHaveLength(2);

    a.client.send({ type: 'typing', active: true });
    expect((await b.client.next('typing')).active).toBe(true);
    const stopped = await b.client.next('typing', () => true, 2000);
    expect(stopped.active).toBe(false);
    expect(a.client.all('typing')).toEqual([]);
  });

  it('re-announces a typist who keeps typing past the forward interval', async () => {
    const a = await join('Ana');
    const b = await join('Ben');
    for (let i = 0; i < 3; i++) a.client.send({ type: 'typing', active: true });
    await b.client.next('typing');
    await new Promise((r) => setTimeout(r, 450));
    a.client.send({ type: 'typing', active: true });
    await b.client.next('typing');
    expect(b.client.all('typing').map((f) => f.active)).toEqual([true, true]);
  });

  it('clears a typist when they send a message or leave', async () => {
    const a = await join('Ana');
    const b = await join('Ben');
    a.client.send({ type: 'typing', active: true });
    await b.client.next('typing');
    a.client.send({ type: 'say', text: 'done typing', clientId: 'd' });
    expect((await b.client.next('typing')).active).toBe(false);
    a.client.send({ type: 'typing', active: true });
    await b.client.next('typing', (f) => f.active);
    a.client.close();
    expect((await b.client.next('typing')).active).toBe(false);
  });
});

describe('typing ended by a slash command', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());

  it('clears a typist who sends a slash command, which posts nothing: a client need not say it stopped first', async () => {
    // The default timings: a typist expires only 15 s after their last refresh.
    const started = await roomsApp();
    close = started.close;
    const url = await listen(started.app);
    const a = await connect(url());
    await a.hello('Ana');
    const b = await connect(url());
    await b.hello('Ben');
    a.send({ type: 'typing', active: true });
    await b.next('typing');
    a.send({ type: 'say', text: '/threads', clientId: 'c' });
    await a.next('message', (f) => f.message.clientId === 'c');
    expect((await b.next('typing')).active).toBe(false);
  });
});

describe('presence frames a room sends', () => {
  afterEach(() => vi.useRealTimers());

  /** Frames of each kind a room of `members` sends to one of them while someone joins and leaves 20 times a second for 2 s. */
  function churn(members: number): number {
    vi.useFakeTimers({ now: 1_000_000 });
    const room = new Room('news_1', roomOptions(), () => {});
    const got: string[] = [];
    const session = (userId: string, keep: boolean): RoomSession => ({
      userId,
      welcomedAhead: new Set(),
      heldFramesFrom: 0,
      deliver: (f) => void (keep && got.push(f)),
      offer: (f) => void (keep && got.push(f)),
    });
    for (let i = 0; i < members; i++) room.join(session(`u_${i}`, i === 0), `M${i}`);
    vi.advanceTimersByTime(5_000);
    got.length = 0;
    for (let i = 0; i < 40; i++) {
      const s = session(`u_churn${i}`, false);
      const { member } = room.join(s, `Churn ${i}`);
      room.presence({ joined: member }, Date.now());
      vi.advanceTimersByTime(25);
      room.presence({ left: room.leave(s)! }, Date.now());
      vi.advanceTimersByTime(25);
    }
    vi.advanceTimersByTime(5_000);
    return got.length;
  }

  it('coalesces more the more members a frame goes to, so one client churning cannot multiply its frames by the room', () => {
    // Each frame goes to every member and lists up to 100 of them: the bytes grow with the square of the room.
    expect(churn(3)).toBeGreaterThanOrEqual(30);
    const frames = churn(90);
    // Over 2 s: the first change at once, then one frame per ~0.9 s window (at 90 members), where a fixed 50 ms window sent 40.
    expect(frames).toBeGreaterThanOrEqual(2);
    expect(frames).toBeLessThanOrEqual(4);
    expect(churn(40)).toBeLessThanOrEqual(2 + 2_000 / 400);
  });
});
