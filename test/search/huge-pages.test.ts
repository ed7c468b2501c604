// The flat index's memory and a native graph's level-0 block are advised for transparent huge
// pages (native/hnsw/src/pages.cc): Linux marks an advised mapping `hg` in /proc/self/smaps, where
// THP is in the kernel at all (whether it is `always`, `madvise` or `never` at the moment).
// Needs the build (the flat index's scan workers run from dist/).
import { existsSync, readFileSync } from 'node:fs';
import { Graph, hugePages } from 'salon-hnsw';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlatIndex } from '../../src/search/flat/flat-index.js';
import { ScanPool } from '../../src/search/flat/scan-pool.js';
import { clustered, entries } from './helpers.js';

const THP = process.platform === 'linux' && existsSync('/sys/kernel/mm/transparent_hugepage/enabled');

/** Sizes in bytes of this process's mappings advised for huge pages. */
function advisedMappings(): number[] {
  const sizes: number[] = [];
  let size = 0;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const kb = /^Size:\s+(\d+) kB/.exec(line);
    if (kb) size = Number(kb[1]) * 1024;
    else if (line.startsWith('VmFlags:') && line.split(/\s+/).includes('hg')) sizes.push(size);
  }
  return sizes;
}

/** The flat index's WebAssembly memory (private: what the advice is about). */
function memoryOf(index: FlatIndex): WebAssembly.Memory {
  return (index as unknown as { memory: WebAssembly.Memory }).memory;
}

describe.skipIf(!THP)('transparent huge pages', () => {
  let pool: ScanPool;

  beforeAll(() => {
    pool = new ScanPool({ threads: 1 });
  });

  afterAll(async () => {
    await pool.close();
  });

  it('advises a typed array’s whole pages, and refuses what is not a typed array', () => {
    const memory = new WebAssembly.Memory({ initial: 37, maximum: 1000, shared: true });
    expect(hugePages(new Int32Array(memory.buffer))).toBe(true);
    expect(advisedMappings()).toContain(memory.buffer.byteLength);
    expect(hugePages(new Uint8Array(16))).toBe(false); // less than a whole page
    expect(() => hugePages({} as ArrayBufferView)).toThrow(/hugePages/);
  });

  it('advises the flat index’s memory when it is made and again when it grows', async () => {
    const dim = 40;
    const index = new FlatIndex({ dimensions: dim, pool, initialCapacity: 3001 });
    try {
      const made = memoryOf(index).buffer.byteLength;
      expect(advisedMappings()).toContain(made);
      await index.upsert(entries(clustered(9000, dim, 8, 3)));
      const grown = memoryOf(index).buffer.byteLength;
      expect(grown).toBeGreaterThan(made);
      // The grown pages join the advised mapping: one mapping as long as the whole memory.
      expect(advisedMappings()).toContain(grown);
    } finally {
      await index.close();
    }
  });

  it('advises a native graph’s level-0 block when it is made and when it grows', () => {
    const dim = 48;
    const elementBytes = dim * 2; // f16 vectors alone: an element also holds its links and label
    const graph = new Graph(dim, 150_001, 16, 100, 1);
    expect(Math.max(0, ...advisedMappings())).toBeGreaterThanOrEqual(150_001 * elementBytes);
    graph.resize(450_001);
    expect(Math.max(0, ...advisedMappings())).toBeGreaterThanOrEqual(450_001 * elementBytes);
  });
});
