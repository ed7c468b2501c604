/** Human wording for what the server and the socket report (codes: docs/errors.md, close codes: docs/protocol.md). */
import { CloseCode } from '../../../src/protocol/close-codes.js';
import { MAX_NAME_CHARS } from '../../../src/protocol/names.js';

export type NoticeLevel = 'info' | 'warning' | 'error';

export interface Notice {
  code: string;
  message: string;
  level: NoticeLevel;
}

const FRIENDLY: Record<string, string> = {
  ERR_RATE_LIMITED: 'You are sending messages too fast. Wait a moment, then try again.',
  ERR_TOO_MANY_CONNECTIONS: 'Too many connections from this address. Close some tabs and try again.',
  ERR_MESSAGE_TOO_LONG: 'That message is too long.',
  ERR_ROOM_NOT_FOUND: 'This room does not exist. The item may have been removed.',
  ERR_ORIGIN_NOT_ALLOWED: 'This page is not allowed to open rooms on this server.',
  ERR_ASSISTANT_BUSY: 'The assistant has too many questions queued. Ask again in a moment.',
  ERR_BAD_TOKEN: 'Your saved identity was not accepted; you have joined with a new one.',
  ERR_TOKEN_EXPIRED:
    'Your earlier identity in this browser expired after going unused for a long time, so you have joined with a new one. The private questions you asked under it stay with the old identity.',
  ERR_NAME_RESERVED: 'That name is kept for the assistant and the people running this server. Choose another name.',
  ERR_NAME_UNUSABLE: `A name needs 1 to ${MAX_NAME_CHARS} visible characters and no invisible ones. Choose another name.`,
};

/**
 * A question the assistant's limits refused: the server's own words, which say the limits and when
 * to ask again ("You are sending messages too fast" was wrong for a single question).
 */
export function askRefusedNotice(serverMessage: string): Notice {
  return {
    code: 'ERR_RATE_LIMITED',
    level: 'error',
    message: serverMessage || 'The assistant takes only a few questions a minute. Ask again within a minute.',
  };
}

/** A notice for an `error` or `warning` frame: our wording when we have one, the server's otherwise. */
export function noticeFor(code: string, serverMessage: string, level: NoticeLevel = 'error'): Notice {
  return { code, level, message: (Object.hasOwn(FRIENDLY, code) && FRIENDLY[code]) || serverMessage || code };
}

/**
 * What a close code means for the member, and whether to try again. `lastError`: the code of the
 * `error` frame just before the close, which tells an expired token (ERR_TOKEN_EXPIRED) from a bad
 * one, both closed with 4401.
 */
export function closeNotice(code: number, lastError?: string): { notice: Notice | null; retry: 'retry' | 'now' | 'stop' } {
  switch (code) {
    case CloseCode.ROOM_NOT_FOUND:
      return { notice: noticeFor('ERR_ROOM_NOT_FOUND', ''), retry: 'stop' };
    case CloseCode.ORIGIN_NOT_ALLOWED:
      return { notice: noticeFor('ERR_ORIGIN_NOT_ALLOWED', ''), retry: 'stop' };
    case CloseCode.BAD_TOKEN:
      return { notice: noticeFor(lastError === 'ERR_TOKEN_EXPIRED' ? lastError : 'ERR_BAD_TOKEN', '', 'warning'), retry: 'now' };
    case CloseCode.RATE_LIMITED:
      // The server closes with 4429 for a page's own flood and for an address opening too many
      // rooms at once (a whole office behind one address): the words must fit both. The code stays
      // the refusal's, so the notice outlives the rejoin as a flood's did.
      return {
        notice: {
          code: 'ERR_RATE_LIMITED',
          level: 'error',
          message: 'Too much at once from this page or its network: the server paused the connection. Wait a moment, then try again.',
        },
        retry: 'retry',
      };
    case CloseCode.MESSAGE_TOO_BIG:
      return { notice: { code: 'CLOSE_1009', level: 'error', message: 'The last message was too large for the server.' }, retry: 'retry' };
    case CloseCode.BAD_MESSAGE:
      return {
        notice: { code: 'CLOSE_4400', level: 'error', message: 'The server did not understand a message from this page. Reconnecting.' },
        retry: 'retry',
      };
    default:
      return { notice: null, retry: 'retry' };
  }
}
