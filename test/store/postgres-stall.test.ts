/**
 * PostgreSQL that stops answering without closing anything (a hung server, a network that drops
 * packets silently): the store's queries and transactions must fail, not wait forever holding
 * the room queue and the pool, and the store must work again once the server answers, without a
 * restart. The database sits behind a loopback proxy the test freezes, then cuts and restores.
 */
import { afterEach, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres.js';
import { tcpProxy } from '../redis/tcp-proxy.js';
import { item } from './contract.js';
import { describePostgres, freshSchema } from './postgres-harness.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => {});
});

/** Settles with the error `p` rejects with, or 'still waiting' after `ms`. */
async function outcome(p: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const waiting = new Promise((resolve) => (timer = setTimeout(resolve, ms, 'still waiting')));
  try {
    return await Promise.race([
      p.then(
        () => 'resolved',
        (err: Error) => err,
      ),
      waiting,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describePostgres('PostgreSQL that stops answering', () => {
  it('fails queries and transactions at the query timeout, and works again when the server answers', async () => {
    const fresh = await freshSchema();
    closers.push(fresh.drop);
    const proxy = await tcpProxy(fresh.url);
    closers.push(proxy.close);
    const viaProxy = new URL(fresh.url);
    viaProxy.port = new URL(proxy.url).port;
    // The connect timeout shortened as the query timeout is: the default 10 s was most of this test's time.
    const store = await PostgresStore.open({ connectionString: viaProxy.toString(), queryTimeoutMs: 1_000, connectTimeoutMs: 1_000, poolSize: 2 });
    closers.push(() => store.close());
    await store.upsertItem(item('news_1', { title: 'Before' }));
    const thread = await store.ensureMainThread('news_1');
    const message = (text: string, clientId: string) =>
      store.appendMessage({ roomId: 'news_1', threadId: thread.id, author: { id: 'u1', name: 'Ann', kind: 'user' }, text, clientId });
    await message('before', 'c1');

    proxy.freeze();
    // More calls than pooled connections: the ones waiting for a connection fail too (a new
    // connection's handshake is not answered either, and fails at its connect timeout).
    const during = [message('during', 'c2'), store.getItem('news_1'), store.recentMessages('news_1', 5), message('during too', 'c3')];
    // Each is watched from now: one awaited after another's failure would reject unhandled meanwhile.
    for (const settled of await Promise.all(during.map((p) => outcome(p, 25_000)))) expect(settled).toBeInstanceOf(Error);

    await proxy.cut();
    await proxy.restore();
    let after: unknown;
    for (let i = 0; i < 50 && !(after && typeof after === 'object' && 'message' in after); i++) {
      after = await message('after', 'c4').catch((err: Error) => err);
      if (after instanceof Error) await new Promise((r) => setTimeout(r, 200));
    }
    expect(after).toMatchObject({ message: { text: 'after' } });
    expect((await store.threadMessages(thread.id, 10)).map((m) => m.text)).toEqual(['before', 'after']);
  }, 90_000);
});

it('takes a connect timeout of a whole number of milliseconds, as it takes the query timeout', () => {
  expect(() => new PostgresStore({ connectionString: 'postgres://127.0.0.1:1/none', connectTimeoutMs: 0 })).toThrow(/options\.connectTimeoutMs/);
  expect(() => new PostgresStore({ connectionString: 'postgres://127.0.0.1:1/none', connectTimeoutMs: 1.5 })).toThrow(/options\.connectTimeoutMs/);
});
