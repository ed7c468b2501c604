/**
 * Thread operations over HTTP, all for the admin (docs/api.md): start a thread, merge, split in
 * two steps, unlock, compact and fuse. Each is one transaction in the store: on any error nothing
 * changed and the body names the catalogue code (ERR_THREAD_LOCKED, ERR_THREAD_ARCHIVED,
 * ERR_THREAD_CHANGED, ERR_BAD_THREAD_OP, ERR_THREAD_NOT_FOUND).
 */
import type { FastifyInstance } from 'fastify';
import { errors } from '../errors.js';
import type { SplitPart } from '../memory/threads/thread-service.js';
import { SPLIT_LOCKS, SPLIT_MAX_MESSAGES, SPLIT_MAX_PARTS, TITLE_MAX_CHARS } from '../protocol/threads.js';
import type { SplitLock } from '../store/types.js';
import { adminSecurity, requireAdmin } from './auth.js';
import { errorBodySchema } from './error-handler.js';
import { idParams, threadSchema } from './thread-schemas.js';
import { threadView } from '../memory/threads/thread-view.js';

const ADMIN = 'admin';
const threadIdSchema = { type: 'string', minLength: 1, maxLength: 200 } as const;
const errorsOf = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, errorBodySchema]));
const oneThread = { type: 'object', properties: { thread: threadSchema }, required: ['thread'] } as const;

export default async function threadOpRoutes(app: FastifyInstance): Promise<void> {
  const { threads, rooms } = app.salon;
  const common = { onRequest: requireAdmin } as const;

  app.post<{ Params: { id: string }; Body: { title: string } }>(
    '/api/v1/rooms/:id/threads',
    {
      ...common,
      schema: {
        summary: 'Start a thread in a room (admin)',
        description: 'Members start one with `/thread new <title>` when THREAD_OPS=members.',
        tags: ['threads'],
        security: adminSecurity,
        params: idParams,
        body: {
          type: 'object',
          properties: { title: { type: 'string', minLength: 1, maxLength: TITLE_MAX_CHARS } },
          required: ['title'],
          additionalProperties: false,
        },
        response: { 200: oneThread, ...errorsOf(400, 401, 404) },
      },
    },
    async (request) => {
      if (!(await rooms.resolve(request.params.id))) throw new errors.ERR_ROOM_NOT_FOUND(request.params.id);
      return { thread: threadView(await threads.create(request.params.id, request.body.title, ADMIN)) };
    },
  );

  app.post<{ Body: { survivorId: string; absorbedId: string } }>(
    '/api/v1/threads/merge',
    {
      ...common,
      schema: {
        summary: 'The survivor absorbs another thread of its room (admin)',
        description:
          'Messages join the survivor in time order, its memory and centroid take in the absorbed thread’s, topics are joined, weight = max + 0.1; ' +
          'the absorbed thread is archived and tagged `merged_into:<survivor>`, never deleted; its bridges move to the survivor. A split-locked thread refuses (409 ERR_THREAD_LOCKED).',
        tags: ['threads'],
        security: adminSecurity,
        body: {
          type: 'object',
          properties: { survivorId: threadIdSchema, absorbedId: threadIdSchema },
          required: ['survivorId', 'absorbedId'],
          additionalProperties: false,
        },
        response: { 200: oneThread, ...errorsOf(400, 401, 404, 409) },
      },
    },
    async (request) => ({ thread: threadView(await threads.merge(request.body.survivorId, request.body.absorbedId, ADMIN)) }),
  );

  app.post<{ Body: { sourceIds: string[]; threshold?: number } }>(
    '/api/v1/threads/fuse',
    {
      ...common,
      schema: {
        summary: 'A new thread whose memory fuses two threads’ memories (admin)',
        description:
          'No messages are copied: the new thread has one introduction and a memory where each pair of passages said in both (cosine ≥ threshold and the same words, ' +
          'no negation or number flipped) is made one, the rest kept. `fallback` says why smart fusion failed when the memories were simply joined instead.',
        tags: ['threads'],
        security: adminSecurity,
        body: {
          type: 'object',
          properties: {
            sourceIds: { type: 'array', items: threadIdSchema, minItems: 2, maxItems: 2 },
            threshold: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
          },
          required: ['sourceIds'],
          additionalProperties: false,
        },
        response: {
          200: {
            type: 'object',
            properties: { thread: threadSchema, fused: { type: 'integer' }, kept: { type: 'integer' }, fallback: { type: 'string' } },
            required: ['thread', 'fused', 'kept'],
          },
          ...errorsOf(400, 401, 404, 409),
        },
      },
    },
    async (request) => {
      const r = await threads.fuse(request.body.sourceIds, ADMIN, request.body.threshold);
      return { ...r, thread: threadView(r.thread) };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/threads/:id/split',
    {
      ...common,
      schema: {
        summary: 'Step 1 of a split: the thread’s messages (admin)',
        description: 'The newest 5,000 messages at most (what a split takes from), oldest first; `total` is how many the thread holds.',
        tags: ['threads'],
        security: adminSecurity,
        params: idParams,
        response: {
          200: {
            type: 'object',
            properties: {
              thread: threadSchema,
              messages: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    id: { type: 'string' },
                    role: { type: 'string' },
                    author: { type: 'string' },
                    text: { type: 'string' },
                    ts: { type: 'string' },
                  },
                  required: ['id', 'role', 'author', 'text', 'ts'],
                },
              },
              total: { type: 'integer' },
            },
            required: ['thread', 'messages', 'total'],
          },
          ...errorsOf(401, 404),
        },
      },
    },
    async (request) => {
      const r = await threads.splitListing(request.params.id);
      return { ...r, thread: threadView(r.thread) };
    },
  );

  app.post<{ Params: { id: string }; Body: { parts: SplitPart[]; lock?: SplitLock } }>(
    '/api/v1/threads/:id/split',
    {
      ...common,
      schema: {
        summary: 'Step 2 of a split: parts of the thread become new threads (admin)',
        description:
          'Each part becomes a child thread (origin split, split-locked with `lock`, 0.8 × the parent’s weight) with its messages, and its memory is rebuilt from them; ' +
          `the parent keeps the rest, at least one message: a split that would move all of them is refused. The parts name ${SPLIT_MAX_MESSAGES} messages at most in all. ` +
          'An unknown id, a message in two parts, an empty part or too many messages is a 400 and nothing changes.',
        tags: ['threads'],
        security: adminSecurity,
        params: idParams,
        body: {
          type: 'object',
          properties: {
            parts: {
              type: 'array',
              minItems: 1,
              maxItems: SPLIT_MAX_PARTS,
              items: {
                type: 'object',
                properties: {
                  title: { type: 'string', minLength: 1, maxLength: TITLE_MAX_CHARS },
                  messageIds: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 200 }, minItems: 1, maxItems: SPLIT_MAX_MESSAGES },
                },
                required: ['title', 'messageIds'],
                additionalProperties: false,
              },
            },
            lock: { type: 'string', enum: [...SPLIT_LOCKS] },
          },
          required: ['parts'],
          additionalProperties: false,
        },
        response: {
          200: { type: 'object', properties: { parent: threadSchema, threads: { type: 'array', items: threadSchema } }, required: ['parent', 'threads'] },
          ...errorsOf(400, 401, 404, 409),
        },
      },
    },
    async (request) => {
      const r = await threads.split(request.params.id, request.body.parts, request.body.lock ?? 'compaction', ADMIN);
      return { parent: threadView(r.parent), threads: r.threads.map(threadView) };
    },
  );

  app.post<{ Params: { id: string } }>(
    '/api/v1/threads/:id/unlock',
    {
      ...common,
      schema: {
        summary: 'Release a split lock, whatever its mode (admin)',
        tags: ['threads'],
        security: adminSecurity,
        params: idParams,
        response: { 200: oneThread, ...errorsOf(400, 401, 404, 409) },
      },
    },
    async (request) => ({ thread: threadView(await threads.unlock(request.params.id, ADMIN)) }),
  );

  app.post<{ Params: { id: string }; Body: { threshold?: number } | undefined }>(
    '/api/v1/threads/:id/compact',
    {
      ...common,
      schema: {
        summary: 'Consolidate a thread’s memory (admin)',
        description: 'Near-duplicate passages are made one (the fusion gates), old long exchanges summarised, and a `compaction` split lock released.',
        tags: ['threads'],
        security: adminSecurity,
        params: idParams,
        body: {
          type: ['object', 'null'],
          properties: { threshold: { type: 'number', exclusiveMinimum: 0, maximum: 1 } },
          additionalProperties: false,
        },
        response: {
          200: {
            type: 'object',
            properties: { thread: threadSchema, fused: { type: 'integer' }, summarised: { type: 'integer' }, released: { type: 'boolean' } },
            required: ['thread', 'fused', 'summarised', 'released'],
          },
          ...errorsOf(400, 401, 404, 409),
        },
      },
    },
    async (request) => {
      const r = await threads.compact(request.params.id, ADMIN, request.body?.threshold);
      return { ...r, thread: threadView(r.thread) };
    },
  );
}
