/** JSON schemas of the content and ingest routes (validation and the OpenAPI document). */
import { CONTENT_KINDS } from '../content/types.js';
import { ITEM_LIMITS } from '../content/items.js';
import { MAX_INGEST_LIMIT } from '../content/ingest/ingest.js';

const nullableString = { type: ['string', 'null'] } as const;
const string = { type: 'string' } as const;
const integer = { type: 'integer' } as const;
/** A whole number a client sends: bounded, as Ajv takes 1e300 for an integer. */
const sentInteger = { type: 'integer', maximum: Number.MAX_SAFE_INTEGER } as const;
/** When a stored record was made and last changed (ISO-8601). */
const timestamps = { createdAt: string, updatedAt: string } as const;

/** Longest list page. */
export const MAX_PAGE = 100;
export const DEFAULT_PAGE = 20;
/** Items one POST /content may carry. */
export const MAX_POST_ITEMS = 100;

export const commentSchema = {
  type: 'object',
  properties: { by: string, text: string, time: integer },
  required: ['by', 'text', 'time'],
} as const;

/** A comment as POST /content takes it. */
const commentInputSchema = { ...commentSchema, properties: { ...commentSchema.properties, time: sentInteger } } as const;

/** The item fields that may be null, the same in answers and in POST /content. */
const optionalProperties = {
  category: nullableString,
  publishedAt: nullableString,
  image: nullableString,
  author: nullableString,
  channel: nullableString,
  thumbnail: nullableString,
  siteName: nullableString,
} as const;

const summaryProperties = {
  id: string,
  kind: { type: 'string', enum: [...CONTENT_KINDS] },
  title: string,
  url: nullableString,
  description: string,
  ...optionalProperties,
} as const;

export const itemSummarySchema = {
  type: 'object',
  properties: { ...summaryProperties, commentCount: integer },
  required: ['id', 'kind', 'title', 'url', 'description', 'commentCount'],
} as const;

export const fullItemSchema = {
  type: 'object',
  properties: {
    ...summaryProperties,
    body: string,
    comments: { type: 'array', items: commentSchema },
    source: string,
    ...timestamps,
  },
  required: ['id', 'kind', 'title', 'url', 'description', 'body', 'comments'],
} as const;

export const listQuerySchema = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: [...CONTENT_KINDS] },
    category: { type: 'string', minLength: 1, maxLength: ITEM_LIMITS.category },
    limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE },
    cursor: { type: 'string', minLength: 1, maxLength: 1024 },
  },
  additionalProperties: false,
} as const;

export const idParamsSchema = {
  type: 'object',
  properties: { id: { type: 'string', minLength: 1, maxLength: 200 } },
  required: ['id'],
} as const;

/** An item as POST /content takes it; the id may be omitted (derived from the url or title). */
export const itemInputSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', pattern: '^((news|post|video)_)?[A-Za-z0-9_-]{1,128}$' },
    kind: { type: 'string', enum: [...CONTENT_KINDS] },
    title: { type: 'string', minLength: 1, maxLength: 10_000 },
    url: nullableString,
    description: nullableString,
    body: nullableString,
    comments: { type: 'array', maxItems: ITEM_LIMITS.comments, items: commentInputSchema },
    ...optionalProperties,
  },
  required: ['kind', 'title'],
  additionalProperties: false,
} as const;

export const postContentBodySchema = {
  oneOf: [
    itemInputSchema,
    {
      type: 'object',
      properties: { items: { type: 'array', minItems: 1, maxItems: MAX_POST_ITEMS, items: itemInputSchema } },
      required: ['items'],
      additionalProperties: false,
    },
  ],
} as const;

export const postContentReplySchema = {
  type: 'object',
  properties: {
    items: {
      type: 'array',
      items: {
        type: 'object',
        properties: { id: string, status: { type: 'string', enum: ['created', 'updated', 'unchanged'] } },
        required: ['id', 'status'],
      },
    },
  },
  required: ['items'],
} as const;

const limitSchema = { type: 'integer', minimum: 1, maximum: MAX_INGEST_LIMIT } as const;
const urlSchema = { type: 'string', minLength: 1, maxLength: ITEM_LIMITS.url, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://' } as const;

function oneSource(key: string, schema: object): object {
  return { type: 'object', properties: { [key]: schema, limit: limitSchema }, required: [key], additionalProperties: false };
}

export const ingestBodySchema = {
  oneOf: [
    oneSource('url', urlSchema),
    oneSource('feed', urlSchema),
    oneSource('youtubeFeed', urlSchema),
    oneSource('hn', {
      anyOf: [
        { ...sentInteger, minimum: 1 },
        { type: 'string', enum: ['top'] },
      ],
    }),
  ],
} as const;

export const jobSchema = {
  type: 'object',
  properties: {
    id: string,
    runner: { type: 'string', enum: ['server', 'cli'] },
    /** How many times a server started it: a job whose node stopped under it is run again, up to 3 starts. */
    attempts: integer,
    request: { type: 'object', additionalProperties: true },
    status: { type: 'string', enum: ['queued', 'running', 'done', 'failed', 'cancelled'] },
    total: integer,
    done: integer,
    failed: integer,
    itemIds: { type: 'array', items: string },
    failures: {
      type: 'array',
      items: {
        type: 'object',
        properties: { ref: string, code: string, message: string },
        required: ['ref', 'code', 'message'],
      },
    },
    ...timestamps,
  },
  required: ['id', 'status', 'total', 'done', 'failed', 'itemIds', 'failures'],
} as const;

export const jobParamsSchema = {
  type: 'object',
  properties: { jobId: { type: 'string', minLength: 1, maxLength: 100 } },
  required: ['jobId'],
} as const;
