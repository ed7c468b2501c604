/**
 * The WebAssembly SIMD dot-product kernel (workers/search-kernel.wat), compiled once per thread
 * and instantiated over an index's shared memory, plus the scalar JS oracle tests compare it with.
 */
import { readFileSync } from 'node:fs';
import { builtWorkerFile } from '../../worker-files.js';

/** The kernel's exports; every pointer is a byte offset into the shared memory. */
export interface Kernel {
  /** out[i] = dot(q, rows + i*stride) for i < n. */
  scan(q: number, rows: number, n: number, stride: number, d16: number, out: number): void;
  /** out[i] = dot(q, base + idx[i]*stride) for i < n. */
  gather(q: number, base: number, idx: number, n: number, stride: number, d16: number, out: number): void;
}

let compiled: WebAssembly.Module | undefined;

/** The compiled kernel module (read from dist/workers/search-kernel.wasm on first use). */
export function kernelModule(): WebAssembly.Module {
  compiled ??= new WebAssembly.Module(readFileSync(builtWorkerFile('search-kernel.wasm')));
  return compiled;
}

/** Instantiates the kernel over `memory` (a shared memory created by the flat index). */
export function instantiateKernel(memory: WebAssembly.Memory): Kernel {
  const instance = new WebAssembly.Instance(kernelModule(), { env: { memory } });
  return instance.exports as unknown as Kernel;
}

/** Plain JS dot product: the oracle for kernel tests, never used on the search path. */
export function dotScalar(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}
