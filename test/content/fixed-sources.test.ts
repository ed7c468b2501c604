/**
 * The configured sources file (DATA_DIR/sources), read like the operator's other files: only when
 * it is a regular file of a bounded size, so a device or a pipe named `sources` stops start-up
 * with an error naming it instead of holding it forever.
 */
import { symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SOURCES_FILE, SOURCES_FILE_MAX_BYTES, fixedSources } from '../../src/content/refresh/fixed-sources.js';
import { tempDir } from '../helpers.js';

describe('the sources file', () => {
  const made: (() => void)[] = [];
  afterEach(() => made.splice(0).forEach((cleanup) => cleanup()));

  function dataDir(): string {
    const { dir, cleanup } = tempDir();
    made.push(cleanup);
    return dir;
  }

  it('is read when it is a regular file, and is none when it is missing', async () => {
    const dir = dataDir();
    expect(await fixedSources({ DATA_DIR: dir, SOURCES: [] })).toEqual([]);
    writeFileSync(join(dir, SOURCES_FILE), '# polled every 20 minutes\nhn best 20\n');
    expect(await fixedSources({ DATA_DIR: dir, SOURCES: [] })).toMatchObject([{ kind: 'hn', list: 'best', everyMinutes: 20 }]);
  });

  it('stops start-up naming the file when it is too large or not a regular file, without reading it', async () => {
    const big = dataDir();
    writeFileSync(join(big, SOURCES_FILE), '');
    truncateSync(join(big, SOURCES_FILE), SOURCES_FILE_MAX_BYTES + 1);
    await expect(fixedSources({ DATA_DIR: big, SOURCES: [] })).rejects.toThrow(`${join(big, SOURCES_FILE)}: it is larger than 1 MiB`);
    // Read whole, it never ended.
    const zero = dataDir();
    symlinkSync('/dev/zero', join(zero, SOURCES_FILE));
    await expect(fixedSources({ DATA_DIR: zero, SOURCES: [] })).rejects.toThrow(`${join(zero, SOURCES_FILE)}: it is not a regular file`);
  });
});
