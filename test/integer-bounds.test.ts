/**
 * Every number a client sends is bounded: Ajv takes `1e300` or `9223372036854775808` for an
 * integer, and PostgreSQL refused what pg made of it (`1e+300`) for a bigint with a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ROOM, roomsApp } from './rooms/helpers.js';
import { describePostgres, freshSchema } from './store/postgres-harness.js';

type Schema = Record<string, unknown>;

/** Where in `schema` (named `at`) a number has no maximum a JavaScript integer can hold. */
function unbounded(schema: unknown, at: string): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const s = schema as Schema;
  const types = ([] as unknown[]).concat(s.type ?? []);
  const found: string[] = [];
  if (types.includes('integer') || types.includes('number')) {
    const max = (s.maximum ?? s.exclusiveMaximum) as number | undefined;
    if (typeof max !== 'number' || max > Number.MAX_SAFE_INTEGER) found.push(at);
  }
  for (const [key, sub] of Object.entries((s.properties ?? {}) as Record<string, unknown>)) found.push(...unbounded(sub, `${at}.${key}`));
  for (const key of ['items', 'additionalProperties', 'not']) found.push(...unbounded(s[key], `${at}.${key}`));
  for (const key of ['oneOf', 'anyOf', 'allOf'])
    for (const [i, sub] of ((s[key] ?? []) as unknown[]).entries()) found.push(...unbounded(sub, `${at}.${key}[${i}]`));
  return found;
}

describe('numbers clients send', () => {
  it('have a maximum on every route, in queries, paths and bodies', async () => {
    const { app, close } = await roomsApp();
    try {
      const doc = (await app.inject('/api/v1/openapi.json')).json() as { paths: Record<string, Record<string, Schema>> };
      const found: string[] = [];
      let inputs = 0;
      for (const [path, methods] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(methods)) {
          for (const p of (op.parameters ?? []) as { in: string; name: string; schema: unknown }[]) {
            inputs++;
            found.push(...unbounded(p.schema, `${method.toUpperCase()} ${path} ${p.in} ${p.name}`));
          }
          const body = (op.requestBody as { content?: Record<string, { schema: unknown }> } | undefined)?.content?.['application/json']?.schema;
          if (body) {
            inputs++;
            found.push(...unbounded(body, `${method.toUpperCase()} ${path} body`));
          }
        }
      }
      // The walk saw the routes' inputs (the history pages' `before` among them).
      expect(inputs).toBeGreaterThan(30);
      expect(found).toEqual([]);
    } finally {
      await close();
    }
  });
});

describePostgres('history pages on PostgreSQL', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  let drop: () => Promise<void>;
  let threadId: string;

  beforeAll(async () => {
    const schema = await freshSchema();
    drop = schema.drop;
    ({ app, close } = await roomsApp({ DATABASE_URL: schema.url }));
    threadId = (await app.salon.store.ensureMainThread(ROOM)).id;
    await app.salon.store.appendMessage({ roomId: ROOM, threadId, author: { id: 'u_x', name: 'X', kind: 'user' }, text: 'hello' });
  });
  afterAll(async () => {
    await close?.();
    await drop?.();
  });

  it('refuses a `before` no integer column holds with ERR_BAD_REQUEST, and takes the largest one', async () => {
    for (const url of [`/api/v1/rooms/${ROOM}/messages`, `/api/v1/threads/${threadId}/messages`]) {
      for (const before of ['1e300', '9223372036854775808', '9007199254740992']) {
        const res = await app.inject(`${url}?before=${before}`);
        expect(res.statusCode, `${url} ${before}`).toBe(400);
        expect(res.json().error.code).toBe('ERR_BAD_REQUEST');
      }
      const largest = await app.inject(`${url}?before=${Number.MAX_SAFE_INTEGER}`);
      expect(largest.statusCode).toBe(200);
      expect(largest.json().messages.map((m: { text: string }) => m.text)).toEqual(['hello']);
    }
  });
});
