/**
 * The edge where a `history` frame from another node enters this node's rooms: the frame is read
 * and its message checked field by field before any room sees it. A seq that is not a whole
 * number ≥ 1 (JSON's 1e400 reads as Infinity) once became a room's highest seq and silenced it.
 */
import type { Author, AuthorKind, Message } from '../protocol/messages.js';
import { isSeq } from './seq-window.js';

/** Longest id (message, thread, author, client) a message from the bus may carry. */
export const MAX_BUS_ID_CHARS = 256;
/** Longest author name a message from the bus may carry (members' are far shorter; the assistant's and system authors' too). */
const MAX_BUS_NAME_CHARS = 256;

const AUTHOR_KINDS = new Set<AuthorKind>(['user', 'assistant', 'system']);
const FRAME_TYPES = new Set(['message', 'assistant.done']);

type Fields = Record<string, unknown>;

const isObject = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_BUS_ID_CHARS;
const isOptionalId = (v: unknown) => v === undefined || isId(v);

function isAuthor(v: unknown): v is Author {
  return isObject(v) && isId(v.id) && typeof v.name === 'string' && v.name.length <= MAX_BUS_NAME_CHARS && AUTHOR_KINDS.has(v.kind as AuthorKind);
}

/** Whether `v` has the shape of a message of room `roomId`: stored (seq ≥ 1) or a notice never stored (seq 0). */
function isMessageOf(v: unknown, roomId: string): v is Message {
  return (
    isObject(v) &&
    isId(v.id) &&
    (v.seq === 0 || isSeq(v.seq)) &&
    v.roomId === roomId &&
    isId(v.threadId) &&
    isAuthor(v.author) &&
    typeof v.text === 'string' &&
    typeof v.ts === 'string' &&
    Number.isFinite(Date.parse(v.ts)) &&
    isOptionalId(v.clientId) &&
    isOptionalId(v.replyTo) &&
    (v.sources === undefined || (Array.isArray(v.sources) && v.sources.every(isObject)))
  );
}

/**
 * The message of a `history` frame heard on room `roomId`'s channel (`{type: 'message' |
 * 'assistant.done', message}`); null when the frame is not JSON, not one of those, or its message
 * is malformed or belongs to another room.
 */
export function parseBusMessage(frame: string, roomId: string): Message | null {
  let v: unknown;
  try {
    v = JSON.parse(frame);
  } catch {
    return null;
  }
  if (!isObject(v) || !FRAME_TYPES.has(v.type as string)) return null;
  return isMessageOf(v.message, roomId) ? v.message : null;
}

/** Whether a frame to pass on untouched (`all`, `typing`, `user`) is one JSON object with a `type`, as every server frame is. */
export function isServerFrame(frame: string): boolean {
  try {
    const v: unknown = JSON.parse(frame);
    return isObject(v) && typeof v.type === 'string';
  } catch {
    return false;
  }
}
