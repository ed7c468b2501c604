/**
 * The search stack for CLI commands (`salon search`, `salon reindex`): the store and embedder
 * from DATA_DIR and the config, without a server. Messages go to stderr so stdout stays data.
 */
import type { Config } from '../config.js';
import { stderrLogger } from '../logger.js';
import { createAi, createVectorIndex, openStore } from '../parts.js';
import type { Store } from '../store/types.js';
import { createSearchStack, type SearchStack } from './search-stack.js';
import type { HnswMode } from './tiered-index.js';

export interface CliSearch {
  store: Store;
  stack: SearchStack;
  close(): Promise<void>;
}

/** Opens DATA_DIR's store and builds the search stack over it; throws a message naming the fix. */
export function openCliSearch(config: Config, hnswMode: HnswMode, verbose = false): CliSearch {
  const store = openStore(config, { mustExist: true });
  const { embedder } = createAi(config, store);
  const log = stderrLogger(verbose);
  const stack = createSearchStack({ store, embedder, index: createVectorIndex(config, embedder, { hnswMode, log }), log });
  return {
    store,
    stack,
    close: async () => {
      await stack.close();
      await store.close();
    },
  };
}
