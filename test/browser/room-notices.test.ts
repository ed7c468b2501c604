/** What the page tells a member when the server closes its socket. */
import { describe, expect, it } from 'vitest';
import { CloseCode } from '../../src/protocol/close-codes.js';
import { closeNotice } from '../../public/src/lib/room-notices.js';

describe('closeNotice', () => {
  it('does not blame the member for sending too fast when the server paused the socket (4429 also refuses an address opening too many rooms)', () => {
    const { notice, retry } = closeNotice(CloseCode.RATE_LIMITED);
    expect(retry).toBe('retry');
    expect(notice?.code).toBe('ERR_RATE_LIMITED');
    expect(notice?.message).toBe('Too much at once from this page or its network: the server paused the connection. Wait a moment, then try again.');
    expect(notice?.message).not.toMatch(/sending messages too fast/);
  });

  it('stops on a room that does not exist and reconnects at once after a refused token', () => {
    expect(closeNotice(CloseCode.ROOM_NOT_FOUND).retry).toBe('stop');
    expect(closeNotice(CloseCode.BAD_TOKEN).retry).toBe('now');
  });

  it('says plainly that an expired identity was replaced when the error before the 4401 said it had expired', () => {
    const { notice: expired, retry } = closeNotice(CloseCode.BAD_TOKEN, 'ERR_TOKEN_EXPIRED');
    expect(retry).toBe('now');
    expect(expired).toMatchObject({ code: 'ERR_TOKEN_EXPIRED', level: 'warning' });
    expect(expired?.message).toBe(
      'Your earlier identity in this browser expired after going unused for a long time, so you have joined with a new one. The private questions you asked under it stay with the old identity.',
    );
    expect(closeNotice(CloseCode.BAD_TOKEN, 'ERR_BAD_TOKEN').notice?.code).toBe('ERR_BAD_TOKEN');
    expect(closeNotice(CloseCode.BAD_TOKEN).notice?.code).toBe('ERR_BAD_TOKEN');
  });
});
