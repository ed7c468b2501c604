import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Pacer } from '../../src/content/sources/pacer.js';

describe('Pacer', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gives a caller aborted before its turn no turn, and keeps the next caller’s time', async () => {
    const pacer = new Pacer(100);
    await pacer.turn();
    await vi.advanceTimersByTimeAsync(150);
    // Its slot is already free, but the caller gave up: it must neither start nor hold the next one back.
    const gaveUp = AbortSignal.abort(new Error('gave up'));
    await expect(pacer.turn(gaveUp)).rejects.toThrow('gave up');
    let next = false;
    void pacer.turn().then(() => (next = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(next).toBe(true);
  });

  it('lets the next caller go when one waiting for its slot is aborted', async () => {
    const pacer = new Pacer(100);
    await pacer.turn();
    const controller = new AbortController();
    const waiting = pacer.turn(controller.signal);
    const after: number[] = [];
    void pacer.turn().then(() => after.push(performance.now()));
    await vi.advanceTimersByTimeAsync(30);
    controller.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');
    await vi.advanceTimersByTimeAsync(100);
    // Paced from the last request that started (at 0), not from the one that gave up.
    expect(after).toEqual([100]);
  });
});
