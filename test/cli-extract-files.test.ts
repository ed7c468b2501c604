/** What `salon extract` reads of a file (src/cli/commands/extract.ts): a regular file, bounded before and after unpacking. */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { readHtmlFile } from '../src/cli/commands/extract.js';
import { tempDir } from './helpers.js';

describe('salon extract reading its files', () => {
  const tmp = tempDir('salon-extract-files-');
  afterAll(() => tmp.cleanup());

  it('reads a page, gzipped or not, and names a missing file by its ENOENT as before', async () => {
    const html = '<html><body><p>A page.</p></body></html>';
    writeFileSync(join(tmp.dir, 'page.html'), html);
    writeFileSync(join(tmp.dir, 'page.html.gz'), gzipSync(html));
    expect((await readHtmlFile(join(tmp.dir, 'page.html'))).toString()).toBe(html);
    expect((await readHtmlFile(join(tmp.dir, 'page.html.gz'))).toString()).toBe(html);
    await expect(readHtmlFile(join(tmp.dir, 'missing.html'))).rejects.toThrow('ENOENT');
  });

  it('refuses a gzip that unpacks past the limit instead of unpacking it whole', async () => {
    // A few tens of KB on disk, one byte more than 32 MiB unpacked.
    const bomb = join(tmp.dir, 'bomb.html.gz');
    writeFileSync(bomb, gzipSync(Buffer.alloc(32 * 1024 * 1024 + 1, 0x20)));
    // The outcome as a size or a message: a failing match on the whole buffer ran vitest out of memory.
    const outcome = await readHtmlFile(bomb).then(
      (bytes) => `${bytes.length} bytes unpacked`,
      (err: Error) => err.message,
    );
    expect(outcome).toBe('it unpacks to more than 32 MiB');
  });

  it('never reads a FIFO or a device, which would not end', async () => {
    const fifo = join(tmp.dir, 'pipe.html');
    execFileSync('mkfifo', [fifo]);
    await expect(readHtmlFile(fifo)).rejects.toThrow('it is not a regular file');
    await expect(readHtmlFile('/dev/zero')).rejects.toThrow('it is not a regular file');
  });
});
