/**
 * SIGHUP (the terminal that started the server closing) shuts the server down as SIGTERM does: the
 * open memory window is stored and the process exits 0, instead of ending at once. Runs dist/src/server.js.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/store/sqlite.js';
import { CloseCode } from '../src/protocol/close-codes.js';
import { RawClient } from './faults/clients.js';
import { startServer, type ServerProcess } from './faults/server-process.js';
import { tempDir } from './helpers.js';

const data = tempDir('salon-sighup-');
let server: ServerProcess | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
  data.cleanup();
});

describe('SIGHUP', () => {
  it('closes sockets with 1001, stores the open memory window and exits 0', async () => {
    server = await startServer({ dataDir: data.dir });
    const page = (await (await fetch(`${server.base}/api/v1/content?limit=1`)).json()) as { items: { id: string }[] };
    const client = await RawClient.open(server.roomUrl(page.items[0].id));
    client.send({ type: 'hello', name: 'Witness' });
    const welcome = (await client.waitFor(0, (f) => f.type === 'welcome', 10_000)) as { threadId: string };
    for (const n of [1, 2, 3]) client.send({ type: 'say', text: `line ${n} about the tide tables`, clientId: `t${n}` });
    expect(await client.waitFor(0, (f) => f.type === 'message' && (f as { message: { clientId?: string } }).message.clientId === 't3', 10_000)).toBeTruthy();

    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      server!.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    server.child.kill('SIGHUP');
    expect(await exited).toEqual({ code: 0, signal: null });
    await client.waitFor(0, () => false, 10_000);
    expect(client.closeCode).toBe(CloseCode.GOING_AWAY);
    expect(server.logs.some((line) => line.includes('"signal":"SIGHUP"') && line.includes('shutting down'))).toBe(true);
    const store = new SqliteStore({ filename: join(data.dir, 'salon.db') });
    try {
      expect(await store.countMemoryChunks(welcome.threadId)).toBe(1);
    } finally {
      await store.close();
    }
  }, 60_000);
});
