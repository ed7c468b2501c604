/**
 * The search area assembled: a vector index (chosen in src/parts.ts), the Indexer that keeps it in
 * step with the store's chunks (the ChunkSink ingestion calls) and the SearchService over both.
 * The server wraps it in the search plugin; `salon search` and `salon reindex` use it alone.
 */
import type { Embedder } from '../ai/types.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/types.js';
import { Indexer, type IndexTarget } from './indexer.js';
import { SearchIndex } from './search-index.js';
import { DefaultSearchService } from './search-service.js';

export interface SearchStackOptions {
  store: Store;
  embedder: Embedder;
  index: IndexTarget;
  log?: Logger;
  /** Told the row ids of each change this node made to the index (src/sync). */
  onChanged?: (rowIds: number[]) => void;
  /** Told of every embedder call the indexer saw fail (metrics). */
  onEmbedFailure?: () => void;
  /** Aborted when the process shuts down: the load and any embedding stop (IndexerOptions.signal). */
  signal?: AbortSignal;
}

export interface SearchStack {
  index: IndexTarget;
  indexer: Indexer;
  search: DefaultSearchService;
  /** One line for /readyz: how many vectors, which structure, what waits for the embedder. */
  describe(): string;
  close(): Promise<void>;
}

export function createSearchStack(options: SearchStackOptions): SearchStack {
  const { store, embedder, index, log, onChanged, onEmbedFailure, signal } = options;
  const indexer = new Indexer({ store, index, embedder, log, onChanged, onEmbedFailure, signal });
  const search = new DefaultSearchService({ store, index, embedder, indexer, log });
  return {
    index,
    indexer,
    search,
    describe: () => {
      const mode = index instanceof SearchIndex ? index.mode : 'custom';
      const pending = indexer.pending ? `, ${indexer.pending}${indexer.behind ? ' or more' : ''} chunks waiting for the embedder` : '';
      return indexer.state === 'mismatch' ? 'text matching only until `salon reindex`' : `${index.size} vectors, ${mode}${pending}`;
    },
    close: async () => {
      await indexer.close();
      await index.close();
    },
  };
}
