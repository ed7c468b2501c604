/**
 * The second gate of fusion and compaction: two memory chunks whose vectors are close are made
 * one only if their words also say the same thing. Cosine alone fuses "I love the new Prius" with
 * "I no longer love the new Prius"; this gate refuses a pair when one side negates what the other
 * does not, when their numbers differ, or when they share too few content words.
 */
import { contentTerms } from '../../ai/local/extractive-text.js';
import { CHAT_STAMP } from '../../text.js';

/** Share of the shorter side's distinct content terms the other side must hold. */
export const SAME_MEANING_OVERLAP = 0.6;

/** Words that turn a statement around ("n't" included, however the apostrophe is written). */
const NEGATION =
  /\b(?:not|no|never|none|nothing|nobody|neither|nor|cannot|without|hardly|barely|anymore|stopped|quit|false|wrong|disagree|dislike|hate)\b|n['’]t\b/gi;

const STAMPS = new RegExp(CHAT_STAMP.source, 'g');
/** Numbers as written: 4000, 4,000, 3.5, 12%. At most 32 groups: `1.1.1…` over megabytes threw RangeError. */
const NUMBER = /\d+(?:[.,]\d+){0,32}/g;
/** A fused pair's `[A]: `/`[B]: ` marks at the start of its lines. */
const MARKS = /^\[[AB]\]: /gm;

/** The chunk's text without what differs between two tellings of one thing: chat stamps and `[A]:`/`[B]:` marks. */
function said(text: string): string {
  return text.replace(STAMPS, ' ').replace(MARKS, '');
}

function negations(text: string): number {
  return text.match(NEGATION)?.length ?? 0;
}

/** A number as the gate compares it: without its thousands' commas. */
function plain(n: string): string {
  return n.includes(',') ? n.replaceAll(',', '') : n;
}

/**
 * Whether `x` and `y` carry the same distinct numbers (thousands' commas aside), in any order and
 * however often. As sets, not as sorted lists joined: a fused pair's gate reads ~6,000 texts, and
 * sorting and joining each one's numbers had been most of the gate's own time (docs/benchmarks.md,
 * "Forty-third session: fusion"); `y` stops at its first number that `x` lacks.
 */
function sameNumbers(x: string, y: string): boolean {
  const inX = new Set<string>();
  for (const n of x.match(NUMBER) ?? []) inX.add(plain(n));
  const found = y.match(NUMBER);
  if (!found) return inX.size === 0;
  const inY = new Set<string>();
  for (const n of found) {
    const p = plain(n);
    if (!inX.has(p)) return false;
    inY.add(p);
  }
  return inY.size === inX.size;
}

/**
 * Whether `a` and `b` say the same thing by their words: the shorter one's content terms are
 * mostly in the other, neither negates what the other affirms (the parity of their negations
 * agrees), and they carry the same numbers.
 */
export function saySameThing(a: string, b: string): boolean {
  const x = said(a);
  const y = said(b);
  if (negations(x) % 2 !== negations(y) % 2) return false;
  if (!sameNumbers(x, y)) return false;
  const tx = new Set(contentTerms(x));
  const ty = new Set(contentTerms(y));
  const [small, large] = tx.size <= ty.size ? [tx, ty] : [ty, tx];
  if (!small.size) return x.trim().toLowerCase() === y.trim().toLowerCase();
  let shared = 0;
  for (const t of small) if (large.has(t)) shared++;
  return shared / small.size >= SAME_MEANING_OVERLAP;
}
