/**
 * Words a source may say for a question's word: "how long is the film?" and `the 78-minute
 * melodrama`.
 * Read only where a question's terms are looked for in sources (stage 3's passage choice, the
 * built-in model's sentence choice), not by the stemmer: the built-in embedder and search keep
 * each word its own, so "documentary evidence" is no film to them. A kin found counts as the question's
 * own term, with its weight, once.
 */
import { contentTerms, stem } from './extractive-text.js';

/** Words of one kind, each a name for the others in news text. Kept small: each pair is a guess about every text. */
const KIN_GROUPS = [
  ['film', 'movie', 'melodrama', 'documentary'],
  ['ship', 'vessel'],
  ['cost', 'price'],
].map((group) => group.map(stem));

/** A word written with hyphens between its parts: `post-mortem`, `co-founder`, `e-mail`. */
const HYPHENATED = /\p{L}+(?:[-\u2010\u2011]\p{L}+)+/gu;

/** What a source's word stands for among a question's terms: one term (a kin), or the parts of a compound. */
export type Kin = ReadonlyMap<string, string | readonly string[]>;

/**
 * For `asked` (a question's terms), the terms that stand for one of them: each kin of an asked
 * term maps to it, unless the question asks for the kin itself. Given the question, a word it
 * writes with a hyphen (`post-mortem`) is found written as one word too (`postmortem`), which
 * stands for all its parts: "who wrote the post-mortem?" held no term of the article's "according
 * to the postmortem, signed by …", and was "not covered".
 */
export function kinOf(asked: Iterable<string>, question?: string): Map<string, string | string[]> {
  const wanted = new Set(asked);
  const out = new Map<string, string | string[]>();
  for (const term of wanted) {
    for (const group of KIN_GROUPS) {
      if (!group.includes(term)) continue;
      for (const kin of group) if (!wanted.has(kin) && !out.has(kin)) out.set(kin, term);
    }
  }
  if (question !== undefined) for (const [joined, parts] of compoundsOf(question, wanted)) if (!out.has(joined)) out.set(joined, parts);
  return out;
}

/**
 * The words `question` writes with a hyphen, each as its term written as one word (`postmortem`)
 * and the parts among `asked` it stands for (`post`, `mortem`).
 */
export function compoundsOf(question: string, asked: Iterable<string>): Map<string, string[]> {
  const wanted = new Set(asked);
  const out = new Map<string, string[]>();
  for (const word of question.match(HYPHENATED) ?? []) {
    const parts = contentTerms(word).filter((t) => wanted.has(t));
    const joined = contentTerms(word.replace(/[-\u2010\u2011]/g, ''))[0];
    if (parts.length && joined && !wanted.has(joined) && !out.has(joined)) out.set(joined, parts);
  }
  return out;
}

/** `terms` with each kin read as the asked term it stands for, and a compound as its parts, in order. */
export function asAsked(terms: string[], kin: Kin): string[] {
  return kin.size ? terms.flatMap((t) => kin.get(t) ?? t) : terms;
}

/**
 * `terms` (a text's) with the terms of its hyphenated words written as one that the question asks
 * (`wanted`): "who wrote the postmortem?" and a report's `post-mortem`.
 */
export function withJoined(terms: string[], text: string, wanted: ReadonlySet<string>): string[] {
  if (!text.includes('-') && !/[\u2010\u2011]/.test(text)) return terms;
  const joined = (text.match(HYPHENATED) ?? []).flatMap((word) => contentTerms(word.replace(/[-\u2010\u2011]/g, '')).filter((t) => wanted.has(t)));
  return joined.length ? [...terms, ...joined] : terms;
}
