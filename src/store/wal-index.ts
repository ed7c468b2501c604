/**
 * The WAL's length read from the wal-index header in `<db>-shm` (format: sqlite.org/walformat.html),
 * without a connection or a lock: two copies of 48 bytes (equal unless a commit is writing them),
 * in the machine's byte order; iVersion at 0 is 3007000, isInit at 12, mxFrame (frames in the WAL)
 * at 16.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';

/** Bytes of the wal-index header read: both copies. */
export const WAL_INDEX_HEADER_BYTES = 96;

/**
 * Frames in the WAL from a wal-index header's 96 bytes; -1 while a commit is writing the header;
 * null when the header is not an initialised wal-index. Self-contained (no imports, no closure):
 * the checkpoint worker's source embeds it as text.
 */
export function walFramesOf(header: Buffer, littleEndian: boolean): number | null {
  const u32 = (offset: number) => (littleEndian ? header.readUInt32LE(offset) : header.readUInt32BE(offset));
  if (u32(0) !== 3007000 || header[12] !== 1) return null;
  return header.compare(header, 0, 48, 48, 96) === 0 ? u32(16) : -1;
}

/** Reads the WAL length of one database file again and again, keeping `-shm` open between reads. */
export class WalIndexReader {
  private fd: number | null = null;
  private readonly header = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
  private readonly littleEndian = endianness() === 'LE';

  constructor(private readonly filename: string) {}

  /** Frames in the WAL now; -1 while a commit writes the header; null when `-shm` cannot be read. */
  frames(): number | null {
    try {
      if (this.fd === null) this.fd = openSync(`${this.filename}-shm`, 'r');
      if (readSync(this.fd, this.header, 0, WAL_INDEX_HEADER_BYTES, 0) < WAL_INDEX_HEADER_BYTES) return null;
    } catch {
      return null;
    }
    return walFramesOf(this.header, this.littleEndian);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
