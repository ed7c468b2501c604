/**
 * A thread started for a test's setup, under the id it chooses: the write ThreadService.create
 * makes (a thread change creating it, with its `created` event), without the service's title
 * checks and active-thread limit, which the tests of ThreadService cover.
 */
import type { NewThread, Store, Thread } from '../../src/store/types.js';

export async function createThread(store: Store, thread: NewThread, actor = 'admin'): Promise<Thread> {
  await store.applyThreadChange({
    at: new Date().toISOString(),
    expect: [],
    createThreads: [thread],
    history: [{ threadId: thread.id, actor, action: 'created', details: { title: thread.title } }],
  });
  return (await store.getThread(thread.id))!;
}
