/**
 * Stage 3 passage choice: the part of an item (up to 1,000 chars) that best answers the question,
 * not its first 1,000 chars. Windows of whole sentences are scored by the IDF-weighted question
 * terms they cover; ties go to the window best centred on the strongest sentence.
 */
import { askedTerms, idfTable } from '../ai/local/extractive-text.js';
import { squash } from '../text.js';
import { matchQuery } from './query-match.js';
import { clip } from '../text.js';

export const PASSAGE_CHARS = 1000;
/** Weight of the per-sentence scores beside the window's distinct coverage. */
const DENSITY_WEIGHT = 0.25;

/**
 * The most relevant passage of `text` for `question`, at most `max` chars. `hint` (the chunk search
 * matched) locates the passage when the question shares no words with the text.
 */
export function bestPassage(text: string, question: string, max = PASSAGE_CHARS, hint?: string): string {
  if (text.length <= max) return squash(text);
  // Only question terms matter, so each sentence is reduced to the question terms it holds.
  const { flat, sentences, matches: matched } = matchQuery(text, new Set(askedTerms(question)));
  if (flat.length <= max) return flat;
  const idf = idfTable(matched);
  const scores = matched.map((m) => m.reduce((sum, t) => sum + idf(t), 0));
  const top = scores.reduce((b, s, i) => (s > scores[b] ? i : b), 0);
  if (scores[top] === 0) return fromHint(flat, max, hint);

  // Windows of whole sentences, slid with counts of the question terms inside, so a long body
  // costs one pass.
  let best = { start: 0, end: 0, score: -1, offCentre: Infinity };
  const anchorCentre = (sentences[top].start + sentences[top].end) / 2;
  const inside = new Map<string, number>();
  let covered = 0;
  let density = 0;
  let j = -1;
  for (let i = 0; i < sentences.length; i++) {
    while (j + 1 < sentences.length && (j < i || sentences[j + 1].end - sentences[i].start <= max)) {
      j++;
      density += scores[j];
      for (const t of matched[j]) {
        const n = inside.get(t) ?? 0;
        if (n === 0) covered += idf(t);
        inside.set(t, n + 1);
      }
    }
    if (density > 0) {
      const score = covered + DENSITY_WEIGHT * density;
      const offCentre = Math.abs((sentences[i].start + sentences[j].end) / 2 - anchorCentre);
      if (score > best.score + 1e-9 || (Math.abs(score - best.score) <= 1e-9 && offCentre < best.offCentre)) {
        best = { start: i, end: j, score, offCentre };
      }
    }
    density -= scores[i];
    for (const t of matched[i]) {
      const n = inside.get(t)! - 1;
      if (n === 0) covered -= idf(t);
      inside.set(t, n);
    }
  }
  return clip(flat.slice(sentences[best.start].start, sentences[best.end].end), max);
}

function fromHint(flat: string, max: number, hint?: string): string {
  const probe = hint === undefined ? '' : squash(hint).slice(0, 60);
  const at = probe ? flat.indexOf(probe) : -1;
  return clip(flat.slice(Math.max(0, at)), max);
}
