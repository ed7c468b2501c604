/**
 * The serving graph's recall on real text (README, Benchmarks): bench:search measures graphs over
 * synthetic vectors, where neighbours stand apart; the built-in embedder's vectors of real text are
 * sparse feature hashes whose cosines mostly lie between 0.05 and 0.4, where a graph search finds
 * its way less well. This embeds, with the built-in embedder, the chunks an app would index from the
 * corpora's real pages (extraction/ground-truth.json's article bodies and XQuAD's passages, through
 * the item chunker) and the windows of eight turns conversation memory would hold (LoCoMo), then asks
 * every question of XQuAD and LoCoMo of a graph built as the serving index builds one (salon-hnsw,
 * its parameters and encoding), fetching `--fetch` hits (30: what the ask's document search asks
 * for), scored again exactly and cut to `--k` as the tiered index does, against the exact top k.
 *
 *   npm run eval:graph -- [--corpora DIR] [--ef 32,48,96] [--m 16] [--sketch 0,512] [--k 10] [--fetch 30]
 *
 * `--sketch D` builds the graph over a D-dimension count sketch of the vectors instead (0: the
 * vectors themselves), as fusion's scratch graphs are; the hits are scored exactly all the same.
 * Prints `{chunks, queries, dimensions, k, fetch, ef_construction, graphs: [{m, sketch, build_s,
 * searches: [{ef, recall_at_k, top1, top1_shortfall_mean, top1_shortfall_over_margin, search_us_p50}]}]}`
 * (top1: the exact best chunk came first; shortfall: the cosine the first hit falls short of it,
 * over the margin when more than 0.02). Built on one thread, so a run's graphs are the same every time.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BenchUsageError, benchOptions, runBench, type BenchArgs } from './args.js';
import { recallFigures, topRows, type QueryOutcome } from './graph-recall.js';
import { readSamples, turnsOf } from './locomo.js';
import { percentile } from './local-app.js';

const USAGE = 'npm run eval:graph -- [--corpora DIR] [--ef 32,48,96] [--m 16] [--sketch 0,512] [--k 10] [--fetch 30]';
/** Turns a memory window holds at most (WINDOW_MAX_MESSAGES). */
const WINDOW_TURNS = 8;

/** A flag's comma-separated whole numbers, each in [min, max] (`fallback` when the flag is not given). */
function wholeList(args: BenchArgs, flag: string, fallback: string, min: number, max: number): number[] {
  const raw = args.text(flag, fallback);
  const values = raw.split(',').map((s) => (s.trim() === '' ? NaN : Number(s)));
  if (values.some((v) => !Number.isInteger(v) || v < min || v > max)) {
    throw new BenchUsageError(`--${flag}: expected whole numbers in [${min}, ${max}] separated by commas, got ${JSON.stringify(raw)}`);
  }
  return values;
}

async function main(): Promise<void> {
  const options = benchOptions(USAGE, { corpora: 'string', ef: 'string', m: 'string', sketch: 'string', k: 'string', fetch: 'string' }, (a) => ({
    corpora: a.text('corpora', '../shared/corpora'),
    efs: wholeList(a, 'ef', '32,48,64,96,128', 1, 4096),
    ms: wholeList(a, 'm', '16', 2, 128),
    sketches: wholeList(a, 'sketch', '0', 0, 4096),
    k: a.number('k', 10, { integer: true, min: 1, max: 100 }),
    fetch: a.number('fetch', 30, { integer: true, min: 1, max: 1000 }),
  }));
  // Imported once the command line is accepted: `--help` and a refused flag answer at once.
  const { LocalEmbedder } = await import('../src/ai/local/local-embedder.js');
  const { cosine } = await import('../src/ai/vectors.js');
  const { chunkItem } = await import('../src/content/ingest/chunker.js');
  const { loadConfig } = await import('../src/config.js');
  const { DEFAULT_HNSW_PARAMS, GRAPH_ENCODING } = await import('../src/search/graph/hnsw-worker-client.js');
  const { CountSketch } = await import('../src/memory/threads/neighbours.js');
  const { Graph } = await import('salon-hnsw');

  const config = loadConfig({ SEED_DEMO: 'false', LOG_LEVEL: 'silent' });
  const chunking = { size: config.CHUNK_SIZE, overlap: config.CHUNK_OVERLAP };
  const item = (title: string, body: string) => chunkItem({ title, description: '', body, comments: [] }, chunking).map((c) => c.text);

  const texts: string[] = [];
  const questions: string[] = [];
  const pages = JSON.parse(readFileSync(join(options.corpora, 'extraction/ground-truth.json'), 'utf8')) as Record<
    string,
    { articleBody?: string; url?: string }
  >;
  for (const page of Object.values(pages)) if (page.articleBody) texts.push(...item(page.url ?? '', page.articleBody));
  const squad = JSON.parse(readFileSync(join(options.corpora, 'qa/xquad-en.dev.json'), 'utf8')) as {
    data: { title: string; paragraphs: { context: string; qas: { question: string }[] }[] }[];
  };
  for (const article of squad.data) {
    for (const p of article.paragraphs) {
      texts.push(...item(article.title.replace(/_/g, ' '), p.context));
      for (const q of p.qas) questions.push(q.question);
    }
  }
  for (const sample of readSamples(join(options.corpora, 'memory/locomo/locomo-dev.json'))) {
    const turns = turnsOf(sample);
    for (let i = 0; i < turns.length; i += WINDOW_TURNS) {
      texts.push(
        turns
          .slice(i, i + WINDOW_TURNS)
          .map((t) => `${t.name}: ${t.text}`)
          .join('\n'),
      );
    }
    for (const q of sample.qa) questions.push(q.question);
  }

  const embedder = new LocalEmbedder();
  const dimensions = embedder.dimensions;
  const embedAll = async (all: string[]) => {
    const out: Float32Array[] = [];
    for (let i = 0; i < all.length; i += 256) out.push(...(await embedder.embed(all.slice(i, i + 256))));
    return out;
  };
  const rows = await embedAll(texts);
  const queries = await embedAll(questions);
  const cosines = queries.map((q) => Float32Array.from(rows, (r) => cosine(q, r)));
  const exact = cosines.map((c) => topRows(c, options.k));

  const graphs = [];
  for (const m of options.ms) {
    for (const sketch of options.sketches) {
      const d = sketch > 0 ? sketch : dimensions;
      const sketcher = sketch > 0 ? new CountSketch(dimensions, sketch) : null;
      const shrink = (v: Float32Array) => {
        if (!sketcher) return v;
        const out = new Float32Array(d);
        sketcher.into(v, out);
        return out;
      };
      const packed = new Float32Array(rows.length * d);
      rows.forEach((r, i) => packed.set(shrink(r), i * d));
      const graph = new Graph(d, rows.length, m, DEFAULT_HNSW_PARAMS.efConstruction, DEFAULT_HNSW_PARAMS.seed, GRAPH_ENCODING);
      const t0 = performance.now();
      graph.addPoints(packed, Uint32Array.from(rows.keys()), 1);
      const buildS = (performance.now() - t0) / 1000;
      const shrunk = queries.map(shrink);
      const labels = new Uint32Array(options.fetch);
      const distances = new Float32Array(options.fetch);
      const searches = [];
      for (const ef of options.efs) {
        graph.setEf(ef);
        const took: number[] = [];
        const outcomes: QueryOutcome[] = shrunk.map((q, qi) => {
          const s0 = performance.now();
          const n = graph.search(q, options.fetch, labels, distances);
          took.push((performance.now() - s0) * 1000);
          const score = (row: number) => cosines[qi][row];
          const found = Array.from(labels.subarray(0, n))
            .sort((a, b) => score(b) - score(a) || a - b)
            .slice(0, options.k);
          return { exact: exact[qi], found, score };
        });
        const figures = recallFigures(outcomes);
        searches.push({
          ef,
          ...Object.fromEntries(Object.entries(figures).map(([key, v]) => [key, Math.round(v * 10_000) / 10_000])),
          search_us_p50:
            Math.round(
              percentile(
                took.sort((a, b) => a - b),
                50,
              ) * 10,
            ) / 10,
        });
      }
      graphs.push({ m, sketch, build_s: Math.round(buildS * 100) / 100, searches });
    }
  }
  console.log(
    JSON.stringify({
      chunks: rows.length,
      queries: queries.length,
      dimensions,
      k: options.k,
      fetch: options.fetch,
      ef_construction: DEFAULT_HNSW_PARAMS.efConstruction,
      encoding: GRAPH_ENCODING,
      graphs,
    }),
  );
}

runBench(main);
