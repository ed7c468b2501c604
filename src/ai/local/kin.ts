/**
 * Words a source may say for a question's word: "how long is the film?" and `the 78-minute
 * melodrama`.
 * Read only where a question's terms are looked for in sources (stage 3's passage choice, the
 * built-in model's sentence choice), not by the stemmer: the built-in embedder and search keep
 * each word its own, so "documentary evidence" is no film to them. A kin found counts as the question's
 * own term, with its weight, once.
 */
import { stem } from './extractive-text.js';

/** Words of one kind, each a name for the others in news text. Kept small: each pair is a guess about every text. */
const KIN_GROUPS = [
  ['film', 'movie', 'melodrama', 'documentary'],
  ['ship', 'vessel'],
  ['cost', 'price'],
].map((group) => group.map(stem));

/**
 * For `asked` (a question's terms), the terms that stand for one of them: each kin of an asked
 * term maps to it, unless the question asks for the kin itself.
 */
export function kinOf(asked: Iterable<string>): Map<string, string> {
  const wanted = new Set(asked);
  const out = new Map<string, string>();
  for (const term of wanted) {
    for (const group of KIN_GROUPS) {
      if (!group.includes(term)) continue;
      for (const kin of group) if (!wanted.has(kin) && !out.has(kin)) out.set(kin, term);
    }
  }
  return out;
}

/** `terms` with each kin read as the asked term it stands for, in order. */
export function asAsked(terms: string[], kin: ReadonlyMap<string, string>): string[] {
  return kin.size ? terms.map((t) => kin.get(t) ?? t) : terms;
}
