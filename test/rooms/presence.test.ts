/** Presence, typing and room lifetime over real sockets on 127.0.0.1 (closes must reach the server). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
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
