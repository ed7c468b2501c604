/**
 * `GET /api/v1/content` (a page of item summaries), `GET /api/v1/content/:id` (one full item),
 * `DELETE /api/v1/content/:id` (admin: the item with its chunks) and `POST /api/v1/content` (admin:
 * add or update items through the item pipeline).
 */
import type { FastifyInstance } from 'fastify';
import { errors, SalonError } from '../errors.js';
import { validateItem, withDerivedId } from '../content/items.js';
import { mapInTurns } from '../slice-turns.js';
import { CONTENT_KINDS, type ContentKind } from '../content/types.js';
import { adminSecurity, requireAdmin } from './auth.js';
import { errorBodySchema } from './error-handler.js';
import { API_RATE_LIMIT } from './rate-limit.js';
import {
  DEFAULT_PAGE,
  fullItemSchema,
  idParamsSchema,
  itemSummarySchema,
  listQuerySchema,
  postContentBodySchema,
  postContentReplySchema,
} from './content-schemas.js';

/** POST /content carries whole article bodies; more room than the app-wide default. */
const POST_BODY_LIMIT_BYTES = 16 * 1024 * 1024;

interface ListQuery {
  kind?: ContentKind;
  category?: string;
  limit?: number;
  cursor?: string;
}

/** Registers the content routes; writes go through services.ingest.pipeline. */
export default async function contentRoutes(app: FastifyInstance): Promise<void> {
  const { config, store } = app.salon;

  app.get<{ Querystring: ListQuery }>(
    '/api/v1/content',
    {
      config: { rateLimit: API_RATE_LIMIT },
      schema: {
        summary: 'A page of content items, newest first',
        tags: ['content'],
        querystring: listQuerySchema,
        response: {
          200: {
            type: 'object',
            properties: { items: { type: 'array', items: itemSummarySchema }, nextCursor: { type: ['string', 'null'] } },
            required: ['items', 'nextCursor'],
          },
          400: errorBodySchema,
        },
      },
    },
    async (request) => {
      const { kind, category, cursor } = request.query;
      if (kind && !CONTENT_KINDS.includes(kind)) throw new errors.ERR_BAD_REQUEST(`kind must be one of ${CONTENT_KINDS.join(', ')}`);
      return store.listItemSummaries({ kind, category, cursor, limit: request.query.limit ?? DEFAULT_PAGE });
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/content/:id',
    {
      config: { rateLimit: API_RATE_LIMIT },
      schema: {
        summary: 'One content item with its body and comments',
        tags: ['content'],
        params: idParamsSchema,
        response: { 200: fullItemSchema, 404: errorBodySchema },
      },
    },
    async (request) => {
      const item = await store.getItem(request.params.id);
      if (!item) throw new errors.ERR_CONTENT_NOT_FOUND(request.params.id);
      return item;
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/v1/content/:id',
    {
      onRequest: requireAdmin,
      schema: {
        summary: 'Delete a content item with its chunks (admin)',
        description: 'The item and its indexed chunks go in one transaction, and leave the vector index; its room keeps its discussion.',
        tags: ['content'],
        security: adminSecurity,
        params: idParamsSchema,
        response: {
          200: { type: 'object', properties: { deleted: { type: 'string' }, chunks: { type: 'integer' } }, required: ['deleted', 'chunks'] },
          401: errorBodySchema,
          404: errorBodySchema,
        },
      },
    },
    async (request) => {
      const removed = await store.deleteItem(request.params.id);
      if (!removed) throw new errors.ERR_CONTENT_NOT_FOUND(request.params.id);
      await app.salon.searchStack.indexer.chunksChanged({ added: [], removed });
      return { deleted: request.params.id, chunks: removed.length };
    },
  );

  app.post<{ Body: Record<string, unknown> }>(
    '/api/v1/content',
    {
      config: { rateLimit: API_RATE_LIMIT },
      bodyLimit: POST_BODY_LIMIT_BYTES,
      onRequest: requireAdmin,
      schema: {
        summary: 'Add or update content items (admin)',
        description:
          'One item, or {items: [...]}. Every item is checked first: if any is invalid, nothing is written. Then each is written whole, in order; a store failure stops the batch there, the items before it written (sending the batch again writes the rest).',
        tags: ['content'],
        security: adminSecurity,
        body: postContentBodySchema,
        response: { 200: postContentReplySchema, 400: errorBodySchema, 401: errorBodySchema },
      },
    },
    async (request) => {
      const inputs = Array.isArray(request.body.items) ? (request.body.items as Record<string, unknown>[]) : [request.body];
      const items = await mapInTurns(inputs, (input, i) => {
        try {
          return validateItem(withDerivedId(input, 'api'), { bodyMaxChars: config.BODY_MAX_CHARS });
        } catch (err) {
          if (err instanceof SalonError && inputs.length > 1)
            throw new errors.ERR_INVALID_CONTENT(`items[${i}]: ${err.message.replace(/^Invalid content item: /, '')}`);
          throw err;
        }
      });
      const { ingest } = app.salon;
      const results = await ingest.pipeline.putMany(items);
      return { items: results.map(({ id, status }) => ({ id, status })) };
    },
  );
}
