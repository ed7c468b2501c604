/**
 * Scan worker of the flat vector index (run by the pool in src/search/scan-pool.ts).
 * Task export `scan`: scores a range (or a list) of rows of the shared memory against the query
 * and returns its own top k passing the filter: in one call to the native kernel
 * (src/search/flat/native-kernel.ts), or block by block with the WASM SIMD kernel.
 */
import { instantiateKernel, type Kernel } from '../src/search/flat/kernel.js';
import {
  BLOCK_ROWS,
  META_FLAGS,
  META_ROW_ID,
  META_SCOPE,
  indicesOffset,
  makePass,
  queryOffset,
  rowOffset,
  rowWord,
  scoresOffset,
  TOUCH_STRIDE,
  type ScanResult,
  type ScanTask,
  type TouchTask,
} from '../src/search/flat/layout.js';
import { TopK } from '../src/search/flat/top-k.js';
import { filterSpec, layoutSpec, scanTopNative } from '../src/search/flat/native-kernel.js';

/** Kernels instantiated per index memory; a few, so a replaced index's memory can be freed. */
const MAX_CACHED_KERNELS = 4;
const kernels = new Map<string, Kernel>();

function kernelFor(task: ScanTask): Kernel {
  let kernel = kernels.get(task.storeId);
  if (kernel) {
    kernels.delete(task.storeId);
  } else {
    kernel = instantiateKernel(task.memory);
    if (kernels.size >= MAX_CACHED_KERNELS) kernels.delete(kernels.keys().next().value as string);
  }
  kernels.set(task.storeId, kernel);
  return kernel;
}

/**
 * Task export `touch`: writes nothing, but makes the kernel map the memory pages of bytes
 * [from, to) (an atomic add of 0 per page), so that rows later written there by the main thread
 * fault no page (FlatIndex.reserve).
 */
export function touch(task: TouchTask): void {
  const i32 = new Int32Array(task.memory.buffer as unknown as SharedArrayBuffer);
  for (let b = task.from; b < task.to; b += TOUCH_STRIDE) Atomics.add(i32, b >>> 2, 0);
}

/** Scores rows and keeps this task's top k. */
export function scan(task: ScanTask): ScanResult {
  return task.kernel === 'native' ? scanNative(task) : scanWasm(task);
}

function scanNative(task: ScanTask): ScanResult {
  const { layout: l, slot } = task;
  // The buffer getter returns a view of the current (possibly grown) length.
  const memory = new Int32Array(task.memory.buffer as unknown as SharedArrayBuffer);
  const range = task.rows ? { rows: task.rows } : { start: task.start, end: task.end };
  return scanTopNative(memory, { ...layoutSpec(l, queryOffset(l, slot)), k: task.k, ...filterSpec(task.filter), ...range });
}

function scanWasm(task: ScanTask): ScanResult {
  const kernel = kernelFor(task);
  const { layout: l, slot } = task;
  // The buffer getter returns a view of the current (possibly grown) length.
  const buffer = task.memory.buffer as unknown as SharedArrayBuffer;
  const f32 = new Float32Array(buffer);
  const i32 = new Int32Array(buffer);
  const q = queryOffset(l, slot);
  const out = scoresOffset(l, slot, task.task);
  const outWord = out >>> 2;
  const metaWord = (row: number) => rowWord(l, row) + l.padded;
  const top = new TopK(task.k);
  const pass = makePass(task.filter);

  const collect = (n: number, rowAt: (i: number) => number) => {
    for (let i = 0; i < n; i++) {
      const score = f32[outWord + i];
      if (score < top.floor) continue;
      const m = metaWord(rowAt(i));
      if (!pass(i32[m + META_FLAGS], i32[m + META_SCOPE])) continue;
      top.push(i32[m + META_ROW_ID], score);
    }
  };

  if (task.rows) {
    const rows = task.rows;
    const idx = indicesOffset(l, slot, task.task);
    for (let b = 0; b < rows.length; b += BLOCK_ROWS) {
      const n = Math.min(BLOCK_ROWS, rows.length - b);
      i32.set(rows.subarray(b, b + n), idx >>> 2);
      kernel.gather(q, l.rowsBase, idx, n, l.stride, l.d16, out);
      collect(n, (i) => rows[b + i]);
    }
  } else {
    for (let start = task.start; start < task.end; start += BLOCK_ROWS) {
      const n = Math.min(BLOCK_ROWS, task.end - start);
      kernel.scan(q, rowOffset(l, start), n, l.stride, l.d16, out);
      collect(n, (i) => start + i);
    }
  }
  const { ids, scores } = top.sorted();
  return { rowIds: ids, scores };
}
