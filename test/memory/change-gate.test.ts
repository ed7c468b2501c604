/** Members' thread changes from a room: one at a time per room, a budget per member. */
import { describe, expect, it } from 'vitest';
import { MEMBER_THREAD_CHANGES_PER_MINUTE, ThreadChangeGate } from '../../src/memory/threads/change-gate.js';

describe('ThreadChangeGate', () => {
  it('refuses a second change in a room while one runs, not in another room, and again once it is done', async () => {
    const gate = new ThreadChangeGate(() => 0);
    let finish!: () => void;
    const first = gate.run('news_1', 'u_ann', () => new Promise<string>((resolve) => (finish = () => resolve('done'))));
    await expect(gate.run('news_1', 'u_bob', async () => 'second')).rejects.toMatchObject({ code: 'ERR_RATE_LIMITED' });
    expect(await gate.run('news_2', 'u_bob', async () => 'elsewhere')).toBe('elsewhere');
    finish();
    expect(await first).toBe('done');
    expect(await gate.run('news_1', 'u_bob', async () => 'after')).toBe('after');
    // A change that fails frees its room too.
    await expect(gate.run('news_1', 'u_bob', async () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(await gate.run('news_1', 'u_bob', async () => 'again')).toBe('again');
  });

  it('gives each member a budget of changes a minute, refilled as time passes', async () => {
    let now = 0;
    const gate = new ThreadChangeGate(() => now);
    for (let i = 0; i < MEMBER_THREAD_CHANGES_PER_MINUTE; i++) await gate.run(`news_${i}`, 'u_ann', async () => i);
    await expect(gate.run('news_x', 'u_ann', async () => 'more')).rejects.toMatchObject({ code: 'ERR_RATE_LIMITED' });
    expect(await gate.run('news_x', 'u_bob', async () => 'bob')).toBe('bob');
    now += 60_000 / MEMBER_THREAD_CHANGES_PER_MINUTE;
    expect(await gate.run('news_x', 'u_ann', async () => 'later')).toBe('later');
    await expect(gate.run('news_x', 'u_ann', async () => 'too soon')).rejects.toMatchObject({ code: 'ERR_RATE_LIMITED' });
  });
});
