/**
 * Request bodies past PARSE_OFF_LOOP_BYTES are parsed on a worker (src/routes/json-body-pool.ts),
 * read as the main thread reads a small one (src/json-body.ts). Needs the build (dist/workers/json-body.js).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { parseJsonBody } from '../src/json-body.js';
import { PARSE_OFF_LOOP_BYTES } from '../src/routes/json-body-pool.js';
import { item } from './store/contract.js';
import { ADMIN, testApp } from './helpers.js';

const JSON_HEADERS = { ...ADMIN, 'content-type': 'application/json' };
/** Text enough to take a body past PARSE_OFF_LOOP_BYTES. */
const PAD = 'x'.repeat(PARSE_OFF_LOOP_BYTES);
const TS = '2024-05-08T13:00:00.000Z';

describe('a JSON body past PARSE_OFF_LOOP_BYTES', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ app, close } = await testApp());
    await app.ready();
    await app.salon.store.upsertItem(item('news_1'));
  });
  afterAll(async () => close());
  afterEach(() => vi.restoreAllMocks());

  const importing = (payload: string) => app.inject({ method: 'POST', url: '/api/v1/rooms/news_1/import', headers: JSON_HEADERS, payload });

  it('is parsed off the event loop: the main thread never parses it, and the route gets its value', async () => {
    const messages = Array.from({ length: 300 }, (_, i) => ({ author: { name: 'Ann' }, text: `${i} ${'word '.repeat(799)}`, ts: TS }));
    const payload = JSON.stringify({ messages });
    expect(payload.length).toBeGreaterThan(PARSE_OFF_LOOP_BYTES);
    const parse = vi.spyOn(JSON, 'parse');
    let turns = 0;
    let turning = true;
    const turn = () => {
      turns++;
      if (turning) setImmediate(turn);
    };
    setImmediate(turn);
    const before = turns;
    const res = await importing(payload);
    turning = false;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().messageIds).toHaveLength(300);
    expect(parse.mock.calls.filter(([text]) => typeof text === 'string' && text.length > PARSE_OFF_LOOP_BYTES)).toEqual([]);
    // Other work went on while it was parsed.
    expect(turns).toBeGreaterThan(before);
    await app.salon.memory.idle();
  });

  it('is refused as a small one is: text that is not JSON, a poisoned object', async () => {
    const small = await importing('{"messages": [');
    expect(small.statusCode).toBe(400);
    for (const payload of [
      `{"messages": ["${PAD}"`,
      `{"messages": [{"author": {"name": "Ann"}, "text": "${PAD}", "ts": "${TS}"}], "__proto__": {"admin": true}}`,
      `{"messages": [{"author": {"name": "Ann"}, "text": "${PAD}", "ts": "${TS}", "constructor": {"prototype": {"admin": true}}}]}`,
    ]) {
      const res = await importing(payload);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(small.json());
    }
  });

  it('has each escaped half of a surrogate pair made U+FFFD, and may begin with a byte order mark', async () => {
    const text = `half\\ud800 of ${'a '.repeat(1_000)}`;
    const messages = Array.from({ length: 300 }, (_, i) => `{"author": {"name": "Bo"}, "text": "${i} ${text}", "ts": "${TS}"}`);
    const res = await importing(`\ufeff{"messages": [${messages.join(',')}]}`);
    expect(res.statusCode, res.body).toBe(200);
    const stored = await app.salon.store.threadMessages(res.json().threadId, 1_000);
    expect(stored.find((m) => m.id === res.json().messageIds[0])?.text.startsWith('0 half\ufffd of a a')).toBe(true);
    await app.salon.memory.idle();
  });
});

describe('parseJsonBody', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ app, close } = await testApp());
  });
  afterAll(async () => close());

  it("reads every body as Fastify's own parser does", () => {
    const fastifyParse = app.getDefaultJsonParser('error', 'error');
    const texts = [
      '{"a": 1}',
      '\ufeff{"a": [1, "two"]}',
      '[1, 2',
      '"text"',
      'null',
      '{"__proto__": {"x": 1}}',
      '{"a": [{"\\u005f_proto__": 1}]}',
      '{"constructor": {"prototype": {}}}',
      '{"constructor": {"name": "fine"}}',
      '{"constructor": "fine"}',
      '{"b": "__proto__", "c": {"constructor": null}}',
    ];
    for (const text of texts) {
      let expected: unknown = 'refused';
      fastifyParse({} as never, text, (err, value) => (expected = err ? 'refused' : value));
      let got: unknown;
      try {
        got = parseJsonBody(text);
      } catch {
        got = 'refused';
      }
      expect(got, text).toEqual(expected);
    }
  });
});
