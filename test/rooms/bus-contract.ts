/**
 * The RoomBus contract (docs/architecture.md): every implementation (in-process, Redis) runs this
 * suite, with three nodes at once. A node hears a room between `join` and `leave`; it may or may
 * not hear its own publishes (the rooms core drops its own echoes by node id either way). The
 * presence half: every node lists every node's members, and a closed node's members go.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RoomBus } from '../../src/rooms/types.js';

export interface BusNetwork {
  /** `count` connected nodes. */
  nodes(count: number): Promise<RoomBus[]>;
  /** Closes whatever the network still holds. */
  cleanup(): Promise<void>;
}

type Got = [roomId: string, payload: string];

function listen(bus: RoomBus): Got[] {
  const got: Got[] = [];
  bus.subscribe((roomId, payload) => got.push([roomId, payload]));
  return got;
}

async function joinAll(buses: RoomBus[], ...rooms: string[]): Promise<void> {
  await Promise.all(buses.flatMap((b) => rooms.map((r) => b.join(r))));
}

async function eventually(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('not delivered in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const settle = () => new Promise((r) => setTimeout(r, 50));

export function busContract(name: string, make: () => BusNetwork): void {
  describe(`RoomBus contract: ${name}`, () => {
    let network: BusNetwork;
    afterEach(async () => network?.cleanup());

    it('gives every node its own id', async () => {
      network = make();
      const ids = (await network.nodes(3)).map((b) => b.nodeId);
      expect(new Set(ids).size).toBe(3);
      for (const id of ids) expect(id.length).toBeGreaterThan(0);
    });

    it('delivers a publish to every other node exactly once, room and payload intact', async () => {
      network = make();
      const [a, b, c] = await network.nodes(3);
      const [gotA, gotB, gotC] = [listen(a), listen(b), listen(c)];
      await joinAll([a, b, c], 'news_1');
      const payload = `{"n":"x"}\nline two — ünïcode ✓ ${'x'.repeat(70_000)}`;
      await a.publish('news_1', payload);
      await eventually(() => gotB.length > 0 && gotC.length > 0);
      await settle();
      expect(gotB).toEqual([['news_1', payload]]);
      expect(gotC).toEqual([['news_1', payload]]);
      expect(gotA.length <= 1 && gotA.every((g) => g[0] === 'news_1' && g[1] === payload)).toBe(true);
    });

    it('keeps each publisher’s order', async () => {
      network = make();
      const [a, b, c] = await network.nodes(3);
      const gotC = listen(c);
      await joinAll([c], 'r');
      for (let i = 0; i < 100; i++) {
        void a.publish('r', `a${i}`);
        void b.publish('r', `b${i}`);
      }
      await eventually(() => gotC.length === 200);
      const from = (p: string) => gotC.map((g) => g[1]).filter((s) => s.startsWith(p));
      expect(from('a')).toEqual(Array.from({ length: 100 }, (_, i) => `a${i}`));
      expect(from('b')).toEqual(Array.from({ length: 100 }, (_, i) => `b${i}`));
    });

    it('keeps delivering after a handler throws', async () => {
      network = make();
      const [a, b, c] = await network.nodes(3);
      let calls = 0;
      b.subscribe(() => {
        calls++;
        throw new Error('handler bug');
      });
      const gotC = listen(c);
      await joinAll([b, c], 'r');
      await a.publish('r', 'one');
      await a.publish('r', 'two');
      await eventually(() => calls === 2 && gotC.length === 2);
    });

    it('stops delivering to a closed node; the others carry on', async () => {
      network = make();
      const [a, b, c] = await network.nodes(3);
      const [gotB, gotC] = [listen(b), listen(c)];
      await joinAll([b, c], 'r');
      await b.close();
      await a.publish('r', 'after close');
      await eventually(() => gotC.length === 1);
      await settle();
      expect(gotB).toEqual([]);
      await expect(b.publish('r', 'from a closed node')).rejects.toThrow();
    });

    it('delivers a room only to the nodes that joined it, until they leave', async () => {
      network = make();
      const [a, b, c] = await network.nodes(3);
      const [gotB, gotC] = [listen(b), listen(c)];
      await joinAll([b], 'news_1');
      await joinAll([c], 'news_1', 'post_2');
      await a.publish('post_2', 'only c');
      await a.publish('news_1', 'both');
      await eventually(() => gotB.length === 1 && gotC.length === 2);
      b.leave('news_1');
      await settle();
      await a.publish('news_1', 'c again');
      await eventually(() => gotC.length === 3);
      await settle();
      expect(gotB).toEqual([['news_1', 'both']]);
      expect(gotC.map((g) => g[1])).toEqual(['only c', 'both', 'c again']);
    });

    it('reports itself healthy while it reaches the others', async () => {
      network = make();
      const [a] = await network.nodes(1);
      const health = await a.health();
      expect(health.ok).toBe(true);
      expect(health.detail.length).toBeGreaterThan(0);
    });
  });
}

export function presenceContract(name: string, make: () => BusNetwork): void {
  describe(`RoomPresence contract: ${name}`, () => {
    let network: BusNetwork;
    afterEach(async () => network?.cleanup());

    const names = async (bus: RoomBus, roomId: string) => (await bus.presence.list(roomId)).map((e) => `${e.name}@${e.node === bus.nodeId ? 'here' : 'there'}`);

    it('lists every node’s members to every node, oldest first', async () => {
      network = make();
      const [a, b, c] = await network.nodes(3);
      await a.presence.set('news_1', { id: 'u1', name: 'Ana' }, 1000);
      await b.presence.set('news_1', { id: 'u2', name: 'Ben' }, 2000);
      await c.presence.set('news_1', { id: 'u3', name: 'Cy' }, 1500);
      await c.presence.set('post_2', { id: 'u3', name: 'Cy' }, 1500);
      for (const bus of [a, b, c]) {
        const list = await bus.presence.list('news_1');
        expect(list.map((e) => e.id)).toEqual(['u1', 'u3', 'u2']);
        expect(list[0]).toEqual({ node: a.nodeId, id: 'u1', name: 'Ana', since: 1000 });
      }
      expect(await names(a, 'post_2')).toEqual(['Cy@there']);
      expect(await a.presence.list('video_3')).toEqual([]);
    });

    it('keeps one entry per member and node: a new name replaces the old, remove takes it away', async () => {
      network = make();
      const [a, b] = await network.nodes(2);
      await a.presence.set('news_1', { id: 'u1', name: 'Ana' }, 1000);
      await a.presence.set('news_1', { id: 'u1', name: 'Anna' }, 1000);
      await b.presence.set('news_1', { id: 'u1', name: 'Anna' }, 3000);
      expect(await names(b, 'news_1')).toEqual(['Anna@there', 'Anna@here']);
      await a.presence.remove('news_1', 'u1');
      await a.presence.remove('news_1', 'nobody');
      expect(await names(b, 'news_1')).toEqual(['Anna@here']);
    });

    it('drops a closed node’s members; the others stay', async () => {
      network = make();
      const [a, b, c] = await network.nodes(3);
      await a.presence.set('news_1', { id: 'u1', name: 'Ana' }, 1000);
      await b.presence.set('news_1', { id: 'u2', name: 'Ben' }, 2000);
      await b.presence.set('post_2', { id: 'u2', name: 'Ben' }, 2000);
      await b.close();
      expect(await names(c, 'news_1')).toEqual(['Ana@there']);
      expect(await c.presence.list('post_2')).toEqual([]);
      expect(await c.presence.stale(['news_1', 'post_2'])).toEqual([]);
    });
  });
}
