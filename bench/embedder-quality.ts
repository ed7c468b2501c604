/**
 * Retrieval quality of the local embedder on a SQuAD-format file: every passage (title + text,
 * as the chunker builds chunks) and every question is embedded, passages are ranked by cosine
 * (brute force), and the passage holding the question is the relevant one. Also times embedding
 * 1,000 texts of 800 characters.
 *
 *   npm run bench:embedder -- [--dataset FILE] … (USAGE below)
 *
 * `--half` keeps every other article (0: even, 1: odd) so a change can be checked on data it was
 * not chosen on. Prints one JSON object on its last line (README, Benchmarks).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BenchUsageError, benchOptions } from './args.js';
import { readSetting } from '../src/config.js';
import { DEFAULT_FEATURE_WEIGHTS, DEFAULT_LOCAL_DIMENSIONS, LocalEmbedder, type FeatureWeights } from '../src/ai/local/local-embedder.js';

const USAGE = 'npm run bench:embedder -- [--dataset FILE] [--dim D] [--weights words=1,pairs=0.3,chars=1.3] [--half 0|1] [--grams 3-4]';
const DEFAULT_DATASET = join(resolve(readSetting('SALON_CORPORA')), 'qa/xquad-en.dev.json');
const THROUGHPUT_TEXTS = 1000;
const THROUGHPUT_CHARS = 800;

interface Squad {
  data: { title: string; paragraphs: { context: string; qas: { question: string }[] }[] }[];
}

function parseWeights(raw: string): Partial<FeatureWeights> {
  const out: Record<string, number> = {};
  for (const part of raw.split(',')) {
    const [k, v] = part.split('=');
    const name = k.trim();
    if (!(name in DEFAULT_FEATURE_WEIGHTS) || v === undefined || !(Number(v) >= 0))
      throw new BenchUsageError(`--weights: expected words=W,pairs=W,chars=W with numbers ≥ 0, got ${JSON.stringify(part)}`);
    out[name] = Number(v);
  }
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** 1-based rank of passage `target` for query `q` (ties count against it). */
function rankOf(q: Float32Array, passages: Float32Array[], target: number): number {
  const own = dot(q, passages[target]);
  let rank = 1;
  for (let j = 0; j < passages.length; j++) if (j !== target && dot(q, passages[j]) >= own) rank++;
  return rank;
}

function throughput(embedder: LocalEmbedder, passages: string[]): number {
  const all = passages.join(' ');
  const texts = Array.from({ length: THROUGHPUT_TEXTS }, (_, i) => {
    const start = (i * 397) % Math.max(1, all.length - THROUGHPUT_CHARS);
    return all.slice(start, start + THROUGHPUT_CHARS);
  });
  const t0 = performance.now();
  for (const t of texts) embedder.embedOne(t);
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const { file, dim, weights, half, charGrams } = benchOptions(
    USAGE,
    { dataset: 'string', dim: 'string', weights: 'string', half: 'string', grams: 'string' },
    (a) => {
      const grams = a.text('grams');
      const charGrams = grams?.split('-').map(Number);
      if (charGrams && (charGrams.length !== 2 || !charGrams.every((g) => Number.isInteger(g) && g >= 1) || charGrams[0] > charGrams[1]))
        throw new BenchUsageError(`--grams: expected two whole numbers ≥ 1 as MIN-MAX, got ${JSON.stringify(grams)}`);
      const weights = a.text('weights');
      return {
        file: a.text('dataset', DEFAULT_DATASET),
        dim: a.number('dim', DEFAULT_LOCAL_DIMENSIONS, { integer: true, min: 1 }),
        weights: weights === undefined ? undefined : parseWeights(weights),
        half: a.optionalNumber('half', { integer: true, min: 0, max: 1 }) ?? null,
        charGrams: charGrams as [number, number] | undefined,
      };
    },
  );
  const embedder = new LocalEmbedder({ dimensions: dim, weights, charGrams });

  const squad = JSON.parse(readFileSync(file, 'utf8')) as Squad;
  const articles = half === null ? squad.data : squad.data.filter((_, i) => i % 2 === half);
  const passages: string[] = [];
  const questions: { text: string; passage: number }[] = [];
  for (const article of articles) {
    const title = article.title.replace(/_/g, ' ');
    for (const p of article.paragraphs) {
      for (const qa of p.qas) questions.push({ text: qa.question, passage: passages.length });
      passages.push(`${title}\n${p.context}`);
    }
  }

  const pv = await embedder.embed(passages);
  const qv = await embedder.embed(questions.map((q) => q.text));
  let r1 = 0;
  let r5 = 0;
  let rr = 0;
  questions.forEach((q, i) => {
    const rank = rankOf(qv[i], pv, q.passage);
    if (rank === 1) r1++;
    if (rank <= 5) r5++;
    rr += 1 / rank;
  });
  const n = questions.length;
  const round = (x: number) => Math.round(x * 10000) / 10000;
  const ms = throughput(embedder, passages);
  console.log(
    JSON.stringify({
      passages: passages.length,
      questions: n,
      recall_at_1: round(r1 / n),
      recall_at_5: round(r5 / n),
      mrr: round(rr / n),
      dims: dim,
      embed_ms_per_1000x800: Math.round(ms),
    }),
  );
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
