/**
 * PostgreSQL going away under a running node (issue 15, "Failures"): the node stays up, a message
 * it cannot store is refused to its sender (never acknowledged, so never lost), `/readyz` says the
 * store is down, and once the server is back the node stores and delivers again without a restart.
 * The database sits behind a loopback proxy the test cuts and restores.
 */
import { afterEach, expect, it } from 'vitest';
import { tcpProxy } from '../redis/tcp-proxy.js';
import { joined, item, roomsApp, ROOM, until } from '../rooms/helpers.js';
import { describePostgres, freshSchema, POSTGRES_URL } from './postgres-harness.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => {});
});

describePostgres('PostgreSQL going away', () => {
  it('refuses what it cannot store, reports it in /readyz, and carries on when the server is back', async () => {
    const fresh = await freshSchema();
    closers.push(fresh.drop);
    const proxy = await tcpProxy(POSTGRES_URL);
    closers.push(proxy.close);
    const viaProxy = new URL(fresh.url);
    viaProxy.port = new URL(proxy.url).port;
    const t = await roomsApp({ DATABASE_URL: viaProxy.toString() });
    closers.push(t.close);
    const { app } = t;
    await app.salon.store.upsertItem(item(ROOM, { title: 'Rust 2.0 released' }));
    const ann = await joined(app, 'Ann');
    const said = async (text: string, clientId: string) => {
      ann.client.send({ type: 'say', text, clientId });
      await until(
        () => ann.client.frames.some((f) => (f.type === 'message' && f.message.clientId === clientId) || (f.type === 'error' && f.clientId === clientId)),
        15_000,
      );
      return ann.client.frames.find((f) => (f.type === 'message' && f.message.clientId === clientId) || (f.type === 'error' && f.clientId === clientId))!;
    };
    const ready = async () => (await app.inject({ method: 'GET', url: '/readyz' })).statusCode;

    expect((await said('before', 'c1')).message.seq).toBe(1);
    expect(await ready()).toBe(200);

    await proxy.cut();
    const refused = await said('during', 'c2');
    expect(refused).toMatchObject({ type: 'error', clientId: 'c2' });
    expect(await ready()).toBe(503);
    expect(ann.client.ws.readyState).toBe(ann.client.ws.OPEN);

    await proxy.restore();
    let after: Record<string, any> | undefined;
    for (let i = 0; i < 50 && !(after?.type === 'message'); i++) {
      after = await said('after', `c3_${i}`);
      if (after.type !== 'message') await new Promise((r) => setTimeout(r, 200));
    }
    expect(after).toMatchObject({ type: 'message', message: { text: 'after' } });
    expect(await ready()).toBe(200);
    // What was acknowledged is stored, in order; what was refused is not.
    const thread = await app.salon.store.ensureMainThread(ROOM);
    expect((await app.salon.store.threadMessages(thread.id, 10)).map((m) => m.text)).toEqual(['before', 'after']);
  });
});
