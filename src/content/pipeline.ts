/**
 * The item pipeline: the one way an item enters Salon, used by every source and by demo seeding.
 * validate → store.upsertItem → when created or updated: chunk → store.replaceChunks →
 * sink.chunksChanged (the vector index follows).
 */
import type { Store, UpsertStatus } from '../store/types.js';
import { chunkItem, validateChunkOptions, type ChunkOptions } from './chunker.js';
import { validateItem } from './items.js';
import type { ChunkSink } from './types.js';

export interface ItemPipelineOptions {
  store: Store;
  /** BODY_MAX_CHARS. */
  bodyMaxChars: number;
  /** CHUNK_SIZE and CHUNK_OVERLAP. */
  chunk: ChunkOptions;
  /**
   * Returns the sink told about chunk changes, read on every item because the search area may
   * install it after the pipeline is built; undefined skips it (the index rebuilds from the store).
   */
  sink?: () => ChunkSink | undefined;
}

export interface PutResult {
  id: string;
  status: UpsertStatus;
  /** Chunks added and removed (both 0 when unchanged). */
  chunks: { added: number; removed: number };
}

/** Validates, stores, chunks and indexes items. */
export interface ItemPipeline {
  /** Puts one item; throws ERR_INVALID_CONTENT (nothing written) when it is not valid. */
  put(input: unknown): Promise<PutResult>;
}

/** Builds the pipeline, checking its options. */
export function createItemPipeline(options: ItemPipelineOptions): ItemPipeline {
  if (!options.store) throw new TypeError('createItemPipeline: options.store is required');
  if (!Number.isInteger(options.bodyMaxChars) || options.bodyMaxChars < 1) {
    throw new RangeError(`createItemPipeline: options.bodyMaxChars must be a whole number ≥ 1, got ${options.bodyMaxChars}`);
  }
  validateChunkOptions(options.chunk);
  const { store, chunk } = options;

  return {
    async put(input) {
      const item = validateItem(input, { bodyMaxChars: options.bodyMaxChars });
      const { status } = await store.upsertItem(item);
      // An unchanged item still gets chunks if an earlier run stopped between upsert and chunking.
      if (status === 'unchanged' && (await store.chunksOfItem(item.id)).length > 0) {
        return { id: item.id, status, chunks: { added: 0, removed: 0 } };
      }
      const change = await store.replaceChunks(item.id, chunkItem(item, chunk));
      const sink = options.sink?.();
      if (sink && (change.added.length || change.removed.length)) await sink.chunksChanged(change);
      return { id: item.id, status, chunks: { added: change.added.length, removed: change.removed.length } };
    },
  };
}
