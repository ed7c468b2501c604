/** JSON schemas of threads as the API shows them (docs/api.md), shared by the thread routes. */

export const idParams = { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['id'] } as const;

export const threadSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    roomId: { type: 'string' },
    title: { type: 'string' },
    main: { type: 'boolean' },
    createdAt: { type: 'string' },
    status: { type: 'string', enum: ['active', 'archived'] },
    tags: { type: 'array', items: { type: 'string' } },
    summary: { type: 'string' },
    weight: { type: 'number' },
    parentId: { type: ['string', 'null'] },
    childIds: { type: 'array', items: { type: 'string' }, description: 'the newest 100 threads split off it, oldest first' },
    childCount: { type: 'integer', description: 'threads split off it in all' },
    origin: { type: 'string', enum: ['original', 'split', 'merged', 'fused'] },
    splitLocked: { type: 'boolean' },
    splitLockedUntil: { type: ['string', 'null'], enum: ['compaction', 'agent_release', 'force', null] },
    mergedInto: { type: ['string', 'null'] },
    isMerged: { type: 'boolean' },
    config: {
      type: 'object',
      properties: { enable_chat_history_rag: { type: 'boolean' }, privileged: { type: 'boolean' } },
      required: ['enable_chat_history_rag', 'privileged'],
    },
  },
  required: [
    'id',
    'roomId',
    'title',
    'main',
    'createdAt',
    'status',
    'tags',
    'summary',
    'weight',
    'parentId',
    'childIds',
    'childCount',
    'origin',
    'splitLocked',
    'splitLockedUntil',
    'mergedInto',
    'isMerged',
    'config',
  ],
} as const;

const bridgeSchema = {
  type: 'object',
  properties: { threadId: { type: 'string' }, otherId: { type: 'string' }, weight: { type: 'number' } },
  required: ['threadId', 'otherId', 'weight'],
} as const;

const suggestionSchema = {
  type: 'object',
  properties: { survivorId: { type: 'string' }, absorbedId: { type: 'string' }, weight: { type: 'number' } },
  required: ['survivorId', 'absorbedId', 'weight'],
} as const;

const eventSchema = {
  type: 'object',
  properties: {
    threadId: { type: 'string' },
    at: { type: 'string' },
    actor: { type: 'string' },
    action: { type: 'string' },
    details: { type: 'object', additionalProperties: true },
  },
  required: ['threadId', 'at', 'actor', 'action', 'details'],
} as const;

export const detailSchema = {
  type: 'object',
  properties: {
    thread: threadSchema,
    messages: { type: 'integer', description: 'messages in the thread' },
    seq: { type: 'integer', description: 'the room’s newest seq when the messages were counted: a message of the thread at or below it is counted' },
    unsettledImports: {
      type: 'array',
      description: 'seq ranges an import took and had not made readable when the messages were counted: the thread’s messages in them are not counted',
      items: {
        type: 'object',
        properties: { fromSeq: { type: 'integer' }, toSeq: { type: 'integer' }, startedAt: { type: 'string' } },
        required: ['fromSeq', 'toSeq', 'startedAt'],
      },
    },
    memory: {
      type: 'object',
      properties: {
        chunks: { type: 'integer', description: 'remembered passages (exchanges and windows of messages)' },
        pending: { type: 'integer', description: 'messages and passages not yet stored' },
        fused: { type: 'integer', description: 'passages of a fused thread made of one passage of each source' },
        kept: { type: 'integer', description: 'passages of a fused thread kept from its second source as they were' },
      },
      required: ['chunks', 'pending', 'fused', 'kept'],
    },
    bridges: { type: 'array', items: bridgeSchema, description: 'threads on the same subject, by centroid similarity' },
    suggestions: { type: 'array', items: suggestionSchema, description: 'merges worth considering (never done by themselves)' },
    history: { type: 'array', items: eventSchema, description: 'the thread operations recorded, oldest first' },
  },
  required: ['thread', 'messages', 'seq', 'unsettledImports', 'memory', 'bridges', 'suggestions', 'history'],
} as const;
