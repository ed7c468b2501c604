/**
 * A news headline tells its item's main change with its size (`AI triage pilot cuts emergency
 * waits by 22 minutes in Vessbridge`), often in words its text does not use again (`the median
 * time … to a first assessment … fell from 47 minutes … to 25 minutes`). A reader asks in the
 * headline's words: "how much did waits drop?" in that article's room abstained, and "by how much
 * did the pilot cut waits?" was answered with another sentence holding "waited" and a number.
 */
import { answerType } from './extractive-answer.js';
import { askedTerms, contentTerms } from './extractive-text.js';

/** Verbs of a change in size, as terms. */
const CHANGE_VERBS = new Set(
  contentTerms('fall drop cut reduce lower rise increase decrease grow shrink climb jump gain save slash halve double triple boost decline shorten'),
);
/** Words of a change in size, as terms: a verb of one, or a comparative asked with "how much". */
const CHANGE = new Set([...CHANGE_VERBS, ...contentTerms('shorter cheaper faster slower longer higher bigger smaller fewer')]);

/** A headline's clauses: `Pilot cuts waits by 22 minutes; nurses warn on staffing` says two things. */
const CLAUSE_BREAK = /\s*;\s*|\s+[–—]\s+|:\s+/;

/**
 * The clause of an item's `title` that answers `question` when it asks how much something changed
 * ("how much did waits drop?", "how much cheaper are fees?"): the clause tells a change with a
 * number and names every other term the question asks. Null for any other question or title.
 */
export function headlineChange(question: string, title: string): string | null {
  if (answerType(question) !== 'number') return null;
  const asked = new Set(askedTerms(question));
  const changes = [...asked].filter((t) => CHANGE.has(t));
  const rest = [...asked].filter((t) => !CHANGE.has(t));
  if (!changes.length || !rest.length) return null;
  const said = new Set(contentTerms(question));
  for (const clause of title.split(CLAUSE_BREAK)) {
    const terms = new Set(contentTerms(clause));
    const tellsChange = [...terms].some((t) => CHANGE.has(t));
    const newNumber = (clause.match(/\d[\d.,]*/g) ?? []).some((n) => !said.has(n));
    if (tellsChange && newNumber && rest.every((t) => terms.has(t))) return clause.trim();
  }
  return null;
}

/**
 * Whether a sentence tells how much one of `asked` changed, by a verb (`The median fee … fell from
 * $0.042 … to $0.007`), after its headline: a comparative alone (`waited a median of 6 minutes
 * longer`) tells another difference.
 */
export function tellsChangeOf(sentence: string, asked: ReadonlySet<string>): boolean {
  const terms = contentTerms(sentence);
  return /\d/.test(sentence) && terms.some((t) => CHANGE_VERBS.has(t)) && terms.some((t) => asked.has(t) && !CHANGE.has(t));
}
