/**
 * The log of a failure that repeats (src/repeated-failure-log.ts): the first failure at once, a
 * summary an interval, its end once, and a bounded number of lines a minute however the failures
 * and successes alternate.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../src/logger.js';
import { FAILURE_SUMMARY_INTERVAL_MS, RepeatedFailureLog } from '../src/repeated-failure-log.js';

const MINUTE = FAILURE_SUMMARY_INTERVAL_MS;

function recordingLog(): { lines: string[]; log: Logger } {
  const lines: string[] = [];
  const line = (level: string) => (_details: object, msg: string) => void lines.push(`${level} ${msg}`);
  return { lines, log: { debug: line('DEBUG'), info: line('INFO'), warn: line('WARN'), error: line('ERROR') } };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now() });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('RepeatedFailureLog', () => {
  it('writes a few lines a minute for a dependency that fails and works by turns, and counts every failure in them', async () => {
    const { lines, log } = recordingLog();
    const failures = new RepeatedFailureLog({ log, what: 'embedding chunks for the index' });
    // A balancer with one broken backend of two: every other batch fails, ten a second for 50 s.
    for (let i = 0; i < 500; i++) {
      failures.failed(new Error('HTTP 502'), {}, 'embedding 8 chunks failed');
      await vi.advanceTimersByTimeAsync(50);
      failures.succeeded();
      await vi.advanceTimersByTimeAsync(50);
    }
    expect(lines).toEqual(['WARN embedding 8 chunks failed', 'INFO embedding chunks for the index works again after 1 failure(s) in 0 s']);
    // The summary comes a minute after the first failure it counts (the second, 0.1 s in).
    await vi.advanceTimersByTimeAsync(MINUTE + 100 - 50_000);
    expect(lines.slice(2)).toEqual(['WARN embedding chunks for the index failed 499 more time(s) in the last 60 s; the last: HTTP 502']);
    // Past the interval the next failure is logged at once again, its end too.
    failures.failed(new Error('HTTP 502'), {}, 'embedding 8 chunks failed');
    failures.succeeded();
    expect(lines.slice(3)).toEqual(['WARN embedding 8 chunks failed', 'INFO embedding chunks for the index works again after 1 failure(s) in 0 s']);
    failures.close();
  });

  it('tells the end of failures that began within the interval once a summary told of them', async () => {
    const { lines, log } = recordingLog();
    const failures = new RepeatedFailureLog({ log, what: 'subscribing the index change feed' });
    failures.failed(new Error('NOPERM'), {}, 'could not subscribe');
    failures.succeeded();
    // A new outage a second later: counted, summarised at the minute's end, and its end is told.
    await vi.advanceTimersByTimeAsync(1_000);
    failures.failed(new Error('ETIMEDOUT'), {}, 'could not subscribe');
    await vi.advanceTimersByTimeAsync(MINUTE);
    failures.failed(new Error('ETIMEDOUT'), {}, 'could not subscribe');
    await vi.advanceTimersByTimeAsync(1_000);
    failures.succeeded();
    expect(lines).toEqual([
      'WARN could not subscribe',
      'INFO subscribing the index change feed works again after 1 failure(s) in 0 s',
      'WARN subscribing the index change feed failed 1 more time(s) in the last 60 s; the last: ETIMEDOUT',
      'INFO subscribing the index change feed works again after 2 failure(s) in 61 s',
    ]);
    // The failure after the summary is counted in the line that tells the end, not summarised again.
    await vi.advanceTimersByTimeAsync(2 * MINUTE);
    expect(lines).toHaveLength(4);
    failures.close();
  });

  it('logs a failure after finish at once: the work it belongs to is new', () => {
    const { lines, log } = recordingLog();
    const failures = new RepeatedFailureLog({ log, what: 'indexing memory chunks at load' });
    failures.failed(new Error('input rejected'), {}, 'memory chunk refused');
    failures.finish();
    failures.failed(new Error('input rejected'), {}, 'memory chunk refused');
    expect(lines).toEqual(['WARN memory chunk refused', 'WARN memory chunk refused']);
    failures.close();
  });
});
