/**
 * `DELETE /api/v1/threads/:id` and `PUT /api/v1/threads/:id/config`: the admin's alone, refusals
 * by catalogue code, and no partial writes. A deletion the store made is finished and told to the
 * room whatever the memory index or the rooms do after it; both config fields are written
 * together or not at all.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ThreadChange } from '../../src/store/types.js';
import { joined, ROOM } from '../rooms/helpers.js';
import { call, GARDEN, threadsApp, threadWith, TRAINS, type Json } from './thread-helpers.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of closers.splice(0).reverse()) await c();
});

const notices = (frames: Json[]) => frames.filter((f) => f.message.author.kind === 'system').map((f) => f.message.text as string);

describe('DELETE a thread', () => {
  it('finishes a deletion the store made when the memory index refuses to drop its passages: shells and thread gone, the room told', async () => {
    const a = await threadsApp(closers);
    const { client } = await joined(a, 'Ann');
    const trains = await threadWith(a, ROOM, 'Trains', TRAINS);
    const garden = await threadWith(a, ROOM, 'Garden', GARDEN);
    await call(a, 'POST', '/api/v1/threads/merge', { survivorId: trains.id, absorbedId: garden.id });
    // The shell goes first: its passages are the survivor's now, so the refusal is the thread's own.
    vi.spyOn(a.salon.memory, 'forgetThread').mockResolvedValueOnce().mockRejectedValueOnce(new Error('the index worker is gone'));
    const r = await call(a, 'DELETE', `/api/v1/threads/${trains.id}`);
    expect(r).toMatchObject({ deleted: trains.id, messages: 6, absorbed: [garden.id] });
    expect(await a.salon.store.getThread(trains.id)).toBeNull();
    expect(await a.salon.store.getThread(garden.id)).toBeNull();
    await client.next('message', (f) => f.message.text === '“Trains” was deleted with its messages.', 10_000);
  });

  it('is not left half done when the memory index refuses a shell’s passages, nor when a live room cannot be told', async () => {
    const a = await threadsApp(closers);
    const trains = await threadWith(a, ROOM, 'Trains', TRAINS);
    const garden = await threadWith(a, ROOM, 'Garden', GARDEN);
    await call(a, 'POST', '/api/v1/threads/merge', { survivorId: trains.id, absorbedId: garden.id });
    vi.spyOn(a.salon.memory, 'forgetThread').mockRejectedValueOnce(new Error('the index worker is gone'));
    vi.spyOn(a.salon.rooms, 'threadDeleted').mockRejectedValue(new Error('the store did not answer'));
    expect((await call(a, 'DELETE', `/api/v1/threads/${trains.id}`)).absorbed).toEqual([garden.id]);
    // Before, the shell was deleted and the thread that absorbed it was left standing, under a 500.
    expect(await a.salon.store.getThread(trains.id)).toBeNull();
    expect(await a.salon.store.getThread(garden.id)).toBeNull();
  });

  it('deletes the shell of a merge into the thread that committed while the deletion ran', async () => {
    const a = await threadsApp(closers);
    const { store, threads } = a.salon;
    const trains = await threadWith(a, ROOM, 'Trains', TRAINS);
    const garden = await threadWith(a, ROOM, 'Garden', GARDEN);
    const late = await threads.create(ROOM, 'Late', 'admin');
    await call(a, 'POST', '/api/v1/threads/merge', { survivorId: trains.id, absorbedId: garden.id });
    const remove = store.deleteThread.bind(store);
    // As the shells it read are deleted, another request merges one more thread into it.
    vi.spyOn(store, 'deleteThread').mockImplementation(async (id: string) => {
      if (id === garden.id) await threads.merge(trains.id, late.id, 'admin');
      return remove(id);
    });
    expect((await call(a, 'DELETE', `/api/v1/threads/${trains.id}`)).absorbed).toEqual([garden.id, late.id]);
    // Before, Late was left archived, pointing at a thread that is gone.
    expect(await store.getThread(late.id)).toBeNull();
  });

  it('is the admin’s alone, and answers an unknown thread by its code', async () => {
    const a = await threadsApp(closers);
    const t = await threadWith(a, ROOM, 'Trains', TRAINS);
    for (const headers of [{}, { authorization: 'Bearer not-the-token' }]) {
      const res = await a.inject({ method: 'DELETE', url: `/api/v1/threads/${t.id}`, headers });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('ERR_UNAUTHORIZED');
    }
    expect((await call(a, 'GET', `/api/v1/threads/${t.id}`)).messages).toBe(3);
    expect((await call(a, 'DELETE', '/api/v1/threads/thr_nope', undefined, 404)).error.code).toBe('ERR_THREAD_NOT_FOUND');
    expect((await call(a, 'DELETE', `/api/v1/threads/${'x'.repeat(201)}`, undefined, 400)).error.code).toBe('ERR_BAD_REQUEST');
  });
});

describe('PUT a thread’s config', () => {
  it('writes both fields or neither: a failed write leaves the thread as it was', async () => {
    const a = await threadsApp(closers);
    const t = await threadWith(a, ROOM, 'Trains', TRAINS);
    const { store } = a.salon;
    const apply = store.applyThreadChange.bind(store);
    const broken = new Error('disk full');
    // Whichever write carries the memory switch fails.
    vi.spyOn(store, 'applyThreadChange').mockImplementation((change: ThreadChange) =>
      change.updateThreads?.some((u) => u.memoryEnabled !== undefined) ? Promise.reject(broken) : apply(change),
    );
    const body = { privileged: true, enable_chat_history_rag: false };
    expect((await call(a, 'PUT', `/api/v1/threads/${t.id}/config`, body, 500)).error.code).toBe('ERR_INTERNAL');
    expect((await call(a, 'GET', `/api/v1/threads/${t.id}`)).thread.config).toEqual({ enable_chat_history_rag: true, privileged: false });
    vi.restoreAllMocks();
    expect((await call(a, 'PUT', `/api/v1/threads/${t.id}/config`, body)).thread.config).toEqual({ enable_chat_history_rag: false, privileged: true });
  });

  it('tells the room of a config change once, and changes nothing (not even the version) for values already set', async () => {
    const a = await threadsApp(closers);
    const { client } = await joined(a, 'Ann');
    const t = await threadWith(a, ROOM, 'Trains', TRAINS);
    await call(a, 'PUT', `/api/v1/threads/${t.id}/config`, { enable_chat_history_rag: false, privileged: true });
    const version = (await a.salon.store.getThread(t.id))!.version;
    await call(a, 'PUT', `/api/v1/threads/${t.id}/config`, { enable_chat_history_rag: false, privileged: true });
    expect((await a.salon.store.getThread(t.id))!.version).toBe(version);
    // A line after both: every notice before it has come.
    client.send({ type: 'say', text: 'done', clientId: 'end' });
    await client.next('message', (f) => f.message.text === 'done', 10_000);
    expect(notices(client.all('message')).filter((n) => n.startsWith('Memory is'))).toEqual([
      'Memory is off in “Trains”: the assistant no longer searches or cites what this thread discussed before (the recent chat still counts). ' +
        '“Trains” is privileged now: from now on each exchange with the assistant in it is remembered for its asker alone.',
    ]);
  });

  it('tells the room when a thread is made privileged or no longer is, as it tells a memory switch: one notice a change', async () => {
    const a = await threadsApp(closers);
    const { client } = await joined(a, 'Ann');
    const t = await threadWith(a, ROOM, 'Trains', TRAINS);
    const url = `/api/v1/threads/${t.id}/config`;
    await call(a, 'PUT', url, { privileged: true });
    await call(a, 'PUT', url, { privileged: true });
    await call(a, 'PUT', url, { privileged: false, enable_chat_history_rag: false });
    client.send({ type: 'say', text: 'done', clientId: 'end' });
    await client.next('message', (f) => f.message.text === 'done', 10_000);
    // Before, a change of `privileged` alone was told to nobody, unlike every other config change.
    expect(notices(client.all('message')).filter((n) => !n.startsWith('A new thread'))).toEqual([
      '“Trains” is privileged now: from now on each exchange with the assistant in it is remembered for its asker alone.',
      'Memory is off in “Trains”: the assistant no longer searches or cites what this thread discussed before (the recent chat still counts). ' +
        '“Trains” is no longer privileged: from now on its exchanges with the assistant are remembered for the whole room (private asks stay their asker’s).',
    ]);
  });

  it('is the admin’s alone, and refuses an unknown thread or a bad body by its code, changing nothing', async () => {
    const a = await threadsApp(closers);
    const t = await threadWith(a, ROOM, 'Trains', TRAINS);
    const url = `/api/v1/threads/${t.id}/config`;
    const res = await a.inject({ method: 'PUT', url, payload: { privileged: true } });
    expect([res.statusCode, res.json().error.code]).toEqual([401, 'ERR_UNAUTHORIZED']);
    expect((await call(a, 'PUT', '/api/v1/threads/thr_nope/config', { privileged: true }, 404)).error.code).toBe('ERR_THREAD_NOT_FOUND');
    for (const body of [{}, { privileged: 'yes' }, { privileged: true, colour: 'red' }])
      expect((await call(a, 'PUT', url, body, 400)).error.code).toBe('ERR_BAD_REQUEST');
    expect((await call(a, 'GET', `/api/v1/threads/${t.id}`)).thread.config).toEqual({ enable_chat_history_rag: true, privileged: false });
  });
});
