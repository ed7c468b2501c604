import { describe, expect, it } from 'vitest';
import { SenderShares, shareWords } from '../../src/rooms/sender-shares.js';

/** Sends `n` messages from `address` at `now`; how many were taken. */
function send(shares: SenderShares, address: string, n: number, now: number): number {
  let taken = 0;
  for (let i = 0; i < n; i++) if (shares.take(address, now) === 'ok') taken++;
  return taken;
}

describe('a room’s message rate shared among the addresses posting', () => {
  it('leaves a member who had not posted a message however two addresses flood the room', () => {
    const shares = new SenderShares(10, 0);
    for (let t = 0; t <= 30_000; t += 100) {
      send(shares, 'flood-a', 50, t);
      send(shares, 'flood-b', 50, t);
    }
    // The two take at most their shares (10 / 3 a second each), so the room keeps some of its rate.
    expect(shares.take('quiet', 30_050)).toBe('ok');
  });

  it('never lets many addresses together past the room’s own rate', () => {
    const shares = new SenderShares(2, 0);
    const taken = Array.from({ length: 10 }, (_, i) => shares.take(`a${i}`, 0));
    // The room's burst is twice its rate: four, whoever sends.
    expect(taken.filter((v) => v === 'ok')).toHaveLength(4);
    expect(taken.slice(4)).toEqual(Array(6).fill('room'));
    let total = 0;
    for (let t = 1000; t <= 10_000; t += 50) for (let i = 0; i < 10; i++) total += shares.take(`a${i}`, t) === 'ok' ? 1 : 0;
    expect(total).toBeLessThanOrEqual(2 * 9 + 1);
  });

  it('gives one address alone half the room, and tells it how long to wait', () => {
    const shares = new SenderShares(10, 0);
    expect(send(shares, 'a', 20, 0)).toBe(10);
    expect(shares.take('a', 0)).toBe('share');
    // Its share refills at 10 / 2 a second: one message in 200 ms.
    expect(shares.waitMs('a', 'share', 0)).toBe(200);
    expect(shares.take('a', 200)).toBe('ok');
  });

  it('forgets an address that stopped posting, whose part goes back to the others', () => {
    const shares = new SenderShares(12, 0);
    shares.take('a', 0);
    shares.take('b', 0);
    expect(shares.sending).toBe(2);
    expect(shares.shareRate()).toBe(4);
    shares.take('b', 10_000);
    expect(shares.sending).toBe(1);
    expect(shares.shareRate()).toBe(6);
  });

  it('says how many share the room and what each may send', () => {
    expect(shareWords({ senders: 3, perSecond: 7.5 })).toBe(
      "this room's messages are shared among 3 addresses posting in it and one more; each may send about 7.5 a second",
    );
    expect(shareWords({ senders: 1, perSecond: 15 })).toContain('among 1 address posting');
  });

  it('refuses a rate that is not a positive number', () => {
    expect(() => new SenderShares(0, 0)).toThrow(/perSecond/);
  });
});
