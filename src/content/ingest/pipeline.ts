/**
 * The item pipeline: the one way an item enters Salon, used by every source and by demo seeding.
 * validate every item → chunk → store.putItems (one transaction for the batch) →
 * sink.chunksChanged (the vector index follows).
 */
import type { Store, UpsertStatus } from '../../store/types.js';
import { chunkItem, validateChunkOptions, type ChunkOptions } from './chunker.js';
import { validateItem } from '../items.js';
import type { ChunkSink } from '../types.js';
import { required, wholeNumber } from '../../options.js';

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
  /**
   * Puts several items at once: all are validated first and written in one transaction, so an
   * invalid item or a store failure writes none of them.
   */
  putMany(inputs: unknown[]): Promise<PutResult[]>;
}

/** Builds the pipeline, checking its options. */
export function createItemPipeline(options: ItemPipelineOptions): ItemPipeline {
  required('createItemPipeline', 'store', options.store);
  wholeNumber('createItemPipeline', 'bodyMaxChars', options.bodyMaxChars, 1);
  validateChunkOptions(options.chunk);
  const { store, chunk } = options;

  const putMany = async (inputs: unknown[]): Promise<PutResult[]> => {
    const items = inputs.map((input) => validateItem(input, { bodyMaxChars: options.bodyMaxChars }));
    const results = await store.putItems(items.map((item) => ({ item, chunks: chunkItem(item, chunk) })));
    const added = results.flatMap((r) => r.added);
    const removed = results.flatMap((r) => r.removed);
    const sink = options.sink?.();
    if (sink && (added.length || removed.length)) await sink.chunksChanged({ added, removed });
    return results.map((r) => ({ id: r.id, status: r.status, chunks: { added: r.added.length, removed: r.removed.length } }));
  };

  return {
    async put(input) {
      return (await putMany([input]))[0];
    },
    putMany,
  };
}
