/** FreshReading: one read shared by every caller while it runs and for a while after it started. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FreshReading } from '../../src/rooms/fresh-reading.js';

afterEach(() => vi.useRealTimers());

describe('FreshReading', () => {
  it('shares a read in flight, however long it takes, then serves it until it is stale', async () => {
    vi.useFakeTimers({ now: 0 });
    let release!: (n: number) => void;
    const read = vi.fn((key: string) => (key === 'slow' ? new Promise<number>((r) => (release = r)) : Promise.resolve(key.length)));
    const fresh = new FreshReading(1_000, read);
    const first = fresh.get('slow');
    vi.setSystemTime(5_000);
    expect(fresh.get('slow')).toBe(first);
    release(7);
    expect(await first).toBe(7);
    vi.setSystemTime(5_999);
    expect(fresh.get('slow')).not.toBe(first);
    expect(read).toHaveBeenCalledTimes(2);
    // Another key reads again.
    expect(await fresh.get('ab')).toBe(2);
    expect(read).toHaveBeenCalledTimes(3);
  });

  it('keeps no failed read', async () => {
    vi.useFakeTimers({ now: 0 });
    const read = vi.fn().mockRejectedValueOnce(new Error('down')).mockResolvedValue(1);
    const fresh = new FreshReading<null, number>(1_000, read);
    await expect(fresh.get(null)).rejects.toThrow('down');
    expect(await fresh.get(null)).toBe(1);
    expect(await fresh.get(null)).toBe(1);
    expect(read).toHaveBeenCalledTimes(2);
  });
});
