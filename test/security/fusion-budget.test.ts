/**
 * Members' /fuse writes a third thread's memory each time (up to MEMORY_MAX_CHUNKS_PER_THREAD
 * passages): repeated, it grew the store without bound. What fusions write is counted per room and
 * per address a day, and past that /fuse is refused (ERR_RATE_LIMITED) before any work.
 */
import { describe, expect, it } from 'vitest';
import { ThreadChangeGate } from '../../src/memory/threads/change-gate.js';
import { FUSED_CHUNKS_PER_DAY, FusionBudget } from '../../src/memory/threads/fusion-budget.js';
import { threadCommands } from '../../src/memory/threads/thread-commands.js';
import type { ThreadService } from '../../src/memory/threads/thread-service.js';
import type { Thread } from '../../src/store/types.js';

const DAY_MS = 86_400_000;

/** A ThreadService double: every fusion writes `written` passages, and is counted. */
function fakeThreads(written: number) {
  const calls: string[][] = [];
  const thread = (id: string, roomId: string) => ({ id, roomId, title: id, status: 'active' }) as unknown as Thread;
  const threads = {
    get: async (id: string) => thread(id, id.split(':')[0]),
    fuse: async (ids: string[]) => {
      calls.push(ids);
      return { thread: thread(`${ids[0]}+`, ids[0].split(':')[0]), fused: 0, kept: written };
    },
    storedChunks: async () => written,
  } as unknown as ThreadService;
  return { threads, calls };
}

function fuseCommand(threads: ThreadService, budget: FusionBudget) {
  const command = threadCommands(threads, 'members', new ThreadChangeGate(() => 0), budget).find((c) => c.name === 'fuse')!;
  return (roomId: string, address: string, userId = `u_${address}`) =>
    command.run({ roomId, threadId: `${roomId}:main`, address, user: { id: userId, name: userId } as never, args: `${roomId}:a ${roomId}:b` });
}

describe('what members’ fusions may write', () => {
  it('refuses /fuse in a room whose fusions wrote their day’s passages, before any work, and tells the wait', async () => {
    let now = 0;
    const { threads, calls } = fakeThreads(30);
    const fuse = fuseCommand(threads, new FusionBudget(20, () => now));
    expect(await fuse('news_1', '203.0.113.7')).toMatch(/^Fused/);
    // 30 written against 20 a day: ten in debt, and one more to take.
    const refused = await fuse('news_1', '198.51.100.1').catch((err: unknown) => err);
    expect(refused).toMatchObject({ code: 'ERR_RATE_LIMITED', message: expect.stringMatching(/this room may write 20 passages a day/) });
    expect((refused as { retryAfterMs: number }).retryAfterMs).toBe(Math.ceil((11 * DAY_MS) / 20));
    expect(calls).toHaveLength(1);
    now += Math.ceil((11 * DAY_MS) / 20);
    expect(await fuse('news_1', '198.51.100.1')).toMatch(/^Fused/);
  });

  it('counts one address over every room, whatever identity it takes', async () => {
    const { threads, calls } = fakeThreads(30);
    const fuse = fuseCommand(threads, new FusionBudget(20, () => 0));
    await fuse('news_1', '203.0.113.7', 'u_1');
    await expect(fuse('news_2', '203.0.113.7', 'u_fresh')).rejects.toMatchObject({
      code: 'ERR_RATE_LIMITED',
      message: expect.stringMatching(/one address may write/),
    });
    expect(await fuse('news_3', '198.51.100.1')).toMatch(/^Fused/);
    expect(calls).toHaveLength(2);
  });

  it('lets a day’s budget be spent in several fusions', async () => {
    const { threads } = fakeThreads(FUSED_CHUNKS_PER_DAY / 4);
    const fuse = fuseCommand(threads, new FusionBudget(FUSED_CHUNKS_PER_DAY, () => 0));
    for (let i = 0; i < 4; i++) expect(await fuse('news_1', `a${i}`)).toMatch(/^Fused/);
    await expect(fuse('news_1', 'a9')).rejects.toMatchObject({ code: 'ERR_RATE_LIMITED' });
  });
});
