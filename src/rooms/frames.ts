/**
 * Validation of client frames at the edge (docs/architecture.md): raw text in, a typed ClientMessage or a
 * catalogued error out. Nothing past this file sees unchecked input.
 */
import { SalonError, errors } from '../errors.js';
import { OVERLONG_CLUSTER, hasOverlongCluster } from '../protocol/clusters.js';
import type { ClientMessage } from '../protocol/messages.js';
import { MAX_NAME_CHARS, cleanName, isReservedName } from '../protocol/names.js';
import { wellFormed } from '../text.js';
import { ASK_MARK } from './commands.js';

export const MAX_CLIENT_ID_CHARS = 128;
export const MAX_TOKEN_CHARS = 256;
export const MAX_THREAD_ID_CHARS = 128;

const CONTROL = /\p{Cc}/u;

/** Outcome of parsing one frame; on failure `clientId` is echoed when the frame carried one. */
export type Parsed = { ok: true; frame: ClientMessage } | { ok: false; error: SalonError; clientId?: string };

type Fields = Record<string, unknown>;

function bad(why: string, clientId?: string): Parsed {
  return { ok: false, error: new errors.ERR_BAD_MESSAGE(why), ...(clientId ? { clientId } : {}) };
}

function optionalString(f: Fields, key: string, max: number): string | undefined | false {
  const v = f[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.length < 1 || v.length > max || CONTROL.test(v)) return false;
  return v;
}

function parseHello(f: Fields): Parsed {
  const name = cleanName(f.name);
  if (name === null) return bad(`name must be 1–${MAX_NAME_CHARS} visible characters`);
  if (isReservedName(name)) return { ok: false, error: new errors.ERR_NAME_RESERVED(name) };
  const token = optionalString(f, 'token', MAX_TOKEN_CHARS);
  if (token === false) return bad('token must be a string');
  const lastSeq = f.lastSeq;
  if (lastSeq !== undefined && lastSeq !== null && !(Number.isSafeInteger(lastSeq) && (lastSeq as number) >= 0)) {
    return bad('lastSeq must be a whole number ≥ 0');
  }
  return {
    ok: true,
    frame: { type: 'hello', name, ...(token ? { token } : {}), ...(typeof lastSeq === 'number' ? { lastSeq } : {}) },
  };
}

function parseText(f: Fields, type: 'say' | 'ask', maxTextChars: number): Parsed {
  const clientId = optionalString(f, 'clientId', MAX_CLIENT_ID_CHARS);
  if (!clientId) return bad(`clientId must be a string of 1–${MAX_CLIENT_ID_CHARS} characters`);
  const text = f.text;
  if (typeof text !== 'string' || text.trim() === '') return bad('text must be a non-empty string', clientId);
  if (text.length > maxTextChars) return { ok: false, error: new errors.ERR_MESSAGE_TOO_LONG(maxTextChars), clientId };
  if (hasOverlongCluster(text)) return bad(OVERLONG_CLUSTER, clientId);
  const threadId = optionalString(f, 'threadId', MAX_THREAD_ID_CHARS);
  if (threadId === false) return bad('threadId must be a string', clientId);
  const thread = threadId ? { threadId } : {};
  if (type === 'say') return { ok: true, frame: { type, text, clientId, ...thread } };
  if (f.private !== undefined && typeof f.private !== 'boolean') return bad('private must be true or false', clientId);
  // A public ask is posted as `@ai <text>` (trimmed): that message must fit the limit too.
  const postedMax = maxTextChars - ASK_MARK.length;
  if (!f.private && text.trim().length > postedMax) return { ok: false, error: new errors.ERR_MESSAGE_TOO_LONG(postedMax), clientId };
  return { ok: true, frame: { type, text, clientId, ...thread, ...(f.private ? { private: true } : {}) } };
}

/** Fields one frame may carry (the protocol's longest has five). */
const MAX_FRAME_FIELDS = 16;

/**
 * Whether `raw` can be one flat JSON object: one `{`, no `[`, at most MAX_FRAME_FIELDS colons
 * outside strings. A scan that allocates nothing, made before JSON.parse: every frame is parsed
 * before the rate limits can refuse it, and a 16 KiB frame of nested arrays cost JSON.parse
 * ~0.8 ms (one of 1,500 fields ~0.3 ms), each socket of an address sending 19 of them every 10 s
 * without being closed.
 */
function flatShape(raw: string): boolean {
  let objects = 0;
  let colons = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b) {
      if (++objects > 1) return false;
    } else if (c === 0x5b) return false;
    else if (c === 0x3a && ++colons > MAX_FRAME_FIELDS) return false;
  }
  return true;
}

/** Parses one text frame. Malformed JSON, unknown types and missing fields give ERR_BAD_MESSAGE. */
export function parseClientFrame(raw: string, maxTextChars: number): Parsed {
  if (!flatShape(raw)) return bad(`a frame is one JSON object of at most ${MAX_FRAME_FIELDS} plain fields (no objects or arrays in it)`);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return bad('not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad('expected a JSON object');
  const f = value as Fields;
  // Every string of a frame (name, token, text, clientId, threadId) has its lone surrogates made
  // U+FFFD here, as the store keeps them: what is echoed, matched (a resent clientId) and stored is one string.
  for (const key of Object.keys(f)) if (typeof f[key] === 'string') f[key] = wellFormed(f[key]);
  switch (f.type) {
    case 'hello':
      return parseHello(f);
    case 'say':
    case 'ask':
      return parseText(f, f.type, maxTextChars);
    case 'typing':
      if (typeof f.active !== 'boolean') return bad('active must be true or false');
      return { ok: true, frame: { type: 'typing', active: f.active } };
    case 'ping':
      return { ok: true, frame: { type: 'ping' } };
    default:
      return bad(typeof f.type === 'string' ? `unknown type ${JSON.stringify(f.type.slice(0, 40))}` : 'missing type');
  }
}
