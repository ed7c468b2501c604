/**
 * Reading the operator's own files (`salon ingest --file`, `salon import FILE`, `--parts @FILE`,
 * the demo's posts): regular files only, and at most a given size, checked before reading. Read
 * whole and unchecked, a file of gigabytes ran a command out of memory, and a device or a pipe
 * (`/dev/zero`, a FIFO) never ended.
 */
import { readFile, stat } from 'node:fs/promises';

/** The most bytes a local file may hold where a caller names no other limit: what one import takes. */
export const LOCAL_FILE_MAX_BYTES = 32 * 1024 * 1024;

/** Why a local file was not read, in words a command can put after the file's name. */
export class LocalFileError extends Error {
  constructor(why: string) {
    super(why);
    this.name = 'LocalFileError';
  }
}

/** "32 MiB", "512 KiB", "100 bytes". */
function sizeWords(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * The bytes of the regular file at `path`; throws LocalFileError ("no such file", "it is a
 * directory", "it is not a regular file", "it is larger than 32 MiB" or `tooLarge`) without
 * reading one that is not a regular file or holds more than `maxBytes`.
 */
export async function readLocalFile(path: string, maxBytes = LOCAL_FILE_MAX_BYTES, tooLarge?: string): Promise<Buffer> {
  let info;
  try {
    // stat, not open: opening a FIFO waits for a writer.
    info = await stat(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LocalFileError(code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (err as Error).message);
  }
  if (info.isDirectory()) throw new LocalFileError('it is a directory');
  if (!info.isFile()) throw new LocalFileError('it is not a regular file');
  if (info.size > maxBytes) throw new LocalFileError(tooLarge ?? `it is larger than ${sizeWords(maxBytes)}`);
  try {
    const bytes = await readFile(path);
    // It grew between the look and the read.
    if (bytes.length > maxBytes) throw new LocalFileError(tooLarge ?? `it is larger than ${sizeWords(maxBytes)}`);
    return bytes;
  } catch (err) {
    if (err instanceof LocalFileError) throw err;
    throw new LocalFileError((err as Error).message);
  }
}
