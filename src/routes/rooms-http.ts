/**
 * `GET /api/v1/rooms` (active rooms on this node with member counts; `?ids=a,b` keeps only those),
 * `GET /api/v1/rooms/:id` (one room, live or not, with its members and its unfinished imports) and
 * `GET /api/v1/rooms/:id/messages?before=&limit=` (older history, a page at a time).
 */
import type { FastifyInstance } from 'fastify';
import { errors } from '../errors.js';
import type { RoomHub } from '../rooms/hub.js';
import { errorBodySchema } from './error-handler.js';
import { API_RATE_LIMIT } from './rate-limit.js';

/** Most ids one `?ids=` filter may name. */
export const MAX_ROOM_IDS = 100;
/** Messages per history page: by default, and at most. */
export const DEFAULT_HISTORY_PAGE = 50;
export const MAX_HISTORY_PAGE = 100;

/** `?before=<seq>&limit=`: a page of history (rooms and threads alike). */
export const historyQuerySchema = {
  type: 'object',
  properties: {
    // Ajv takes 1e300 for an integer; PostgreSQL refused what pg made of it (`1e+300`) with a 500.
    before: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    limit: { type: 'integer', minimum: 1, maximum: MAX_HISTORY_PAGE, default: DEFAULT_HISTORY_PAGE },
  },
  additionalProperties: false,
} as const;

/** A page of history: messages oldest first, and whether older ones remain. */
export const historyPageSchema = {
  type: 'object',
  properties: { messages: { type: 'array', items: { type: 'object', additionalProperties: true } }, hasMore: { type: 'boolean' } },
  required: ['messages', 'hasMore'],
} as const;

const memberSchema = {
  type: 'object',
  properties: { id: { type: 'string' }, name: { type: 'string' } },
  required: ['id', 'name'],
} as const;

const summarySchema = {
  type: 'object',
  properties: { id: { type: 'string' }, kind: { type: 'string' }, title: { type: 'string' }, members: { type: 'integer' } },
  required: ['id', 'kind', 'title', 'members'],
} as const;

const detailSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    kind: { type: 'string' },
    title: { type: 'string' },
    url: { type: ['string', 'null'] },
    context: { type: 'string' },
    members: { type: 'array', items: memberSchema },
    memberCount: { type: 'integer' },
    unsettledImports: {
      type: 'array',
      items: {
        type: 'object',
        properties: { fromSeq: { type: 'integer' }, toSeq: { type: 'integer' }, startedAt: { type: 'string' } },
        required: ['fromSeq', 'toSeq', 'startedAt'],
      },
    },
  },
  required: ['id', 'kind', 'title', 'url', 'context', 'members', 'memberCount', 'unsettledImports'],
} as const;

function parseIds(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const ids = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (ids.length > MAX_ROOM_IDS) throw new errors.ERR_BAD_REQUEST(`ids names more than ${MAX_ROOM_IDS} rooms`);
  return ids;
}

export default async function roomsHttpRoutes(app: FastifyInstance, opts: { hub: RoomHub }): Promise<void> {
  const { hub } = opts;

  app.get<{ Querystring: { ids?: string } }>(
    '/api/v1/rooms',
    {
      config: { rateLimit: API_RATE_LIMIT },
      schema: {
        summary: 'Active rooms and how many people are in each',
        description:
          'Rooms with at least one member on any node, busiest first (at most 500). `ids=a,b` keeps only those rooms; a room not listed has nobody in it.',
        tags: ['rooms'],
        querystring: { type: 'object', properties: { ids: { type: 'string', maxLength: 20_000 } }, additionalProperties: false },
        response: {
          200: { type: 'object', properties: { rooms: { type: 'array', items: summarySchema } }, required: ['rooms'] },
          400: errorBodySchema,
        },
      },
    },
    async (request) => ({ rooms: await hub.listActiveRooms(parseIds(request.query.ids)) }),
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/rooms/:id',
    {
      config: { rateLimit: API_RATE_LIMIT },
      schema: {
        summary: 'One room: what it is about and who is in it',
        description:
          'A known room nobody is in shows 0 members. Unknown rooms give ERR_ROOM_NOT_FOUND. `unsettledImports`: seq ranges an import took and has not made readable ' +
          '(being written, or failed: the same import run again makes them readable).',
        tags: ['rooms'],
        params: { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['id'] },
        response: { 200: detailSchema, 404: errorBodySchema },
      },
    },
    async (request) => {
      const room = await hub.describe(request.params.id);
      if (!room) throw new errors.ERR_ROOM_NOT_FOUND(request.params.id);
      return { ...room, unsettledImports: await hub.store.unsettledSeqs(request.params.id) };
    },
  );

  app.get<{ Params: { id: string }; Querystring: { before?: number; limit?: number } }>(
    '/api/v1/rooms/:id/messages',
    {
      config: { rateLimit: API_RATE_LIMIT },
      schema: {
        summary: 'Older messages of a room, newest page first',
        description:
          'The `limit` messages just before seq `before` (default: the newest), oldest first, and whether older ones remain. ' +
          'A client pages back by passing the smallest seq it holds as the next `before`. Private exchanges are not part of the history.',
        tags: ['rooms'],
        params: { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['id'] },
        querystring: historyQuerySchema,
        response: { 200: historyPageSchema, 400: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request) => {
      const roomId = request.params.id;
      if (!(await hub.resolve(roomId))) throw new errors.ERR_ROOM_NOT_FOUND(roomId);
      const limit = request.query.limit ?? DEFAULT_HISTORY_PAGE;
      const before = request.query.before ?? Number.MAX_SAFE_INTEGER;
      // One more than asked says whether older messages remain.
      const page = await hub.store.messagesBefore(roomId, before, limit + 1);
      return { messages: page.slice(-limit), hasMore: page.length > limit };
    },
  );
}
