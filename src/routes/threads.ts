/**
 * Threads over HTTP: `GET /api/v1/rooms/:id/threads`, `GET /api/v1/threads/:id` (with its message
 * count, memory and switch), `GET /api/v1/threads/:id/messages?before=&limit=`, and for the admin
 * `PUT /api/v1/threads/:id/config {"enable_chat_history_rag": bool}`, `DELETE
 * /api/v1/threads/:id` (the thread, its messages and its memory) and `POST
 * /api/v1/rooms/:id/import` (an exported discussion brought into a thread).
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { errors } from '../errors.js';
import { adminSecurity, requireAdmin } from './auth.js';
import { errorBodySchema } from './error-handler.js';
import { API_RATE_LIMIT } from './rate-limit.js';
import { DEFAULT_HISTORY_PAGE, historyPageSchema, historyQuerySchema } from './rooms-http.js';
import { checkImportInTurns, IMPORT_MAX_BYTES, IMPORT_MAX_MESSAGES, importMessages, importTarget } from '../memory/import.js';
import { detailSchema, idParams, threadSchema } from './thread-schemas.js';
import { threadView } from '../memory/threads/thread-view.js';

/**
 * Archived threads a room's list holds by default, and at most: every merge leaves one, and the
 * browser fetches each listed thread's details, so the list holds the newest of them.
 */
const ARCHIVED_DEFAULT = 50;
const ARCHIVED_MAX = 500;

export default async function threadRoutes(app: FastifyInstance): Promise<void> {
  const { store, memory, rooms, threads } = app.salon;

  const thread = (id: string) => threads.get(id);
  const detail = async (id: string) => {
    const d = await threads.detail(id);
    return { ...d, thread: threadView(d.thread) };
  };

  app.get<{ Params: { id: string }; Querystring: { archived?: number } }>(
    '/api/v1/rooms/:id/threads',
    {
      config: { rateLimit: API_RATE_LIMIT },
      schema: {
        summary: 'The threads of a room, main first',
        description:
          'Every active thread of the room (at most 100) and its newest `archived` archived ones (default 50; every merge leaves one), main first and then by age; `archivedTotal` counts them all.',
        tags: ['threads'],
        params: idParams,
        querystring: {
          type: 'object',
          properties: { archived: { type: 'integer', minimum: 0, maximum: ARCHIVED_MAX, default: ARCHIVED_DEFAULT } },
          additionalProperties: false,
        },
        response: {
          200: {
            type: 'object',
            properties: { threads: { type: 'array', items: threadSchema }, archivedTotal: { type: 'integer' } },
            required: ['threads', 'archivedTotal'],
          },
          400: errorBodySchema,
          404: errorBodySchema,
        },
      },
    },
    async (request) => {
      if (!(await rooms.resolve(request.params.id))) throw new errors.ERR_ROOM_NOT_FOUND(request.params.id);
      const listed = await threads.list(request.params.id, request.query.archived ?? ARCHIVED_DEFAULT);
      return { threads: listed.threads.map(threadView), archivedTotal: listed.archivedTotal };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/threads/:id',
    {
      config: { rateLimit: API_RATE_LIMIT },
      schema: {
        summary: 'One thread: its fields, message count, memory, bridges, merge suggestions and history',
        tags: ['threads'],
        params: idParams,
        response: { 200: detailSchema, 404: errorBodySchema },
      },
    },
    async (request) => detail(request.params.id),
  );

  app.get<{ Params: { id: string }; Querystring: { before?: number; limit?: number } }>(
    '/api/v1/threads/:id/messages',
    {
      config: { rateLimit: API_RATE_LIMIT },
      schema: {
        summary: 'Messages of a thread, a page at a time',
        description: 'The `limit` messages of the thread just before seq `before` (default: the newest), oldest first, and whether older ones remain.',
        tags: ['threads'],
        params: idParams,
        querystring: historyQuerySchema,
        response: { 200: historyPageSchema, 400: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request) => {
      const t = await thread(request.params.id);
      const limit = request.query.limit ?? DEFAULT_HISTORY_PAGE;
      const page = await store.threadMessages(t.id, limit + 1, request.query.before);
      return { messages: page.slice(-limit), hasMore: page.length > limit };
    },
  );

  app.put<{ Params: { id: string }; Body: { enable_chat_history_rag?: boolean; privileged?: boolean } }>(
    '/api/v1/threads/:id/config',
    {
      onRequest: requireAdmin,
      schema: {
        summary: 'Switch a thread’s memory on or off, or make it privileged (admin)',
        description:
          '`enable_chat_history_rag` off: the assistant neither searches nor cites what the thread discussed before; the recent chat still counts. ' +
          'Members switch it with `/memory on|off` when THREAD_OPS=members. `privileged` on: from now on each exchange with the assistant is ' +
          'remembered for its asker alone (searched only by their private asks), as a private ask’s is. A change of either is told to the room. ' +
          'An archived thread is refused (409 `ERR_THREAD_ARCHIVED`), nothing changed.',
        tags: ['threads'],
        security: adminSecurity,
        params: idParams,
        body: {
          type: 'object',
          properties: { enable_chat_history_rag: { type: 'boolean' }, privileged: { type: 'boolean' } },
          minProperties: 1,
          additionalProperties: false,
        },
        response: { 200: detailSchema, 400: errorBodySchema, 401: errorBodySchema, 404: errorBodySchema, 409: errorBodySchema },
      },
    },
    async (request) => {
      const { enable_chat_history_rag: memoryEnabled, privileged } = request.body;
      // One write for both; the room is told of what changed, as when a member switches the memory.
      const t = await threads.configure(request.params.id, { memoryEnabled, privileged });
      return detail(t.id);
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/v1/threads/:id',
    {
      onRequest: requireAdmin,
      schema: {
        summary: 'Delete a thread with its messages and memory (admin)',
        tags: ['threads'],
        security: adminSecurity,
        params: idParams,
        response: {
          200: {
            type: 'object',
            properties: {
              deleted: { type: 'string' },
              messages: { type: 'integer' },
              memoryChunks: { type: 'integer' },
              fusedInto: { type: 'array', items: { type: 'string' } },
              absorbed: { type: 'array', items: { type: 'string' }, description: 'threads merged into it, deleted with it' },
            },
            required: ['deleted', 'messages', 'memoryChunks', 'fusedInto', 'absorbed'],
          },
          401: errorBodySchema,
          404: errorBodySchema,
        },
      },
    },
    async (request) => {
      const t = await thread(request.params.id);
      // Read before the deletion takes the thread's history with it.
      const fusedInto = await threads.fusedFrom(t.id);
      // The threads merged into it (through merges of merges) are archived shells whose messages
      // and memory it holds: they go first, so none is left pointing at a thread that is gone.
      const absorbed = await threads.absorbedBy(t);
      let messages = 0;
      let memoryChunks = 0;
      const remove = async (id: string): Promise<boolean> => {
        const removed = await store.deleteThread(id);
        if (!removed) return false;
        messages += removed.messages;
        memoryChunks += removed.memoryIds.length;
        // Deleted in the store: the memory index and the rooms follow whatever fails, or a 500 for a
        // deletion that was made left the thread itself standing (its shells gone) and the rooms untold.
        await afterDeletion(request.log, id, 'deleted thread not dropped from the memory index; the next start does not load it', () =>
          memory.forgetThread(id, removed.memoryIds),
        );
        await afterDeletion(request.log, id, 'live rooms not told of a deleted thread', () => rooms.threadDeleted(t.roomId, id));
        return true;
      };
      for (const id of absorbed) await remove(id);
      // Another deletion of it won the race: that one tells the rooms.
      if (!(await remove(t.id))) throw new errors.ERR_THREAD_NOT_FOUND(t.id);
      // A merge into it that committed after `absorbed` was read left a shell pointing at it.
      for (const id of await threads.absorbedBy(t)) if (await remove(id)) absorbed.push(id);
      threads.announceDeleted(t);
      return { deleted: t.id, messages, memoryChunks, fusedInto, absorbed };
    },
  );

  app.post<{ Params: { id: string }; Body: { threadId?: string; messages: unknown[] } }>(
    '/api/v1/rooms/:id/import',
    {
      onRequest: requireAdmin,
      bodyLimit: IMPORT_MAX_BYTES,
      schema: {
        summary: 'Bring a discussion into a room (admin)',
        description:
          `Up to ${IMPORT_MAX_MESSAGES} messages \`{author: {name}, text, ts}\` are checked together and stored in time order, ` +
          "all or none, in the thread given (default: the main thread); the thread's memory indexes them in the background.",
        tags: ['threads'],
        security: adminSecurity,
        params: idParams,
        body: {
          type: 'object',
          properties: {
            threadId: { type: 'string', minLength: 1, maxLength: 200 },
            messages: { type: 'array', minItems: 1, maxItems: IMPORT_MAX_MESSAGES },
          },
          required: ['messages'],
          additionalProperties: false,
        },
        response: {
          200: {
            type: 'object',
            properties: {
              threadId: { type: 'string' },
              messageIds: { type: 'array', items: { type: 'string' } },
              stored: { type: 'integer', description: 'messages this import stored; the others an earlier import of the same messages stored' },
            },
            required: ['threadId', 'messageIds', 'stored'],
          },
          400: errorBodySchema,
          401: errorBodySchema,
          404: errorBodySchema,
          413: errorBodySchema,
        },
      },
    },
    async (request) => {
      const roomId = request.params.id;
      if (!(await rooms.resolve(roomId))) throw new errors.ERR_ROOM_NOT_FOUND(roomId);
      const messages = await checkImportInTurns(request.body.messages, rooms.options.maxTextChars);
      const target = await importTarget(store, roomId, request.body.threadId || undefined);
      return importMessages(store, memory, roomId, target.id, messages, (after, runs) => rooms.storedUnpublished(roomId, after, true, runs));
    },
  );
}

/** Runs `work`, what follows a deletion the store has made; a failure is logged with `what`, never answered as the deletion's. */
async function afterDeletion(log: FastifyBaseLogger, threadId: string, what: string, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (err) {
    log.warn({ threadId, err: (err as Error)?.message }, what);
  }
}
