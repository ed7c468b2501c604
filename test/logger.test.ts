/** The command-line tools' stderr logger (src/logger.ts). */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { stderrLogger } from '../src/logger.js';

afterEach(() => vi.restoreAllMocks());

describe('stderrLogger', () => {
  it("shows a model server's error text as escapes, not terminal sequences", () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    const log = stderrLogger(true);
    // What the indexer logs during `salon reindex` when a hostile model server answers HTTP 500.
    const err = new Error('OpenAI at http://m.test answered HTTP 500: \x1b]0;owned\x07\x1b[2J\u202egone');
    log.warn({ err }, 'embedding 3 chunks failed; retrying in 30 s');
    log.info({}, 'embedding chunks for the index failed 2 more time(s); the last: \x1b[31mred\x9b1m');
    expect(lines).toEqual([
      'warning: embedding 3 chunks failed; retrying in 30 s: OpenAI at http://m.test answered HTTP 500: \\x1b]0;owned\\x07\\x1b[2J\\u202egone',
      'embedding chunks for the index failed 2 more time(s); the last: \\x1b[31mred\\x9b1m',
    ]);
    for (const line of lines) expect(line).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
  });

  it("writes one line for each call, a newline in the message's or error's text shown as an escape", () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    const err = new Error('answered HTTP 500: busy\nwarning: index model changed; run salon reindex --drop');
    stderrLogger().warn({ err }, 'embedding 3 chunks failed\nreindexed 0 items');
    expect(lines).toEqual([
      'warning: embedding 3 chunks failed\\nreindexed 0 items: answered HTTP 500: busy\\nwarning: index model changed; run salon reindex --drop',
    ]);
    for (const line of lines) expect(line).not.toContain('\n');
  });

  it('keeps debug and info lines for verbose, warnings and errors always', () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    const log = stderrLogger(false);
    log.debug({}, 'quiet');
    log.info({}, 'quiet');
    log.warn({}, 'careful');
    log.error({}, 'broke');
    expect(lines).toEqual(['warning: careful', 'broke']);
  });

  it('tells a reason given as its message alone, as the memory logs its failures', () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    stderrLogger().warn({ threadId: 't', err: 'database is locked\x1b[2J' }, 'memory chunk not stored');
    expect(lines).toEqual(['warning: memory chunk not stored: database is locked\\x1b[2J']);
  });
});
