import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ADMIN } from './helpers.js';
import { roomsApp, ROOM } from './rooms/helpers.js';

/** What a generic JSON client sends on a call without a body: the JSON type and no bytes. */
const JSON_NO_BODY = { ...ADMIN, 'content-type': 'application/json' };

describe('a request with a JSON content type and no body', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ app, close } = await roomsApp());
  });
  afterAll(async () => close());

  async function newThread(title: string): Promise<string> {
    const res = await app.inject({ method: 'POST', url: `/api/v1/rooms/${ROOM}/threads`, headers: ADMIN, payload: { title } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().thread.id;
  }

  it('reaches a route that takes no body: DELETE /api/v1/threads/:id deletes the thread', async () => {
    const id = await newThread('To delete');
    const res = await app.inject({ method: 'DELETE', url: `/api/v1/threads/${id}`, headers: JSON_NO_BODY, payload: '' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().deleted).toBe(id);
    expect((await app.inject(`/api/v1/threads/${id}`)).statusCode).toBe(404);
  });

  it('reaches POST /api/v1/threads/:id/unlock, which answers for the thread', async () => {
    const id = await newThread('Never split');
    const res = await app.inject({ method: 'POST', url: `/api/v1/threads/${id}/unlock`, headers: JSON_NO_BODY, payload: '' });
    expect(res.json().error.code).toBe('ERR_BAD_THREAD_OP');
    expect(res.json().error.message).toContain('not locked');
  });

  it('is still refused by a route that needs a body, through its schema', async () => {
    const res = await app.inject({ method: 'POST', url: '/api/v1/threads/merge', headers: JSON_NO_BODY, payload: '' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('ERR_BAD_REQUEST');
  });

  it('leaves JSON bodies to the usual parser: bad JSON, a poisoned prototype and the body limits are refused', async () => {
    const merge = (payload: string) => app.inject({ method: 'POST', url: '/api/v1/threads/merge', headers: JSON_NO_BODY, payload });
    const bad = await merge('{nope');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toContain('not valid JSON');
    const poisoned = await merge('{"survivorId": "a", "absorbedId": "b", "__proto__": {"admin": true}}');
    expect(poisoned.statusCode).toBe(400);
    expect(poisoned.json().error.message).toContain('not valid JSON');
    const ask = await app.inject({
      method: 'POST',
      url: `/api/v1/rooms/${ROOM}/ask`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ text: 'x'.repeat(40_000) }),
    });
    expect(ask.statusCode).toBe(413);
  });
});
