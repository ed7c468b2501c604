/**
 * Extractive summaries: the most central sentences of a text (TF-IDF cosine to all the others,
 * plus closeness to an optional query), picked with a redundancy penalty and returned in their
 * original order.
 */
import { CHAT_STAMP } from '../../text.js';
import { contentTerms, idfTable, splitSentences, type Sentence } from './extractive-text.js';

export const SUMMARY_MAX_CHARS = 700;
export const SUMMARY_MAX_SENTENCES = 4;
/** How much a sentence's similarity to what is already picked counts against it. */
const REDUNDANCY = 0.6;
const QUERY_WEIGHT = 1;
/** Sentences scoring under this share of the best one are never picked (outliers, asides). */
const MIN_SHARE = 0.25;

export interface SummaryOptions {
  query?: string;
  maxChars?: number;
  maxSentences?: number;
}

type Vector = Map<string, number>;

function vectorOf(terms: string[], idf: (t: string) => number): Vector {
  const v: Vector = new Map();
  for (const t of terms) v.set(t, (v.get(t) ?? 0) + 1);
  let norm = 0;
  for (const [t, c] of v) {
    const w = (1 + Math.log(c)) * idf(t);
    v.set(t, w);
    norm += w * w;
  }
  norm = Math.sqrt(norm) || 1;
  for (const [t, w] of v) v.set(t, w / norm);
  return v;
}

function cosine(a: Vector, b: Vector): number {
  const [small, large] = a.size < b.size ? [a, b] : [b, a];
  let s = 0;
  for (const [t, w] of small) s += w * (large.get(t) ?? 0);
  return s;
}

/** The summary sentences of `text`, in the order they appear. */
export function centralSentences(text: string, options: SummaryOptions = {}): string[] {
  return central(text, options).map((s) => s.text);
}

/** A line of chat's speaker and time stamp (`Ann (24 Nov 2026, 19:20): `). */
const CHAT_HEADER = new RegExp(`^[^\\n]{1,200}? ${CHAT_STAMP.source}: `);

/**
 * The summary of `text` as one text: its central sentences joined. A chat's (lines of
 * `Ann (24 Nov 2026, 19:20): …`) stay lines, each sentence under its own line's speaker and time:
 * joined on one line, a sentence from the middle of Bob's message read as said by whoever spoke
 * first on it, and "yesterday" lost the day it was said.
 */
export function summaryOf(text: string, options: SummaryOptions = {}): string {
  const picked = central(text, options);
  if (!picked.some((s) => CHAT_HEADER.test(text.slice(lineStart(text, s.start))))) return picked.map((s) => s.text).join(' ');
  const lines: string[] = [];
  let lastLine = -1;
  for (const s of picked) {
    const from = lineStart(text, s.start);
    if (from === lastLine) lines[lines.length - 1] += ` ${s.text}`;
    else lines.push(from === s.start ? s.text : `${CHAT_HEADER.exec(text.slice(from))?.[0] ?? ''}${s.text}`);
    lastLine = from;
  }
  return lines.join('\n');
}

const lineStart = (text: string, at: number) => text.lastIndexOf('\n', at - 1) + 1;

/** The summary's sentences, in the order they appear. */
function central(text: string, options: SummaryOptions): Sentence[] {
  const maxChars = options.maxChars ?? SUMMARY_MAX_CHARS;
  const maxSentences = options.maxSentences ?? SUMMARY_MAX_SENTENCES;
  const sentences = splitSentences(text).filter((s) => contentTerms(s.text).length > 0);
  if (sentences.length <= 1) return sentences;
  const terms = sentences.map((s) => contentTerms(s.text));
  const idf = idfTable(terms);
  const vectors = terms.map((t) => vectorOf(t, idf));
  const query = options.query ? vectorOf(contentTerms(options.query), idf) : null;
  // A sentence's summed cosine to all the others is its cosine to their sum (the vectors are unit
  // length): one pass over the sentences, not one per pair, since a text may hold tens of
  // thousands of them (a thread's summary reads its last 60 messages, 4,000 characters each).
  const total: Vector = new Map();
  for (const v of vectors) for (const [t, w] of v) total.set(t, (total.get(t) ?? 0) + w);
  const centrality = vectors.map((v) => (cosine(v, total) - cosine(v, v)) / (vectors.length - 1));
  const base = vectors.map((v, i) => centrality[i] + (query ? QUERY_WEIGHT * cosine(v, query) : 0));

  const floor = MIN_SHARE * base.reduce((m, x) => Math.max(m, x), -Infinity);
  const picked: number[] = [];
  let chars = 0;
  while (picked.length < maxSentences) {
    let best = -1;
    let bestScore = -Infinity;
    for (let i = 0; i < sentences.length; i++) {
      if (picked.includes(i) || base[i] < floor || chars + sentences[i].text.length > maxChars) continue;
      const overlap = picked.reduce((m, j) => Math.max(m, cosine(vectors[i], vectors[j])), 0);
      const score = base[i] - REDUNDANCY * overlap;
      if (score > bestScore) {
        best = i;
        bestScore = score;
      }
    }
    if (best < 0) break;
    picked.push(best);
    chars += sentences[best].text.length + 1;
  }
  if (!picked.length) return [{ ...sentences[0], text: sentences[0].text.slice(0, maxChars) }];
  return picked.sort((a, b) => a - b).map((i) => sentences[i]);
}
