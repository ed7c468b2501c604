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

  it("tells an error's causes, an AggregateError's errors among them, as the line's reason", () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    // What fetch throws when Ollama is not running, wrapped as the provider wraps it.
    const refused = new AggregateError([new Error('connect ECONNREFUSED ::1:11434'), new Error('connect ECONNREFUSED 127.0.0.1:11434')]);
    const fetchFailed = new TypeError('fetch failed', { cause: refused });
    const err = new Error('AI provider unavailable: is Ollama running at http://127.0.0.1:11434?', { cause: fetchFailed });
    stderrLogger().warn({ err }, 'embedding 3 chunks failed');
    expect(lines).toEqual([
      'warning: embedding 3 chunks failed: AI provider unavailable: is Ollama running at http://127.0.0.1:11434?; caused by: fetch failed; caused by: connect ECONNREFUSED ::1:11434; connect ECONNREFUSED 127.0.0.1:11434',
    ]);
  });

  it('says a cause once when its wrapper repeats its message, and ends a chain that leads back to itself', () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    const socket = new Error('connect ETIMEDOUT 10.0.0.5:5432');
    const wrapped = new Error(`cannot open the PostgreSQL store: ${socket.message}`, { cause: socket });
    const looped = new Error('looped');
    looped.cause = looped;
    const log = stderrLogger();
    log.error({ err: wrapped }, 'import failed');
    log.error({ err: looped }, 'import failed');
    expect(lines).toEqual(['import failed: cannot open the PostgreSQL store: connect ETIMEDOUT 10.0.0.5:5432', 'import failed: looped']);
  });

  it("drops a URL's credentials from the message, the error, its causes and a reason given as text", () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    const cause = new Error('no route to redis://:hunter2@cache.internal:6379 \x1b[2J');
    const err = new Error('cannot reach postgres://salon:s3cret@db.internal:5432/salon', { cause });
    const log = stderrLogger();
    log.error({ err }, 'store at postgres://salon:s3cret@db.internal:5432/salon failed');
    log.warn({ err: 'Ollama at https://me:pa55@ollama.example answered HTTP 502' }, 'embedding failed');
    expect(lines).toEqual([
      'store at postgres://db.internal:5432/salon failed: cannot reach postgres://db.internal:5432/salon; caused by: no route to redis://cache.internal:6379 \\x1b[2J',
      'warning: embedding failed: Ollama at https://ollama.example answered HTTP 502',
    ]);
    expect(lines.join('\n')).not.toMatch(/s3cret|hunter2|pa55/);
  });

  it('drops the whole password when it holds an @, as URL parsers read it', () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    // pg and ioredis take this URL: the password is `p@ss@word`, the host `db.internal`.
    stderrLogger().error({ err: new Error('cannot reach postgres://salon:p@ss@word@db.internal:5432/salon') }, 'import failed');
    expect(lines).toEqual(['import failed: cannot reach postgres://db.internal:5432/salon']);
  });

  it('drops the whole password when it holds both an @ and a space', () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    const log = stderrLogger();
    log.error({ err: new Error('cannot reach postgres://salon:p@ss w@rd@db.internal:5432/salon') }, 'store at redis://u:p@ss w@cache failed');
    expect(lines).toEqual(['store at redis://cache failed: cannot reach postgres://db.internal:5432/salon']);
  });

  it('drops a password holding what a URL should have escaped (a space, a quote, /, ? or #)', () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    const log = stderrLogger();
    for (const password of ['hunter 2', 'hunter"2', "hunter'2", 'hunter/2', 'hunter?2', 'hunter#2', '12/hunter']) {
      log.error({ err: new Error(`cannot reach postgres://salon:${password}@db.internal:5432/salon`) }, `store at redis://:${password}@cache:6379 failed`);
    }
    expect(lines).toEqual(new Array(7).fill('store at redis://cache:6379 failed: cannot reach postgres://db.internal:5432/salon'));
  });

  it('keeps an address with a port and no userinfo whole, an email later on its line too', () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
    const log = stderrLogger();
    log.error({ err: new Error('no route to redis://cache:6379 (ask ops@example.com)') }, 'at "redis://cache:6379/0" for ann@example.com');
    log.error({}, 'fetched https://medium.com/@ann/post');
    log.error({}, 'no answer from http://[::1]:11434/api for ann@example.com');
    expect(lines).toEqual([
      'at "redis://cache:6379/0" for ann@example.com: no route to redis://cache:6379 (ask ops@example.com)',
      'fetched https://medium.com/@ann/post',
      'no answer from http://[::1]:11434/api for ann@example.com',
    ]);
  });
});
