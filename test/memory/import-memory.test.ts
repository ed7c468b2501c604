/**
 * An import's memory is built apart from the thread's live chat: windowed with turns of the event
 * loop (5,000 imported messages were windowed in one go), and never led by the live chat's last
 * line, which was said after the imported history. Live windows leave imported messages to the
 * import (src/memory/imported.ts), and what marks a message imported must be the server's: a member
 * choosing a clientId that starts `import_` kept their messages out of the thread's memory.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { checkImport, importMessages } from '../../src/memory/import.js';
import { isImported } from '../../src/memory/imported.js';
import { item } from '../store/contract.js';
import { ADMIN, testApp, withTurnsDue } from '../helpers.js';
import { joined } from '../rooms/helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function app(): Promise<FastifyInstance> {
  const t = await testApp();
  closers.push(t.close);
  await t.app.ready();
  await t.app.salon.ingest.pipeline.put(item('news_1', { title: 'Volcano erupts', body: 'Lava reached the town.' }));
  return t.app;
}

const minute = (m: number) => new Date(Date.UTC(2023, 4, 8, 13, m)).toISOString();
const history = Array.from({ length: 40 }, (_, i) => ({
  author: { name: i % 2 ? 'Melanie' : 'Caroline' },
  text: `Imported line ${i} about the lava.`,
  ts: minute(i),
}));

describe('importMessages and the thread’s memory', () => {
  it('windows the imported messages with turns of the event loop', async () => {
    const a = await app();
    const thread = await a.salon.store.ensureMainThread('news_1');
    const checked = checkImport(history, 4000);
    const turnedWhileWindowing: boolean[] = [];
    const memory = a.salon.memory;
    await withTurnsDue(async (turned) => {
      const windowed = await importMessages(a.salon.store, memory, 'news_1', thread.id, checked);
      turnedWhileWindowing.push(turned());
      return windowed;
    });
    expect(turnedWhileWindowing).toEqual([true]);
    await memory.idle();
    const chunks = await a.salon.store.scanThreadMemory(thread.id, 0, 100, false);
    expect(chunks.flatMap((c) => c.messageIds)).toHaveLength(history.length);
  });

  it('does not lead the first imported window with the live chat’s last line', async () => {
    const a = await app();
    const thread = await a.salon.store.ensureMainThread('news_1');
    const { message } = await a.salon.store.appendMessage({
      roomId: 'news_1',
      threadId: thread.id,
      author: { id: 'u_ann', name: 'Ann', kind: 'user' },
      text: 'Live today: the party is at Pier 9.',
    });
    a.salon.memory.onMessage(message);
    await importMessages(a.salon.store, a.salon.memory, 'news_1', thread.id, checkImport(history.slice(0, 3), 4000));
    a.salon.memory.flush();
    await a.salon.memory.idle();
    const chunks = await a.salon.store.scanThreadMemory(thread.id, 0, 100, false);
    const imported = chunks.find((c) => c.text.includes('Imported line 0'))!;
    expect(imported.text).not.toContain('Pier 9');
    expect(imported.text.split('\n')[0]).toContain('Imported line 0');
    expect(chunks.find((c) => c.messageIds.includes(message.id))?.text).toContain('Pier 9');
  });

  it('remembers an import made while members talk once: live windows leave its messages to the import', async () => {
    const a = await app();
    const { client: ann } = await joined(a, 'Ann', 'news_1');
    const say = async (text: string, clientId: string) => {
      ann.send({ type: 'say', text, clientId });
      return (await ann.next('message', (f) => f.message.clientId === clientId)).message.id as string;
    };
    const live = [await say('Before the import: the lava is slow.', 'c1')];
    const imported = await a.inject({ method: 'POST', url: '/api/v1/rooms/news_1/import', headers: ADMIN, payload: { messages: history.slice(0, 10) } });
    expect(imported.statusCode, imported.body).toBe(200);
    live.push(await say('After the import: the town is safe.', 'c2'));
    a.salon.memory.flush();
    await a.salon.memory.idle();
    const thread = await a.salon.store.ensureMainThread('news_1');
    const filed = (await a.salon.store.scanThreadMemory(thread.id, 0, 100, false)).flatMap((c) => c.messageIds);
    const ids = [...live, ...(imported.json().messageIds as string[])];
    expect([...filed].sort()).toEqual([...ids].sort());
    // A room that hears an imported message (a catch-up reading the seqs the import took) leaves it out of its live windows.
    const stored = (await a.salon.store.threadMessages(thread.id, 20)).find((m) => m.text.startsWith('Imported line'))!;
    expect(stored.clientId).toMatch(/^import_/);
    a.salon.memory.onMessage(stored);
    expect((await a.salon.memory.stats(thread.id)).pending).toBe(0);
  });
});

describe('what marks a message imported', () => {
  it('is not a clientId a live member chose: their message joins the thread’s memory', async () => {
    const a = await app();
    const { client: ann } = await joined(a, 'Ann', 'news_1');
    ann.send({ type: 'say', text: 'The lava stopped at the old bridge.', clientId: 'import_forged' });
    const { message } = await ann.next('message', (f) => f.message.clientId === 'import_forged');
    expect(isImported(message)).toBe(false);
    a.salon.memory.flush();
    await a.salon.memory.idle();
    const thread = await a.salon.store.ensureMainThread('news_1');
    const filed = (await a.salon.store.scanThreadMemory(thread.id, 0, 100, false)).flatMap((c) => c.messageIds);
    expect(filed).toContain(message.id);
  });

  it('is what an import stores: its author and its clientId', async () => {
    const a = await app();
    const imported = await a.inject({
      method: 'POST',
      url: '/api/v1/rooms/news_1/import',
      headers: ADMIN,
      payload: { messages: [{ author: { name: 'Caroline' }, text: 'Imported: the lava is slow.', ts: '2023-05-08T13:00:00Z' }] },
    });
    expect(imported.statusCode, imported.body).toBe(200);
    const thread = await a.salon.store.ensureMainThread('news_1');
    const [stored] = await a.salon.store.threadMessages(thread.id, 10);
    expect(isImported(stored)).toBe(true);
    // The same clientId on a live member's message is not the import's.
    expect(isImported({ ...stored, author: { id: 'u_ann', name: 'Ann', kind: 'user' } })).toBe(false);
  });
});
