/** `GET /api/v1/search?q=&k=&kind=&category=&since=&source=`: items found through their chunks, best first. */
import type { FastifyInstance } from 'fastify';
import { CONTENT_KINDS, type ContentKind } from '../content/types.js';
import { errors } from '../errors.js';
import { MAX_SITE_CHARS, SITE_PATTERN } from '../protocol/search.js';
import { errorBodySchema } from './error-handler.js';
import { API_RATE_LIMIT } from './rate-limit.js';

export const DEFAULT_SEARCH_K = 10;
export const MAX_SEARCH_K = 50;
export const MAX_QUERY_CHARS = 500;

interface SearchQuery {
  q: string;
  k: number;
  kind?: ContentKind;
  category?: string;
  since?: string;
  source?: string;
}

const querySchema = {
  type: 'object',
  properties: {
    q: { type: 'string', minLength: 1, maxLength: MAX_QUERY_CHARS, description: 'what to look for' },
    k: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_K, default: DEFAULT_SEARCH_K, description: 'how many items' },
    kind: { type: 'string', enum: [...CONTENT_KINDS] },
    category: { type: 'string', minLength: 1, maxLength: 200 },
    since: { type: 'string', minLength: 4, maxLength: 40, description: 'ISO date: items published at or after it' },
    source: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_SITE_CHARS,
      pattern: SITE_PATTERN,
      description: 'a site (host name, e.g. example.com): items whose url is on it or on one of its subdomains; www. is ignored',
    },
  },
  required: ['q'],
  additionalProperties: false,
} as const;

const hitSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    kind: { type: 'string', enum: [...CONTENT_KINDS] },
    title: { type: 'string' },
    url: { type: ['string', 'null'] },
    score: { type: 'number' },
    snippet: { type: 'string' },
    publishedAt: { type: ['string', 'null'], description: 'ISO-8601' },
    category: { type: ['string', 'null'] },
    site: { type: ['string', 'null'], description: 'the host of url without www. (what source= filters by)' },
  },
  required: ['id', 'kind', 'title', 'url', 'score', 'snippet', 'publishedAt', 'category', 'site'],
} as const;

export default async function searchRoutes(app: FastifyInstance): Promise<void> {
  app.get<{ Querystring: SearchQuery }>(
    '/api/v1/search',
    {
      config: { rateLimit: API_RATE_LIMIT },
      schema: {
        summary: 'Search content by meaning (by text when the embedder is unavailable)',
        tags: ['search'],
        querystring: querySchema,
        response: {
          200: { type: 'object', properties: { hits: { type: 'array', items: hitSchema } }, required: ['hits'] },
          400: errorBodySchema,
          503: errorBodySchema,
        },
      },
    },
    async (request) => {
      const { q, k, kind, category, since, source } = request.query;
      if (!q.trim()) throw new errors.ERR_BAD_REQUEST('q must contain more than whitespace');
      if (since !== undefined && Number.isNaN(Date.parse(since))) throw new errors.ERR_BAD_REQUEST(`since must be an ISO date, got "${since}"`);
      return { hits: await app.salon.search.searchItems(q, { k, kind, category, since, source }) };
    },
  );
}
