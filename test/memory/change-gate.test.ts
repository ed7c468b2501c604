/** Members' thread changes from a room: one at a time per room, a few at a time per node, a budget per member and per address. */
import { describe, expect, it } from 'vitest';
import { errors } from '../../src/errors.js';
import {
  ADDRESS_THREAD_CHANGE_MS_PER_MINUTE,
  ADDRESS_THREAD_CHANGES_PER_MINUTE,
  MAX_CHANGES_AT_ONCE,
  MEMBER_THREAD_CHANGE_MS_PER_MINUTE,
  MEMBER_THREAD_CHANGES_PER_MINUTE,
  ThreadChangeGate,
} from '../../src/memory/threads/change-gate.js';

/** A member on an address of their own unless told otherwise. */
const who = (userId: string, address = `addr_${userId}`) => ({ userId, address });

/** A change that runs until `finish` is called. */
function pending(): { change: () => Promise<string>; finish: () => void } {
  let finish!: () => void;
  const done = new Promise<string>((resolve) => (finish = () => resolve('done')));
  return { change: () => done, finish: () => finish() };
}

describe('ThreadChangeGate', () => {
  it('refuses a second change in a room while one runs, not in another room, and again once it is done', async () => {
    const gate = new ThreadChangeGate(() => 0);
    const slow = pending();
    const first = gate.run('news_1', who('u_ann'), slow.change);
    await expect(gate.run('news_1', who('u_bob'), async () => 'second')).rejects.toMatchObject({ code: 'ERR_RATE_LIMITED' });
    expect(await gate.run('news_2', who('u_bob'), async () => 'elsewhere')).toBe('elsewhere');
    slow.finish();
    expect(await first).toBe('done');
    expect(await gate.run('news_1', who('u_bob'), async () => 'after')).toBe('after');
    // A change that fails frees its room too.
    await expect(gate.run('news_1', who('u_bob'), async () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(await gate.run('news_1', who('u_bob'), async () => 'again')).toBe('again');
  });

  it('runs at most a few changes at once over all rooms (one fusion in every room cost seconds of CPU each)', async () => {
    const gate = new ThreadChangeGate(() => 0);
    const slow = Array.from({ length: MAX_CHANGES_AT_ONCE }, () => pending());
    const running = slow.map((s, i) => gate.run(`news_${i}`, who(`u_${i}`), s.change));
    await expect(gate.run('news_other', who('u_other'), async () => 'one more')).rejects.toMatchObject({
      code: 'ERR_RATE_LIMITED',
      message: expect.stringMatching(/other rooms/),
    });
    slow[0].finish();
    await running[0];
    expect(await gate.run('news_other', who('u_other'), async () => 'now')).toBe('now');
    // The refusal spent no budget: u_other could still make all its changes.
    for (const s of slow.slice(1)) s.finish();
    await Promise.all(running);
    for (let i = 1; i < MEMBER_THREAD_CHANGES_PER_MINUTE; i++) await gate.run(`news_${i}`, who('u_other'), async () => i);
  });

  it('says no wait when refusing as busy (a change under way ends when it ends), and the budget’s wait when refusing for it', async () => {
    const gate = new ThreadChangeGate(() => 0);
    const slow = Array.from({ length: MAX_CHANGES_AT_ONCE }, () => pending());
    const running = slow.map((s, i) => gate.run(`news_${i}`, who(`u_${i}`), s.change));
    const refusal = (roomId: string, userId: string) => gate.run(roomId, who(userId), async () => 'refused').catch((err: unknown) => err);
    for (const busy of [await refusal('news_0', 'u_x'), await refusal('news_other', 'u_y')]) {
      expect(busy).toMatchObject({ code: 'ERR_RATE_LIMITED' });
      expect(busy).not.toHaveProperty('retryAfterMs');
    }
    for (const s of slow) s.finish();
    await Promise.all(running);
    for (let i = 0; i < MEMBER_THREAD_CHANGES_PER_MINUTE; i++) await gate.run(`news_${i}`, who('u_ann'), async () => i);
    const spent = (await refusal('news_x', 'u_ann')) as { code: string; retryAfterMs?: number };
    expect(spent.code).toBe('ERR_RATE_LIMITED');
    expect(spent.retryAfterMs).toBeGreaterThanOrEqual(60_000 / MEMBER_THREAD_CHANGES_PER_MINUTE);
  });

  it('gives each member a budget of changes a minute, refilled as time passes', async () => {
    let now = 0;
    const gate = new ThreadChangeGate(() => now);
    for (let i = 0; i < MEMBER_THREAD_CHANGES_PER_MINUTE; i++) await gate.run(`news_${i}`, who('u_ann'), async () => i);
    await expect(gate.run('news_x', who('u_ann'), async () => 'more')).rejects.toMatchObject({ code: 'ERR_RATE_LIMITED' });
    expect(await gate.run('news_x', who('u_bob'), async () => 'bob')).toBe('bob');
    now += 60_000 / MEMBER_THREAD_CHANGES_PER_MINUTE;
    expect(await gate.run('news_x', who('u_ann'), async () => 'later')).toBe('later');
    await expect(gate.run('news_x', who('u_ann'), async () => 'too soon')).rejects.toMatchObject({ code: 'ERR_RATE_LIMITED' });
  });

  it('spends no budget on a change the operation refused, and keeps the token of one that failed', async () => {
    const gate = new ThreadChangeGate(() => 0);
    const refused = () => Promise.reject(new errors.ERR_BAD_THREAD_OP('a thread cannot absorb itself'));
    // Before, each refusal took a token of the member and of the address: three times the budget of them left nothing.
    for (let i = 0; i < 3 * ADDRESS_THREAD_CHANGES_PER_MINUTE; i++)
      await expect(gate.run('news_1', who('u_ann', '203.0.113.7'), refused)).rejects.toMatchObject({ code: 'ERR_BAD_THREAD_OP' });
    for (const conflict of [errors.ERR_THREAD_CHANGED, errors.ERR_THREAD_LOCKED])
      await expect(gate.run('news_1', who('u_ann', '203.0.113.7'), () => Promise.reject(new conflict('thr_a', 'force')))).rejects.toBeInstanceOf(conflict);
    for (let i = 0; i < MEMBER_THREAD_CHANGES_PER_MINUTE - 1; i++) expect(await gate.run('news_1', who('u_ann', '203.0.113.7'), async () => i)).toBe(i);
    // A failure of the server's own is not the member's refusal: it may have cost the work, so it spends the last token.
    await expect(gate.run('news_1', who('u_ann', '203.0.113.7'), () => Promise.reject(new Error('disk full')))).rejects.toThrow('disk full');
    await expect(gate.run('news_1', who('u_ann', '203.0.113.7'), async () => 'more')).rejects.toMatchObject({ code: 'ERR_RATE_LIMITED' });
  });

  it('gives each address one budget, however many identities its members take', async () => {
    let now = 0;
    const gate = new ThreadChangeGate(() => now);
    // A fresh identity per change: every member's own budget is full.
    for (let i = 0; i < ADDRESS_THREAD_CHANGES_PER_MINUTE; i++) await gate.run(`news_${i}`, who(`u_${i}`, '203.0.113.7'), async () => i);
    await expect(gate.run('news_x', who('u_fresh', '203.0.113.7'), async () => 'more')).rejects.toMatchObject({
      code: 'ERR_RATE_LIMITED',
      message: expect.stringMatching(/one address/),
    });
    expect(await gate.run('news_x', who('u_fresh', '198.51.100.1'), async () => 'elsewhere')).toBe('elsewhere');
    now += 60_000 / ADDRESS_THREAD_CHANGES_PER_MINUTE;
    expect(await gate.run('news_x', who('u_fresh2', '203.0.113.7'), async () => 'later')).toBe('later');
  });

  it('lets one member, or one address, hold one change at a time: not both of the node’s places', async () => {
    const gate = new ThreadChangeGate(() => 0);
    const slow = pending();
    const first = gate.run('news_1', who('u_ann', '203.0.113.7'), slow.change);
    const mine = /your thread change is still under way/;
    await expect(gate.run('news_2', who('u_ann', '203.0.113.7'), async () => 'second')).rejects.toMatchObject({
      code: 'ERR_RATE_LIMITED',
      message: expect.stringMatching(mine),
    });
    // A fresh identity on the same address is the same holder.
    await expect(gate.run('news_2', who('u_fresh', '203.0.113.7'), async () => 'second')).rejects.toMatchObject({ message: expect.stringMatching(mine) });
    // The node's other place is left for someone else.
    expect(await gate.run('news_2', who('u_bob'), async () => 'bob')).toBe('bob');
    slow.finish();
    await first;
    expect(await gate.run('news_2', who('u_ann', '203.0.113.7'), async () => 'after')).toBe('after');
  });

  it('counts the time a member’s changes held the gate, and refuses past it until that time is paid back', async () => {
    let now = 0;
    const gate = new ThreadChangeGate(() => now);
    // One long change (a fusion of large memories) takes more than a minute's time budget.
    const long = async () => {
      now += MEMBER_THREAD_CHANGE_MS_PER_MINUTE + 6_000;
      return 'long';
    };
    expect(await gate.run('news_1', who('u_ann'), long)).toBe('long');
    const refused = (await gate.run('news_1', who('u_ann'), async () => 'more').catch((err: unknown) => err)) as {
      code: string;
      message: string;
      retryAfterMs?: number;
    };
    expect(refused).toMatchObject({ code: 'ERR_RATE_LIMITED', message: expect.stringMatching(/run 15 s a minute/) });
    // Six seconds of debt and one millisecond, at 15 s a minute: 24 s.
    expect(refused.retryAfterMs).toBe(24_004);
    expect(await gate.run('news_1', who('u_bob'), async () => 'bob')).toBe('bob');
    now += refused.retryAfterMs!;
    expect(await gate.run('news_1', who('u_ann'), async () => 'paid')).toBe('paid');
  });

  it('counts the time of an address’s changes over all its identities', async () => {
    let now = 0;
    const gate = new ThreadChangeGate(() => now);
    const taking = (ms: number) => async () => {
      now += ms;
      return ms;
    };
    // Fresh identities, each with a full budget; the address's refills at half the time that passes meanwhile.
    const each = (ADDRESS_THREAD_CHANGE_MS_PER_MINUTE * 5) / 6;
    await gate.run('news_1', who('u_1', '203.0.113.7'), taking(each));
    await gate.run('news_1', who('u_2', '203.0.113.7'), taking(each));
    await expect(gate.run('news_1', who('u_3', '203.0.113.7'), async () => 'more')).rejects.toMatchObject({
      code: 'ERR_RATE_LIMITED',
      message: expect.stringMatching(/one address may run 30 s a minute/),
    });
  });
});
