/** `salon threads split THREAD --parts …` refusing parts of the wrong shape by its catalogue code (needs the build: the command runs as a process). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config.js';
import { salon, tempDir } from './helpers.js';
import { item } from './store/contract.js';

describe('salon threads split --parts', () => {
  const data = tempDir('salon-cli-parts-');
  const env = { DATA_DIR: data.dir, LOCAL_EMBED_DIM: '256', SEARCH_WORKERS: '1' };
  let threadId = '';
  let messageId = '';

  beforeAll(async () => {
    const app = await buildApp(testConfig({ ...env, ADMIN_TOKEN: 'test-admin-token' }));
    try {
      await app.ready();
      const { store } = app.salon;
      await store.upsertItem(item('news_1', { title: 'Rust 2.0 released' }));
      const main = await store.ensureMainThread('news_1');
      threadId = main.id;
      messageId = (await store.appendMessage({ roomId: 'news_1', threadId, author: { id: 'u_ann', name: 'Ann', kind: 'user' }, text: 'Trains' })).message.id;
    } finally {
      await app.close();
    }
  });
  afterAll(() => data.cleanup());

  it.each([
    ['a part that is null', () => '[null]'],
    ['message ids given as one string', () => JSON.stringify([{ title: 'Trains', messageIds: messageId }])],
    ['a title that is no string', () => JSON.stringify([{ title: 7, messageIds: [messageId] }])],
  ])('refuses %s with ERR_BAD_THREAD_OP, naming the shape, and changes nothing', async (_what, parts) => {
    const run = await salon(['threads', 'split', threadId, '--parts', parts()], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('salon threads: ERR_BAD_THREAD_OP');
    expect(run.stderr).toContain('--parts must be a JSON array');
    const listed = await salon(['threads', 'list', '--room', 'news_1', '--json'], env);
    expect(JSON.parse(listed.stdout)).toHaveLength(1);
  });
});
