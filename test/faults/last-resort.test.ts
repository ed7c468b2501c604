/**
 * The process-level handlers: an exception or a rejection nobody caught is logged, sockets are
 * closed with 1001, and the process exits 1 for its supervisor to restart it. The failure is
 * planted through `--import`, since no client input can reach one any more.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CloseCode } from '../../src/protocol/close-codes.js';
import { tempDir } from '../helpers.js';
import { RawClient } from './clients.js';
import { startServer, type ServerProcess } from './server-process.js';

const PLANT = `
process.on('SIGUSR2', () => setImmediate(() => { throw new Error('planted failure'); }));
process.on('SIGWINCH', () => { Promise.reject(new Error('planted rejection')); });
`;
// Signals the server leaves alone: SIGHUP and SIGTERM shut it down cleanly, SIGUSR1 starts the inspector.

let server: ServerProcess | null = null;
const plantDir = tempDir('salon-plant-');
afterEach(async () => {
  await server?.stop();
  server = null;
});
afterAll(() => plantDir.cleanup());

async function serverWithPlant(): Promise<ServerProcess> {
  const plant = join(plantDir.dir, 'plant.mjs');
  writeFileSync(plant, PLANT);
  return startServer({ env: { NODE_OPTIONS: `--import ${plant}` } });
}

describe('last-resort handlers', () => {
  for (const [what, signal, logged] of [
    ['an uncaught exception', 'SIGUSR2', 'uncaughtException; shutting down'],
    ['an unhandled rejection', 'SIGWINCH', 'unhandledRejection; shutting down'],
  ] as const) {
    it(`logs ${what}, closes sockets with 1001 and exits 1`, async () => {
      server = await serverWithPlant();
      const page = (await (await fetch(`${server.base}/api/v1/content?limit=1`)).json()) as { items: { id: string }[] };
      const client = await RawClient.open(server.roomUrl(page.items[0].id));
      client.send({ type: 'hello', name: 'Witness' });
      expect(await client.waitFor(0, (f) => f.type === 'welcome', 10_000)).toMatchObject({ type: 'welcome' });
      server.child.kill(signal);
      await client.waitFor(0, () => false, 15_000);
      expect(client.closeCode).toBe(CloseCode.GOING_AWAY);
      const exit = await server.stop(15_000);
      expect(exit).toEqual({ code: 1, signal: null });
      expect(server.logs.some((line) => line.includes(logged) && line.includes('planted'))).toBe(true);
    }, 60_000);
  }
});
