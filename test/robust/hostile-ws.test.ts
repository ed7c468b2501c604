/**
 * Replayed and out-of-order room frames from a stranger: a frame before `hello`, a second `hello`,
 * a `lastSeq` from the future or below zero, the same `say` sent again (same clientId), a `say` to
 * a thread of another room. Each is answered with its typed code (or, for a resend, the stored
 * message once), nothing extra is stored, and another member chats on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject, joined, roomsApp, until, ROOM, OTHER_ROOM } from '../rooms/helpers.js';

describe('replayed and out-of-order room frames', () => {
  let t: Awaited<ReturnType<typeof roomsApp>>;
  beforeAll(async () => {
    t = await roomsApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers a frame before hello with a typed error or a 4400 close', async () => {
    const c = await inject(t.app);
    c.send({ type: 'say', text: 'too early', clientId: 'e1' });
    const outcome = await Promise.race([c.next('error').then((f) => f.code), c.closed.then((x) => x.code)]);
    expect(['ERR_NOT_JOINED', 'ERR_BAD_MESSAGE', 4400]).toContain(outcome);
    expect(await t.app.salon.store.threadMessages((await t.app.salon.store.ensureMainThread(ROOM)).id, 10)).toEqual([]);
  });

  it('stores a replayed say once, refuses a second hello and a foreign thread, and odd lastSeqs', async () => {
    const { store } = t.app.salon;
    const main = await store.ensureMainThread(ROOM);
    const other = await store.ensureMainThread(OTHER_ROOM);
    const { client: a } = await joined(t.app, 'Ann');
    for (let i = 0; i < 3; i++) a.send({ type: 'say', text: 'once', clientId: 'same' });
    await a.next('message', (f) => f.message.clientId === 'same');
    a.send({ type: 'hello', name: 'Again' });
    a.send({ type: 'say', text: 'elsewhere', clientId: 'x1', threadId: other.id });
    const foreign = await a.next('error', (f) => f.clientId === 'x1');
    expect(foreign.code).toMatch(/^ERR_[A-Z_]+$/);
    a.send({ type: 'ping' });
    await a.next('pong');
    const texts = (await store.threadMessages(main.id, 50)).map((m) => m.text);
    expect(texts.filter((x) => x === 'once')).toHaveLength(1);
    expect(texts).not.toContain('elsewhere');
    expect(await store.threadMessages(other.id, 10)).toEqual([]);
    // A lastSeq past the room's is a catch-up with nothing to send; a malformed one is refused with
    // ERR_BAD_MESSAGE and the same socket may say hello again.
    const answers: string[] = [];
    for (const lastSeq of [-1, 1e15, 1.5, '7', null, 2 ** 53 + 2]) {
      const c = await inject(t.app);
      c.send({ type: 'hello', name: 'Late', lastSeq });
      await until(() => c.frames.length > 0);
      const first = c.frames[0];
      answers.push(`${JSON.stringify(lastSeq)}: ${first.type === 'error' ? first.code : 'welcome'}`);
      if (first.type === 'error') {
        c.send({ type: 'hello', name: 'Late' });
        await until(() => c.frames.some((f) => f.type === 'welcome'));
      }
    }
    expect(answers).toEqual([
      '-1: ERR_BAD_MESSAGE',
      '1000000000000000: welcome',
      '1.5: ERR_BAD_MESSAGE',
      '"7": ERR_BAD_MESSAGE',
      'null: welcome',
      '9007199254740994: ERR_BAD_MESSAGE',
    ]);
    const { client: b } = await joined(t.app, 'Bo');
    b.send({ type: 'say', text: 'still fine', clientId: 'b1' });
    expect((await b.next('message', (f) => f.message.clientId === 'b1')).message.text).toBe('still fine');
  });
});
