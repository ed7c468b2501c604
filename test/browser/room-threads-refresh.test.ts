/**
 * The room's thread list refreshes one at a time: calls made while one runs share one more run
 * after it, and that run fetches the details of the thread open at the latest call.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RoomThreads, type ThreadsSource } from '../../public/src/lib/room-threads.js';
import type { ThreadView } from '../../public/src/lib/threads-api.js';
import { threadView } from './thread-fixture.js';

const api = {
  lists: [] as Array<(list: { threads: ThreadView[]; archivedTotal: number }) => void>,
  details: [] as string[],
};

// The source is passed in, not mocked: files share their worker's modules (isolate: false), so a
// vi.mock of threads-api missed a room-threads another file had already loaded.
const source: ThreadsSource = {
  listThreads: () => new Promise((resolve) => api.lists.push(resolve)),
  threadDetail: (id: string) => {
    api.details.push(id);
    return Promise.resolve({ thread: thread(id), messages: 1, suggestions: [] });
  },
};

const thread = (id: string) => threadView(id, { main: id === 'main' });

describe('RoomThreads.refresh', () => {
  afterEach(() => {
    api.lists.length = 0;
    api.details.length = 0;
  });

  it('fetches, in the run it queued, the details of the thread open at the latest call', async () => {
    const threads = new RoomThreads('news_1', source);
    const list = { threads: ['main', 'a', 'b'].map(thread), archivedTotal: 0 };
    const first = threads.refresh('main');
    await vi.waitFor(() => expect(api.lists).toHaveLength(1));
    api.lists[0]!(list);
    await first;
    api.details.length = 0;

    const running = threads.refresh('main');
    const queuedA = threads.refresh('a');
    const queuedB = threads.refresh('b');
    expect(queuedB).toBe(queuedA);
    api.lists[1]!(list);
    await running;
    await vi.waitFor(() => expect(api.lists).toHaveLength(3));
    api.lists[2]!(list);
    await queuedB;
    expect(api.details).toEqual(['main', 'b']);
  });

  it('fetches once the details of a thread a catch-up outdated while a list was on its way, though its shape is the same', async () => {
    const threads = new RoomThreads('news_2', source);
    const list = { threads: ['main', 'a'].map(thread), archivedTotal: 0 };
    const first = threads.refresh('main');
    await vi.waitFor(() => expect(api.lists).toHaveLength(1));
    api.lists[0]!(list);
    await first;
    api.details.length = 0;

    // The list is asked for; a rejoin's catch-up then brings messages of thread a, whose shape is the same.
    const running = threads.refresh('main');
    threads.outdated(['a']);
    const queued = threads.refresh('main');
    api.lists[1]!(list);
    await running;
    await vi.waitFor(() => expect(api.lists).toHaveLength(3));
    api.lists[2]!(list);
    await queued;
    // Asked once, by the run whose list came after the mark; the next run asks only for the open thread.
    expect(api.details).toEqual(['a', 'main', 'main']);
  });
});
