/**
 * `POST /api/v1/rooms/:id/ask` `{text, threadId?, name?}` → `{id, answer, message, sources, stages, position}`.
 * The question is posted in the room (as `@ai …`) and the answer streamed to its members like any
 * ask (docs/api.md); the response carries the whole answer once it is done.
 */
import type { FastifyInstance } from 'fastify';
import { errors } from '../errors.js';
import { OVERLONG_CLUSTER, hasOverlongCluster } from '../protocol/clusters.js';
import type { Member, Message } from '../protocol/messages.js';
import { MAX_NAME_CHARS, cleanName, isReservedName } from '../protocol/names.js';
import { addressKey } from '../rooms/address.js';
import { requestedThread } from '../rooms/thread-target.js';
import type { RoomResolver } from '../rooms/types.js';
import { errorBodySchema } from './error-handler.js';
import { API_RATE_LIMIT } from './rate-limit.js';
import { wellFormed } from '../text.js';

/** Longest question accepted over HTTP. */
export const ASK_MAX_CHARS = 2000;
/**
 * Largest body an ask may send: its fields at their longest, every character JSON-escaped, fit
 * several times over. The app-wide 1 MiB let anyone post a megabyte of nested arrays (~100 ms of
 * the event loop to parse) 300 times a minute, only for the schema to refuse it.
 */
export const ASK_BODY_LIMIT_BYTES = 32 * 1024;
/** How a question looks in the room, as if typed there. */
const ASK_PREFIX = '@ai ';

const sourceSchema = {
  type: 'object',
  properties: {
    n: { type: 'integer' },
    id: { type: 'string' },
    kind: { type: 'string' },
    title: { type: 'string' },
    url: { type: ['string', 'null'] },
    sourceType: { type: 'string' },
    snippet: { type: 'string' },
    messageIds: { type: 'array', items: { type: 'string' }, description: 'conversation sources: the messages cited, oldest first' },
    authors: { type: 'array', items: { type: 'string' }, description: 'conversation sources: who spoke' },
    from: { type: 'string', description: 'conversation sources: time of the first message' },
    to: { type: 'string', description: 'conversation sources: time of the last message' },
  },
} as const;

const schema = {
  summary: 'Ask the room assistant; the answer is also broadcast in the room',
  params: {
    type: 'object',
    properties: { id: { type: 'string', minLength: 1, maxLength: 200 } },
    required: ['id'],
  },
  body: {
    type: 'object',
    properties: {
      text: { type: 'string', minLength: 1, maxLength: ASK_MAX_CHARS },
      threadId: { type: 'string', minLength: 1, maxLength: 200 },
      name: { type: 'string', minLength: 1, maxLength: MAX_NAME_CHARS },
    },
    required: ['text'],
    additionalProperties: false,
  },
  response: {
    200: {
      type: 'object',
      properties: {
        id: { type: 'string' },
        answer: { type: 'string' },
        message: { type: 'object', additionalProperties: true },
        sources: { type: 'array', items: sourceSchema },
        abstained: { type: 'boolean', description: 'true when no source was relevant enough: the answer says so and cites nothing' },
        stages: { type: 'object', additionalProperties: true },
        position: { type: 'integer', description: 'place in the assistant queue when asked (0: answered at once)' },
      },
    },
    '4xx': errorBodySchema,
    '5xx': errorBodySchema,
  },
} as const;

/** Registers the ask route. `resolveRoom` says whether a room exists. */
export function askRoutes(resolveRoom: RoomResolver) {
  return async function routes(app: FastifyInstance): Promise<void> {
    app.post<{ Params: { id: string }; Body: { text: string; threadId?: string; name?: string } }>(
      '/api/v1/rooms/:id/ask',
      { schema, bodyLimit: ASK_BODY_LIMIT_BYTES, config: { rateLimit: API_RATE_LIMIT } },
      async (request) => {
        const { assistant, rooms } = app.salon;
        const roomId = request.params.id;
        if (!(await resolveRoom(roomId))) throw new errors.ERR_ROOM_NOT_FOUND(roomId);
        const text = wellFormed(request.body.text.trim());
        if (!text) throw new errors.ERR_BAD_REQUEST('text is empty');
        if (hasOverlongCluster(text)) throw new errors.ERR_BAD_REQUEST(OVERLONG_CLUSTER);
        const threadId = await threadFor(app, roomId, request.body.threadId);
        // Without a socket identity, HTTP askers are told apart (and rate limited) by address.
        const address = addressKey(request.ip);
        const askerId = rooms.identity.addressId(address);
        const asker = { id: askerId, name: await rooms.askerName(roomId, askerId, askerName(request.body.name)) };
        // Refuse over-limit asks before the question is written to the room (and hold this one's
        // place in the limits while it is).
        const admission = assistant.admit?.({ roomId, threadId, text, asker, address });
        let question: Message;
        try {
          // The room's message rate, as a socket's question is under it: an address posted over
          // HTTP as fast as the assistant's limits allowed, past its share of a busy room.
          const refused = rooms.admitHttpPost(roomId, address);
          if (refused) throw refused;
          question = await postQuestion(app, roomId, threadId, asker, text);
        } catch (err) {
          if (admission) assistant.release?.(admission);
          throw err;
        }
        // The thread the store filed the question in: a merge committed since the lookup moved it to the survivor.
        const { id, position, done } = assistant.ask(
          { roomId, threadId: question.threadId, text, asker, address, questionId: question.id, questionSeq: question.seq },
          admission,
        );
        const result = await done;
        return {
          id,
          answer: result.message.text,
          message: result.message,
          sources: result.sources,
          ...(result.abstained ? { abstained: true } : {}),
          stages: result.stages,
          position,
        };
      },
    );
  };
}

/** The name the asker asked for, cleaned like a socket's; `Guest` when none is given. */
function askerName(raw: string | undefined): string {
  if (raw === undefined) return 'Guest';
  const name = cleanName(raw);
  if (name === null) throw new errors.ERR_BAD_REQUEST(`name must be 1–${MAX_NAME_CHARS} visible characters`);
  if (isReservedName(name)) throw new errors.ERR_NAME_RESERVED(name);
  return name;
}

/** The question joins the room like a member's `@ai` message, so everyone sees what was asked. */
async function postQuestion(app: FastifyInstance, roomId: string, threadId: string, asker: Member, text: string): Promise<Message> {
  const { message } = await app.salon.store.appendMessage({ roomId, threadId, author: { ...asker, kind: 'user' }, text: `${ASK_PREFIX}${text}` });
  app.salon.rooms.broadcast(roomId, { type: 'message', message });
  return message;
}

async function threadFor(app: FastifyInstance, roomId: string, threadId?: string): Promise<string> {
  const { store } = app.salon;
  if (!threadId) return (await store.ensureMainThread(roomId)).id;
  // A merged thread's questions go to its survivor and an archived one's are refused, as a socket's
  // and the store's are: one code for one thread, whichever way it was asked.
  return (await requestedThread(store, roomId, threadId)).id;
}
