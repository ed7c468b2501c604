// The WebAssembly SIMD kernel against the scalar oracle. Needs the build (dist/workers/search-kernel.wasm).
import { describe, expect, it } from 'vitest';
import { dotScalar, instantiateKernel } from '../../src/search/flat/kernel.js';
import { BLOCK_ROWS, makeLayout, pagesForRows, queryOffset, rowOffset, scoresOffset, indicesOffset } from '../../src/search/flat/layout.js';
import { gaussian, rng } from './helpers.js';

function setup(dim: number, rows: number, seed: number) {
  const layout = makeLayout(dim, 2, 2);
  const memory = new WebAssembly.Memory({ initial: pagesForRows(layout, rows), maximum: 65536, shared: true });
  const f32 = new Float32Array(memory.buffer as unknown as SharedArrayBuffer);
  const rand = rng(seed);
  const vectors = Array.from({ length: rows }, () => Float32Array.from({ length: dim }, () => gaussian(rand)));
  // Garbage in the padding and meta must not change any score: only the query's zero padding may cancel it.
  f32.fill(7.5);
  vectors.forEach((v, r) => f32.set(v, rowOffset(layout, r) >> 2));
  const query = Float32Array.from({ length: dim }, () => gaussian(rand));
  const q = queryOffset(layout, 1);
  f32.set(query, q >> 2);
  f32.fill(0, (q >> 2) + dim, (q >> 2) + layout.padded);
  return { layout, memory, f32, vectors, query, q };
}

const close = (got: number, want: number) => expect(Math.abs(got - want)).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(want)));

describe('search kernel (WASM SIMD)', () => {
  for (const dim of [1, 5, 16, 17, 100, 768]) {
    it(`scan matches the scalar dot product at dimension ${dim}, including the tail of a block`, () => {
      const rows = 4 * 3 + 3; // quads plus a remainder
      const { layout, memory, f32, vectors, query, q } = setup(dim, rows, dim);
      const kernel = instantiateKernel(memory);
      const out = scoresOffset(layout, 1, 1);
      kernel.scan(q, rowOffset(layout, 0), rows, layout.stride, layout.d16, out);
      vectors.forEach((v, r) => close(f32[(out >> 2) + r], dotScalar(query, v)));
      // The word after the last score is untouched.
      expect(f32[(out >> 2) + rows]).toBe(7.5);
    });
  }

  it('gather scores only the listed rows, in list order', () => {
    const { layout, memory, f32, vectors, query, q } = setup(64, 40, 9);
    const kernel = instantiateKernel(memory);
    const list = [39, 0, 17, 17, 3];
    const idx = indicesOffset(layout, 1, 0);
    new Int32Array(memory.buffer as unknown as SharedArrayBuffer).set(list, idx >> 2);
    const out = scoresOffset(layout, 1, 0);
    kernel.gather(q, layout.rowsBase, idx, list.length, layout.stride, layout.d16, out);
    list.forEach((r, i) => close(f32[(out >> 2) + i], dotScalar(query, vectors[r])));
  });

  it('handles a whole block of rows in one call', () => {
    const { layout, memory, f32, vectors, query, q } = setup(32, BLOCK_ROWS, 3);
    const kernel = instantiateKernel(memory);
    const out = scoresOffset(layout, 1, 0);
    kernel.scan(q, rowOffset(layout, 0), BLOCK_ROWS, layout.stride, layout.d16, out);
    for (const r of [0, 1, 2, 3, BLOCK_ROWS - 1]) close(f32[(out >> 2) + r], dotScalar(query, vectors[r]));
  });
});
