/**
 * Commands run beside a server (`salon ingest`, `import`, `threads`) log their index changes in the
 * store's change log, and a server, even a lone one, applies them when it reads the log.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ingestCommand } from '../../src/cli/commands/ingest.js';
import type { Logger } from '../../src/logger.js';
import type { Store } from '../../src/store/types.js';
import { OfflineChanges } from '../../src/sync/offline-changes.js';
import { MAX_CHANGE_IDS } from '../../src/sync/index-sync.js';
import { ADMIN, tempDir, tempStore, testApp } from '../helpers.js';
import { until } from '../rooms/helpers.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const sink = () => {
  const chunks: string[] = [];
  const stream = { write: (s: string) => chunks.push(s) && true } as unknown as NodeJS.WriteStream;
  return stream;
};

async function hitIds(app: FastifyInstance, q: string): Promise<string[]> {
  const res = await app.inject(`/api/v1/search?q=${encodeURIComponent(q)}&k=5`);
  return (res.json().hits as { id: string }[]).map((h) => h.id);
}

it('indexes what `salon ingest` stored beside a running lone server, without a restart', async () => {
  const node = await testApp({ SEED_DEMO: 'false' }, { indexResyncMs: 50 });
  cleanups.push(node.close);
  const { app, config } = node;
  await app.ready();
  // An item in the index first: with an empty index the search falls back to the store's text search.
  const put = await app.inject({
    method: 'POST',
    url: '/api/v1/content',
    headers: ADMIN,
    payload: { kind: 'post', id: 'post_seed', title: 'Wheat', body: 'Farmers planted wheat early this spring.' },
  });
  expect(put.statusCode, put.body).toBe(200);
  const before = app.salon.index.size;

  const files = tempDir();
  cleanups.push(files.cleanup);
  const file = join(files.dir, 'whales.md');
  writeFileSync(file, '---\ntitle: Whale songs\n---\nHumpback whales sing long songs that travel across whole ocean basins at night.');
  expect(await ingestCommand(['--file', file], config, sink(), sink())).toBe(0);

  await until(() => app.salon.index.size > before);
  expect(await hitIds(app, 'humpback whales singing across the ocean')).toContain('post_whales');
});

it('logs each change once, waits for the writes at flush, and only warns when the log cannot be written', async () => {
  const temp = tempStore();
  cleanups.push(temp.close);
  const changes = new OfflineChanges(temp.store);
  changes.record('memory', [3, 4]);
  changes.record('documents', []);
  await changes.chunkSink.chunksChanged({ added: [{ rowId: 7 } as never], removed: [9] });
  await changes.flush();
  expect((await temp.store.indexChangesAfter(0, 10)).map((c) => [c.target, c.ids])).toEqual([
    ['memory', [3, 4]],
    ['documents', [7, 9]],
  ]);

  const warnings: string[] = [];
  const log = { warn: (_: unknown, msg: string) => warnings.push(msg) } as unknown as Logger;
  const broken = { logIndexChange: async () => Promise.reject(new Error('disk full')) } as unknown as Store;
  const failing = new OfflineChanges(broken, log);
  failing.record('documents', [1]);
  await failing.flush();
  expect(warnings).toEqual(['index change not logged for the running servers']);
});

it('logs a change of more ids than an entry carries as several entries, in order, as a node logs its own', async () => {
  const temp = tempStore();
  cleanups.push(temp.close);
  const changes = new OfflineChanges(temp.store);
  // A `salon threads fuse` of two large threads names every chunk it stored in one change.
  const ids = Array.from({ length: MAX_CHANGE_IDS * 2 + 5 }, (_, i) => i + 1);
  changes.record('memory', ids);
  await changes.flush();
  const logged = await temp.store.indexChangesAfter(0, 10);
  expect(logged.map((c) => [c.target, c.ids.length])).toEqual([
    ['memory', MAX_CHANGE_IDS],
    ['memory', MAX_CHANGE_IDS],
    ['memory', 5],
  ]);
  expect(logged.flatMap((c) => c.ids)).toEqual(ids);
});
