/**
 * Query-level search (SearchService): embeds the query and searches the vector index, or — when
 * embedding fails, or the index was built by another embedder — matches text in the store (FTS5),
 * so search degrades rather than errors. Item search groups chunk hits back to items.
 */
import type { Embedder } from '../ai/types.js';
import { CONTENT_KINDS, type ChunkRow, type ContentKind } from '../content/types.js';
import { errors } from '../errors.js';
import type { Store } from '../store/types.js';
import type { IndexerState } from './indexer.js';
import { normalizeSite, onSite, siteOf } from '../protocol/search.js';
import { snippetFor } from './snippet.js';
import { refOf } from './chunk-refs.js';
import type { ChunkHit, ChunkRef, ChunkSearchOptions, ItemHit, ItemSearchOptions, SearchService, VectorFilter, VectorHit, VectorIndex } from './types.js';
import { MAX_K, checkK } from './vectors.js';
import type { Logger } from '../logger.js';
import { required } from '../options.js';
import { foldAsciiCase } from '../text.js';

/** Chunks fetched per wanted item at first: items have several chunks, and filters drop some. */
const ITEM_OVERFETCH = 5;
/** Most chunks one item search looks at. */
const MAX_ITEM_FETCH = 1000;
/** At most one "embedding failed" warning this often, so an outage does not flood the log. */
const WARN_INTERVAL_MS = 60_000;

export interface SearchServiceOptions {
  store: Store;
  index: VectorIndex;
  embedder: Embedder;
  /** Its state `mismatch` means the vectors came from another embedder: text search only. */
  indexer?: { readonly state: IndexerState };
  log?: Logger;
}

const isContentKind = (k: string): k is ContentKind => (CONTENT_KINDS as readonly string[]).includes(k);

export class DefaultSearchService implements SearchService {
  private lastWarn = 0;

  constructor(private readonly options: SearchServiceOptions) {
    for (const name of ['store', 'index', 'embedder'] as const) required('SearchService', name, options[name]);
  }

  async searchChunks(query: string, options: ChunkSearchOptions): Promise<ChunkHit[]> {
    return (await this.searchChunksMany([query], options))[0];
  }

  async searchChunksMany(queries: string[], options: ChunkSearchOptions): Promise<ChunkHit[][]> {
    const found = await this.searchVectors(queries, options);
    if (found.text) return found.text;
    // One store read for every query's rows.
    const rows = await this.rowsOf(found.hits.flat().map((h) => h.rowId));
    return found.hits.map((hits) => this.withRows(hits, rows, 'vector'));
  }

  async searchChunkRefsMany(queries: string[], options: ChunkSearchOptions): Promise<ChunkRef[][]> {
    const { index } = this.options;
    if (!index.heads) return (await this.searchChunksMany(queries, options)).map((hits) => hits.map(refOf));
    const found = await this.searchVectors(queries, options);
    if (found.text) return found.text.map((hits) => hits.map(refOf));
    return found.hits.map((hits) => {
      const heads = index.heads!(hits.map((h) => h.rowId));
      const refs: ChunkRef[] = [];
      // A row removed since the search, or indexed without a group, is skipped.
      hits.forEach((h, i) => {
        const head = heads[i];
        if (head?.group) refs.push({ rowId: h.rowId, score: h.score, group: head.group, title: head.title, match: 'vector' });
      });
      return refs;
    });
  }

  /** The vector hits of each query (above the threshold unless told otherwise), or the text search's hits when vectors cannot answer. */
  private async searchVectors(queries: string[], options: ChunkSearchOptions): Promise<{ hits: VectorHit[][]; text?: ChunkHit[][] }> {
    checkK(options.k);
    const texts = queries.map((q) => q.trim());
    const wanted = texts.filter(Boolean);
    const vectors = wanted.length ? await this.embedQueries(wanted, options.signal) : null;
    if (options.onVectors) {
      let i = 0;
      options.onVectors(vectors ? texts.map((t) => (t ? vectors[i++] : null)) : null);
    }
    if (!vectors) return { hits: [], text: await Promise.all(texts.map((t) => (t ? this.searchText(t, options.k, options.filter) : []))) };
    const searched = await this.vectorHits(vectors, options);
    let next = 0;
    return { hits: texts.map((t) => (t ? searched[next++] : [])) };
  }

  /** Each vector's index hits, above the threshold unless told otherwise. */
  private async vectorHits(vectors: Float32Array[], options: ChunkSearchOptions): Promise<VectorHit[][]> {
    const { index } = this.options;
    const threshold = options.useThreshold === false ? -Infinity : this.options.embedder.similarityThreshold;
    const searched = await (index.searchMany
      ? index.searchMany(vectors, options.k, options.filter)
      : Promise.all(vectors.map((v) => index.search(v, options.k, options.filter))));
    return searched.map((hits) => hits.filter((h) => h.score >= threshold));
  }

  async searchItems(query: string, options: ItemSearchOptions): Promise<ItemHit[]> {
    checkK(options.k);
    const since = options.since === undefined ? null : Date.parse(options.since);
    if (since !== null && Number.isNaN(since)) throw new errors.ERR_BAD_REQUEST(`since must be an ISO date, got "${options.since}"`);
    const site = options.source === undefined ? null : normalizeSite(options.source);
    if (options.source !== undefined && site === null) throw new errors.ERR_BAD_REQUEST(`source must be a site's host name, got "${options.source}"`);
    const filter: VectorFilter = { sourceType: 'document', kinds: options.kind ? [options.kind] : undefined };
    const text = query.trim();
    if (!text) return [];
    // When filters leave too few items the search widens; the query is embedded once and each
    // chunk row read once however many rounds that takes (each round embedded the query again, a
    // model call with a remote embedder, and read again every row the last round had read).
    const [vector] = (await this.embedQueries([text])) ?? [null];
    const rows = new Map<number, ChunkRow>();
    for (let fetch = Math.min(MAX_K, options.k * ITEM_OVERFETCH); ; fetch = Math.min(MAX_ITEM_FETCH, fetch * 4)) {
      let hits: ChunkHit[];
      let found: number;
      if (vector) {
        const [scored] = await this.vectorHits([vector], { k: fetch, filter });
        for (const [id, row] of await this.rowsOf(scored.map((h) => h.rowId).filter((id) => !rows.has(id)))) rows.set(id, row);
        hits = this.withRows(scored, rows, 'vector');
        found = scored.length;
      } else {
        hits = await this.searchText(text, fetch, filter);
        found = hits.length;
      }
      const items = this.toItems(hits, query, options, { since, site });
      if (items.length >= options.k || found < fetch || fetch >= MAX_ITEM_FETCH) return items.slice(0, options.k);
    }
  }

  /** The query vectors (one embedder call), or null when vectors cannot answer (so the caller searches text). */
  private async embedQueries(texts: string[], signal?: AbortSignal): Promise<Float32Array[] | null> {
    const { index, embedder, indexer } = this.options;
    if (indexer?.state === 'mismatch' || index.size === 0) return null;
    try {
      const vectors = await embedder.embed(texts, signal);
      if (vectors.length !== texts.length) throw new Error(`the embedder returned ${vectors.length} vectors for ${texts.length} texts`);
      for (const v of vectors) {
        if (!v || v.length !== index.dimensions)
          throw new Error(`the embedder returned a vector of ${v?.length ?? 0} dimensions; the index has ${index.dimensions}`);
      }
      return vectors;
    } catch (err) {
      // Cancelled, not failed: nobody waits for a text search.
      signal?.throwIfAborted();
      const now = Date.now();
      if (now - this.lastWarn >= WARN_INTERVAL_MS) {
        this.lastWarn = now;
        this.options.log?.warn({ err }, `embedding the query failed (${(err as Error).message}); searching by text instead`);
      }
      return null;
    }
  }

  /** The store's full-text search, for document chunks (the only ones it holds without scope or privilege). */
  private async searchText(text: string, k: number, filter: VectorFilter = {}): Promise<ChunkHit[]> {
    if (filter.sourceType === 'conversation' || filter.scopes) return [];
    const kinds = filter.kinds?.filter(isContentKind);
    if (filter.kinds && kinds!.length === 0) return [];
    const hits = await this.options.store.searchText(text, k, kinds?.length ? kinds : undefined);
    const best = hits.reduce((m, h) => Math.max(m, h.score), 0);
    const scaled = hits.map((h) => ({ rowId: h.rowId, score: best > 0 ? h.score / best : 0 }));
    const rows = await this.rowsOf(scaled.map((h) => h.rowId));
    return this.withRows(scaled, rows, 'text').filter((h) => h.chunk.sourceType === 'document');
  }

  private async rowsOf(rowIds: number[]): Promise<Map<number, ChunkRow>> {
    if (rowIds.length === 0) return new Map();
    return new Map((await this.options.store.getChunks([...new Set(rowIds)])).map((c) => [c.rowId, c]));
  }

  private withRows(hits: { rowId: number; score: number }[], rows: Map<number, ChunkRow>, match: ChunkHit['match']): ChunkHit[] {
    // A row removed between the index search and this read is skipped.
    return hits.filter((h) => rows.has(h.rowId)).map((h) => ({ chunk: rows.get(h.rowId)!, score: h.score, match }));
  }

  /**
   * Best chunk per item passing category, date and site, with a snippet of that chunk, for the
   * first `options.k` items. A chunk row carries its item's fields, so no item is read: reading
   * each whole item (its body up to 200,000 characters) for the date and site made a filter that
   * keeps nothing (`since` in the future) read every item of up to 1,000 chunks, four rounds over.
   */
  private toItems(hits: ChunkHit[], query: string, options: ItemSearchOptions, only: { since: number | null; site: string | null }): ItemHit[] {
    const { since, site } = only;
    const category = options.category === undefined ? undefined : foldAsciiCase(options.category);
    const out: ItemHit[] = [];
    const seen = new Set<string>();
    for (const hit of hits) {
      // The caller keeps the first k: a snippet cut for an item past them was wasted (250 of them,
      // a search of k = 50's first round, took ~22 ms of the event loop for 50 shown).
      if (out.length === options.k) break;
      const c = hit.chunk;
      if (seen.has(c.itemId)) continue;
      seen.add(c.itemId);
      if (category !== undefined && (c.category === null || foldAsciiCase(c.category) !== category)) continue;
      if (since !== null && !(c.itemPublishedAt && Date.parse(c.itemPublishedAt) >= since)) continue;
      const itemSite = siteOf(c.itemUrl);
      if (site !== null && !onSite(itemSite, site)) continue;
      out.push({
        id: c.itemId,
        kind: c.itemKind,
        title: c.itemTitle,
        url: c.itemUrl,
        score: Math.round(hit.score * 10_000) / 10_000,
        snippet: snippetFor(c.text, query, c.itemTitle),
        publishedAt: c.itemPublishedAt,
        category: c.category,
        site: itemSite,
      });
    }
    return out;
  }
}
