/**
 * A stranger's requests to every HTTP route, drawn from a seeded generator: odd methods' bodies,
 * wrong types, deep nesting, huge values, unicode-hostile ids and queries (lone surrogates, bidi
 * controls, NUL), wrong and missing tokens. Each answer is the error contract (`{error: {code,
 * message}}`, a catalogued code, never a 5xx), names no secret, path or SQL, and a refused request
 * stores nothing. The same seed gives the same requests, so a failure can be replayed.
 */
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errors } from '../../src/errors.js';
import { prng } from '../faults/frame-fuzz.js';
import { ADMIN } from '../helpers.js';
import { joined, roomsApp, ROOM } from '../rooms/helpers.js';

/** HOSTILE_SEED and HOSTILE_N (requests) replay or widen a run; the defaults are what CI runs. */
const SEED = Number(process.env.HOSTILE_SEED ?? 20261204);
const CODES = new Set(Object.keys(errors));
const ADMIN_TOKEN = 'test-admin-token';

const ODD = [
  '\ud800',
  '\udfff\ud800',
  '\u0000',
  '\u202eevil\u202c',
  'a\u200bb',
  '%00',
  '%ED%A0%80',
  '..%2F..%2Fetc%2Fpasswd',
  "' OR 1=1 --",
  '"; DROP TABLE messages; --',
  '<script>alert(1)</script>',
  '__proto__',
  'constructor',
  'news_1',
  'post_2',
  'topic_tech',
  'thr_x',
  '-1',
  '1e999',
  'NaN',
  '9007199254740993',
  'x'.repeat(3000),
  '𝕊'.repeat(200),
  '',
];

/** %-encoded as a client would; a lone surrogate as the UTF-8 bytes it would have (invalid UTF-8). */
function encode(s: string): string {
  return s.replace(/[\s\S]/gu, (c) => {
    const cp = c.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff)
      return `%${(0xe0 | (cp >> 12)).toString(16)}%${(0x80 | ((cp >> 6) & 63)).toString(16)}%${(0x80 | (cp & 63)).toString(16)}`.toUpperCase();
    return encodeURIComponent(c);
  });
}

/** `fetches`: with the token it could reach the network (ingest, a new source, a poll), so it is sent without. */
type Route = { method: InjectOptions['method']; url: string; admin: boolean; fetches?: true };

/** Every API route; `:id` is filled by the generator. `admin`: refused without the token (a source's and a job's reads are public, their URLs' queries cut). */
const ROUTES: Route[] = [
  { method: 'GET', url: '/api/v1/content', admin: false },
  { method: 'GET', url: '/api/v1/content/:id', admin: false },
  { method: 'DELETE', url: '/api/v1/content/:id', admin: true },
  { method: 'POST', url: '/api/v1/content', admin: true },
  { method: 'POST', url: '/api/v1/ingest', admin: true, fetches: true },
  { method: 'GET', url: '/api/v1/ingest/:id', admin: false },
  { method: 'DELETE', url: '/api/v1/ingest/:id', admin: true },
  { method: 'GET', url: '/api/v1/rooms', admin: false },
  { method: 'GET', url: '/api/v1/rooms/:id', admin: false },
  { method: 'GET', url: '/api/v1/rooms/:id/messages', admin: false },
  { method: 'GET', url: '/api/v1/search', admin: false },
  { method: 'POST', url: '/api/v1/sources', admin: true, fetches: true },
  { method: 'GET', url: '/api/v1/sources', admin: false },
  { method: 'GET', url: '/api/v1/sources/:id', admin: false },
  { method: 'PATCH', url: '/api/v1/sources/:id', admin: true },
  { method: 'DELETE', url: '/api/v1/sources/:id', admin: true },
  { method: 'POST', url: '/api/v1/sources/:id/refresh', admin: true, fetches: true },
  { method: 'POST', url: '/api/v1/rooms/:id/threads', admin: false },
  { method: 'POST', url: '/api/v1/threads/merge', admin: true },
  { method: 'POST', url: '/api/v1/threads/fuse', admin: true },
  { method: 'GET', url: '/api/v1/threads/:id/split', admin: true },
  { method: 'POST', url: '/api/v1/threads/:id/split', admin: true },
  { method: 'POST', url: '/api/v1/threads/:id/unlock', admin: true },
  { method: 'POST', url: '/api/v1/threads/:id/compact', admin: true },
  { method: 'GET', url: '/api/v1/rooms/:id/threads', admin: false },
  { method: 'GET', url: '/api/v1/threads/:id', admin: false },
  { method: 'GET', url: '/api/v1/threads/:id/messages', admin: false },
  { method: 'PUT', url: '/api/v1/threads/:id/config', admin: true },
  { method: 'DELETE', url: '/api/v1/threads/:id', admin: true },
  { method: 'POST', url: '/api/v1/rooms/:id/import', admin: true },
  { method: 'POST', url: '/api/v1/rooms/:id/ask', admin: false },
];

const QUERY_KEYS = ['q', 'k', 'kind', 'category', 'since', 'limit', 'cursor', 'before', 'archived', 'ids', '__proto__', 'q[]'];
const BODY_KEYS = [
  'text',
  'threadId',
  'name',
  'url',
  'feed',
  'hn',
  'messages',
  'survivorId',
  'absorbedId',
  'sourceIds',
  'parts',
  'lock',
  'title',
  'privileged',
  'enable_chat_history_rag',
  'kind',
  'everyMinutes',
  '__proto__',
  'constructor',
];

class RequestFuzzer {
  private readonly random: () => number;
  constructor(seed: number) {
    this.random = prng(seed);
  }
  private int(max: number): number {
    return Math.floor(this.random() * max);
  }
  private pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
  private value(depth = 0): unknown {
    switch (this.int(depth > 2 ? 5 : 8)) {
      case 0:
        return this.pick(ODD);
      case 1:
        return this.pick([0, -1, 1.5, 1e308, -0, Number.MAX_SAFE_INTEGER + 2]);
      case 2:
        return this.pick([true, false, null]);
      case 3:
        return 'y'.repeat(this.int(20_000));
      case 4:
        return this.pick(['news_1', 'post_2', 'topic_tech', 'feed', 'hn', 'top']);
      case 5:
        return Array.from({ length: this.int(5) }, () => this.value(depth + 1));
      case 6:
        return Object.fromEntries(Array.from({ length: this.int(4) }, () => [this.pick(BODY_KEYS), this.value(depth + 1)]));
      default:
        return { author: { name: this.pick(ODD) }, text: this.pick(ODD), ts: this.pick([0, -1, 'x', 1e20, null]) };
    }
  }
  private body(): { payload?: string; headers: Record<string, string> } {
    const json = { 'content-type': 'application/json' };
    switch (this.int(8)) {
      case 0:
        return { headers: {} };
      case 1: {
        const depth = 500 + this.int(5000);
        return { payload: `{"text":${'['.repeat(depth)}1${']'.repeat(depth)}}`, headers: json };
      }
      case 2:
        return { payload: this.pick(['', 'null', '[]', '1', '"x"', '{', '{"a":1}{"a":1}', '\ufeff{}', '{"__proto__":{"admin":true}}']), headers: json };
      case 3:
        return {
          payload: 'text=hi',
          headers: {
            'content-type': this.pick([
              'application/x-www-form-urlencoded',
              'text/plain',
              'application/json; charset=utf-16',
              'multipart/form-data; boundary=x',
              '\u0000/\u0000',
            ]),
          },
        };
      case 4:
        return { payload: JSON.stringify({ messages: Array.from({ length: 1 + this.int(3) }, () => this.value(2)), threadId: this.value(2) }), headers: json };
      default:
        return { payload: JSON.stringify(Object.fromEntries(Array.from({ length: this.int(6) }, () => [this.pick(BODY_KEYS), this.value()]))), headers: json };
    }
  }
  private param(known: string[]): string {
    const raw = this.random() < 0.4 ? this.pick(known) : this.pick(ODD);
    // Mostly %-encoded as a client would; sometimes as it is, to reach the router's own checks.
    return this.random() < 0.8 ? encode(raw).replace(/%25/g, this.random() < 0.5 ? '%' : '%25') : raw;
  }
  private query(): string {
    const n = this.int(4);
    if (n === 0) return '';
    const parts = Array.from({ length: n }, () => {
      const v = this.random() < 0.1 ? this.pick(['%zz', '%', '%00', '%ED%A0%80']) : encode(String(this.value(3)));
      return `${this.pick(QUERY_KEYS)}=${v}`;
    });
    return `?${parts.join('&')}`;
  }
  /** The next request, and whether it carries the admin token. */
  next(known: string[], n: number): { options: InjectOptions; route: Route; auth: 'admin' | 'wrong' | 'none' } {
    const route = this.pick(ROUTES);
    const url = route.url.replace(/:id/g, () => this.param(known)) + this.query();
    const { payload, headers } = route.method === 'GET' || route.method === 'DELETE' ? (this.random() < 0.8 ? { headers: {} } : this.body()) : this.body();
    const r = this.random();
    const auth = r < 0.45 && !route.fetches ? 'admin' : r < 0.75 ? 'wrong' : 'none';
    const authorization =
      auth === 'admin'
        ? ADMIN.authorization
        : auth === 'wrong'
          ? this.pick(['Bearer x', `Bearer ${ADMIN_TOKEN}x`, 'Basic dGVzdA==', `bearer  ${'\u0000'}`, 'Bearer'])
          : undefined;
    return {
      route,
      auth,
      options: {
        method: route.method,
        url,
        payload,
        // Each request from its own address: the per-address API budgets are not what is tested here.
        remoteAddress: `198.51.${(n >> 8) & 255}.${n & 255}`,
        headers: { ...headers, ...(authorization ? { authorization } : {}) },
      },
    };
  }
}

/** What a request could change: the stored items, the threads of the rooms, their messages, the sources. */
let snapshots = 0;
async function snapshot(app: FastifyInstance): Promise<string> {
  // Each read from its own address (an IPv6 /64 of its own), under the API's per-address budget.
  const remoteAddress = `2001:db8:${(++snapshots).toString(16)}::1`;
  const { store } = app.salon;
  const rooms = ['news_1', 'post_2', 'video_3'];
  const parts: unknown[] = [];
  for (const room of rooms) {
    const listed = await app.salon.threads.list(room, 500);
    for (const t of listed.threads) {
      const messages = await store.threadMessages(t.id, 1000);
      parts.push([room, t.id, t.status, t.title, t.mergedInto, t.memoryEnabled, t.privileged, messages.map((m) => m.id)]);
    }
  }
  const content = await app.inject({ method: 'GET', url: '/api/v1/content?limit=100', remoteAddress });
  if (content.statusCode !== 200) throw new Error(`content list: ${content.body}`);
  parts.push(content.json().items?.map((i: { id: string }) => i.id));
  const sources = await app.inject({ method: 'GET', url: '/api/v1/sources', headers: ADMIN, remoteAddress });
  parts.push(sources.json());
  return JSON.stringify(parts);
}

describe('hostile HTTP requests', () => {
  let t: Awaited<ReturnType<typeof roomsApp>>;
  let known: string[];

  beforeAll(async () => {
    t = await roomsApp();
    // A room with a thread and a message in it, so ids the generator draws can name something.
    const { client: a } = await joined(t.app, 'Ann');
    a.send({ type: 'say', clientId: 'c1', text: 'the locker code is 4711' });
    await a.next('message');
    const listed = await t.app.salon.threads.list(ROOM, 10);
    known = ['news_1', 'post_2', 'video_3', ...listed.threads.map((x) => x.id)];
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers every request with the error contract or a success, never a 5xx, and a refused one stores nothing', async () => {
    const fuzz = new RequestFuzzer(SEED);
    const failures: string[] = [];
    for (let n = 0; n < Number(process.env.HOSTILE_N ?? 600); n++) {
      const { options, route, auth } = fuzz.next(known, n);
      const before = await snapshot(t.app);
      const res = await t.app.inject(options);
      const where = `#${n} ${options.method} ${String(options.url).slice(0, 120)} (${auth})`;
      if (res.statusCode >= 500) failures.push(`${where}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      if (route.admin && auth !== 'admin' && res.statusCode < 400) failures.push(`${where}: admin route answered ${res.statusCode} without the token`);
      if (res.statusCode >= 400) {
        let body: { error?: { code?: string; message?: string } };
        try {
          body = res.json();
        } catch {
          failures.push(`${where}: ${res.statusCode} not JSON: ${res.body.slice(0, 200)}`);
          continue;
        }
        const code = body.error?.code ?? '';
        if (!CODES.has(code)) failures.push(`${where}: uncatalogued code ${JSON.stringify(code)}`);
        if (typeof body.error?.message !== 'string') failures.push(`${where}: no message`);
        const after = await snapshot(t.app);
        if (after !== before)
          failures.push(`${where}: refused with ${code} but the store changed: ${before.length} ${after.length} ${body.error?.message?.slice(0, 100)}`);
      }
      for (const secret of [ADMIN_TOKEN, t.config.DATA_DIR, '/work/', 'SQLITE_', 'SqliteError', 'SELECT ', '    at ']) {
        if (res.body.includes(secret)) failures.push(`${where}: the answer names ${JSON.stringify(secret)}: ${res.body.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
    // Still serving: a normal member chats and the API answers.
    const { client: b } = await joined(t.app, 'Bob');
    b.send({ type: 'say', clientId: 'c2', text: 'still here' });
    expect((await b.next('message')).message.text).toBe('still here');
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/rooms/news_1', remoteAddress: '192.0.2.9' })).statusCode).toBe(200);
  });
});
