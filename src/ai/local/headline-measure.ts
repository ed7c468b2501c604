/**
 * A news headline tells its item's main fact with its size (`AI triage pilot cuts emergency waits
 * by 22 minutes in Vessbridge`, `Veldra Energy delays Skarvik gigafactory by nine months …`), often
 * in words its text does not use again (`the median time … to a first assessment … fell from 47
 * minutes … to 25 minutes`, `pushed back the opening … by nine months`). A reader asks in the
 * headline's words: "how much did waits drop?" in that article's room abstained, "by how much did
 * the pilot cut waits?" was answered with another sentence holding "waited" and a number, and "how
 * long is the delay?" with a comment's `The delay is just another boring problem.`
 */
import { answerType, hasCue } from './extractive-answer.js';
import { askedTerms, contentTerms } from './extractive-text.js';

/** Verbs of a change in size, as terms. */
const CHANGE_VERBS = new Set(
  contentTerms('fall drop cut reduce lower rise increase decrease grow shrink climb jump gain save slash halve double triple boost decline shorten'),
);
/** Words of a change in size, as terms: a verb of one, or a comparative asked with "how much". */
const CHANGE = new Set([...CHANGE_VERBS, ...contentTerms('shorter cheaper faster slower longer higher bigger smaller fewer')]);

/**
 * A headline's clauses: `Pilot cuts waits by 22 minutes; nurses warn on staffing` says two things.
 * The spaces around a break are trimmed after the split: matched here, a title of 10,000 spaces
 * was rescanned from each of them.
 */
const CLAUSE_BREAK = /;|\s[–—]\s|:\s/;

/** The words of `text`, lower case, as hasCue reads what a question names. */
function wordsOf(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

/** What a question of a number or a span asks, read once for a title's clauses or an answer's sentences. */
interface MeasureAsked {
  type: 'number' | 'duration';
  /** Whether it asks a change (a verb of one, or a comparative with "how much"). */
  changeAsked: boolean;
  /** The terms it asks besides its words of change. */
  rest: string[];
  /** Its words, as hasCue reads what a question names. */
  named: Set<string>;
}

/** What `question` asks when it asks a number or a span of something it names; null otherwise. */
function measureAsked(question: string): MeasureAsked | null {
  const type = answerType(question);
  if (type !== 'number' && type !== 'duration') return null;
  const asked = [...new Set(askedTerms(question))];
  const rest = asked.filter((t) => !CHANGE.has(t));
  return rest.length ? { type, changeAsked: rest.length < asked.length, rest, named: wordsOf(question) } : null;
}

/**
 * The clause of a document's `title` that answers `question` when it asks a number or a span
 * ("how much did waits drop?", "how long is the delay?", "how many ships did Aurelian order?"):
 * the clause holds a number the question does not name (a span, for a span) and every term the
 * question asks besides its words of change, and tells a change when one is asked. Null for any
 * other question or title.
 */
export function headlineMeasure(question: string, title: string): string | null {
  const asked = measureAsked(question);
  if (!asked) return null;
  for (const clause of title.split(CLAUSE_BREAK)) {
    const terms = new Set(contentTerms(clause));
    if (asked.changeAsked && ![...terms].some((t) => CHANGE_VERBS.has(t))) continue;
    if (measures(asked.type, clause, asked.named) && asked.rest.every((t) => terms.has(t))) return clause.trim();
  }
  return null;
}

/**
 * Whether a clause holds what a question of `type` asks for: figures, or a span in words (`by nine
 * months`). A number word alone is no count of the thing (`one client misses blocks`), nor is a
 * year (`Restored 1924 silent film …` for "how long is the film?").
 */
function measures(type: MeasureAsked['type'], clause: string, named: Set<string>): boolean {
  const withoutYears = clause.replace(YEAR, ' ');
  return hasCue(type, withoutYears, named) && (/\d/.test(withoutYears) || hasCue('duration', withoutYears, named));
}
const YEAR = /\b(?:1[5-9]\d\d|20\d\d)\b(?![.,]\d)/g;

/**
 * Whether a sentence of the answer goes on from the headline's clause: it holds what the question
 * asks for (a number, a span), all the terms it asks besides its words of change but one, and a
 * verb of change when one is asked (`The median fee … fell from $0.042 … to $0.007`); a
 * comparative alone (`waited a median of 6 minutes longer`) tells another difference, and one
 * term (`The hottest vent measured … 362 °C` for "how many vents did the survey map?") another
 * thing.
 */
export function goesOnFromHeadline(sentence: string, question: string): boolean {
  const asked = measureAsked(question);
  if (!asked) return false;
  const terms = new Set(contentTerms(sentence));
  const held = asked.rest.filter((t) => terms.has(t)).length;
  return (
    hasCue(asked.type, sentence, asked.named) &&
    (!asked.changeAsked || [...terms].some((t) => CHANGE_VERBS.has(t))) &&
    held >= Math.max(1, asked.rest.length - 1)
  );
}
