import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ADMIN } from './helpers.js';
import { joined, roomsApp, ROOM } from './rooms/helpers.js';

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

  it('makes each half of a surrogate pair in a body’s strings U+FFFD, so a route stores what it echoes', async () => {
    const headers = { ...ADMIN, 'content-type': 'application/json' };
    const made = await app.inject({ method: 'POST', url: `/api/v1/rooms/${ROOM}/threads`, headers, payload: '{"title":"Night\\ud800 trains \\ud83d\\ude86"}' });
    expect(made.json().thread.title).toBe('Night\ufffd trains \ud83d\ude86');
    const listed = (await app.inject(`/api/v1/rooms/${ROOM}/threads`)).json().threads;
    expect(listed.map((t: { title: string }) => t.title)).toContain('Night\ufffd trains \ud83d\ude86');
    const { client } = await joined(app, 'Watcher');
    const asked = await app.inject({ method: 'POST', url: `/api/v1/rooms/${ROOM}/ask`, headers, payload: '{"text":"why\\udc00?","name":"Bo\\ud800"}' });
    expect(asked.statusCode, asked.body).toBe(200);
    const question = (await client.next('message', (f) => f.message.text.startsWith('@ai why'))).message;
    expect(question).toMatchObject({ text: '@ai why\ufffd?', author: { name: 'Bo\ufffd' } });
    const stored = (await app.inject(`/api/v1/rooms/${ROOM}/messages`)).json().messages;
    expect(stored).toContainEqual(question);
    // Deep nesting is walked without recursion; the schema then refuses the body.
    const deep = `{"survivorId":${'['.repeat(200_000)}"\\ud800"${']'.repeat(200_000)},"absorbedId":"b"}`;
    const refused = await app.inject({ method: 'POST', url: '/api/v1/threads/merge', headers, payload: deep });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.code).toBe('ERR_BAD_REQUEST');
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
