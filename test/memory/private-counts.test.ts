/**
 * What anyone may read of a thread counts its public memory only (MemoryStats: "so that private
 * asks cannot be seen coming and going by their count"): the history `GET /api/v1/threads/:id`
 * shows, the message a fusion posts in the room and a fusion's counts say nothing of how many
 * private asks a thread remembers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ROOM } from '../rooms/helpers.js';
import { call, GARDEN, threadsApp, threadWith, TRAINS, type Json } from './thread-helpers.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const EVE = 'u_eveeveeveeveevee';

/** Private asks' exchanges of EVE in `threadId`, stored and indexed as memory keeps them. */
async function privateAsks(a: FastifyInstance, threadId: string, texts: string[]): Promise<void> {
  const ts = new Date(Date.UTC(2026, 10, 2)).toISOString();
  for (const text of texts) {
    await a.salon.store.addMemoryChunk(
      { threadId, roomId: ROOM, kind: 'exchange', text, messageIds: [], authors: ['Eve', 'Salon AI'], firstTs: ts, lastTs: ts, privileged: true, owner: EVE },
      ts,
    );
  }
  await a.salon.memory.load();
}

const PIN = 'Q: Which PIN did I choose for the garden shed lock?\nA: You chose 4921 for the garden shed lock.';
const DOCTOR = 'Q: When is my appointment with the skin doctor?\nA: On Tuesday at 9:40 with Dr. Lind.';
const LOAN = 'Q: How much do I still owe on the car loan?\nA: 12,300 euros, due in March 2028.';

/** The thread as anyone reads it (no admin token). */
async function publicDetail(a: FastifyInstance, id: string): Promise<Json> {
  const res = await a.inject({ method: 'GET', url: `/api/v1/threads/${id}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe('private asks are not counted where anyone may read', () => {
  it('a merge’s history counts the public passages the survivor took', async () => {
    const a = await threadsApp(closers);
    const trains = await threadWith(a, ROOM, 'Trains', TRAINS);
    const garden = await threadWith(a, ROOM, 'Garden', GARDEN);
    await privateAsks(a, garden.id, [PIN, DOCTOR, LOAN]);
    const shown = (await publicDetail(a, garden.id)).memory.chunks;
    expect(await a.salon.store.countMemoryChunks(garden.id)).toBe(shown + 3);
    await call(a, 'POST', '/api/v1/threads/merge', { survivorId: trains.id, absorbedId: garden.id });
    const merge = (await publicDetail(a, trains.id)).history.find((e: Json) => e.action === 'merge');
    expect(merge.details.memoryChunks).toBe(shown);
  });

  it('a fusion’s counts, its message in the room and its history say what its public memory holds', async () => {
    const a = await threadsApp(closers);
    const trains = await threadWith(a, ROOM, 'Trains', TRAINS);
    const garden = await threadWith(a, ROOM, 'Garden', GARDEN);
    // The same private exchanges in both (they fuse as one asker's pairs) and one more in the second.
    await privateAsks(a, trains.id, [PIN, DOCTOR]);
    await privateAsks(a, garden.id, [PIN, DOCTOR, LOAN]);
    const r = await call(a, 'POST', '/api/v1/threads/fuse', { sourceIds: [trains.id, garden.id] });
    const detail = await publicDetail(a, r.thread.id);
    const publicGarden = (await publicDetail(a, garden.id)).memory.chunks;
    expect(detail.memory).toMatchObject({ fused: 0, kept: publicGarden });
    expect({ fused: r.fused, kept: r.kept }).toEqual({ fused: detail.memory.fused, kept: detail.memory.kept });
    const fuse = detail.history.find((e: Json) => e.action === 'fuse');
    expect(fuse.details).toMatchObject({ fused: 0, kept: publicGarden, chunks: detail.memory.chunks });
    const messages = await a.salon.store.threadMessages(r.thread.id, 10);
    expect(messages).toHaveLength(1);
    expect(messages[0].text).toContain(`(0 passages said in both were made one, ${publicGarden} kept from the second)`);
  });

  it('a compaction’s history counts public passages only', async () => {
    const a = await threadsApp(closers);
    const trains = await threadWith(a, ROOM, 'Trains', TRAINS);
    // Near-duplicates among one asker's private exchanges: compaction makes them one.
    await privateAsks(a, trains.id, [PIN, PIN.replace('?', ''), DOCTOR]);
    const shown = (await publicDetail(a, trains.id)).memory.chunks;
    await call(a, 'POST', `/api/v1/threads/${trains.id}/compact`);
    const compact = (await publicDetail(a, trains.id)).history.find((e: Json) => e.action === 'compact');
    expect(compact.details).toMatchObject({ fused: 0, summarised: 0, chunksBefore: shown });
  });
});
