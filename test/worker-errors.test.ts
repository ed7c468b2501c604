/** Errors crossing a worker boundary keep their catalogue code, status, message and cause. */
import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { ExtractPool } from '../src/content/extract/extract-pool.js';
import { SalonError, errors } from '../src/errors.js';
import { ScanPool } from '../src/search/flat/scan-pool.js';
import { FeedPool } from '../src/content/sources/feed-pool.js';
import { POOL_WARNING_INTERVAL_MS, fromWorkerError, keepPoolUp, toWorkerError } from '../src/worker-errors.js';

/** What structured cloning through postMessage does to a value. */
const acrossThreads = <T>(value: T): T => structuredClone(value);

describe('worker errors', () => {
  it('rebuild a catalogued error with its code, status and cause', () => {
    const thrown = new errors.ERR_EXTRACTION_FAILED('https://x.example/', 'no article', new RangeError('depth 400 exceeded'));
    const rebuilt = fromWorkerError(acrossThreads(toWorkerError(thrown)));
    expect(rebuilt).toBeInstanceOf(SalonError);
    expect(rebuilt).toMatchObject({ code: 'ERR_EXTRACTION_FAILED', statusCode: 422, message: thrown.message });
    expect(rebuilt.cause).toMatchObject({ name: 'RangeError', message: 'depth 400 exceeded' });
  });

  it('rebuild other errors by their name', () => {
    expect(fromWorkerError(acrossThreads(toWorkerError(new TypeError('maxChars must be positive'))))).toBeInstanceOf(TypeError);
    const odd = fromWorkerError(acrossThreads(toWorkerError(Object.assign(new Error('boom'), { name: 'ParseError' }))));
    expect(odd).toMatchObject({ name: 'ParseError', message: 'boom' });
    expect(odd.cause).toBeUndefined();
    expect(fromWorkerError(toWorkerError('a string'))).toMatchObject({ message: 'a string' });
  });
});

describe('worker pools', () => {
  // What piscina emits on the pool when a worker answers a task twice: an `error` event nobody
  // listened to would be thrown, and the process would end.
  const duplicate = () => new Error('Unexpected message from Worker: { taskId: 13, result: undefined, error: null, time: null }');
  const inner = (pool: ScanPool | ExtractPool | FeedPool) => (pool as unknown as { pool: EventEmitter }).pool;

  it('report a pool’s own error as a warning and go on working', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const scan = new ScanPool({ threads: 1, minThreads: 0 });
    const extract = new ExtractPool({ maxThreads: 1 });
    const feeds = new FeedPool();
    try {
      // The feed pool starts its worker with its first feed.
      const rss =
        '<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><item><title>One</title><link>https://example.com/1</link></item></channel></rss>';
      expect((await feeds.parse(new TextEncoder().encode(rss), 'a feed')).entries).toHaveLength(1);
      for (const pool of [scan, extract, feeds]) expect(() => inner(pool).emit('error', duplicate())).not.toThrow();
      expect(warn.mock.calls.map(([message, options]) => [String(message).split(':')[0], options])).toEqual([
        ['scan worker pool', { code: 'SALON_WORKER_POOL' }],
        ['extract worker pool', { code: 'SALON_WORKER_POOL' }],
        ['feed worker pool', { code: 'SALON_WORKER_POOL' }],
      ]);
      const memory = new WebAssembly.Memory({ initial: 1, maximum: 16, shared: true });
      await expect(scan.touch(memory, 0, memory.buffer.byteLength)).resolves.toBeUndefined();
      const body = '<p>The pool went on working after the error, page after page, as it did before it.</p>'.repeat(20);
      await expect(extract.extract(`<html><body><article><h1>Still here</h1>${body}</article></body></html>`)).resolves.toMatchObject({
        title: expect.stringContaining('Still here'),
      });
    } finally {
      warn.mockRestore();
      await scan.close();
      await extract.close();
      await feeds.close();
    }
  });

  it('warn at most once a minute, counting the errors in between', () => {
    vi.useFakeTimers();
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const pool = new EventEmitter();
      keepPoolUp(pool, 'scan');
      for (let i = 0; i < 5; i++) pool.emit('error', duplicate());
      vi.advanceTimersByTime(POOL_WARNING_INTERVAL_MS - 1);
      pool.emit('error', new Error('a worker failed with no task'));
      expect(warn).toHaveBeenCalledTimes(1);
      vi.advanceTimersByTime(1);
      pool.emit('error', new Error('a worker failed with no task'));
      expect(warn.mock.calls.map(([message]) => message)).toEqual([
        `scan worker pool: ${duplicate().message}`,
        'scan worker pool: a worker failed with no task (6 errors since the last warning)',
      ]);
    } finally {
      warn.mockRestore();
      vi.useRealTimers();
    }
  });
});
