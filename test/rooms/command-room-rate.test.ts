/**
 * The room's message rate (ROOM_MESSAGES_PER_SECOND) counts what is posted to the room: messages
 * and public questions. A slash command, a question the assistant's limits refuse and a message
 * naming a thread that is gone post nothing; counted by the room too, one member sending them
 * (refused or answered to them alone) left the others' messages refused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { joined, roomsApp } from './helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

describe('the room’s message rate and slash commands', () => {
  it('does not spend the room’s messages on commands: the others still post', async () => {
    // Two messages at once, then one a second, for the whole room.
    const t = await roomsApp({}, { roomOptions: { roomMessagesPerSecond: 1 } });
    closers.push(t.close);
    const { client: lister } = await joined(t.app, 'Lister');
    const { client: ann } = await joined(t.app, 'Ann');
    for (let i = 0; i < 6; i++) {
      lister.send({ type: 'say', text: '/help', clientId: `h${i}` });
      await lister.next('message', (f) => f.message.clientId === `h${i}`);
    }
    expect(lister.all('error')).toEqual([]);
    ann.send({ type: 'say', text: 'Still room for me?', clientId: 'a1' });
    const posted = await ann.next('message', (f) => f.message.clientId === 'a1');
    expect(posted.message.author.name).toBe('Ann');
    expect(ann.all('error')).toEqual([]);
  });

  it('does not spend the room’s messages on questions the assistant refuses, nor on messages to a thread that is gone', async () => {
    // Asker and Ann share an address, and with it a share of the room's rate: two messages at once.
    const t = await roomsApp({ ASK_LIMIT_USER: '1' }, { roomOptions: { roomMessagesPerSecond: 2 } });
    closers.push(t.close);
    const { client: asker } = await joined(t.app, 'Asker');
    const { client: ann } = await joined(t.app, 'Ann');
    asker.send({ type: 'say', text: '@ai what is new?', clientId: 'q0' });
    await asker.next('message', (f) => f.message.clientId === 'q0');
    for (let i = 1; i <= 3; i++) {
      asker.send({ type: 'say', text: `@ai and ${i}?`, clientId: `q${i}` });
      const refused = await asker.next('error', (f) => f.clientId === `q${i}`);
      expect(refused.message).toMatch(/questions? a minute from each member/);
      asker.send({ type: 'say', text: 'hello there', clientId: `g${i}`, threadId: 'thr_gone' });
      expect((await asker.next('error', (f) => f.clientId === `g${i}`)).code).toBe('ERR_THREAD_NOT_FOUND');
    }
    ann.send({ type: 'say', text: 'Still room for me?', clientId: 'a1' });
    await ann.next('message', (f) => f.message.clientId === 'a1');
    expect(ann.all('error')).toEqual([]);
  });

  it('still counts a question asked with /ask, which is posted', async () => {
    const t = await roomsApp({}, { roomOptions: { roomMessagesPerSecond: 1 } });
    closers.push(t.close);
    const { client: ann } = await joined(t.app, 'Ann');
    ann.send({ type: 'say', text: 'one', clientId: 'm1' });
    ann.send({ type: 'say', text: 'two', clientId: 'm2' });
    ann.send({ type: 'say', text: '/ask what is new?', clientId: 'q1' });
    const refused = await ann.next('error', (f) => f.clientId === 'q1');
    expect(refused.code).toBe('ERR_RATE_LIMITED');
    // Alone in the room, Ann's share is half its rate: the question is refused as her second message was.
    expect(refused.message).toMatch(/this room's messages are shared among 1 address/);
  });
});
