import { describe, expect, it } from 'vitest';
import { ConfigError, SETTINGS, defaultSearchWorkers, describeSettings, loadConfig, redactConfig } from '../src/config.js';
import { salon, tempDir } from './helpers.js';
import { DEFAULT_MAX_WAITING_PER_ROOM } from '../src/rag/assistant.js';

/** What loadConfig throws for `env` (undefined when it does not throw). */
function configErrorOf(env: Record<string, string | undefined>): unknown {
  try {
    loadConfig(env);
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('config', () => {
  it('gives the documented defaults for an empty environment', () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(3000);
    expect(c.HOST).toBe('127.0.0.1');
    expect(c.AI_PROVIDER).toBe('local');
    expect(c.SEED_DEMO).toBe(true);
    expect(c.HNSW_THRESHOLD).toBe(10_000);
    expect(c.HNSW_EF_SEARCH).toBe(48);
    expect(c.SEARCH_WORKERS).toBeGreaterThanOrEqual(1);
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.IDENTITY_TOKEN_TTL_DAYS).toBe(30);
  });

  it('takes an identity token lifetime in whole days', () => {
    expect(loadConfig({ IDENTITY_TOKEN_TTL_DAYS: ' 7 ' }).IDENTITY_TOKEN_TTL_DAYS).toBe(7);
    expect(loadConfig({ IDENTITY_TOKEN_TTL_DAYS: '3650' }).IDENTITY_TOKEN_TTL_DAYS).toBe(3650);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['AI_PROVIDER', 'skynet'],
    ['SEED_DEMO', 'maybe'],
    ['HNSW_THRESHOLD', '-1'],
    ['HNSW_EF_SEARCH', '0'],
    ['HNSW_EF_SEARCH', '4097'],
    ['SEARCH_WORKERS', '0'],
    ['OLLAMA_HOST', 'not a url'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'http://x'],
    ['ALLOWED_ORIGINS', 'https://ok.example, ::bad'],
    ['LOG_LEVEL', 'loud'],
    ['IDENTITY_TOKEN_TTL_DAYS', '0'],
    ['IDENTITY_TOKEN_TTL_DAYS', '-5'],
    ['IDENTITY_TOKEN_TTL_DAYS', '1.5'],
    ['IDENTITY_TOKEN_TTL_DAYS', '30d'],
    ['IDENTITY_TOKEN_TTL_DAYS', '3651'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    const caught = configErrorOf({ [name]: value });
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).variable).toBe(name);
    expect((caught as Error).message.startsWith(`${name}:`)).toBe(true);
  });

  it('requires a shared IDENTITY_SECRET of 32 characters or more with REDIS_URL, and never echoes it', () => {
    expect(() => loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' })).toThrow(/^IDENTITY_SECRET: required when REDIS_URL is set/);
    const caught = configErrorOf({ IDENTITY_SECRET: 'short-secret-value' });
    expect((caught as ConfigError).variable).toBe('IDENTITY_SECRET');
    expect((caught as Error).message).not.toContain('short-secret-value');
    const c = loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', IDENTITY_SECRET: 'x'.repeat(32) });
    expect(c.REDIS_KEY_PREFIX).toBe('salon:');
    expect(JSON.stringify(redactConfig(c))).not.toContain('x'.repeat(32));
  });

  it('names a bad database or Redis URL without repeating it: it holds a password', () => {
    for (const [name, value] of [
      ['DATABASE_URL', 'mysql://salon:hunter2@db.internal/salon'],
      ['REDIS_URL', ' http://:hunter2@cache.internal:6379 '],
    ]) {
      const caught = configErrorOf({ [name]: value });
      expect((caught as ConfigError).variable).toBe(name);
      expect((caught as Error).message).toMatch(/expected a .* URL, got "\*\*\*"/);
      expect((caught as Error).message).not.toContain('hunter2');
    }
  });

  it('names a bad OLLAMA_HOST without the password of its proxy, with or without a scheme', () => {
    for (const value of [
      'ftp://salon:hunter2@ollama.internal',
      'salon:hunter2@ollama.internal:11434',
      'http://salon:hunter2@ollama internal',
      // A password holding what a URL should have escaped.
      'ftp://salon:hunter 2@ollama.internal',
      'ftp://salon:"hunter2"@ollama.internal',
      'salon:hunter 2@ollama.internal:11434',
    ]) {
      const caught = configErrorOf({ OLLAMA_HOST: value });
      expect((caught as ConfigError).variable, value).toBe('OLLAMA_HOST');
      expect((caught as Error).message, value).toContain('***@ollama');
      expect((caught as Error).message, value).not.toContain('hunter2');
    }
    // Valid, it is taken as it is: the Ollama client sends the credentials to the proxy.
    expect(loadConfig({ OLLAMA_HOST: 'http://salon:hunter2@ollama.internal:11434' }).OLLAMA_HOST).toBe('http://salon:hunter2@ollama.internal:11434');
  });

  it('refuses a REDIS_URL whose password has a bare %, which ioredis could not decode at start-up (it threw "URI malformed")', () => {
    const secret = { IDENTITY_SECRET: 'x'.repeat(32) };
    for (const value of ['redis://:50%off@cache.internal:6379', 'rediss://salon:%FF@cache.internal:6380']) {
      const caught = configErrorOf({ REDIS_URL: value, ...secret });
      expect(caught, value).toBeInstanceOf(ConfigError);
      expect((caught as ConfigError).variable, value).toBe('REDIS_URL');
      expect((caught as Error).message, value).toContain('write % as %25');
      expect((caught as Error).message, value).not.toMatch(/off|%FF/);
    }
    expect(loadConfig({ REDIS_URL: 'redis://:50%25off@cache.internal:6379', ...secret }).REDIS_URL).toBe('redis://:50%25off@cache.internal:6379');
    // pg and the Ollama client take a bare % as itself.
    expect(loadConfig({ DATABASE_URL: 'postgres://salon:p%zz@db.internal/salon' }).DATABASE_URL).toBe('postgres://salon:p%zz@db.internal/salon');
    expect(loadConfig({ OLLAMA_HOST: 'http://salon:100%@ollama.internal:11434' }).OLLAMA_HOST).toBe('http://salon:100%@ollama.internal:11434');
  });

  it('refuses an ADMIN_TOKEN with a character past ASCII or a control character, which no header carries as it is, and never echoes it', () => {
    // Node reads header bytes as Latin-1: curl's UTF-8 `ü` arrives as `Ã¼`, and `€` cannot arrive at all.
    for (const value of ['schlüssel-für-den-admin', 'token-of-twenty-€-chars', 'token-of-twenty\u0001chars', 'two-line-token\nof-twenty-chars']) {
      const caught = configErrorOf({ ADMIN_TOKEN: value });
      expect((caught as ConfigError).variable, JSON.stringify(value)).toBe('ADMIN_TOKEN');
      expect((caught as Error).message).toMatch(/not printable ASCII/);
      expect((caught as Error).message).not.toMatch(/ssel|twenty|two-line/);
    }
    for (const value of ['correct horse battery staple', 'a-token_of.printable~ASCII!@#$%^&*()'])
      expect(loadConfig({ ADMIN_TOKEN: value }).ADMIN_TOKEN).toBe(value);
  });

  it('rejects a node-wide send budget smaller than one socket’s', () => {
    expect(() => loadConfig({ ROOM_MAX_BUFFERED_BYTES: '2097152', ROOM_NODE_BUFFERED_BYTES: '1048576' })).toThrow(/ROOM_NODE_BUFFERED_BYTES/);
    expect(loadConfig({ ROOM_MAX_BUFFERED_BYTES: '1048576', ROOM_NODE_BUFFERED_BYTES: '1048576' }).ROOM_NODE_BUFFERED_BYTES).toBe(1_048_576);
  });

  it('refuses a BODY_MAX_CHARS past 4 million, where the text readers would throw on a body of astral letters', () => {
    expect(loadConfig({ BODY_MAX_CHARS: '4000000' }).BODY_MAX_CHARS).toBe(4_000_000);
    expect(() => loadConfig({ BODY_MAX_CHARS: '6000000' })).toThrow(/^BODY_MAX_CHARS: /);
  });

  it('takes the places one room’s line holds from ASK_WAITING_PER_ROOM (0: no line), naming it when wrong', () => {
    expect(loadConfig({}).ASK_WAITING_PER_ROOM).toBe(DEFAULT_MAX_WAITING_PER_ROOM);
    expect(loadConfig({ ASK_WAITING_PER_ROOM: '0' }).ASK_WAITING_PER_ROOM).toBe(0);
    expect(loadConfig({ ASK_WAITING_PER_ROOM: '10' }).ASK_WAITING_PER_ROOM).toBe(10);
    for (const wrong of ['-1', '2.5', 'four', '10001']) expect(() => loadConfig({ ASK_WAITING_PER_ROOM: wrong }), wrong).toThrow(/^ASK_WAITING_PER_ROOM: /);
  });

  it('rejects an overlap as large as the chunk', () => {
    expect(() => loadConfig({ CHUNK_SIZE: '200', CHUNK_OVERLAP: '200' })).toThrow(/CHUNK_OVERLAP/);
  });

  it('parses booleans, lists and origins', () => {
    const c = loadConfig({ SEED_DEMO: 'off', ALLOWED_ORIGINS: 'https://A.example/, http://b.example:8080', FETCH_ALLOW_HOSTS: '127.0.0.1, localhost' });
    expect(c.SEED_DEMO).toBe(false);
    expect(c.ALLOWED_ORIGINS).toEqual(['https://a.example', 'http://b.example:8080']);
    expect(c.FETCH_ALLOW_HOSTS).toEqual(['127.0.0.1', 'localhost']);
  });

  it('takes ALLOWED_ORIGINS as exact origins, a custom scheme as itself, and refuses what is no origin, naming the variable', () => {
    expect(loadConfig({ ALLOWED_ORIGINS: 'capacitor://localhost, chrome-extension://abcdef, https://a.example:443' }).ALLOWED_ORIGINS).toEqual([
      'capacitor://localhost',
      'chrome-extension://abcdef',
      'https://a.example',
    ]);
    // Each became the opaque origin "null", which every page with a custom scheme shares.
    for (const value of ['localhost:3000', 'https://a.example/app', 'https://a.example?x=1', 'file:///srv/app', 'null', 'https://user:pw@a.example', 'app:x']) {
      const caught = configErrorOf({ ALLOWED_ORIGINS: `https://ok.example, ${value}` });
      expect(caught, value).toBeInstanceOf(ConfigError);
      expect((caught as ConfigError).variable).toBe('ALLOWED_ORIGINS');
    }
    expect(() => loadConfig({ ALLOWED_ORIGINS: 'localhost:3000' })).toThrow(/did you mean http:\/\/localhost:3000\?/);
  });

  it('takes HOST as an IP address or a host name, and names it otherwise', () => {
    for (const host of ['127.0.0.1', '0.0.0.0', '::', '::1', 'localhost', 'salon-1.internal']) expect(loadConfig({ HOST: host }).HOST).toBe(host);
    for (const host of ['not a host', '[::1]', 'http://localhost', 'host_name', '-x.example', '10.0.0.1:3000']) {
      expect(() => loadConfig({ HOST: host }), host).toThrow(/^HOST: /);
    }
  });

  it('stops start-up naming HOST, with exit code 2, when no interface of the machine has its address', async () => {
    const data = tempDir('salon-host-');
    try {
      // TEST-NET-1: a valid address that is nobody's.
      const run = await salon(['serve'], { DATA_DIR: data.dir, HOST: '192.0.2.1', PORT: '0', SEARCH_WORKERS: '1' });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^salon: bad configuration: HOST: cannot listen on 192\.0\.2\.1 \(EADDRNOTAVAIL\)/m);
    } finally {
      data.cleanup();
    }
  }, 60_000);

  it('treats empty strings as unset', () => {
    expect(loadConfig({ PORT: '' }).PORT).toBe(3000);
  });

  it('never shows secrets when redacted', () => {
    const c = loadConfig({ OPENAI_API_KEY: 'sk-secret', ADMIN_TOKEN: 'an-admin-token-of-32-characters!' });
    const shown = JSON.stringify(redactConfig(c));
    expect(shown).not.toContain('sk-secret');
    expect(shown).not.toContain('an-admin-token');
  });

  it('refuses an ADMIN_TOKEN shorter than 16 characters, naming the variable and not the token', () => {
    const caught = configErrorOf({ ADMIN_TOKEN: 'hunter2' });
    expect((caught as ConfigError).variable).toBe('ADMIN_TOKEN');
    expect((caught as Error).message).toMatch(/at least 16 characters/);
    expect((caught as Error).message).not.toContain('hunter2');
    expect(loadConfig({ ADMIN_TOKEN: 'x'.repeat(16) }).ADMIN_TOKEN).toBe('x'.repeat(16));
  });

  it('refuses an ADMIN_TOKEN with spaces or a line break around it, which no client could send', () => {
    for (const value of [' a-token-of-twenty-chars', 'a-token-of-twenty-chars\n', 'a-token-of-twenty-chars\t']) {
      const caught = configErrorOf({ ADMIN_TOKEN: value });
      expect((caught as ConfigError).variable, JSON.stringify(value)).toBe('ADMIN_TOKEN');
      expect((caught as Error).message).toMatch(/spaces or a line break/);
      expect((caught as Error).message).not.toContain('a-token-of-twenty-chars');
    }
  });

  it('describes every setting for --help and the README', () => {
    const rows = describeSettings();
    expect(rows.map((r) => r.name)).toEqual(Object.keys(SETTINGS));
    for (const r of rows) expect(r.description.length).toBeGreaterThan(5);
  });
});

describe('SEARCH_WORKERS by default', () => {
  it('is one per core, within the range the variable takes', () => {
    expect(defaultSearchWorkers(2)).toBe(2);
    expect(defaultSearchWorkers(0)).toBe(1);
    // A 128-core machine started with more than the 64 it may ask for (defaults skip the range check).
    expect(defaultSearchWorkers(128)).toBe(64);
  });
});
