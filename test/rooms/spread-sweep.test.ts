import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SpreadSweep, SWEEP_MAX_SLICES, SWEEP_MIN_TICK_MS } from '../../src/routes/spread-sweep.js';

describe('SpreadSweep (the room sockets heartbeat, spread over its interval)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A sweep over `n` members counting the visits of each, and the visits of each tick. */
  function sweep(periodMs: number, n: number) {
    const visits = new Map<number, number>();
    const perTick: number[] = [];
    let current = 0;
    const s = new SpreadSweep<number>(periodMs, (m) => {
      visits.set(m, (visits.get(m) ?? 0) + 1);
      current++;
    });
    for (let i = 0; i < n; i++) s.add(i);
    const tick = (ms: number) => {
      current = 0;
      vi.advanceTimersByTime(ms);
      perTick.push(current);
    };
    return { s, visits, perTick, tick };
  }

  it('visits every member once per period, a slice of them per tick', () => {
    const period = 30_000;
    const { s, visits, perTick, tick } = sweep(period, 4_000);
    const tickMs = period / SWEEP_MAX_SLICES;
    for (let t = 0; t < SWEEP_MAX_SLICES; t++) tick(tickMs);
    expect(visits.size).toBe(4_000);
    expect([...visits.values()].every((v) => v === 1)).toBe(true);
    // 4,000 sockets in 100 slices: 40 a tick, never all of them at once.
    expect(Math.max(...perTick)).toBe(40);
    for (let t = 0; t < SWEEP_MAX_SLICES; t++) tick(tickMs);
    expect([...visits.values()].every((v) => v === 2)).toBe(true);
    s.stop();
  });

  it('cuts a short period into ticks no shorter than the minimum', () => {
    const { s, visits, perTick, tick } = sweep(100, 10);
    tick(SWEEP_MIN_TICK_MS);
    expect(perTick[0]).toBe(5);
    tick(SWEEP_MIN_TICK_MS);
    expect([...visits.values()]).toEqual(Array(10).fill(1));
    s.stop();
  });

  it('forgets a deleted member, takes a member added twice once, and stops', () => {
    const { s, visits, tick } = sweep(1_000, 3);
    s.add(1);
    s.delete(2);
    expect(s.size).toBe(2);
    tick(1_000);
    expect([...visits.keys()].sort()).toEqual([0, 1]);
    expect(visits.get(1)).toBe(1);
    s.stop();
    tick(5_000);
    expect(visits.get(0)).toBe(1);
  });

  it('lets a visit delete the member it visits (a terminated socket leaves)', () => {
    const seen: number[] = [];
    const s: SpreadSweep<number> = new SpreadSweep<number>(100, (m) => {
      seen.push(m);
      s.delete(m);
    });
    for (let i = 0; i < 6; i++) s.add(i);
    vi.advanceTimersByTime(100);
    expect(seen.sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(s.size).toBe(0);
    vi.advanceTimersByTime(100);
    expect(seen).toHaveLength(6);
    s.stop();
  });

  it('refuses a period that is not a positive number', () => {
    expect(() => new SpreadSweep(0, () => undefined)).toThrow(/periodMs/);
    expect(() => new SpreadSweep(Number.NaN, () => undefined)).toThrow(/periodMs/);
  });
});
