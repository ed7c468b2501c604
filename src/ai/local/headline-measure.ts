/**
 * A news headline tells its item's main fact with its size (`AI triage pilot cuts emergency waits
 * by 22 minutes in Vessbridge`, `Veldra Energy delays Skarvik gigafactory by nine months …`), often
 * in words its text does not use again (`the median time … to a first assessment … fell from 47
 * minutes … to 25 minutes`, `pushed back the opening … by nine months`). A reader asks in the
 * headline's words: "how much did waits drop?" in that article's room abstained, "by how much did
 * the pilot cut waits?" was answered with another sentence holding "waited" and a number, and "how
 * long is the delay?" with a comment's `The delay is just another boring problem.`
 */
import { priceTerms } from './answer-cues.js';
import { answerType, beyondAnyone, hasCue, holdsMoney, NUMBER_WORDS } from './extractive-answer.js';
import { askedTerms, contentTerms, termOf, words } from './extractive-text.js';

/** Verbs of a change in size, as terms. */
const CHANGE_VERBS = new Set(
  contentTerms('fall drop cut reduce lower rise increase decrease grow shrink climb jump gain lose loss save slash halve double triple boost decline shorten'),
);
/** Words of a change in size, as terms: a verb of one, or a comparative asked with "how much". */
const CHANGE = new Set([...CHANGE_VERBS, ...contentTerms('shorter cheaper faster slower longer higher bigger smaller fewer')]);

/**
 * Verbs that only say a count was made ("how many vents were found?", "… were reported?"): the
 * headline counting the thing (`Survey maps 31 hydrothermal vents`) tells it in its own verb. A
 * verb of a deed ("how many died?", "how many users were hit?") is asked and must be held.
 */
const COUNTED = new Set(contentTerms('find found discover identify record report count register confirm detect spot'));

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
  /** The terms it asks besides its words of change, of a price and of a count made. */
  rest: string[];
  /** Whether it asks a price ("how much will the tram cost?"): the clause must hold an amount of money. */
  priceAsked: boolean;
  /** The term a "how many …?" question counts (`vent` of "how many vents were found?"), if it names one. */
  counted: string | null;
  /** Its words, as hasCue reads what a question names. */
  named: Set<string>;
}

/** What `question` asks when it asks a number or a span of something it names; null otherwise. */
function measureAsked(question: string): MeasureAsked | null {
  const type = answerType(question);
  if (type !== 'number' && type !== 'duration') return null;
  const asked = [...new Set(askedTerms(question))];
  const changeAsked = asked.some((t) => CHANGE.has(t));
  // "How much did prices rise?" asks a change of prices, not a price.
  const price = type === 'number' && !changeAsked ? priceTerms(question) : new Set<string>();
  const howMany = type === 'number' ? HOW_MANY.exec(question) : null;
  const named = asked.filter((t) => !CHANGE.has(t) && !price.has(t) && !(howMany && COUNTED.has(t)));
  const counted = howMany ? (contentTerms(howMany[1]).find((t) => named.includes(t)) ?? null) : null;
  // A headline seldom names whoever it happened to (`… pill cuts body weight by 13.2% …`), unless
  // they are what is counted ("how many people were in the trial?" is not told by `phase 3 trial`).
  const beyond = beyondAnyone(new Set(named));
  const rest = named.filter((t) => t === counted || beyond.has(t));
  if (!rest.length) return null;
  return {
    type,
    changeAsked,
    priceAsked: asked.some((t) => price.has(t)),
    counted,
    rest,
    named: wordsOf(question),
  };
}

/** "how many" and what follows it, bounded (a question is a user's text). */
const HOW_MANY = /\bhow many\b(.{0,200})/i;
/** How many words may stand between a number and what it counts: `12 methanol-powered container ships`. */
const COUNT_REACH = 4;
/** Numbers in words, but a lone "one" (`one client misses blocks`), as `measures` reads them. */
const COUNT_WORDS = new Set(NUMBER_WORDS.split('|').filter((w) => w !== 'one'));

/**
 * Whether `text` counts `term`: a number, then the term within COUNT_REACH words (`31 hydrothermal
 * vents`, `54 of 61 Lowmark firms`). A number of another thing beside the term is no count of it:
 * `found … four candidate new species` around the vents, `mapped 140 kilometres` of the ridge.
 */
export function counts(text: string, term: string): boolean {
  const tokens = words(text);
  for (let i = 0; i < tokens.length; i++) {
    if (!/^\d/.test(tokens[i]) && !COUNT_WORDS.has(tokens[i])) continue;
    for (let j = i + 1; j <= i + COUNT_REACH && j < tokens.length; j++) if (termOf(tokens[j]) === term) return true;
  }
  return false;
}

/**
 * The clause of a document's `title` that answers `question` when it asks a number or a span
 * ("how much did waits drop?", "how long is the delay?", "how many ships did Aurelian order?"):
 * the clause holds a number the question does not name (a span, for a span) and every term the
 * question asks besides its words of change, of a price and of a count made ("how many vents were
 * found?"), tells a change when one is asked, an amount of money when a price is, and counts the
 * thing a "how many" question counts. Null for any other question or title.
 */
export function headlineMeasure(question: string, title: string): string | null {
  const asked = measureAsked(question);
  if (!asked) return null;
  for (const clause of title.split(CLAUSE_BREAK)) {
    const terms = new Set(contentTerms(clause));
    if (asked.changeAsked && ![...terms].some((t) => CHANGE_VERBS.has(t))) continue;
    if (asked.priceAsked && !holdsMoney(clause)) continue;
    if (asked.counted && !counts(clause, asked.counted)) continue;
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
 * thing. So does one giving again a figure of the `headline` clause, whatever its words.
 */
export function goesOnFromHeadline(sentence: string, question: string, headline = ''): boolean {
  const asked = measureAsked(question);
  if (!asked) return false;
  if (hasCue(asked.type, sentence, asked.named) && restates(sentence, headline)) return true;
  const terms = new Set(contentTerms(sentence));
  const held = asked.rest.filter((t) => terms.has(t)).length;
  return (
    hasCue(asked.type, sentence, asked.named) &&
    (!asked.changeAsked || [...terms].some((t) => CHANGE_VERBS.has(t))) &&
    (!asked.priceAsked || holdsMoney(sentence)) &&
    (!asked.counted || counts(sentence, asked.counted)) &&
    held >= Math.max(1, asked.rest.length - 1)
  );
}

/** A figure as written: `1.42`, `212,000`, `13.2`. */
const FIGURE = /\d+(?:[.,]\d+)*/g;

/**
 * Whether `sentence` gives again a figure of the headline's clause, a year aside: the same fact told
 * at length (`for a total price of $1.68 billion` after `orders 12 … ships for $1.68 billion`), in
 * words the question need not share (`vessels`, `price`).
 */
function restates(sentence: string, headline: string): boolean {
  // A small whole number (`12 ships`) is too often another thing's (`12 January`).
  const figures = new Set((headline.replace(YEAR, ' ').match(FIGURE) ?? []).filter((f) => f.length > 2 || /[.,]/.test(f)));
  if (!figures.size) return false;
  return (sentence.replace(YEAR, ' ').match(FIGURE) ?? []).some((f) => figures.has(f));
}

/** The term a "how many …?" question counts (`firm` of "how many firms took part?"), or null. */
export function countedTerm(question: string): string | null {
  return measureAsked(question)?.counted ?? null;
}
