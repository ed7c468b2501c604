/**
 * The assistant plugin: `POST /api/v1/rooms/:id/ask`, topic summaries regenerated on their timer,
 * and the assistant closed with the app (the rooms close it first when they shut down, so members
 * hear why an answer ends before their sockets close).
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { askRoutes } from '../routes/ask.js';

async function assistantPlugin(app: FastifyInstance): Promise<void> {
  const { topics, assistant, rooms } = app.salon;
  app.addHook('onReady', async () => topics.start());
  app.addHook('onClose', async () => topics.close());
  app.addHook('onClose', async () => assistant.close());
  await app.register(askRoutes(rooms.resolve));
}

export default fp(assistantPlugin, { name: 'salon-assistant', dependencies: ['salon-rooms', 'salon-search'] });
