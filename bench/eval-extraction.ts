/**
 * `npm run eval:extraction [-- --corpus DIR] [--worst N]`: token-level F1 of extractArticle's
 * body text against the extraction corpus's `articleBody`. Prints the N worst pages to stderr
 * and `{pages, mean_f1, median_f1, failures}` as JSON on the last line of stdout.
 */
import { join, resolve } from 'node:path';
import { benchOptions, runBench } from './args.js';
import { readSetting } from '../src/config.js';
import { loadCorpus, scoreCorpus } from './extraction-score.js';

/** The extraction corpus inside SALON_CORPORA. */
function defaultCorpus(): string {
  return join(resolve(readSetting('SALON_CORPORA')), 'extraction');
}

async function main(): Promise<void> {
  const { corpus, worst } = benchOptions('npm run eval:extraction -- [--corpus DIR] [--worst N]', { corpus: 'string', worst: 'string' }, (a) => ({
    corpus: a.text('corpus') ?? defaultCorpus(),
    worst: a.number('worst', 0, { integer: true, min: 0 }),
  }));
  // Imported once the command line is accepted: `--help` and a refused flag answer without loading the extractor.
  const { extractArticle } = await import('../src/content/extract/index.js');
  const pages = loadCorpus(corpus);
  if (pages.length === 0) throw new Error(`no pages found in ${corpus}`);
  const started = performance.now();
  const score = scoreCorpus(pages, (html, url) => extractArticle(html, { url }).text);
  const seconds = (performance.now() - started) / 1000;
  const ranked = [...score.perPage].sort((a, b) => a.f1 - b.f1).slice(0, worst);
  for (const p of ranked) {
    const f = (x: number) => x.toFixed(3);
    console.error(`${f(p.f1)} p=${f(p.precision)} r=${f(p.recall)} ${p.id.slice(0, 12)} ${p.url}${p.error ? ` ERROR ${p.error}` : ''}`);
  }
  console.error(`${pages.length} pages in ${seconds.toFixed(1)} s`);
  const { perPage: _perPage, ...summary } = score;
  console.log(JSON.stringify(summary));
}

runBench(main);
