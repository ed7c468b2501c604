/**
 * The RoomBus contract (docs/architecture.md): every implementation (in-process now, Redis with the scale-out
 * work) runs this suite, with three nodes at once. A node may or may not hear its own publishes;
 * the rooms core drops its own echoes by node id either way.
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
      await a.publish('r', 'one');
      await a.publish('r', 'two');
      await eventually(() => calls === 2 && gotC.length === 2);
    });

    it('stops delivering to a closed node; the others carry on', async () => {
      network = make();
      const [a, b, c] = await network.nodes(3);
      const [gotB, gotC] = [listen(b), listen(c)];
      await b.close();
      await a.publish('r', 'after close');
      await eventually(() => gotC.length === 1);
      await settle();
      expect(gotB).toEqual([]);
      await expect(b.publish('r', 'from a closed node')).rejects.toThrow();
    });
  });
}
