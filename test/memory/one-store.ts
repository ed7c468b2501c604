/**
 * One store for two app nodes of a test: a SQLite store object both share, or a fresh PostgreSQL
 * schema each node opens its own pool on. `cleanups` (run last first) closes or drops it.
 */
import type { Store } from '../../src/store/types.js';
import { tempStore } from '../helpers.js';
import { freshSchema } from '../store/postgres-harness.js';

/** Where a node's store comes from: the env it is started with, or a store object it shares. */
export type StoreSource = { env: Record<string, string>; store?: Store };

export function sharedSqlite(cleanups: (() => unknown)[]): StoreSource {
  const temp = tempStore();
  // Both nodes share the store object; each closing app must not close it under the other.
  const shared = new Proxy(temp.store, { get: (t, p) => (p === 'close' ? async () => {} : Reflect.get(t, p)) });
  cleanups.push(temp.close);
  return { env: {}, store: shared };
}

export async function postgresSchema(cleanups: (() => unknown)[]): Promise<StoreSource> {
  const schema = await freshSchema();
  cleanups.push(schema.drop);
  return { env: { DATABASE_URL: schema.url } };
}
