/** WebSocket close codes (docs/protocol.md). */
export const CloseCode = {
  GOING_AWAY: 1001,
  MESSAGE_TOO_BIG: 1009,
  INTERNAL_ERROR: 1011,
  TRY_AGAIN_LATER: 1013,
  BAD_MESSAGE: 4400,
  BAD_TOKEN: 4401,
  ORIGIN_NOT_ALLOWED: 4403,
  ROOM_NOT_FOUND: 4404,
  HELLO_TIMEOUT: 4408,
  RATE_LIMITED: 4429,
} as const;

export type CloseCodeValue = (typeof CloseCode)[keyof typeof CloseCode];

/**
 * The reason sent with each close code. Reasons are fixed ASCII, never built from client text:
 * RFC 6455 bounds a close reason to 123 bytes and `ws` throws on a longer one, so a reason that
 * echoed input could be made to throw (the detail goes in the `error` frame sent before the close).
 */
export const CLOSE_REASONS: Readonly<Record<CloseCodeValue, string>> = {
  [CloseCode.GOING_AWAY]: 'server going away',
  [CloseCode.MESSAGE_TOO_BIG]: 'frame too large',
  [CloseCode.INTERNAL_ERROR]: 'internal error',
  // One code for a node at its socket cap and a socket too far behind: the error frame before says which.
  [CloseCode.TRY_AGAIN_LATER]: 'try again later: server full or too far behind',
  [CloseCode.BAD_MESSAGE]: 'bad message',
  [CloseCode.BAD_TOKEN]: 'bad token',
  [CloseCode.ORIGIN_NOT_ALLOWED]: 'origin not allowed',
  [CloseCode.ROOM_NOT_FOUND]: 'no such room',
  [CloseCode.HELLO_TIMEOUT]: 'no hello in time',
  [CloseCode.RATE_LIMITED]: 'rate limited',
};

/** The most bytes a close reason may take (RFC 6455 §5.5: a 125-byte control payload less the code). */
export const MAX_CLOSE_REASON_BYTES = 123;
