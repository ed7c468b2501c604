/**
 * A store outage fails every request that reads it: the log tells of it once, sums up the rest a
 * minute, and says when it works again, instead of one error line a request.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { testApp } from './helpers.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await close?.();
  close = undefined;
});

describe('logging failed requests during an outage', () => {
  it('logs the first 500 of a route, then a summary a minute, then that it works again', async () => {
    const lines: string[] = [];
    const t = await testApp({ LOG_LEVEL: 'info' }, { logStream: { write: (line) => void lines.push(line) } });
    close = t.close;
    const a = t.app;
    let down = true;
    a.get('/api/v1/flaky', async () => {
      if (down) throw new Error('database is locked');
      return { ok: true };
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    for (let i = 0; i < 20; i++) expect((await a.inject({ method: 'GET', url: '/api/v1/flaky' })).statusCode).toBe(500);
    const msgs = () => lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(msgs().filter((m) => m === 'request failed')).toHaveLength(1);
    vi.advanceTimersByTime(60_000);
    expect(msgs().filter((m) => /failed 19 more time\(s\)/.test(m))).toHaveLength(1);
    down = false;
    expect((await a.inject({ method: 'GET', url: '/api/v1/flaky' })).statusCode).toBe(200);
    expect(msgs().filter((m) => /works again after 20 failure\(s\)/.test(m))).toHaveLength(1);
  });
});
