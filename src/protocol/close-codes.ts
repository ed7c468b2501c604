/** WebSocket close codes (DESIGN §3). */
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
