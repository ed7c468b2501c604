/**
 * Bridges between threads (issue 14): centroids of the threads' memory vectors, bridges between
 * threads on the same subject kept current as memory grows, suggestions from strong bridges that
 * never merge anything and never name a locked thread.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ThreadBridges, BRIDGE_MIN, SUGGEST_MIN } from '../../src/memory/threads/bridges.js';
import { encodeEnvelope } from '../../src/rooms/envelope.js';
import { InProcessBusNetwork } from '../../src/rooms/in-process-bus.js';
import { ADMIN, withTurnsDue } from '../helpers.js';
import { joined, roomsApp, ROOM, until } from '../rooms/helpers.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const c of closers.splice(0).reverse()) await c();
});

async function app(overrides: Parameters<typeof roomsApp>[1] = {}): Promise<FastifyInstance> {
  const t = await roomsApp({}, overrides);
  closers.push(t.close);
  return t.app;
}

const TRAIN_TALK = [
  'The night train to Vienna leaves at 22:10 from platform 4.',
  'Sleeper cabins on the night train cost 120 euros.',
  'The night train dining car serves goulash until midnight.',
];
const GARDEN_TALK = ['Tomatoes need six hours of sun a day.', 'Water the tomatoes at the roots.', 'Basil next to tomatoes keeps pests away.'];

async function threadSaying(a: FastifyInstance, title: string, lines: string[]): Promise<string> {
  const t = await a.salon.threads.create(ROOM, title, 'admin');
  const author = { id: 'u_ann', name: 'Ann', kind: 'user' as const };
  // Fixed times: the memory windows embed their dates.
  const stored = await a.salon.store.appendMessages(
    lines.map((text, i) => ({ roomId: ROOM, threadId: t.id, author, text, ts: new Date(Date.UTC(2026, 10, 2, 10, i)).toISOString() })),
  );
  for (const { message } of stored) a.salon.memory.onMessage(message);
  a.salon.memory.flush(t.id);
  await a.salon.memory.idle();
  return t.id;
}

describe('thread bridges', () => {
  it('bridges threads on the same subject, not others, and suggests the strong ones unless locked', async () => {
    const a = await app();
    const trains = await threadSaying(a, 'Trains', TRAIN_TALK);
    const moreTrains = await threadSaying(a, 'More trains', [...TRAIN_TALK].reverse());
    const garden = await threadSaying(a, 'Garden', GARDEN_TALK);
    const bridges = new ThreadBridges(a.salon.store, a.salon.memory);
    closers.push(() => bridges.close());
    const made = (await bridges.refresh(ROOM))!;
    expect(made, JSON.stringify(made)).toHaveLength(1);
    expect(made[0]).toMatchObject({ threadId: trains, otherId: moreTrains });
    expect(made[0].weight).toBeGreaterThanOrEqual(SUGGEST_MIN);
    expect(await a.salon.store.threadBridges(garden)).toEqual([]);
    expect((await a.salon.store.threadBridges(moreTrains))[0]).toMatchObject({ otherId: trains });

    const thread = (await a.salon.store.getThread(moreTrains))!;
    expect(await bridges.suggestions(thread)).toEqual([{ survivorId: trains, absorbedId: moreTrains, weight: made[0].weight }]);
    // A suggestion is only a suggestion: both threads are still there, active.
    expect((await a.salon.store.getThread(moreTrains))!.status).toBe('active');
    await a.salon.store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id: trains, splitLockedUntil: 'force' }] });
    expect(await bridges.suggestions(thread)).toEqual([]);
    expect(await bridges.suggestions((await a.salon.store.getThread(trains))!)).toEqual([]);
    expect(BRIDGE_MIN).toBeLessThan(SUGGEST_MIN);
  });

  it('never suggests merging a fused thread with a thread it was made from, or one that absorbed it since', async () => {
    const a = await app();
    const trains = await threadSaying(a, 'Trains', TRAIN_TALK);
    const moreTrains = await threadSaying(a, 'More trains', [...TRAIN_TALK].reverse());
    const { thread: fused } = await a.salon.threads.fuse([trains, moreTrains], 'admin');
    const sleepers = await threadSaying(a, 'Sleepers', TRAIN_TALK);
    // The app's own bridges refresh on a timer after memory changes: only this test's may write here.
    a.salon.threads.bridges.close();
    const bridges = new ThreadBridges(a.salon.store, a.salon.memory);
    closers.push(() => bridges.close());
    const pairsOf = async (id: string) => {
      const suggested = await bridges.suggestions((await a.salon.store.getThread(id))!);
      return suggested.map((s) => [s.survivorId, s.absorbedId].sort().join(' ')).sort();
    };
    const pair = (x: string, y: string) => [x, y].sort().join(' ');

    const made = (await bridges.refresh(ROOM))!;
    // The fusion is as alike to its sources as threads get: bridged, but never offered as a merge.
    const toSource = made.find((b) => pair(b.threadId, b.otherId) === pair(fused.id, trains));
    expect(toSource?.weight, JSON.stringify(made)).toBeGreaterThanOrEqual(SUGGEST_MIN);
    expect(await pairsOf(fused.id)).toEqual([pair(fused.id, sleepers)]);
    expect(await pairsOf(trains)).not.toContain(pair(fused.id, trains));
    expect(await pairsOf(moreTrains)).not.toContain(pair(fused.id, moreTrains));
    // Threads on the same subject that are not its sources are still suggested.
    expect(await pairsOf(sleepers)).toContain(pair(trains, sleepers));

    // A source merged into another source: the survivor is still what the fusion was made from.
    await a.salon.threads.merge(trains, moreTrains, 'admin');
    await bridges.refresh(ROOM);
    expect(await pairsOf(fused.id)).toEqual([pair(fused.id, sleepers)]);
    expect(await pairsOf(trains)).toEqual([pair(trains, sleepers)]);
    // A source absorbed by a third thread: that thread now holds it.
    await a.salon.threads.merge(sleepers, trains, 'admin');
    await bridges.refresh(ROOM);
    expect(await pairsOf(fused.id)).toEqual([]);
    expect(await pairsOf(sleepers)).toEqual([]);
  });

  it('writes nothing when a thread operation lands while it computes, and so no bridge of a thread merged away meanwhile', async () => {
    const a = await app();
    const trains = await threadSaying(a, 'Trains', TRAIN_TALK);
    const moreTrains = await threadSaying(a, 'More trains', [...TRAIN_TALK].reverse());
    await threadSaying(a, 'Garden', GARDEN_TALK);
    const store = a.salon.store;
    // The app's own bridges refresh on a timer after memory changes: only this test's may write here.
    a.salon.threads.bridges.close();
    const bridges = new ThreadBridges(store, a.salon.memory);
    closers.push(() => bridges.close());
    // Someone merges the two train threads after the refresh listed the room's threads, before it writes.
    const write = store.applyThreadChange.bind(store);
    vi.spyOn(store, 'applyThreadChange').mockImplementationOnce(async (change) => {
      await a.salon.threads.merge(trains, moreTrains, 'admin');
      return write(change);
    });
    expect(await bridges.refresh(ROOM)).toBeNull();
    expect(await store.threadBridges(moreTrains)).toEqual([]);
    expect((await store.threadBridges(trains)).map((b) => b.otherId)).not.toContain(moreTrains);
    // Computed again from the room as it is now.
    const again = await bridges.refresh(ROOM);
    expect(again).not.toBeNull();
    expect(again!.flatMap((b) => [b.threadId, b.otherId])).not.toContain(moreTrains);
  });

  it('computes and writes nothing for a room with one active thread, but drops a bridge it still has', async () => {
    const a = await app();
    const trains = await threadSaying(a, 'Trains', TRAIN_TALK);
    const moreTrains = await threadSaying(a, 'More trains', TRAIN_TALK);
    const store = a.salon.store;
    // The app's own bridges refresh on a timer after memory changes: only this test's may write here.
    a.salon.threads.bridges.close();
    const bridges = new ThreadBridges(store, a.salon.memory);
    closers.push(() => bridges.close());
    // Every other thread of the room archived: the trains thread is left alone, with its bridge.
    const others = (await store.listThreads(ROOM)).filter((t) => t.id !== trains && t.id !== moreTrains);
    await store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: others.map((t) => ({ id: t.id, status: 'archived' as const })) });
    expect(await bridges.refresh(ROOM)).toHaveLength(1);
    await store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id: moreTrains, status: 'archived' }] });
    const writes = vi.spyOn(store, 'applyThreadChange');
    const centroid = vi.spyOn(bridges, 'centroid');
    expect(await bridges.refresh(ROOM)).toEqual([]);
    expect(await store.threadBridges(trains)).toEqual([]);
    expect(writes).toHaveBeenCalledTimes(1);
    expect(await bridges.refresh(ROOM)).toEqual([]);
    expect(writes).toHaveBeenCalledTimes(1);
    expect(centroid).not.toHaveBeenCalled();
  });

  it('refreshes a room’s bridges a while after its memory changes', async () => {
    const a = await app();
    const trains = await threadSaying(a, 'Trains', TRAIN_TALK);
    const other = await threadSaying(a, 'Other', GARDEN_TALK);
    const bridges = new ThreadBridges(a.salon.store, a.salon.memory, { refreshMs: 5_000 });
    closers.push(() => bridges.close());
    a.salon.memory.onIndexed((chunk, vector) => bridges.chunkAdded(chunk.threadId, chunk.roomId, vector));
    expect(await bridges.centroid(other)).not.toBeNull();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    // The other thread now talks trains too: its centroid moves towards the first.
    const author = { id: 'u_bo', name: 'Bo', kind: 'user' as const };
    const stored = await a.salon.store.appendMessages(
      [...TRAIN_TALK, ...TRAIN_TALK].map((text, i) => ({
        roomId: ROOM,
        threadId: other,
        author,
        text,
        ts: new Date(Date.UTC(2026, 10, 2, 11, i)).toISOString(),
      })),
    );
    for (const { message } of stored) a.salon.memory.onMessage(message);
    a.salon.memory.flush(other);
    await a.salon.memory.idle();
    expect(await a.salon.store.threadBridges(trains)).toEqual([]);
    await vi.advanceTimersByTimeAsync(5_000);
    await vi.waitFor(async () => expect(await a.salon.store.threadBridges(trains)).toHaveLength(1));
  });

  it('drops a thread’s running sum when the thread is deleted or merged away, here or on another node, or no longer active when its room is refreshed', async () => {
    const network = new InProcessBusNetwork();
    const a = await app({ roomBus: network.node('here') });
    const other = network.node('other');
    closers.push(() => other.close());
    await other.join(ROOM);
    // A member here: this node hears the room's channel.
    await joined(a, 'Ann');
    const ids: string[] = [];
    for (const [i, lines] of [TRAIN_TALK, GARDEN_TALK, TRAIN_TALK, GARDEN_TALK, TRAIN_TALK].entries()) ids.push(await threadSaying(a, `T${i}`, lines));
    const bridges = a.salon.threads.bridges;
    await bridges.refresh(ROOM);
    const held = bridges.heldSums;
    expect(held).toBeGreaterThanOrEqual(ids.length);

    // Deleted on this node.
    expect((await a.inject({ method: 'DELETE', url: `/api/v1/threads/${ids[0]}`, headers: ADMIN })).statusCode).toBe(200);
    expect(bridges.heldSums).toBe(held - 1);
    // Deleted, then merged away, on another node: this node hears it on the room's channel.
    await a.salon.store.deleteThread(ids[1]);
    await other.publish(ROOM, encodeEnvelope({ node: 'other', delivery: 'threads', frame: JSON.stringify({ deleted: ids[1] }) }));
    await until(() => bridges.heldSums === held - 2);
    const archive = (id: string) => a.salon.store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id, status: 'archived' }] });
    await archive(ids[2]);
    await other.publish(
      ROOM,
      encodeEnvelope({ node: 'other', delivery: 'threads', frame: JSON.stringify({ merged: { absorbedId: ids[2], survivorId: ids[4] } }) }),
    );
    await until(() => bridges.heldSums === held - 3);
    // Archived on a node whose word never came: the room's next refresh finds it no longer active.
    await archive(ids[3]);
    await bridges.refresh(ROOM);
    expect(bridges.heldSums).toBe(held - 4);
  });

  it('keeps at most maxThreadSums running sums, summing a thread it let go from the store again', async () => {
    const a = await app();
    const ids = [await threadSaying(a, 'Trains', TRAIN_TALK), await threadSaying(a, 'Garden', GARDEN_TALK), await threadSaying(a, 'More', TRAIN_TALK)];
    const bridges = new ThreadBridges(a.salon.store, a.salon.memory, { maxThreadSums: 2 });
    closers.push(() => bridges.close());
    const first = await bridges.centroid(ids[0]);
    for (const id of ids) await bridges.centroid(id);
    expect(bridges.heldSums).toBe(2);
    const scans = vi.spyOn(a.salon.store, 'scanThreadMemory');
    // The two most recent are held; the first was let go and is read again, to the same centroid.
    await bridges.centroid(ids[2]);
    expect(scans).not.toHaveBeenCalled();
    expect(await bridges.centroid(ids[0])).toEqual(first);
    expect(scans.mock.calls.some(([threadId]) => threadId === ids[0])).toBe(true);
    expect(bridges.heldSums).toBe(2);
  });

  it('gives the event loop turns while it sums a room’s threads from the store (SQLite answers every page at once)', async () => {
    const a = await app();
    await threadSaying(a, 'Trains', TRAIN_TALK);
    await threadSaying(a, 'Garden', GARDEN_TALK);
    const { store, memory } = a.salon;
    const bridges = new ThreadBridges(store, memory);
    closers.push(() => bridges.close());
    const scan = store.scanThreadMemory.bind(store);
    const turnedAtReads: boolean[] = [];
    // A turn is due before each read.
    await withTurnsDue(async (turned) => {
      store.scanThreadMemory = (...args) => {
        turnedAtReads.push(turned());
        return scan(...args);
      };
      try {
        expect(await bridges.refresh(ROOM)).not.toBeNull();
      } finally {
        store.scanThreadMemory = scan;
      }
    });
    // Two rooms' worth of threads of thousands of chunks each held the loop for seconds, read without a turn.
    expect(turnedAtReads.length).toBeGreaterThanOrEqual(2);
    expect(turnedAtReads[0]).toBe(true);
  });

  it('keeps no running sum read from the store across an invalidation: the thread’s memory changed under it', async () => {
    const a = await app();
    const trains = await threadSaying(a, 'Trains', TRAIN_TALK);
    const { store, memory } = a.salon;
    const bridges = new ThreadBridges(store, memory);
    closers.push(() => bridges.close());
    const scan = store.scanThreadMemory.bind(store);
    // A merge commits while the sum is read (between two turns): it invalidates the thread.
    store.scanThreadMemory = (...args) => {
      bridges.invalidate([trains]);
      return scan(...args);
    };
    try {
      expect(await bridges.centroid(trains)).not.toBeNull();
    } finally {
      store.scanThreadMemory = scan;
    }
    expect(bridges.heldSums).toBe(0);
    // Read again without one, it is kept.
    await bridges.centroid(trains);
    expect(bridges.heldSums).toBe(1);
  });
});
