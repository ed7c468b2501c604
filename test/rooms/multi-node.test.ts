/** Two nodes sharing a store and an in-process bus network: rooms span nodes. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { InProcessBusNetwork, type InProcessBus } from '../../src/rooms/in-process-bus.js';
import { ACTIVE_ROOMS_FRESH_MS, GAP_WAIT_MS, SYNC_AFTER_FAILED_PUBLISH_MS } from '../../src/rooms/node-sync.js';
import { DEFAULT_ASKER_RETURN_GRACE_MS } from '../../src/rooms/options.js';
import type { SalonAssistant } from '../../src/rag/assistant.js';
import type { Store } from '../../src/store/types.js';
import { tempStore } from '../helpers.js';
import { ROOM, item, joined } from './helpers.js';

describe('rooms across two nodes', () => {
  let nodes: FastifyInstance[];
  let buses: InProcessBus[];
  let store: Store;
  let closeStore: () => Promise<void>;
  beforeEach(async () => {
    const temp = tempStore();
    store = temp.store;
    closeStore = temp.close;
    await store.upsertItem(item(ROOM));
    // Both nodes share the store; each closing app must not close it under the other.
    const shared = new Proxy(store, { get: (t, p) => (p === 'close' ? async () => {} : Reflect.get(t, p)) });
    const network = new InProcessBusNetwork();
    const config = testConfig({ DATA_DIR: temp.dir, ADMIN_TOKEN: 'multi-node-admin-token' });
    nodes = [];
    buses = [];
    for (let i = 0; i < 2; i++) {
      buses.push(network.node(`node-${i}`));
      const app = await buildApp(config, { store: shared, roomBus: buses[i], roomOptions: { shutdownGraceMs: 50 } });
      await app.ready();
      nodes.push(app);
    }
  });
  afterEach(async () => {
    vi.useRealTimers();
    await Promise.all(nodes.map((n) => n.close()));
    await closeStore();
  });

  it('lists the other node’s rooms from one reading of the shared presence a second, however often asked', async () => {
    const read = vi.spyOn(buses[1].presence, 'activeRooms');
    await joined(nodes[0], 'Ana');
    // Each room listed from the presence is resolved (its item read, without its comments) once per reading, not per listing.
    const items = vi.spyOn(store, 'getItemsWithoutComments');
    const listed = async () => (await nodes[1].inject('/api/v1/rooms')).json().rooms;
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    for (let i = 0; i < 3; i++) expect(await listed()).toEqual([expect.objectContaining({ id: ROOM, members: 1 })]);
    expect(read).toHaveBeenCalledTimes(1);
    expect(items).toHaveBeenCalledTimes(1);
    await joined(nodes[0], 'Ben');
    vi.setSystemTime(Date.now() + ACTIVE_ROOMS_FRESH_MS);
    expect(await listed()).toEqual([expect.objectContaining({ id: ROOM, members: 2 })]);
    expect(read).toHaveBeenCalledTimes(2);
  });

  it('serves the last good reading of the other node’s rooms while the shared presence fails, and keeps no failure', async () => {
    const read = vi.spyOn(buses[1].presence, 'activeRooms');
    await joined(nodes[0], 'Ana');
    const listed = async () => (await nodes[1].inject('/api/v1/rooms')).json().rooms;
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    expect(await listed()).toEqual([expect.objectContaining({ id: ROOM, members: 1 })]);
    // A transient failure: the room is still listed, not an empty list for a second.
    read.mockRejectedValueOnce(new Error('Redis blinked'));
    vi.setSystemTime(Date.now() + ACTIVE_ROOMS_FRESH_MS);
    expect(await listed()).toEqual([expect.objectContaining({ id: ROOM, members: 1 })]);
    // The failure was not kept: the next listing, within the second, reads again and sees Ben.
    await joined(nodes[0], 'Ben');
    expect(await listed()).toEqual([expect.objectContaining({ id: ROOM, members: 2 })]);
    expect(read).toHaveBeenCalledTimes(3);
  });

  it('delivers messages, typing and answers to members on the other node exactly once', async () => {
    const a = await joined(nodes[0], 'Ana');
    const b = await joined(nodes[1], 'Ben', ROOM, {});
    a.client.send({ type: 'say', text: 'across', clientId: 'x1' });
    const atB = await b.client.next('message');
    expect(atB.message).toMatchObject({ seq: 1, text: 'across', author: { name: 'Ana' } });
    b.client.send({ type: 'say', text: 'back', clientId: 'y1' });
    expect((await a.client.next('message', (f) => f.message.text === 'back')).message.seq).toBe(2);
    await b.client.next('message', (f) => f.message.text === 'back');

    a.client.send({ type: 'typing', active: true });
    expect((await b.client.next('typing')).user.name).toBe('Ana');

    nodes[0].salon.rooms!.broadcast(ROOM, { type: 'assistant.delta', id: 'z', text: 'hi' });
    nodes[0].salon.rooms!.sendToUser(ROOM, b.welcome.you.id, { type: 'warning', code: 'W', message: 'for Ben' });
    expect((await b.client.next('assistant.delta')).text).toBe('hi');
    expect((await b.client.next('warning')).message).toBe('for Ben');

    await new Promise((r) => setTimeout(r, 50));
    expect(a.client.all('message').map((f) => f.message.seq)).toEqual([1, 2]);
    expect(b.client.all('message').map((f) => f.message.seq)).toEqual([1, 2]);
    expect(a.client.all('typing')).toEqual([]);
    expect(a.client.all('assistant.delta')).toHaveLength(1);
    expect(a.client.all('warning')).toEqual([]);

    const c = await joined(nodes[1], 'Cy');
    expect(c.welcome.history.map((m: { seq: number }) => m.seq)).toEqual([1, 2]);
  });

  it('reads from the store a message whose publish was lost, when a later one skips it or the publish failed', async () => {
    const a = await joined(nodes[0], 'Ana');
    const b = await joined(nodes[1], 'Ben', ROOM, {});
    const publish = buses[0].publish.bind(buses[0]);
    // The publish of "lost" vanishes (taken as sent); that of "refused" fails, and nothing follows it.
    vi.spyOn(buses[0], 'publish').mockImplementation(async (roomId, payload) => {
      if (payload.includes('lost')) return;
      if (payload.includes('refused')) throw new Error('Command timed out');
      return publish(roomId, payload);
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'], shouldAdvanceTime: true });
    a.client.send({ type: 'say', text: 'lost', clientId: 'x1' });
    await a.client.next('message', (f) => f.message.text === 'lost');
    a.client.send({ type: 'say', text: 'after', clientId: 'x2' });
    expect((await b.client.next('message', (f) => f.message.text === 'after')).message.seq).toBe(2);
    await vi.advanceTimersByTimeAsync(GAP_WAIT_MS);
    expect((await b.client.next('message', (f) => f.message.text === 'lost')).message.seq).toBe(1);

    a.client.send({ type: 'say', text: 'refused', clientId: 'x3' });
    await a.client.next('message', (f) => f.message.text === 'refused');
    await vi.advanceTimersByTimeAsync(SYNC_AFTER_FAILED_PUBLISH_MS);
    expect((await b.client.next('message', (f) => f.message.text === 'refused')).message.seq).toBe(3);
    expect(b.client.all('message').map((f) => f.message.seq)).toEqual([2, 1, 3]);
  });

  it('gives a member back a message that came late, after a newer one, though its lastSeq is past it', async () => {
    const a = await joined(nodes[0], 'Ana');
    const b = await joined(nodes[1], 'Ben');
    // Cy keeps the room live on node 1 while Ben is away.
    const c = await joined(nodes[1], 'Cy');
    const publish = buses[0].publish.bind(buses[0]);
    vi.spyOn(buses[0], 'publish').mockImplementation(async (roomId, payload) => (payload.includes('late') ? undefined : publish(roomId, payload)));
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'], shouldAdvanceTime: true });
    a.client.send({ type: 'say', text: 'late', clientId: 'x1' });
    await a.client.next('message', (f) => f.message.text === 'late');
    a.client.send({ type: 'say', text: 'after', clientId: 'x2' });
    expect((await b.client.next('message', (f) => f.message.text === 'after')).message.seq).toBe(2);
    // Ben's socket drops before the gap is read: all he has is seq 2.
    b.client.close();
    await vi.advanceTimersByTimeAsync(GAP_WAIT_MS);
    expect((await c.client.next('message', (f) => f.message.text === 'late')).message.seq).toBe(1);
    const back = await joined(nodes[1], 'Ben', ROOM, { token: b.welcome.you.token, lastSeq: 2 });
    // Asked for what came after seq 2, he was given nothing, and seq 1 was lost to him.
    expect(back.welcome.history.map((m: { seq: number; text: string }) => [m.seq, m.text])).toEqual([[1, 'late']]);
  });

  it('shows one member list across the nodes, and drops the members of a node that closes', async () => {
    const a = await joined(nodes[0], 'Ana');
    const b = await joined(nodes[1], 'Ben');
    expect(b.welcome.members.map((m: { name: string }) => m.name)).toEqual(['Ana', 'Ben']);
    const both = await a.client.next('presence', (f) => f.count === 2);
    expect(both).toMatchObject({ members: [{ name: 'Ana' }, { name: 'Ben' }], joined: { name: 'Ben' } });
    expect((await nodes[0].inject(`/api/v1/rooms/${ROOM}`)).json()).toMatchObject({ memberCount: 2 });

    await nodes.pop()!.close();
    const left = await a.client.next('presence', (f) => f.count === 1);
    expect(left).toMatchObject({ members: [{ name: 'Ana' }], left: { name: 'Ben' } });
  });

  it('counts a user connected to two nodes once, and keeps them while one node still has them', async () => {
    const a = await joined(nodes[0], 'Ana');
    const b = await joined(nodes[1], 'Ben');
    await a.client.next('presence', (f) => f.count === 2);
    const tab = await joined(nodes[0], 'Ben', ROOM, { token: b.welcome.you.token });
    expect(tab.welcome).toMatchObject({ memberCount: 2, members: [{ name: 'Ana' }, { name: 'Ben' }] });

    const seen = a.client.all('presence').length;
    await nodes.pop()!.close();
    a.client.send({ type: 'say', text: 'still two?', clientId: 'q' });
    await tab.client.next('message');
    expect(a.client.all('presence').slice(seen)).toEqual([]);
  });

  it('gives an HTTP asker the suffix of a name a member uses on the other node', async () => {
    const a = await joined(nodes[0], 'Ana');
    const res = await nodes[1].inject({ method: 'POST', url: `/api/v1/rooms/${ROOM}/ask`, payload: { text: 'who am I?', name: 'ana' } });
    expect(res.statusCode).toBe(200);
    const question = await a.client.next('message', (f) => f.message.text === '@ai who am I?');
    expect(question.message.author.name).toBe('ana (2)');
  });

  it('keeps the private asks of an asker back on the other node within the grace (they were ended as if the asker had gone)', async () => {
    const assistant = nodes[0].salon.assistant as SalonAssistant;
    const left = vi.spyOn(assistant, 'askerLeft');
    const ana = await joined(nodes[0], 'Ana');
    const ben = await joined(nodes[0], 'Ben');
    // Answers of both being written on node 0: an asker with none has nothing to end.
    vi.spyOn(assistant, 'hasPrivateAsks').mockImplementation((roomId) => roomId === ROOM);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'], shouldAdvanceTime: true });
    ana.client.close();
    ben.client.close();
    // Node 0 has nobody left in the room, so it no longer follows it.
    await vi.waitFor(() => expect(nodes[0].salon.rooms!.listRooms()).toEqual([]));
    const back = await joined(nodes[1], 'Ana', ROOM, { token: ana.welcome.you.token });
    expect(back.welcome.you.id).toBe(ana.welcome.you.id);
    await vi.waitFor(async () => expect((await buses[0].presence.list(ROOM)).map((e) => e.id)).toEqual([ana.welcome.you.id]));
    await vi.advanceTimersByTimeAsync(DEFAULT_ASKER_RETURN_GRACE_MS);
    // Ben did not come back anywhere: his private asks end; Ana's go on.
    expect(left.mock.calls).toEqual([[ROOM, ben.welcome.you.id]]);
  });

  it('ends the private asks of an asker followed on the other node once they leave it too', async () => {
    const assistant = nodes[0].salon.assistant as SalonAssistant;
    const left = vi.spyOn(assistant, 'askerLeft');
    const ana = await joined(nodes[0], 'Ana');
    // An answer of hers being written on node 0.
    vi.spyOn(assistant, 'hasPrivateAsks').mockImplementation((roomId, userId) => roomId === ROOM && userId === ana.welcome.you.id);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'], shouldAdvanceTime: true });
    ana.client.close();
    await vi.waitFor(() => expect(nodes[0].salon.rooms!.listRooms()).toEqual([]));
    const back = await joined(nodes[1], 'Ana', ROOM, { token: ana.welcome.you.token });
    await vi.waitFor(async () => expect((await buses[0].presence.list(ROOM)).map((e) => e.id)).toEqual([ana.welcome.you.id]));
    await vi.advanceTimersByTimeAsync(DEFAULT_ASKER_RETURN_GRACE_MS);
    expect(left).not.toHaveBeenCalled();
    // She leaves node 1 as well: node 0, which answers her, hears of it within a grace or two.
    back.client.close();
    await vi.waitFor(async () => expect(await buses[0].presence.list(ROOM)).toEqual([]));
    await vi.advanceTimersByTimeAsync(2 * DEFAULT_ASKER_RETURN_GRACE_MS);
    expect(left.mock.calls).toEqual([[ROOM, ana.welcome.you.id]]);
  });

  it('accepts a token issued by the other node (shared DATA_DIR secret)', async () => {
    const a = await joined(nodes[0], 'Ana');
    const again = await joined(nodes[1], 'Ana', ROOM, { token: a.welcome.you.token });
    expect(again.welcome.you.id).toBe(a.welcome.you.id);
  });
});
