/**
 * The search stack for CLI commands (`salon search`, `salon reindex`): the store and embedder
 * from DATA_DIR and the config, without a server. Messages go to stderr so stdout stays data.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createProviders } from '../ai/providers.js';
import type { Config } from '../config.js';
import { SqliteStore } from '../store/sqlite.js';
import type { Store } from '../store/types.js';
import { createSearchStack, type SearchStack } from './install.js';
import type { HnswMode } from './tiered-index.js';

export interface CliSearch {
  store: Store;
  stack: SearchStack;
  close(): Promise<void>;
}

/** Opens DATA_DIR's store and builds the search stack over it; throws a message naming the fix. */
export function openCliSearch(config: Config, hnswMode: HnswMode, verbose = false): CliSearch {
  if (config.DATABASE_URL) throw new Error('DATABASE_URL is set but this build has no PostgreSQL store; unset it to use SQLite');
  const file = join(config.DATA_DIR, 'salon.db');
  if (!existsSync(file)) throw new Error(`no Salon data in ${config.DATA_DIR} (DATA_DIR); start the server or ingest content first`);
  const store = new SqliteStore({ filename: file });
  const { embedder } = createProviders(config, store);
  const log = {
    info: (msg: string) => verbose && console.error(msg),
    warn: (msg: string) => console.error(`warning: ${msg}`),
    error: (msg: string) => console.error(msg),
  };
  const stack = createSearchStack({ config, store, embedder, hnswMode, log });
  return {
    store,
    stack,
    close: async () => {
      await stack.close();
      await store.close();
    },
  };
}
