/**
 * `salon doctor`: checks what Salon needs — the store, the AI provider and its models, that the
 * index was built by the configured embedder, and the room bus — one line per check with ok or
 * FAIL and the fix. Exit code 0 only when every check passes. It changes nothing: a DATA_DIR (or
 * PostgreSQL schema) without Salon's data fails the store check instead of getting a new store.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { indexModelHealth } from '../../ai/model-check.js';
import { loadConfig, type Config } from '../../config.js';
import { createAi, openStore } from '../../parts.js';
import type { Store } from '../../store/types.js';
import type { Command } from '../command.js';
import { printable } from '../printable.js';

const BUS_TIMEOUT_MS = 3_000;
/** Longest reply line read from Redis: AUTH's and PING's are a few dozen characters. */
const MAX_REPLY_CHARS = 4_096;
/** AUTH's refusals by a Redis that needs no password, which ioredis warns of and goes on past (its handleAuthError). */
const PASSWORD_NOT_NEEDED = /no password is set|without any password configured for the default user/;

export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
}

async function check(name: string, run: () => Promise<{ ok: boolean; detail: string }>): Promise<CheckResult> {
  try {
    return { name, ...(await run()) };
  } catch (err) {
    return { name, ok: false, detail: err instanceof Error ? err.message : String(err) };
  }
}

async function storeCheck(store: Store, where: string): Promise<{ ok: boolean; detail: string }> {
  await store.ping();
  const [items, chunks] = await Promise.all([store.countItems(), store.countChunks()]);
  return { ok: true, detail: `${store.kind} at ${where}: ${items} items, ${chunks} chunks` };
}

/** `words` as one Redis command in RESP: an inline command splits a password at its spaces. */
function respCommand(...words: string[]): string {
  return `*${words.length}\r\n${words.map((w) => `$${Buffer.byteLength(w)}\r\n${w}\r\n`).join('')}`;
}

/** Sends PING (after AUTH when the URL has credentials) and waits for +PONG. */
export function pingRedis(url: string, timeoutMs = BUS_TIMEOUT_MS): Promise<{ ok: boolean; detail: string }> {
  const u = new URL(url);
  const port = Number(u.port || 6379);
  const where = `${u.hostname}:${port}`;
  return new Promise((resolve) => {
    const socket: Socket = u.protocol === 'rediss:' ? tlsConnect({ host: u.hostname, port, servername: u.hostname }) : netConnect({ host: u.hostname, port });
    let answer = '';
    const finish = (ok: boolean, detail: string) => {
      socket.destroy();
      clearTimeout(timer);
      resolve({ ok, detail });
    };
    const timer = setTimeout(() => finish(false, `Redis at ${where} did not answer within ${timeoutMs} ms; check REDIS_URL`), timeoutMs);
    socket.once('error', (err) =>
      finish(false, `cannot reach Redis at ${where} (${(err as NodeJS.ErrnoException).code ?? err.message}); start Redis or fix REDIS_URL`),
    );
    socket.once(u.protocol === 'rediss:' ? 'secureConnect' : 'connect', () => {
      const user = decodeURIComponent(u.username);
      const pass = decodeURIComponent(u.password);
      if (pass) socket.write(user ? respCommand('AUTH', user, pass) : respCommand('AUTH', pass));
      socket.write(respCommand('PING'));
    });
    // One reply a line: AUTH's, then PING's. Each is read, not only the first: a PING refused after
    // AUTH's +OK (NOPERM) waited out the timeout as "did not answer", and so did a server that is not
    // Redis (its bytes piling up meanwhile).
    socket.on('data', (d) => {
      answer += d.toString('utf8');
      for (let end = answer.indexOf('\r\n'); end !== -1; end = answer.indexOf('\r\n')) {
        const line = answer.slice(0, end);
        answer = answer.slice(end + 2);
        if (line === '+PONG') return finish(true, `Redis at ${where} answers`);
        // AUTH's +OK, or its refusal by a Redis that takes no password: ioredis goes on past it, and so does the server.
        if (line === '+OK' || (line.startsWith('-') && PASSWORD_NOT_NEEDED.test(line))) continue;
        if (line.startsWith('-')) return finish(false, `Redis at ${where} refused: ${line.slice(1)}; check the credentials in REDIS_URL`);
        return finish(false, `${where} does not answer as Redis does; check REDIS_URL`);
      }
      if (answer.length > MAX_REPLY_CHARS) finish(false, `${where} does not answer as Redis does; check REDIS_URL`);
    });
  });
}

/** Runs every check against `config`. Never throws. */
export async function runDoctor(config: Config): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  let store: Store | undefined;
  results.push(
    await check('store', async () => {
      // Never a new store: a checking command creates nothing, and a DATA_DIR without data is what it should catch.
      store = openStore(config, { mustExist: true });
      return storeCheck(store, config.DATABASE_URL ? 'DATABASE_URL' : join(config.DATA_DIR, 'salon.db'));
    }),
  );
  const providers = createAi(config, store);
  results.push(await check('ai', () => providers.health()));
  results.push(
    store
      ? await check('index-model', () => indexModelHealth(store!, providers.embedder))
      : { name: 'index-model', ok: false, detail: 'not checked: the store is unavailable' },
  );
  results.push(
    await check('bus', async () => (config.REDIS_URL ? pingRedis(config.REDIS_URL) : { ok: true, detail: 'in-process (one node; set REDIS_URL for many)' })),
  );
  await store?.close().catch(() => undefined);
  return results;
}

/**
 * `ok   name         detail` lines. A detail may carry what a server said (a model server's
 * version or error text, Redis's refusal): shown printable, so none of it drives the terminal.
 */
export function formatResults(results: CheckResult[]): string {
  const width = Math.max(...results.map((r) => r.name.length));
  return results.map((r) => `${(r.ok ? 'ok' : 'FAIL').padEnd(4)} ${r.name.padEnd(width)}  ${printable(r.detail)}`).join('\n');
}

const doctor: Command = {
  summary: 'check the store, AI provider and models, index and bus',
  usage: 'doctor',
  flags: [],
  async run() {
    let config: Config;
    try {
      config = loadConfig();
    } catch (err) {
      console.log(`FAIL config  ${printable((err as Error).message)}`);
      return 1;
    }
    const results = await runDoctor(config);
    console.log(formatResults(results));
    return results.every((r) => r.ok) ? 0 : 1;
  },
};
export default doctor;
