/**
 * A SQLite file the store cannot open is refused with a message naming it: SQLite's own ("file is
 * not a database") reached the operator as `salon: file is not a database`, whichever file it was.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite.js';
import { tempDir } from '../helpers.js';

describe('SqliteStore: a file it cannot open', () => {
  it('names the file, and keeps SQLite’s reason and code', () => {
    const { dir, cleanup } = tempDir();
    try {
      const corrupt = join(dir, 'corrupt.db');
      writeFileSync(corrupt, 'not a database, only text that fills its first page '.repeat(100));
      let error: (Error & { code?: string }) | undefined;
      try {
        new SqliteStore({ filename: corrupt });
      } catch (err) {
        error = err as Error & { code?: string };
      }
      expect(error?.message).toBe(`SqliteStore: cannot open ${corrupt}: file is not a database`);
      expect(error?.code).toBe('SQLITE_NOTADB');

      const directory = join(dir, 'a-directory.db');
      mkdirSync(directory);
      expect(() => new SqliteStore({ filename: directory })).toThrow(`SqliteStore: cannot open ${directory}: unable to open database file`);
    } finally {
      cleanup();
    }
  });
});
