import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite-schema.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { tempDir } from '../helpers.js';
import { item, storeContract } from './contract.js';

storeContract(
  'sqlite (memory)',
  async () => new SqliteStore({ filename: ':memory:' }),
  async (s) => s.close(),
);

describe('SqliteStore on disk', () => {
  it('uses WAL and NORMAL sync and survives a reopen', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'nested', 'salon.db');
      const a = new SqliteStore({ filename: file });
      expect(a.db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(a.db.pragma('synchronous', { simple: true })).toBe(1);
      expect(a.db.pragma('busy_timeout', { simple: true })).toBeGreaterThan(0);
      await a.upsertItem(item('news_1'));
      await a.close();
      const b = new SqliteStore({ filename: file });
      expect(b.db.pragma('user_version', { simple: true })).toBeGreaterThan(0);
      expect((await b.getItem('news_1'))?.title).toBe('Title of news_1');
      await b.close();
    } finally {
      cleanup();
    }
  });

  it('moves the messages of a first-version database into a rowid table, keeping every message and its seq', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'v1.db');
      const old = new Database(file);
      old.pragma('foreign_keys = ON');
      old.exec(SQLITE_MIGRATIONS[0]);
      old.pragma('user_version = 1');
      old
        .prepare(
          `INSERT INTO messages (room_id, seq, id, thread_id, author_id, author_name, author_kind, text, ts, client_id, reply_to, sources)
         VALUES ('news_1', ?, ?, 'thr_1', 'u1', 'Ann', 'user', ?, '2026-11-01T00:00:00.000Z', ?, NULL, ?)`,
        )
        .run(1, 'msg_a', 'first', 'c1', null);
      old
        .prepare(
          'INSERT INTO messages (room_id, seq, id, thread_id, author_id, author_name, author_kind, text, ts, client_id, reply_to, sources) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)',
        )
        .run(
          'news_1',
          2,
          'msg_b',
          'thr_1',
          'assistant',
          'Assistant',
          'assistant',
          'an answer',
          '2026-11-01T00:00:01.000Z',
          'ans_1',
          'msg_a',
          JSON.stringify([{ n: 1, title: 'T' }]),
        );
      old.exec(`INSERT INTO room_seq (room_id, seq) VALUES ('news_1', 2)`);
      old.close();

      const store = new SqliteStore({ filename: file });
      try {
        expect(store.db.pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length);
        const ddl = store.db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'messages'`).pluck().get() as string;
        expect(ddl).not.toMatch(/WITHOUT ROWID/i);
        const indexes = store.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'messages' ORDER BY name`).pluck().all();
        expect(indexes).toEqual(expect.arrayContaining(['messages_client', 'messages_thread']));
        const kept = await store.messagesAfter('news_1', 0, 10);
        expect(kept.map((m) => [m.seq, m.id, m.text, m.clientId, m.replyTo])).toEqual([
          [1, 'msg_a', 'first', 'c1', undefined],
          [2, 'msg_b', 'an answer', 'ans_1', 'msg_a'],
        ]);
        expect(kept[1].sources).toEqual([{ n: 1, title: 'T' }]);
        const { message, duplicate } = await store.appendMessage({
          roomId: 'news_1',
          threadId: 'thr_1',
          author: { id: 'u1', name: 'Ann', kind: 'user' },
          text: 'third',
          clientId: 'c3',
        });
        expect([message.seq, duplicate]).toEqual([3, false]);
        expect(
          (await store.appendMessage({ roomId: 'news_1', threadId: 'thr_1', author: { id: 'u1', name: 'Ann', kind: 'user' }, text: 'first', clientId: 'c1' }))
            .duplicate,
        ).toBe(true);
      } finally {
        await store.close();
      }
    } finally {
      cleanup();
    }
  });

  it('requires a filename', () => {
    expect(() => new SqliteStore({ filename: '' })).toThrow(/filename/);
  });
});
