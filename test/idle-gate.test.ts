/**
 * IdleGate (src/idle-gate.ts): background tasks start at once when the loop did nothing else since
 * the last one ended, wait for an idle moment of the event loop after foreground work, and start
 * after their longest wait however busy the loop is. The loop's times and the clock are injected,
 * so what is checked is the gate's decisions, not the machine's speed.
 */
import { describe, expect, it, vi } from 'vitest';
import { IdleGate } from '../src/idle-gate.js';

/** A loop whose idle and active times the test moves; `reads` counts how often the gate looked. */
function fakeLoop() {
  const loop = { idle: 0, active: 0, reads: 0, clock: 0 };
  return {
    loop,
    options: {
      loopTime: () => (loop.reads++, { idle: loop.idle, active: loop.active }),
      now: () => loop.clock,
    },
  };
}

/**
 * A task given after foreground work does not start while `step` moves the loop between looks
 * (five times, real milliseconds apart), and starts once the loop has been idle for a millisecond.
 */
async function expectShutWhile(settings: { minIdleMs: number }, step: (loop: ReturnType<typeof fakeLoop>['loop']) => void): Promise<void> {
  const { loop, options } = fakeLoop();
  const gate = new IdleGate({ ...options, ...settings, maxWaitMs: 1_000 });
  loop.active += 20; // chat messages handled since the gate was made
  let started = false;
  const done = gate.run(async () => void (started = true));
  for (let i = 0; i < 5; i++) {
    step(loop);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(started).toBe(false);
  }
  loop.idle += 1;
  await done;
  expect(started).toBe(true);
}

describe('IdleGate', () => {
  it('starts tasks back to back when the loop did nothing else between them', async () => {
    const { loop, options } = fakeLoop();
    const gate = new IdleGate(options);
    const order: string[] = [];
    const readsBefore = loop.reads;
    await Promise.all(
      ['first', 'second', 'third'].map((name) =>
        gate.run(async () => {
          order.push(name);
          loop.active += 5; // the task's own work
        }),
      ),
    );
    expect(order).toEqual(['first', 'second', 'third']);
    // Per task, one read before it starts and one as it ends: no looks for idleness.
    expect(loop.reads - readsBefore).toBe(6);
  });

  it('does not count what a task awaited as foreground work', async () => {
    const { loop, options } = fakeLoop();
    const gate = new IdleGate(options);
    await gate.run(async () => {
      // Messages handled while the task waited for a worker thread: the loop worked 30 ms.
      await new Promise((resolve) => setTimeout(resolve, 1));
      loop.active += 30;
    });
    const readsBefore = loop.reads;
    await gate.run(async () => {});
    expect(loop.reads - readsBefore).toBe(2);
  });

  it('after foreground work, waits until the loop was idle between two looks', async () => {
    // Busy: the loop's active time grows, its idle time does not.
    await expectShutWhile({ minIdleMs: 0.5 }, (loop) => void (loop.active += 1));
  });

  it('needs at least minIdleMs of idle time between looks', async () => {
    // Short idle moments: a message arrives before the loop has rested.
    await expectShutWhile({ minIdleMs: 0.5 }, (loop) => void (loop.idle += 0.2));
  });

  it('starts a task after maxWaitMs however busy the loop is', async () => {
    const { loop, options } = fakeLoop();
    const gate = new IdleGate({ ...options, maxWaitMs: 50 });
    loop.active += 20;
    let started = false;
    const done = gate.run(async () => void (started = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(started).toBe(false);
    loop.clock += 50;
    await done;
    expect(started).toBe(true);
  });

  it('stops waiting for idleness while more than maxQueued tasks wait', async () => {
    const { loop, options } = fakeLoop();
    const gate = new IdleGate({ ...options, maxQueued: 2, maxWaitMs: 60_000 });
    loop.active += 20;
    const started: number[] = [];
    // Chat is handled between the tasks (the loop never idles) and the clock never reaches the longest wait.
    const tasks = [0, 1, 2, 3, 4].map((i) =>
      gate.run(async () => {
        started.push(i);
        setImmediate(() => (loop.active += 5));
      }),
    );
    await vi.waitFor(() => expect(started).toEqual([0, 1, 2]));
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Two left: within the bound, they wait for an idle moment.
    expect(started).toEqual([0, 1, 2]);
    const resting = setInterval(() => (loop.idle += 1), 2);
    await Promise.all(tasks).finally(() => clearInterval(resting));
    expect(started).toEqual([0, 1, 2, 3, 4]);
  });

  it('starts no task while held, however idle or quiet the loop, nor after maxWaitMs; once released, the rules apply again', async () => {
    const { loop, options } = fakeLoop();
    const gate = new IdleGate({ ...options, maxWaitMs: 50, maxQueued: 2 });
    const release = gate.hold();
    const started: number[] = [];
    // Nothing else ran on the loop (a quiet loop would start the first at once); two wait, within maxQueued.
    const tasks = [0, 1].map((i) => gate.run(async () => void started.push(i)));
    for (let i = 0; i < 5; i++) {
      loop.idle += 5;
      loop.clock += 20;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(started).toEqual([]);
    const again = gate.hold();
    release();
    release(); // a release counts once: the second hold still holds
    loop.idle += 5;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(started).toEqual([]);
    again();
    await Promise.all(tasks);
    expect(started).toEqual([0, 1]);
  });

  it('keeps its queue bounded while held: past maxQueued the next task starts at once once unbroken holds last longQueueHeldMs', async () => {
    const { loop, options } = fakeLoop();
    const gate = new IdleGate({ ...options, maxQueued: 2, longQueueHeldMs: 50 });
    const first = gate.hold();
    const started: number[] = [];
    const tasks = [0, 1, 2].map((i) => gate.run(async () => void started.push(i)));
    loop.idle += 5;
    loop.clock += 30;
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Past maxQueued, but the holds began 30 ms ago: the task waits for the release.
    expect(started).toEqual([]);
    // Overlapping holds are one unbroken spell: a second hold taken before the first is released does not restart it.
    const second = gate.hold();
    first();
    loop.clock += 19;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(started).toEqual([]);
    loop.clock += 1;
    // The queue drains down to maxQueued, the hold still on (asks in many rooms keeping it held).
    await vi.waitFor(() => expect(started).toEqual([0]));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(started).toEqual([0]);
    second();
    const resting = setInterval(() => (loop.idle += 1), 2);
    await Promise.all(tasks).finally(() => clearInterval(resting));
    expect(started).toEqual([0, 1, 2]);
  });

  it('past maxQueued, starts the next task at the release of a short hold rather than inside it', async () => {
    const { loop, options } = fakeLoop();
    // No poll comes before the test ends: the release itself starts the task (with the built-in
    // model, asks one after another leave the loop no timer turn between a release and the next hold).
    const gate = new IdleGate({ ...options, maxQueued: 1, maxWaitMs: 60_000, pollMs: 60_000 });
    loop.active += 20; // the loop stays busy: nothing opens the gate but the queue's length
    const events: string[] = [];
    const tasks = [0, 1].map((i) => gate.run(async () => void events.push(`task ${i}`)));
    // An ask held the gate while the queue was past maxQueued (an ask right after another).
    const release = gate.hold();
    loop.clock += 5;
    await new Promise((resolve) => setTimeout(resolve, 10));
    events.push('released');
    release();
    await vi.waitFor(() => expect(events).toContain('task 0'));
    // The second follows at once: nothing ran on the loop since the first ended.
    await Promise.all(tasks);
    expect(events).toEqual(['released', 'task 0', 'task 1']);
  });

  it('starts a held task after maxHeldMs', async () => {
    const { loop, options } = fakeLoop();
    const gate = new IdleGate({ ...options, maxHeldMs: 100 });
    gate.hold();
    let started = false;
    const done = gate.run(async () => void (started = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    loop.clock += 99;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(started).toBe(false);
    loop.clock += 1;
    await done;
    expect(started).toBe(true);
  });

  it('lets a task that started before the hold go on', async () => {
    const gate = new IdleGate();
    let finish!: () => void;
    const events: string[] = [];
    const first = gate.run(async () => {
      events.push('begins');
      await new Promise<void>((resolve) => (finish = resolve));
      events.push('ends');
    });
    await vi.waitFor(() => expect(events).toEqual(['begins']));
    const release = gate.hold();
    finish();
    await first;
    expect(events).toEqual(['begins', 'ends']);
    release();
  });

  it('runs tasks one at a time, in the order given, and a failure does not stop the next', async () => {
    const gate = new IdleGate();
    const events: string[] = [];
    const task =
      (name: string, fail = false) =>
      async () => {
        events.push(`${name} begins`);
        await new Promise((resolve) => setTimeout(resolve, 2));
        events.push(`${name} ends`);
        if (fail) throw new Error(name);
      };
    const results = await Promise.allSettled([gate.run(task('a')), gate.run(task('b', true)), gate.run(task('c'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(events).toEqual(['a begins', 'a ends', 'b begins', 'b ends', 'c begins', 'c ends']);
  });

  it('opens on the real event loop when nothing else runs', async () => {
    const gate = new IdleGate({ maxWaitMs: 60_000 });
    const busy = Date.now() + 20;
    while (Date.now() < busy); // foreground work: the first task must look for idleness
    const opened = await Promise.race([gate.run(async () => 'opened'), new Promise((r) => setTimeout(() => r('timed out'), 10_000))]);
    // The busy spell came after the gate was made: the task looked for an idle moment and found one.
    expect(opened).toBe('opened');
  });

  it('refuses settings that would never open or never wait', () => {
    expect(() => new IdleGate({ pollMs: 0 })).toThrow(/pollMs/);
    expect(() => new IdleGate({ maxWaitMs: -1 })).toThrow(/maxWaitMs/);
    expect(() => new IdleGate({ maxQueued: 1.5 })).toThrow(/maxQueued/);
    expect(() => new IdleGate({ maxHeldMs: 0 })).toThrow(/maxHeldMs/);
    expect(() => new IdleGate({ longQueueHeldMs: 0 })).toThrow(/longQueueHeldMs/);
  });
});
