/**
 * Whether a further sentence bears on a question beside the answer already chosen: the built-in
 * model quotes a second sentence scoring near the first, and a sentence can score so on its
 * neighbours' words, its source's rank or a short line's embedding alone.
 */
import { askedTerms, contentTerms } from './extractive-text.js';
import { asAsked, kinOf } from './kin.js';
import { spokenText } from '../questions.js';

/**
 * Content terms of its own (besides the question's) a sentence needs to add to an answer that
 * already holds every question term it holds: `The average household size was 3.07.` after the
 * family size, `Thanks, Mel!`, `Sounds like your event was amazing!` say nothing more of it.
 */
export const OWN_TERMS_MIN = 4;

/** A sentence that ends asking: `… and you voted to unionise?`, closing quotes or brackets after the mark. */
export const ASKS = /\?["'\u201d\u2019)\]]*$/;

/** The `Q: ` or `A: ` a remembered exchange's lines start with. */
const EXCHANGE_MARK = /^[QA]: /;

/**
 * Whether `sentence` adds to `answer` (the sentences chosen so far) for `question`: it holds a
 * term of the question (a kin counting as its term), and either one the answer does not hold or
 * at least OWN_TERMS_MIN terms of its own (a sentence of the answer that asks holds none). A line of chat is read without its speaker and time for
 * what it says of its own; its speaker still counts as a question term it holds (`Melanie: …` for
 * "what did Melanie paint?").
 */
export function addsToAnswer(question: string, answer: readonly string[], sentence: string): boolean {
  const asked = new Set(askedTerms(question));
  const kin = kinOf(asked, question);
  const held = (text: string) => asAsked(contentTerms(text), kin).filter((t) => asked.has(t));
  const mine = held(sentence);
  if (!mine.length) return false;
  // An earlier ask quoted first (`Ann: @ai … is Rust 2.0 out?`) holds the words it asks, not their answer.
  const answered = new Set(answer.filter((a) => !ASKS.test(a)).flatMap(held));
  if (mine.some((t) => !answered.has(t))) return true;
  return new Set(asAsked(saidTerms(sentence), kin).filter((t) => !asked.has(t))).size >= OWN_TERMS_MIN;
}

/**
 * Whether `sentence` says something of its own, at least OWN_TERMS_MIN distinct content terms, as
 * the sentence bearing out a reason must: `Certainly!` after the Shah's `"Of course [the price of
 * oil] is going to rise...` bears nothing out.
 */
export function saysSomething(sentence: string): boolean {
  return new Set(saidTerms(sentence)).size >= OWN_TERMS_MIN;
}

/** The content terms of what a sentence says: a chat line's without its speaker and time. */
function saidTerms(sentence: string): string[] {
  return contentTerms(spokenText(sentence).replace(EXCHANGE_MARK, ''));
}
