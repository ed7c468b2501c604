/**
 * The assistant plugin: `POST /api/v1/rooms/:id/ask`, the thread routes, topic summaries
 * regenerated on their timer, conversation memory rebuilt at start, and the assistant closed with the app (the rooms close it first when they shut down, so members
 * hear why an answer ends before their sockets close).
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { askRoutes } from '../routes/ask.js';
import threadOpRoutes from '../routes/thread-ops.js';
import threadRoutes from '../routes/threads.js';

async function assistantPlugin(app: FastifyInstance): Promise<void> {
  const { topics, assistant, rooms, memory, memoryIndex, threads, indexSync, changeFeed, stopping } = app.salon;
  let loading: Promise<unknown> = Promise.resolve();
  app.addHook('onReady', async () => topics.start());
  // Memory is rebuilt in the background: until it is, answers find none of it.
  app.addHook('onReady', async () => {
    // A shutdown stops the load between pages (the close waits for it).
    loading = memory
      .load(stopping.signal)
      .catch((err: unknown) => {
        if (!stopping.signal.aborted) app.log.error({ err: (err as Error)?.message }, 'conversation memory not loaded');
      })
      // Both indexes are loaded (search's before the app was ready): follow other nodes from here.
      .then(() => {
        if (!stopping.signal.aborted) return indexSync.start();
      });
  });
  app.addHook('onClose', async () => topics.close());
  app.addHook('onClose', async () => {
    await indexSync.close();
    // Its timers and its subscription end with it (the bus closes the connections it shares).
    changeFeed.close();
    // Answers end first (their exchanges join the memory queue), then the memory stores what it holds.
    await assistant.close();
    await loading;
    await memory.close();
    threads.bridges.close();
    await memoryIndex.close();
  });
  await app.register(askRoutes(rooms.resolve));
  await app.register(threadRoutes);
  await app.register(threadOpRoutes);
}

export default fp(assistantPlugin, { name: 'salon-assistant', dependencies: ['salon-rooms', 'salon-search'] });
