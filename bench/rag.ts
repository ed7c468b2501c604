/**
 * Whole asks through the assistant with the local providers (DESIGN §8): N synthetic items are
 * ingested through the item pipeline of a real app, then questions are asked one after another in
 * item rooms. Prints `{items, p50_ms, p95_ms, p99_ms, overhead_p95_ms}`, where overhead is each
 * ask's time minus the time spent inside embedder and chat model calls.
 *
 *   npm run bench:rag -- --items N [--asks A]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalChatModel } from '../src/ai/local-chat.js';
import { LocalEmbedder } from '../src/ai/local-embedder.js';
import type { ChatMessage, ChatModel, Embedder } from '../src/ai/types.js';
import { buildApp } from '../src/app.js';
import { parseArgs } from '../src/cli/command.js';
import { loadConfig } from '../src/config.js';
import type { ContentItem } from '../src/content/types.js';
import { syntheticItems, questionAbout } from './synthetic-text.js';

const DEFAULT_ITEMS = 10_000;
const DEFAULT_ASKS = 200;
const WARMUP_ASKS = 20;

/** Time spent inside model calls, summed; and the span of each ask's search-service calls. */
const clock = { ms: 0, searchFrom: Infinity, searchTo: 0, embedInSearch: 0 };

async function timed<T>(fn: () => Promise<T>): Promise<T> {
  const t = performance.now();
  try {
    return await fn();
  } finally {
    clock.ms += performance.now() - t;
  }
}

function timedEmbedder(inner: Embedder): Embedder {
  return {
    model: inner.model,
    dimensions: inner.dimensions,
    similarityThreshold: inner.similarityThreshold,
    embed: (texts, signal) => timed(() => inner.embed(texts, signal)),
  };
}

function timedChat(inner: ChatModel): ChatModel {
  return {
    model: inner.model,
    rerank: (q, s, signal) => timed(() => inner.rerank(q, s, signal)),
    summarize: (t, q, signal) => timed(() => inner.summarize(t, q, signal)),
    async *stream(messages: ChatMessage[], signal?: AbortSignal) {
      const it = inner.stream(messages, signal)[Symbol.asyncIterator]();
      for (;;) {
        const r = await timed(() => it.next());
        if (r.done) return;
        yield r.value;
      }
    },
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const round = (x: number) => Math.round(x * 100) / 100;

async function main(): Promise<void> {
  const { options } = parseArgs(process.argv.slice(2));
  const n = Number(options.get('items') ?? DEFAULT_ITEMS);
  const asks = Number(options.get('asks') ?? DEFAULT_ASKS);
  if (!Number.isInteger(n) || n < 1) throw new Error('--items must be a positive integer');
  if (!Number.isInteger(asks) || asks < 1) throw new Error('--asks must be a positive integer');
  const dir = mkdtempSync(join(tmpdir(), 'salon-bench-rag-'));
  const raw = new LocalEmbedder();
  const app = await buildApp(loadConfig({ DATA_DIR: dir, AI_PROVIDER: 'local', SEED_DEMO: 'false', LOG_LEVEL: 'silent' }), {
    embedder: timedEmbedder(raw),
    chat: timedChat(new LocalChatModel(raw)),
  });
  try {
    await app.ready();
    const { ingest, assistant, store } = app.salon;
    if (!ingest || !assistant) throw new Error('the app has no item pipeline or assistant');
    const items: ContentItem[] = syntheticItems(n);
    const index = app.salon.index as { settled?: () => Promise<void>; bulk?: <T>(fn: () => Promise<T>) => Promise<T> } | undefined;
    const t0 = performance.now();
    const putAll = async (list: ContentItem[]) => {
      for (const item of list) await ingest.pipeline.put(item);
    };
    // The first item creates the index; as one bulk load the rest build the HNSW graph once, at the end.
    await putAll(items.slice(0, 1));
    await (index?.bulk ? index.bulk(() => putAll(items.slice(1))) : putAll(items.slice(1)));
    // Measure the steady state: an HNSW graph being built in the background is not it.
    await index?.settled?.();
    console.error(`ingested ${n} items in ${((performance.now() - t0) / 1000).toFixed(1)} s (index settled)`);

    // Time the search service (vector search, store reads) on its own for the breakdown on stderr.
    const search = app.salon.search!;
    const searchChunksMany = search.searchChunksMany.bind(search);
    search.searchChunksMany = async (q, o) => {
      const t = performance.now();
      const before = clock.ms;
      try {
        return await searchChunksMany(q, o);
      } finally {
        clock.embedInSearch += clock.ms - before;
        clock.searchFrom = Math.min(clock.searchFrom, t);
        clock.searchTo = Math.max(clock.searchTo, performance.now());
      }
    };
    const searchSpans: number[] = [];
    const rest: number[] = [];
    const totals: number[] = [];
    const overheads: number[] = [];
    const stageMs: Record<string, number[]> = {};
    for (let i = 0; i < WARMUP_ASKS + asks; i++) {
      const item = items[(i * 7919) % items.length];
      const threadId = (await store.ensureMainThread(item.id)).id;
      Object.assign(clock, { ms: 0, searchFrom: Infinity, searchTo: 0, embedInSearch: 0 });
      const t = performance.now();
      const { done } = assistant.ask({ roomId: item.id, threadId, text: questionAbout(item, i), asker: { id: `bench_${i}`, name: 'Bench' } });
      const { stages } = await done;
      const total = performance.now() - t;
      if (i < WARMUP_ASKS) continue;
      for (const [name, s] of Object.entries(stages)) if (s && typeof s === 'object' && 'ms' in s) (stageMs[name] ??= []).push((s as { ms: number }).ms);
      totals.push(total);
      searchSpans.push(clock.searchTo - clock.searchFrom - clock.embedInSearch);
      rest.push(total - clock.ms - searchSpans[searchSpans.length - 1]);
      overheads.push(total - clock.ms);
    }
    const medians = Object.entries(stageMs).map(([name, v]) => `${name} ${round(percentile(v.sort((a, b) => a - b), 50))}`);
    console.error(`stage medians (ms): ${medians.join(', ')}`);
    searchSpans.sort((a, b) => a - b);
    rest.sort((a, b) => a - b);
    console.error(`search service without embedding (ms): p50 ${round(percentile(searchSpans, 50))}, p95 ${round(percentile(searchSpans, 95))}`);
    console.error(`overhead besides the search service (ms): p50 ${round(percentile(rest, 50))}, p95 ${round(percentile(rest, 95))}`);
    totals.sort((a, b) => a - b);
    overheads.sort((a, b) => a - b);
    console.log(
      JSON.stringify({
        items: n,
        p50_ms: round(percentile(totals, 50)),
        p95_ms: round(percentile(totals, 95)),
        p99_ms: round(percentile(totals, 99)),
        overhead_p95_ms: round(percentile(overheads, 95)),
      }),
    );
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
