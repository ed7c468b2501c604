/**
 * Realistic material for indexer and search tests: XQuAD's English Wikipedia paragraphs (read in
 * place from the shared corpora) as news items, with their questions as queries, stored and chunked
 * the way ingestion does it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Embedder } from '../../src/ai/types.js';
import { chunkItem } from '../../src/content/ingest/chunker.js';
import { blankItem, type ChunkRow, type ContentItem, type ContentKind } from '../../src/content/types.js';
import type { Store } from '../../src/store/types.js';
import { CORPORA } from '../helpers.js';

export interface Paragraph {
  id: string;
  topic: string;
  context: string;
  questions: string[];
}

/** The first `n` paragraphs of XQuAD (English), each with its questions. */
export function paragraphs(n: number): Paragraph[] {
  const data = JSON.parse(readFileSync(join(CORPORA, 'qa/xquad-en.dev.json'), 'utf8')) as {
    data: { title?: string; paragraphs: { context: string; qas: { question: string }[] }[] }[];
  };
  const out: Paragraph[] = [];
  data.data.forEach((article, a) =>
    article.paragraphs.forEach((p, i) => out.push({ id: `${a}_${i}`, topic: `topic${a}`, context: p.context, questions: p.qas.map((q) => q.question) })),
  );
  return out.slice(0, n);
}

/** A content item around a paragraph; its title is the paragraph's first words. */
export function itemOf(p: Paragraph, kind: ContentKind = 'news', publishedAt = '2024-01-01T00:00:00.000Z'): ContentItem {
  return blankItem(`${kind}_${p.id}`, {
    title: p.context.split(/\s+/).slice(0, 8).join(' '),
    url: `https://example.test/${p.id}`,
    body: p.context,
    category: p.topic,
    publishedAt,
  });
}

/** Stores an item and chunks it as the pipeline does; returns the change the sink would get. */
export async function putItem(store: Store, item: ContentItem): Promise<{ added: ChunkRow[]; removed: number[] }> {
  await store.upsertItem(item);
  return store.replaceChunks(item.id, chunkItem(item, { size: 800, overlap: 160 }));
}

/** An embedder that fails while `down` is true, counting calls. */
export class FlakyEmbedder implements Embedder {
  down = false;
  calls = 0;
  constructor(private readonly inner: Embedder) {}
  get model(): string {
    return this.inner.model;
  }
  get dimensions(): number {
    return this.inner.dimensions;
  }
  get similarityThreshold(): number {
    return this.inner.similarityThreshold;
  }

  get relevanceThreshold(): number {
    return this.inner.relevanceThreshold;
  }
  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    this.calls++;
    if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:11434');
    return this.inner.embed(texts, signal);
  }
}
