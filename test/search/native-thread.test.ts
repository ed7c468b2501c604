// salon-hnsw's backgroundThread: a thread that can always wait (the WAL checkpointer) moves itself
// to SCHED_IDLE, so a waking event loop preempts it at once; no other thread of the process moves.
// backgroundThreads moves other threads of the process by id, and nothing outside it.
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
});
