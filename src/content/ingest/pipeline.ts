/**
 * The item pipeline: the one way an item enters Salon, used by every source and by demo seeding.
 * validate every item → chunk → store.putItems (one transaction an item) → sink.chunksChanged
 * (the vector index follows, once for the batch).
 *
 * A batch (`POST /api/v1/content`: up to 100 items, 16 MiB) was written in one transaction, which
 * held the event loop for as long as all of its items took to chunk and store. Each item is now
 * chunked and written on its own, whole, in a turn of the event loop of its own (sliceTurn).
 */
import { mapInTurns, sliceTurn } from '../../slice-turns.js';
import type { PutItemResult, Store, UpsertStatus } from '../../store/types.js';
import { chunkItem, validateChunkOptions, type ChunkOptions } from './chunker.js';
import { validateItem } from '../items.js';
import type { ChunkRow, ChunkSink } from '../types.js';
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
   * Puts several items at once: all are validated first, so an invalid item writes none of them;
   * then each is written whole, in order, in a transaction of its own. A store failure stops the
   * batch there: the items before it stay written, and indexed (putting the batch again finds them
   * unchanged and writes the rest).
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
    const items = await mapInTurns(inputs, (input) => validateItem(input, { bodyMaxChars: options.bodyMaxChars }));
    const results: PutItemResult[] = [];
    let failure: { err: unknown } | null = null;
    try {
      for (const item of items) {
        if (results.length) await sliceTurn();
        results.push(...(await store.putItems([{ item, chunks: chunkItem(item, chunk) }])));
      }
    } catch (err) {
      failure = { err };
    }
    const change = netChange(results);
    const sink = options.sink?.();
    try {
      if (sink && (change.added.length || change.removed.length)) await sink.chunksChanged(change);
    } catch (err) {
      // The store's failure is the batch's; the index catches up from the store at its next start.
      if (!failure) throw err;
    }
    if (failure) throw failure.err;
    return results.map((r) => ({ id: r.id, status: r.status, chunks: { added: r.added.length, removed: r.removed.length } }));
  };

  return {
    async put(input) {
      return (await putMany([input]))[0];
    },
    putMany,
  };
}

/**
 * What `results` changed in the chunks, for the index: a row an item given twice added and then
 * removed is in neither list (row ids are never reused: AUTOINCREMENT, an identity column).
 */
function netChange(results: PutItemResult[]): { added: ChunkRow[]; removed: number[] } {
  const removed = new Set(results.flatMap((r) => r.removed));
  const added = results.flatMap((r) => r.added);
  const addedIds = new Set(added.map((c) => c.rowId));
  return { added: added.filter((c) => !removed.has(c.rowId)), removed: [...removed].filter((id) => !addedIds.has(id)) };
}
