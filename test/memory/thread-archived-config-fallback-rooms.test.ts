/**
 * Two follow-ups on thread operations: `PUT …/config` on an archived (merged) thread is refused
 * rather than answered 200 for a change that has no effect, and a cross-room fusion's fallback
 * warning goes only to the room told of the fusion.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ServerMessage } from '../../src/protocol/messages.js';
import { FUSION_FALLBACK_NOTICE, ThreadService, type ThreadOutlet } from '../../src/memory/threads/thread-service.js';
import { OTHER_ROOM, ROOM } from '../rooms/helpers.js';
import { call, GARDEN, threadsApp, threadWith, TRAINS } from './thread-helpers.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of closers.splice(0).reverse()) await c();
});

describe('PUT an archived thread’s config', () => {
  it('is refused with ERR_THREAD_ARCHIVED, nothing written', async () => {
    const a = await threadsApp(closers);
    const trains = await threadWith(a, ROOM, 'Trains', TRAINS);
    const garden = await threadWith(a, ROOM, 'Garden', GARDEN);
    await call(a, 'POST', '/api/v1/threads/merge', { survivorId: trains.id, absorbedId: garden.id });
    const before = (await a.salon.store.getThread(garden.id))!;
    const body = { enable_chat_history_rag: false, privileged: true };
    const r = await call(a, 'PUT', `/api/v1/threads/${garden.id}/config`, body, 409);
    expect(r.error.code).toBe('ERR_THREAD_ARCHIVED');
    const after = (await a.salon.store.getThread(garden.id))!;
    expect([after.version, after.memoryEnabled, after.privileged]).toEqual([before.version, before.memoryEnabled, before.privileged]);
  });
});

describe('a cross-room fusion that falls back to a plain union', () => {
  it('warns only the room its introduction went to', async () => {
    const a = await threadsApp(closers);
    const trains = await threadWith(a, ROOM, 'Night trains', TRAINS);
    const again = await threadWith(a, OTHER_ROOM, 'Night trains again', TRAINS);
    const sent: [string, ServerMessage][] = [];
    const outlet: ThreadOutlet = { broadcast: (roomId, frame) => void sent.push([roomId, frame]), messagesMoved() {}, threadMerged() {} };
    const { store, memory, chat } = a.salon;
    const failing = new ThreadService({
      store,
      memory,
      chat,
      bridges: a.salon.threads.bridges,
      outlet,
      gate: () => {
        throw new Error('gate offline');
      },
      log: { debug() {}, info() {}, warn() {}, error() {}, child: () => ({}) as never } as never,
    });
    const r = await failing.fuse([trains.id, again.id], 'admin');
    expect(r.fallback).toBe('gate offline');
    const told = sent.filter(([, f]) => f.type === 'message').map(([roomId]) => roomId);
    const warned = sent.filter(([, f]) => f.type === 'warning').map(([roomId, f]) => [roomId, f]);
    expect(told).toEqual([ROOM]);
    expect(warned).toEqual([[ROOM, { type: 'warning', code: 'FUSION_FALLBACK', message: FUSION_FALLBACK_NOTICE }]]);
  });
});
