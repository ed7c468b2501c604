/**
 * Layout of the flat index's shared WebAssembly memory, shared by the main thread (which writes
 * rows) and the scan workers (which read them through the WASM kernel). One memory holds:
 *
 *   [ scratch slots: per in-flight search, the query and per-task score/index blocks ]
 *   [ rows: row 0, row 1, … each `stride` bytes: vector (padded to 16 floats) + 4 int32 of meta ]
 *
 * The memory is a `WebAssembly.Memory({shared: true})`, so its buffer is a SharedArrayBuffer that
 * every worker sees without copies, and growing it (`memory.grow`) keeps addresses stable.
 */
import type { SourceType } from '../../content/types.js';
import type { VectorMeta } from '../types.js';

export const WASM_PAGE_BYTES = 65_536;
/** wasm32 addresses at most 4 GiB. */
export const MAX_PAGES = 65_536;
/** Rows scored per kernel call; the worker turns each block of scores into top-k candidates. */
export const BLOCK_ROWS = 256;
/** int32 words of metadata after each vector. */
export const META_WORDS = 4;
const ALIGN = 64;

/** Metadata word offsets within a row's meta. */
export const META_FLAGS = 0;
export const META_SCOPE = 1;
export const META_ROW_ID = 2;
/** The row's interned group (VectorMeta.group), −1 for none. */
export const META_GROUP = 3;

export const KIND_CODES: Record<VectorMeta['kind'], number> = { news: 0, post: 1, video: 2, thread: 3 };
export const SOURCE_CODES: Record<SourceType, number> = { document: 0, conversation: 1 };
const KIND_MASK = 0xf;
const SOURCE_SHIFT = 4;
const PRIVILEGED_BIT = 1 << 8;
const TITLE_BIT = 1 << 9;

export function packFlags(meta: VectorMeta): number {
  return KIND_CODES[meta.kind] | (SOURCE_CODES[meta.sourceType] << SOURCE_SHIFT) | (meta.privileged ? PRIVILEGED_BIT : 0) | (meta.title ? TITLE_BIT : 0);
}

const KIND_NAMES = Object.keys(KIND_CODES) as VectorMeta['kind'][];
const SOURCE_NAMES = Object.keys(SOURCE_CODES) as SourceType[];

/** The meta (without scope and group) packed in `flags`. */
export function unpackFlags(flags: number): Omit<VectorMeta, 'scope' | 'group'> {
  return { kind: KIND_NAMES[flags & KIND_MASK], sourceType: SOURCE_NAMES[flagSource(flags)], privileged: flagPrivileged(flags), title: flagTitle(flags) };
}

export const flagKind = (flags: number): number => flags & KIND_MASK;
export const flagSource = (flags: number): number => (flags >> SOURCE_SHIFT) & 0x3;
export const flagPrivileged = (flags: number): boolean => (flags & PRIVILEGED_BIT) !== 0;
export const flagTitle = (flags: number): boolean => (flags & TITLE_BIT) !== 0;

/** Sizes derived from the dimension and the number of tasks one search may split into. */
export interface Layout {
  dimensions: number;
  /** Vector length padded to a multiple of 16 floats (the kernel's step). */
  padded: number;
  /** padded / 16, the kernel's loop count. */
  d16: number;
  /** Bytes per row: padded vector + meta. */
  stride: number;
  /** Tasks one search may split into (the pool's thread count). */
  tasksPerSearch: number;
  /** Concurrent searches the scratch area holds. */
  slots: number;
  slotBytes: number;
  /** Offset of row 0. */
  rowsBase: number;
}

const alignUp = (n: number, a: number) => Math.ceil(n / a) * a;

export function makeLayout(dimensions: number, tasksPerSearch: number, slots: number): Layout {
  const padded = alignUp(dimensions, 16);
  const taskBytes = BLOCK_ROWS * 4 * 2; // scores + gathered row indices
  const slotBytes = alignUp(padded * 4 + tasksPerSearch * taskBytes, ALIGN);
  return {
    dimensions,
    padded,
    d16: padded / 16,
    stride: padded * 4 + META_WORDS * 4,
    tasksPerSearch,
    slots,
    slotBytes,
    rowsBase: alignUp(slots * slotBytes, ALIGN),
  };
}

/** Byte offset of a slot's query vector. */
export const queryOffset = (l: Layout, slot: number): number => slot * l.slotBytes;
/** Byte offset of a task's score block within a slot. */
export const scoresOffset = (l: Layout, slot: number, task: number): number => queryOffset(l, slot) + l.padded * 4 + task * BLOCK_ROWS * 8;
/** Byte offset of a task's gathered-index block within a slot. */
export const indicesOffset = (l: Layout, slot: number, task: number): number => scoresOffset(l, slot, task) + BLOCK_ROWS * 4;
/** Byte offset of a row. */
export const rowOffset = (l: Layout, row: number): number => l.rowsBase + row * l.stride;
/**
 * Index of a row's first 32-bit word. A division, not `>> 2`: rows reach past 2 GiB of the 4 GiB
 * memory, where a signed shift turns the offset negative and typed arrays ignore the write.
 */
export const rowWord = (l: Layout, row: number): number => rowOffset(l, row) / 4;
/** Rows that fit in `pages` of memory. */
export const rowsInPages = (l: Layout, pages: number): number => Math.max(0, Math.floor((pages * WASM_PAGE_BYTES - l.rowsBase) / l.stride));
/** Pages needed to hold `rows`. */
export const pagesForRows = (l: Layout, rows: number): number => Math.ceil((l.rowsBase + rows * l.stride) / WASM_PAGE_BYTES);

/** The filter as the workers apply it: plain numbers, no strings. */
export interface EncodedFilter {
  /** Bit i set: kind code i passes; 0 means any kind. */
  kindMask: number;
  /** Source code, or -1 for any. */
  source: number;
  includePrivileged: boolean;
  /** Interned scope ids that pass, or null for any scope. */
  scopes: number[] | null;
}

/** Bytes between two pages ScanPool.touch maps (the smallest page size). */
export const TOUCH_STRIDE = 4096;

/** A range of bytes of an index memory to map before rows are written there (ScanPool.touch). */
export interface TouchTask {
  memory: WebAssembly.Memory;
  from: number;
  to: number;
}

/** What a scan worker is asked to do. */
export interface ScanTask {
  /** Identifies the index, so a worker instantiates the kernel once per memory. */
  storeId: string;
  /** The kernel that scores (the pool's, see native-kernel.ts). */
  kernel: 'native' | 'wasm';
  memory: WebAssembly.Memory;
  layout: Layout;
  slot: number;
  task: number;
  k: number;
  filter: EncodedFilter;
  /** Scan rows [start, end) … */
  start: number;
  end: number;
  /** … or only these row slots (selective filters). */
  rows?: Int32Array;
}

/** A row passes the filter: the one predicate both the workers and the main thread apply. */
export function makePass(f: EncodedFilter): (flags: number, scope: number) => boolean {
  const scopes = f.scopes ? new Set(f.scopes) : null;
  return (flags, scope) =>
    (f.kindMask === 0 || (f.kindMask & (1 << flagKind(flags))) !== 0) &&
    (f.source < 0 || flagSource(flags) === f.source) &&
    (f.includePrivileged || !flagPrivileged(flags)) &&
    (scopes === null || scopes.has(scope));
}

export interface ScanResult {
  rowIds: Int32Array;
  scores: Float32Array;
}
