/**
 * Live windows leave imported messages to the import (src/memory/imported.ts). What marks a
 * message imported must be the server's: a member choosing a clientId that starts `import_` kept
 * their messages out of the thread's memory.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { isImported } from '../../src/memory/imported.js';
import { item } from '../store/contract.js';
import { ADMIN, testApp } from '../helpers.js';
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
