/**
 * The native scan kernel (salon-hnsw's scanTop, native/hnsw/src/scan.cc) as the scan workers and
 * the flat index use it. It reads the rows where they are, in the index's shared memory, and does
 * the whole task (scores, filter, top k) in one call. Chosen per pool (ScanPool `kernel`): `auto`
 * takes it where the CPU has AVX2 and FMA and keeps the WebAssembly kernel elsewhere, which is
 * faster than the native portable loop.
 */
import { createRequire } from 'node:module';
import type { dotRows as DotRowsFn, hugePages as HugePagesFn, ScanSpec, scanFloor as ScanFloorFn, scanTop as ScanTopFn } from 'salon-hnsw';
import type { EncodedFilter, Layout, ScanResult } from './layout.js';

/** Which kernel scans: `native` (salon-hnsw), `wasm` (workers/search-kernel.wat), or `auto`. */
export type ScanKernelChoice = 'auto' | 'native' | 'wasm';

interface NativeScan {
  scanTop: typeof ScanTopFn;
  scanFloor: typeof ScanFloorFn;
  scanKernel: 'avx2' | 'portable';
  dotRows: typeof DotRowsFn;
  /** Absent from a binding built before it (an `npm install` since builds it). */
  hugePages?: typeof HugePagesFn;
}

let loaded: NativeScan | null | undefined;

/** The binding, or null where it is not built (the WebAssembly kernel then scans). */
export function nativeScan(): NativeScan | null {
  if (loaded === undefined) {
    try {
      loaded = createRequire(import.meta.url)('salon-hnsw') as NativeScan;
    } catch {
      loaded = null;
    }
  }
  return loaded;
}

/** The binding, for callers that cannot scan without it. */
export function requireNativeScan(): NativeScan {
  const binding = nativeScan();
  if (!binding) throw new Error('the native scan kernel (salon-hnsw) is not built: run npm install');
  return binding;
}

/**
 * Asks for transparent huge pages under `view`'s memory (salon-hnsw's hugePages, native/hnsw/src/pages.cc);
 * false where the binding is not built or the OS cannot.
 */
export function adviseHugePages(view: ArrayBufferView): boolean {
  return nativeScan()?.hugePages?.(view) ?? false;
}

/** The kernel a pool created with `choice` runs; `native` without a binding is an error. */
export function resolveKernel(choice: ScanKernelChoice): 'native' | 'wasm' {
  const binding = nativeScan();
  if (choice === 'wasm') return 'wasm';
  if (choice === 'native') {
    if (!binding) throw new Error('SEARCH_KERNEL=native, but the native scan kernel (salon-hnsw) is not built: run npm install, or set SEARCH_KERNEL=wasm');
    return 'native';
  }
  return binding?.scanKernel === 'avx2' ? 'native' : 'wasm';
}

/** The part of a scan spec that says where the rows and the query are. */
export function layoutSpec(l: Layout, q: number): Pick<ScanSpec, 'q' | 'rowsBase' | 'stride' | 'd16'> {
  return { q, rowsBase: l.rowsBase, stride: l.stride, d16: l.d16 };
}

/** The filter fields of a scan spec. */
export function filterSpec(f: EncodedFilter): Pick<ScanSpec, 'kindMask' | 'source' | 'includePrivileged' | 'scopes'> {
  return { kindMask: f.kindMask, source: f.source, includePrivileged: f.includePrivileged, scopes: f.scopes ? Int32Array.from(f.scopes) : null };
}

/** One native scan: the top k of `spec`'s rows in `memory`, best first. */
export function scanTopNative(memory: Int32Array, spec: ScanSpec): ScanResult {
  const binding = requireNativeScan();
  const rowIds = new Int32Array(spec.k);
  const scores = new Float32Array(spec.k);
  const n = binding.scanTop(memory, spec, rowIds, scores);
  return { rowIds: rowIds.subarray(0, n), scores: scores.subarray(0, n) };
}
