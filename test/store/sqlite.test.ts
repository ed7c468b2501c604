import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
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

  it('requires a filename', () => {
    expect(() => new SqliteStore({ filename: '' })).toThrow(/filename/);
  });
});
