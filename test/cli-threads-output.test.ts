/** What `salon threads` prints of members' words: the same JSON, never a control or bidi override for the terminal (needs the build: the command runs as a process). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config.js';
import { salon, tempDir } from './helpers.js';
import { item } from './store/contract.js';

/** A C1 CSI clearing the screen, a right-to-left override and an OSC retitling the terminal (ESC and BEL are C0). */
const HOSTILE = 'Trains \u009b2J leave at \u202e01:22\u202c \u001b]0;owned\u0007 today';

describe('salon threads output', () => {
  const data = tempDir('salon-cli-threads-output-');
  const env = { DATA_DIR: data.dir, LOCAL_EMBED_DIM: '256', SEARCH_WORKERS: '1' };
  let threadId = '';

  beforeAll(async () => {
    const app = await buildApp(testConfig({ ...env, ADMIN_TOKEN: 'test-admin-token' }));
    try {
      await app.ready();
      const { store } = app.salon;
      await store.upsertItem(item('news_1', { title: 'Rust 2.0 released' }));
      threadId = (await store.ensureMainThread('news_1')).id;
      await store.appendMessage({ roomId: 'news_1', threadId, author: { id: 'u_ann', name: 'Ann', kind: 'user' }, text: HOSTILE });
    } finally {
      await app.close();
    }
  });
  afterAll(() => data.cleanup());

  it('lists a split’s messages as JSON whose C1 controls and bidi overrides are escaped, meaning the same', async () => {
    const run = await salon(['threads', 'split', threadId], env);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(run.stdout).toContain('\\u009b2J');
    expect(run.stdout).toContain('\\u202e01:22\\u202c');
    expect(JSON.parse(run.stdout).messages.map((m: { text: string }) => m.text)).toEqual([HOSTILE]);
  });
});
