/**
 * Scoring of extracted article bodies against the extraction corpus (../shared/corpora/extraction):
 * token-level F1 as the article-extraction-benchmark computes it. Shared by
 * bench/eval-extraction.ts and test/content/extract-corpus.test.ts.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

/** One page of the corpus: its id (sha), url, gzipped HTML path and expected body. */
export interface CorpusPage {
  id: string;
  url: string;
  file: string;
  articleBody: string;
}

/** Per-page and overall scores. A page whose extraction threw scores 0. */
export interface CorpusScore {
  pages: number;
  mean_f1: number;
  median_f1: number;
  failures: number;
  perPage: { id: string; url: string; f1: number; precision: number; recall: number; error?: string }[];
}

/** Lower-cased tokens: maximal runs of Unicode letters, marks and digits. */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{M}\p{N}]+/gu) ?? [];
}

/** Multiset precision, recall and F1 of `predicted` tokens against `expected` tokens. */
export function tokenF1(predicted: string, expected: string): { precision: number; recall: number; f1: number } {
  const want = new Map<string, number>();
  const expectedTokens = tokenize(expected);
  for (const t of expectedTokens) want.set(t, (want.get(t) ?? 0) + 1);
  const predictedTokens = tokenize(predicted);
  let common = 0;
  for (const t of predictedTokens) {
    const left = want.get(t) ?? 0;
    if (left > 0) {
      common++;
      want.set(t, left - 1);
    }
  }
  if (expectedTokens.length === 0 && predictedTokens.length === 0) return { precision: 1, recall: 1, f1: 1 };
  if (common === 0) return { precision: 0, recall: 0, f1: 0 };
  const precision = common / predictedTokens.length;
  const recall = common / expectedTokens.length;
  return { precision, recall, f1: (2 * precision * recall) / (precision + recall) };
}

/** Reads ground-truth.json and lists the pages, sorted by id. */
export function loadCorpus(dir: string): CorpusPage[] {
  const truth = JSON.parse(readFileSync(join(dir, 'ground-truth.json'), 'utf8')) as Record<string, { articleBody: string; url: string }>;
  const files = new Set(readdirSync(join(dir, 'html')));
  return Object.keys(truth)
    .sort()
    .filter((id) => files.has(`${id}.html.gz`))
    .map((id) => ({ id, url: truth[id].url, file: join(dir, 'html', `${id}.html.gz`), articleBody: truth[id].articleBody }));
}

/** The page's HTML (the corpus stores UTF-8, gzipped). */
export function readPage(page: CorpusPage): Buffer {
  return gunzipSync(readFileSync(page.file));
}

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Scores `extract` (returning the body text) over every page; exceptions count as F1 0. */
export function scoreCorpus(pages: CorpusPage[], extract: (html: Buffer, url: string) => string): CorpusScore {
  const perPage: CorpusScore['perPage'] = [];
  for (const page of pages) {
    try {
      const text = extract(readPage(page), page.url);
      perPage.push({ id: page.id, url: page.url, ...tokenF1(text, page.articleBody) });
    } catch (err) {
      perPage.push({ id: page.id, url: page.url, f1: 0, precision: 0, recall: 0, error: (err as Error).message });
    }
  }
  const f1s = perPage.map((p) => p.f1);
  const round = (x: number) => Math.round(x * 10_000) / 10_000;
  return {
    pages: perPage.length,
    mean_f1: round(f1s.reduce((a, b) => a + b, 0) / Math.max(1, f1s.length)),
    median_f1: round(median(f1s)),
    failures: perPage.filter((p) => p.error !== undefined).length,
    perPage,
  };
}
