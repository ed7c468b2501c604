/** Small parts of the assistant: the sliding-window limiter, the fair queue and the delta batcher. */
import { describe, expect, it } from 'vitest';
import { DeltaBatcher } from '../../src/rag/delta-batcher.js';
import { FairQueue } from '../../src/rag/fair-queue.js';
import { WindowLimiter } from '../../src/rag/rate-limit.js';

describe('WindowLimiter', () => {
  it('refuses past the limit within the window and forgets old events', () => {
    const l = new WindowLimiter({ limit: 2, windowMs: 1000 });
    l.record('a', 0);
    l.record('a', 100);
    expect(l.allows('a', 500)).toBe(false);
    expect(l.allows('b', 500)).toBe(true);
    expect(l.allows('a', 1001)).toBe(true);
  });

  it('sweeps the keys of askers who never came back', () => {
    const l = new WindowLimiter({ limit: 5, windowMs: 10 });
    for (let i = 0; i < 999; i++) l.record(`user${i}`, 0);
    expect(l.size).toBe(999);
    l.record('late', 1000);
    expect(l.size).toBe(1);
  });

  it('holds at most maxKeys, forgetting the key whose last event is oldest, however many keys come within a window', () => {
    const l = new WindowLimiter({ limit: 2, windowMs: 60_000 }, 'test', 100);
    l.record('hot', 0);
    l.record('hot', 0);
    for (let i = 0; i < 10_000; i++) {
      l.record(`stranger${i}`, 1);
      if (i % 50 === 0) l.record('hot', 1); // still counted, and so still remembered
      expect(l.size).toBeLessThanOrEqual(100);
    }
    expect(l.allows('hot', 1)).toBe(false);
    expect(l.allows('stranger0', 1)).toBe(true);
  });
});

describe('FairQueue', () => {
  function job(roomId: string, log: string[], gate: Promise<void>) {
    return {
      roomId,
      run: async () => {
        log.push(`start ${roomId}`);
        await gate;
        log.push(`end ${roomId}`);
      },
      cancel: () => log.push(`cancel ${roomId}`),
    };
  }

  it('runs one job per room at a time and keeps global FIFO order across rooms', async () => {
    const log: string[] = [];
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const q = new FairQueue({ concurrency: 2, maxWaiting: 10 });
    expect(q.push(job('r1', log, gate))).toBe(0);
    expect(q.push(job('r1', log, gate))).toBe(1);
    expect(q.push(job('r2', log, gate))).toBe(0);
    expect(q.push(job('r3', log, gate))).toBe(2);
    expect(q.waitingIn('r1')).toBe(1);
    open();
    await new Promise((r) => setTimeout(r, 10));
    expect(log.filter((l) => l.startsWith('start'))).toEqual(['start r1', 'start r2', 'start r1', 'start r3']);
  });

  it('is bounded and cancels what waits when closed', () => {
    const log: string[] = [];
    const never = new Promise<void>(() => {});
    const q = new FairQueue({ concurrency: 1, maxWaiting: 1 });
    q.push(job('r1', log, never));
    q.push(job('r2', log, never));
    expect(q.accepts('r3')).toBe(false);
    expect(() => q.push(job('r3', log, never))).toThrow(expect.objectContaining({ code: 'ERR_ASSISTANT_BUSY' }));
    q.close(new Error('bye'));
    expect(log).toContain('cancel r2');
    expect(() => q.push(job('r4', log, never))).toThrow(expect.objectContaining({ code: 'ERR_ASSISTANT_BUSY' }));
  });

  it('holds a place for a job pushed later: others cannot take it, the job always gets it, and a released place is free again', () => {
    const log: string[] = [];
    const never = new Promise<void>(() => {});
    const q = new FairQueue({ concurrency: 1, maxWaiting: 2 });
    q.push(job('r1', log, never));
    const held = q.hold('r2');
    expect(q.waitingIn('r2')).toBe(1);
    expect(q.size).toBe(1);
    q.push(job('r3', log, never));
    // The line is full with the held place: a job without one is refused, and so is another hold.
    expect(q.accepts('r4')).toBe(false);
    expect(() => q.push(job('r4', log, never))).toThrow(expect.objectContaining({ code: 'ERR_ASSISTANT_BUSY' }));
    expect(() => q.hold('r4')).toThrow(expect.objectContaining({ code: 'ERR_ASSISTANT_BUSY' }));
    expect(q.push(job('r2', log, never), held)).toBe(2);
    expect(q.waitingIn('r2')).toBe(1);
    expect(q.size).toBe(2);
    // A place is taken once: pushed again with it, a job is refused like any other.
    expect(() => q.push(job('r2', log, never), held)).toThrow(expect.objectContaining({ code: 'ERR_ASSISTANT_BUSY' }));

    const p = new FairQueue({ concurrency: 1, maxWaiting: 2 });
    p.push(job('r1', log, never));
    const given = p.hold('r2');
    p.release(given);
    p.release(given);
    expect(p.size).toBe(0);
    expect(p.waitingIn('r2')).toBe(0);
    expect(() => p.push(job('r2', log, never), given)).not.toThrow();
  });

  it('keeps the start of a place held for a room that could start at once: no job pushed meanwhile takes it', async () => {
    const log: string[] = [];
    const never = new Promise<void>(() => {});
    const q = new FairQueue({ concurrency: 1, maxWaiting: 4 });
    const held = q.hold('r1');
    // The one answer slot is r1's: another room's job waits, and is not told it starts at once.
    expect(q.startsNow('r2')).toBe(false);
    expect(q.push(job('r2', log, never))).toBe(1);
    expect(q.push(job('r1', log, never), held)).toBe(0);
    expect(log).toEqual(['start r1']);

    // Given back, the start goes to the job waiting for it.
    const p = new FairQueue({ concurrency: 1, maxWaiting: 4 });
    const given = p.hold('r1');
    expect(p.push(job('r2', log, never))).toBe(1);
    p.release(given);
    await Promise.resolve();
    expect(log).toEqual(['start r1', 'start r2']);
    expect(p.size).toBe(0);
  });

  it('keeps a fair share of the line for rooms that have not asked yet, however one room floods', () => {
    const log: string[] = [];
    const never = new Promise<void>(() => {});
    const q = new FairQueue({ concurrency: 1, maxWaiting: 6 });
    q.push(job('busy', log, never));
    let taken = 0;
    for (let i = 0; i < 20; i++) {
      if (!q.accepts('flood')) break;
      q.push(job('flood', log, never));
      taken++;
    }
    // Alone in line, the flooding room gets half of it: the other half stays free.
    expect(taken).toBe(3);
    expect(() => q.push(job('flood', log, never))).toThrow(expect.objectContaining({ code: 'ERR_ASSISTANT_BUSY' }));
    for (const room of ['quiet1', 'quiet2', 'quiet3']) {
      expect(q.accepts(room), room).toBe(true);
      q.push(job(room, log, never));
    }
    expect(q.size).toBe(6);
  });
});

describe('DeltaBatcher', () => {
  it('coalesces pieces pushed within the interval and flushes the rest on finish', async () => {
    const sent: string[] = [];
    const b = new DeltaBatcher((t) => sent.push(t), 30);
    b.push('a');
    b.push('b');
    expect(sent).toEqual([]);
    await new Promise((r) => setTimeout(r, 60));
    expect(sent).toEqual(['ab']);
    b.push('c');
    b.finish();
    expect(sent).toEqual(['ab', 'c']);
    expect(b.sent).toBe('abc');
    b.push('d');
    b.cancel();
    await new Promise((r) => setTimeout(r, 60));
    expect(sent).toEqual(['ab', 'c']);
  });
});
