/** Reading the operator's own files (src/local-files.ts): regular files only, within a size, checked before reading. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLocalFile } from '../src/local-files.js';
import { tempDir } from './helpers.js';

describe('readLocalFile', () => {
  it('reads a regular file within the limit, and names why it reads no other', async () => {
    const { dir, cleanup } = tempDir();
    try {
      writeFileSync(join(dir, 'small.json'), '[1]');
      expect((await readLocalFile(join(dir, 'small.json'), 3)).toString()).toBe('[1]');
      await expect(readLocalFile(join(dir, 'small.json'), 2)).rejects.toThrow('it is larger than 2 bytes');
      await expect(readLocalFile(join(dir, 'small.json'), 2, 'split it')).rejects.toThrow(/^split it$/);
      await expect(readLocalFile(join(dir, 'missing.json'))).rejects.toThrow('no such file');
      mkdirSync(join(dir, 'folder'));
      await expect(readLocalFile(join(dir, 'folder'))).rejects.toThrow('it is a directory');
      await expect(readLocalFile('/dev/zero')).rejects.toThrow('it is not a regular file');
      // A FIFO: opening it to read would wait for a writer that never comes.
      execFileSync('mkfifo', [join(dir, 'pipe.xml')]);
      await expect(readLocalFile(join(dir, 'pipe.xml'))).rejects.toThrow('it is not a regular file');
    } finally {
      cleanup();
    }
  });
});
