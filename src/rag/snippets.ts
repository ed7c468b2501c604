/** Stage-1 snippets: the title plus about 150 characters around the chunk's best-matching sentence. */
import { cutAround, stripTitle } from '../search/snippet.js';
import { matchQuery, type MatchedText } from './query-match.js';

/** Characters of chunk text a snippet keeps besides the title. */
export const SNIPPET_CHARS = 150;

export { stripTitle, type MatchedText };

/** The query terms anywhere in a matched text. */
export function termsOf(m: MatchedText): string[] {
  return [...new Set(m.matches.flat())];
}

/** About `size` characters starting at the best-matching sentence, cut at word boundaries. */
export function windowOf(m: MatchedText, idf: (t: string) => number, size = SNIPPET_CHARS): string {
  const { flat, sentences, matches } = m;
  if (flat.length <= size) return flat;
  let best = 0;
  let bestScore = -1;
  matches.forEach((terms, i) => {
    const score = terms.reduce((sum, t) => sum + idf(t), 0);
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
  });
  return cutAround(flat, sentences[best], new Set(matches[best]), size);
}

/** windowOf for a text not matched yet. */
export function windowAround(text: string, query: Set<string>, idf: (t: string) => number, size = SNIPPET_CHARS): string {
  return windowOf(matchQuery(text, query), idf, size);
}

/** `Label: …text…`: what the reranker sees of one candidate. */
export function makeSnippet(label: string, excerpt: string): string {
  return excerpt ? `${label}: ${excerpt}` : label;
}
