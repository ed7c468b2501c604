/**
 * Sources that refresh: `POST /api/v1/sources` (admin), `GET /api/v1/sources`,
 * `GET|PATCH|DELETE /api/v1/sources/:id` (changes admin), `POST /api/v1/sources/:id/refresh`
 * (admin: poll now → `{jobId}`).
 */
import type { FastifyInstance } from 'fastify';
import { MAX_EVERY_MINUTES, MAX_SOURCE_LIMIT, SOURCE_KINDS, SOURCE_LISTS } from '../content/refresh/source-spec.js';
import type { SourceView } from '../content/refresh/source-service.js';
import { adminSecurity, isAdmin, requireAdmin } from './auth.js';
import { errorBodySchema } from './error-handler.js';
import { withoutQueries, withoutQuery } from './public-urls.js';
import { API_RATE_LIMIT } from './rate-limit.js';

const string = { type: 'string' } as const;
const nullableString = { type: ['string', 'null'] } as const;
const integer = { type: 'integer' } as const;
const everyMinutes = { type: 'integer', minimum: 1, maximum: MAX_EVERY_MINUTES } as const;
const limit = { type: 'integer', minimum: 1, maximum: MAX_SOURCE_LIMIT } as const;

const sourceSchema = {
  type: 'object',
  properties: {
    id: string,
    kind: { type: 'string', enum: [...SOURCE_KINDS] },
    url: nullableString,
    list: { type: ['string', 'null'], enum: [...SOURCE_LISTS, null] },
    limit: integer,
    everyMinutes: integer,
    origin: { type: 'string', enum: ['api', 'config'] },
    createdAt: string,
    lastPolledAt: nullableString,
    lastError: { type: ['object', 'null'], properties: { code: string, message: string } },
    failures: integer,
    itemCount: integer,
    nextDueAt: string,
    polling: nullableString,
  },
  required: ['id', 'kind', 'url', 'list', 'everyMinutes', 'lastPolledAt', 'lastError', 'itemCount', 'nextDueAt', 'polling'],
} as const;

const params = { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 100 } }, required: ['id'] } as const;

/** A source as anyone may read it: its URL, and URLs in its last error, without their query (routes/public-urls.ts). */
function publicView(s: SourceView): SourceView {
  return {
    ...s,
    url: s.url === null ? null : withoutQuery(s.url),
    lastError: s.lastError === null ? null : { ...s.lastError, message: withoutQueries(s.lastError.message) },
  };
}

/** Registers the source routes over services.sources. */
export default async function sourceRoutes(app: FastifyInstance): Promise<void> {
  const admin = { config: { rateLimit: API_RATE_LIMIT }, onRequest: requireAdmin };

  app.post(
    '/api/v1/sources',
    {
      ...admin,
      schema: {
        summary: 'Add a source that refreshes (admin)',
        description:
          '{kind: feed|youtube, url} or {kind: hn, list: top|best|new} or {kind: hn, url: a news.ycombinator.com/item?id=N URL}, with optional everyMinutes (default 60) and limit (entries read per poll). ' +
          'It is first polled at once. The same kind and URL or list is the same source: 409 ERR_SOURCE_EXISTS.',
        tags: ['sources'],
        security: adminSecurity,
        body: {
          type: 'object',
          properties: {
            kind: { type: 'string', enum: [...SOURCE_KINDS] },
            url: { type: 'string', maxLength: 2048 },
            list: { type: 'string', enum: [...SOURCE_LISTS] },
            everyMinutes,
            limit,
          },
          required: ['kind'],
          additionalProperties: false,
        },
        response: { 201: sourceSchema, 400: errorBodySchema, 401: errorBodySchema, 409: errorBodySchema },
      },
    },
    async (request, reply) => {
      const source = await app.salon.sources.add(request.body);
      reply.status(201);
      return source;
    },
  );

  app.get(
    '/api/v1/sources',
    {
      config: { rateLimit: API_RATE_LIMIT },
      schema: {
        summary: 'Every source with its poll state',
        description:
          'Oldest first: when each was last polled, its last error, the failures in a row, how many entries it stored, when it is next due, and the job of a poll running now. ' +
          'URLs (the source’s, and any in its last error) are shown without their query and fragment, where a private feed keeps its key, unless the request carries the admin token.',
        tags: ['sources'],
        response: { 200: { type: 'object', properties: { sources: { type: 'array', items: sourceSchema } }, required: ['sources'] } },
      },
    },
    async (request) => {
      const sources = await app.salon.sources.list();
      return { sources: isAdmin(request) ? sources : sources.map(publicView) };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/sources/:id',
    {
      config: { rateLimit: API_RATE_LIMIT },
      schema: { summary: 'One source with its poll state', tags: ['sources'], params, response: { 200: sourceSchema, 404: errorBodySchema } },
    },
    async (request) => {
      const source = await app.salon.sources.get(request.params.id);
      return isAdmin(request) ? source : publicView(source);
    },
  );

  app.patch<{ Params: { id: string }; Body: { everyMinutes?: number; limit?: number } }>(
    '/api/v1/sources/:id',
    {
      ...admin,
      schema: {
        summary: 'Change how often a source is polled, or how many entries a poll reads (admin)',
        tags: ['sources'],
        security: adminSecurity,
        params,
        body: { type: 'object', properties: { everyMinutes, limit }, minProperties: 1, additionalProperties: false },
        response: { 200: sourceSchema, 400: errorBodySchema, 401: errorBodySchema, 404: errorBodySchema, 409: errorBodySchema },
      },
    },
    async (request) => app.salon.sources.update(request.params.id, request.body),
  );

  app.delete<{ Params: { id: string } }>(
    '/api/v1/sources/:id',
    {
      ...admin,
      schema: {
        summary: 'Remove a source (admin); the items it brought stay',
        tags: ['sources'],
        security: adminSecurity,
        params,
        response: {
          200: { type: 'object', properties: { deleted: string }, required: ['deleted'] },
          401: errorBodySchema,
          404: errorBodySchema,
          409: errorBodySchema,
        },
      },
    },
    async (request) => {
      await app.salon.sources.remove(request.params.id);
      return { deleted: request.params.id };
    },
  );

  app.post<{ Params: { id: string } }>(
    '/api/v1/sources/:id/refresh',
    {
      ...admin,
      schema: {
        summary: 'Poll a source now (admin)',
        description: 'Answers 202 with the ingest job of the poll (GET /api/v1/ingest/{jobId}); when a poll of the source is running already, its job.',
        tags: ['sources'],
        security: adminSecurity,
        params,
        response: { 202: { type: 'object', properties: { jobId: string }, required: ['jobId'] }, 401: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request, reply) => {
      reply.status(202);
      return app.salon.sources.refresh(request.params.id);
    },
  );
}
