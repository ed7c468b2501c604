/**
 * Which sources name what a question asks about: the built-in model's answer begins from one of
 * them when it can. A sentence of a document that never names the question's subject answers
 * something else, however many of the question's other words it holds.
 */
import type { GroundedSource } from '../grounded-prompt.js';
import { namesIn } from '../questions.js';
import { contentTerms } from './extractive-text.js';

/**
 * The ranked sentences, led by the best relevant one from a source naming what the question
 * names (namesIn) when the best one is a document's that names none of it: "How many people have
 * died of plague in Baghdad?" was answered with the Black Death passage's `In 1466, perhaps 40,000
 * people died of the plague in Paris`, over `Baghdad has suffered severely …, and sometimes
 * two-thirds of its population has been wiped out`. Unchanged when the question names nothing,
 * when the best sentence's source names it, or when no source naming it has a relevant sentence.
 */
export function namedSubjectFirst<S extends { n: number }>(question: string, sources: GroundedSource[], ranked: S[], relevant: (s: S) => boolean): S[] {
  const [first] = ranked;
  const names = namesIn(question).filter((name) => contentTerms(name).length && !NATIONALITY.test(name));
  const source = first && sources.find((src) => src.n === first.n);
  if (!source || !names.length || (source.section ?? 'document') !== 'document' || namesAny(source, names)) return ranked;
  const naming = new Set(sources.filter((src) => src !== source && namesAny(src, names)).map((src) => src.n));
  const lead = naming.size ? ranked.find((s) => naming.has(s.n) && relevant(s)) : undefined;
  return lead ? [lead, ...ranked.filter((s) => s !== lead)] : ranked;
}

/** Whether a source's label or text names one of `names` (namedIn). */
function namesAny(src: GroundedSource, names: string[]): boolean {
  const text = `${src.label}\n${src.content}`;
  const terms = new Set(contentTerms(text));
  return names.some((name) => namedIn(name, text, terms));
}

/** Words passed over between the capitalised words that spell an abbreviation: `Department of Energy`. */
const JOINING = new Set(['of', 'and', 'the', 'for']);
/** A capitalised word at a token's start (a single class repeated: no backtracking state per character). */
const CAPITALISED = /^\p{Lu}[\p{L}'’-]*/u;

/**
 * A word of nationality or language (`French`, `English`, `Chinese`, `Dutch`, `Italian`,
 * `European`): it says whose, not what is asked about, and a source on the French king may write
 * `France` or his name and never `French` ("Which French king issued this declaration?" led with
 * another article's `French translation of the New Testament`).
 */
const NATIONALITY = /^\p{Lu}\p{Ll}+(?:ish|ese|ch|ian|ean)$/u;

/** Capitals only, two to five: an abbreviation (`EU`, `NASA`), which a source may write out. */
const ABBREVIATION = /^\p{Lu}{2,5}$/u;

/**
 * Whether `text` (whose content terms are `terms`) names `name`: holds one of its terms, or, for
 * an abbreviation, capitalised words in a row whose initials spell it (`the European Union` for
 * "EU", `National Aeronautics and Space Administration` for "NASA").
 */
function namedIn(name: string, text: string, terms: ReadonlySet<string>): boolean {
  if (contentTerms(name).some((t) => terms.has(t))) return true;
  return ABBREVIATION.test(name) && spelledOut(name, text);
}

/**
 * Whether capitalised words in a row spell `name` by their initials. Read token by token, not by
 * one pattern repeating a group over the run: a page of megabytes of capitalised words would have
 * exhausted the regex engine's backtrack stack.
 */
function spelledOut(name: string, text: string): boolean {
  let initials = '';
  for (const [token] of text.matchAll(/\S+/g)) {
    const word = CAPITALISED.exec(token)?.[0];
    if (word) {
      initials = (initials + word[0]).slice(-name.length);
      if (initials === name) return true;
      // `Union.`: a mark after the word ends the run.
      if (word.length < token.length) initials = '';
    } else if (!JOINING.has(token)) initials = '';
  }
  return false;
}
