// salon-hnsw's backgroundThread: a thread that can always wait (the WAL checkpointer) moves itself
// to SCHED_IDLE, so a waking event loop preempts it at once; no other thread of the process moves.
// backgroundThreads moves other threads of the process by id, and nothing outside it. addPoints'
// `idle` starts a build's threads in SCHED_IDLE and leaves the calling thread (the graph's worker) as it is.
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { SCHED_IDLE, SCHED_OTHER, policyOf, threadStat } from '../helpers.js';

describe.runIf(process.platform === 'linux')('salon-hnsw backgroundThread', () => {
  it('moves the calling thread alone into SCHED_IDLE', async () => {
    const source = `
      const { parentPort, workerData } = require('node:worker_threads');
      const { readFileSync } = require('node:fs');
      const stat = () => readFileSync('/proc/thread-self/stat', 'utf8');
      const before = stat();
      const moved = require(workerData.binding).backgroundThread();
      parentPort.postMessage({ before, moved, after: stat() });
    `;
    const binding = createRequire(import.meta.url).resolve('salon-hnsw');
    const worker = new Worker(source, { eval: true, workerData: { binding } });
    const reply = await new Promise<{ before: string; moved: boolean; after: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    expect(reply.moved).toBe(true);
    expect([policyOf(reply.before), policyOf(reply.after)]).toEqual([SCHED_OTHER, SCHED_IDLE]);
    expect(policyOf(threadStat('thread-self'))).toBe(SCHED_OTHER);
  });

  it('moves other threads of the process by id, and skips ids that are not its threads', async () => {
    const { backgroundThreads } = createRequire(import.meta.url)('salon-hnsw') as { backgroundThreads: (ids: unknown) => number };
    const worker = new Worker(
      `require('node:worker_threads').parentPort.postMessage(require('node:fs').readFileSync('/proc/thread-self/stat', 'utf8'));
      setInterval(() => {}, 1000);`,
      { eval: true },
    );
    const stat = await new Promise<string>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    const tid = Number(stat.slice(0, stat.indexOf(' ')));
    try {
      // pid 1 is another process's; 2 ** 31 no thread's; 1.5 and 'x' no id at all.
      expect(backgroundThreads([1, 2 ** 31, 1.5, 'x'])).toBe(0);
      expect(policyOf(threadStat(String(tid)))).toBe(SCHED_OTHER);
      expect(backgroundThreads([tid])).toBe(1);
      expect(policyOf(threadStat(String(tid)))).toBe(SCHED_IDLE);
      expect(policyOf(threadStat('thread-self'))).toBe(SCHED_OTHER);
      expect(() => backgroundThreads('1')).toThrow(/array of thread ids/);
    } finally {
      await worker.terminate();
    }
  });

  it('starts the threads of a many-threaded add in SCHED_IDLE with `idle`, and in the caller’s class without', async () => {
    for (const idle of [true, false]) {
      const { added, caller } = await threadsOfAdds(idle);
      expect(added.length).toBeGreaterThan(0);
      expect(new Set(added)).toEqual(new Set([idle ? SCHED_IDLE : SCHED_OTHER]));
      expect(caller).toBe(SCHED_OTHER);
    }
  });
});

/** CPU time (ns) after which a thread an add started has certainly set its class. */
const RAN_NS = 1_000_000;

/**
 * Runs two-threaded adds in a worker until this thread has read the class of one of the threads they
 * start after that thread had run for RAN_NS (it sets its class first thing, but a new thread may
 * wait for a core before it runs at all), then stops them. Returns the last such class read of each
 * thread, and the worker's own class after its adds. No timing is assumed: the adds go on until
 * such a read has been made.
 */
async function threadsOfAdds(idle: boolean): Promise<{ added: number[]; caller: number }> {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { readFileSync } = require('node:fs');
    const { Graph } = require(workerData.binding);
    const stop = new Int32Array(workerData.stop);
    const dim = 16, rows = 400;
    const graph = new Graph(dim, rows, 16, 100, 1, 'f32');
    parentPort.postMessage({ ready: true });
    let next = 0;
    while (!Atomics.load(stop, 0) && next < 400_000) {
      const vectors = new Float32Array(rows * dim).map(() => Math.random() - 0.5);
      const labels = Uint32Array.from({ length: rows }, () => next++);
      graph.addPoints(vectors, labels, 2, workerData.idle);
    }
    parentPort.postMessage({ caller: readFileSync('/proc/thread-self/stat', 'utf8') });
  `;
  const binding = createRequire(import.meta.url).resolve('salon-hnsw');
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(source, { eval: true, workerData: { binding, stop: stop.buffer, idle } });
  try {
    const messages: { ready?: boolean; caller?: string }[] = [];
    let wake: () => void = () => {};
    worker.on('message', (m) => {
      messages.push(m);
      wake();
    });
    const failed = new Promise<never>((_, reject) => worker.once('error', reject));
    const next = () => Promise.race([new Promise<void>((resolve) => (wake = resolve)), failed]);
    while (!messages.some((m) => m.ready)) await next();
    // Every thread of the process now but the ones the adds start.
    const before = new Set(readdirSync('/proc/self/task'));
    // The class each thread had when last read after it had run for RAN_NS.
    const classes = new Map<string, number>();
    while (classes.size === 0 && !messages.some((m) => m.caller)) {
      for (const task of readdirSync('/proc/self/task')) {
        if (before.has(task)) continue;
        try {
          const ran = Number(readFileSync(`/proc/self/task/${task}/schedstat`, 'utf8').split(' ')[0]);
          const policy = policyOf(threadStat(task));
          if (ran >= RAN_NS) classes.set(task, policy);
        } catch {
          // It ended between the listing and the reads.
        }
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    Atomics.store(stop, 0, 1);
    while (!messages.some((m) => m.caller)) await next();
    const caller = policyOf(messages.find((m) => m.caller)!.caller!);
    return { added: [...classes.values()], caller };
  } finally {
    await worker.terminate();
  }
}
