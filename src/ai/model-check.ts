/**
 * Model-change detection: the vector index remembers which embedder built it (store meta key
 * `index-embedder`, JSON {model, dimensions}, written by the search area's indexer). Starting with
 * another model or dimension would compare vectors from different spaces and give wrong results
 * silently, so it is reported instead (ERR_INDEX_MODEL_MISMATCH naming `salon reindex`), except an
 * index of an earlier version of the built-in embedder, which the indexer rebuilds at start.
 */
import { errors } from '../errors.js';
import { isEarlierLocalModel } from './local/local-embedder.js';
import type { Store } from '../store/types.js';
import type { Embedder, ProviderHealth } from './types.js';

/** The store meta key the indexer writes. */
export const INDEX_EMBEDDER_META_KEY = 'index-embedder';

export interface EmbedderIdentity {
  model: string;
  dimensions: number;
}

export interface IndexModelCheck {
  ok: boolean;
  /**
   * The index was built by an earlier version of the built-in embedder: usable, once its vectors
   * are made again (the indexer does so at load; offline and quick, unlike a remote model's).
   */
  outdated?: boolean;
  /** What the index was built with; absent when nothing was indexed yet. */
  stored?: EmbedderIdentity;
  current: EmbedderIdentity;
  /** ERR_INDEX_MODEL_MISMATCH's message (or why the meta could not be read) when not ok. */
  message?: string;
}

function describe(id: EmbedderIdentity): string {
  return id.dimensions > 0 ? `${id.model} (${id.dimensions} dimensions)` : id.model;
}

function parseIdentity(raw: string): EmbedderIdentity | null {
  try {
    const v = JSON.parse(raw) as Partial<EmbedderIdentity>;
    if (typeof v.model === 'string' && typeof v.dimensions === 'number') return { model: v.model, dimensions: v.dimensions };
  } catch {
    // fall through
  }
  return null;
}

/**
 * Compares the embedder with what the index was built with. A remote embedder whose dimension
 * is not known yet (0) is compared by model name only.
 */
export async function checkIndexModel(store: Pick<Store, 'getMeta'>, embedder: Pick<Embedder, 'model' | 'dimensions'>): Promise<IndexModelCheck> {
  const current = { model: embedder.model, dimensions: embedder.dimensions };
  const raw = await store.getMeta(INDEX_EMBEDDER_META_KEY);
  if (raw === null) return { ok: true, current };
  const stored = parseIdentity(raw);
  if (!stored) {
    return { ok: false, current, message: `The index's ${INDEX_EMBEDDER_META_KEY} record is unreadable. Run \`salon reindex\`.` };
  }
  const same = stored.model === current.model && (current.dimensions === 0 || stored.dimensions === current.dimensions);
  if (same) return { ok: true, stored, current };
  if (isEarlierLocalModel(stored, current)) return { ok: true, outdated: true, stored, current };
  return { ok: false, stored, current, message: new errors.ERR_INDEX_MODEL_MISMATCH(describe(stored), describe(current)).message };
}

/** The check as a readiness probe for /readyz and `salon doctor`. */
export async function indexModelHealth(store: Pick<Store, 'getMeta'>, embedder: Pick<Embedder, 'model' | 'dimensions'>): Promise<ProviderHealth> {
  const r = await checkIndexModel(store, embedder);
  const built = r.stored && `index built with ${describe(r.stored)}${r.outdated ? ', an earlier built-in embedder: rebuilt at start' : ''}`;
  const detail = r.ok ? (built ?? 'nothing indexed yet') : r.message!;
  return { ok: r.ok, provider: 'index', detail };
}
