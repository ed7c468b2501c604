/**
 * What a question asks for, read from its words: an overview of the room's subject, or something
 * about the discussion itself (who said what, what was discussed). The pipeline uses it to decide
 * whether the recent chat can answer (so the ask is no abstention); the local model to choose
 * what to quote.
 */
import { contentTerms } from './local/extractive-text.js';

/** "What is this about?", "tl;dr", "summarize": questions about the subject as a whole. */
const OVERVIEW =
  /\b(summar(y|i[sz]e)|tl;?\s?dr|overview|gist|main (point|idea)s?|key (point|takeaway)s?)\b|\bwhat('s| is| are)? (it|(this|that|the)( (article|post|video|story|thread|room|topic|piece|page))?) (all )?about\b|^\s*what('s| is| are| was) [^?.!]{1,60} about\s*\??\s*$/i;

/** "what we discussed", "who said", "what did Ann say", "earlier", "the conversation": questions about the room's own talk. */
const DISCUSSION =
  /\b(we|us|you|everyone|people|somebody|someone|anyone)\b[^.?!]{0,40}\b(discuss(ed|ing)?|talk(ed|ing)?|sa(y|id)|mention(ed)?|chat(ted)?|agree[ds]?|decide[ds]?|ask(ed)?)\b|\b(discussion|conversation|chat|thread)\b|\bwho (said|asked|mentioned|wrote|thinks?|thought|agreed|claimed)\b|\bdid \p{L}+ (say|mention|ask|write|claim|think)\b|\b(earlier|so far|above|before|last time|previously)\b/iu;

/** Whether the question asks for an overview rather than a fact. */
export function asksForOverview(question: string): boolean {
  return OVERVIEW.test(question);
}

/** Content terms a question needs before its words can show it is off the room's subject. */
export const SPECIFIC_TERMS_MIN = 2;

/**
 * Whether a question is too general to be judged off-topic by its words: an overview, or one
 * with fewer than SPECIFIC_TERMS_MIN content terms ("what happened?", "why?"). Asked in a room,
 * such a question is about the room's subject.
 */
export function aboutTheRoom(question: string): boolean {
  return asksForOverview(question) || new Set(contentTerms(question)).size < SPECIFIC_TERMS_MIN;
}

/** Whether the question is about the discussion itself rather than the indexed content. */
export function asksAboutDiscussion(question: string): boolean {
  return DISCUSSION.test(question);
}

/** Share of a line's distinct content terms the question needs before the line counts as answering it. */
export const CHAT_COVERAGE_MIN = 0.5;

/**
 * Whether the chat `lines` can answer `question`: it asks about the discussion, a line names
 * someone or something the question names ("how much did Bob lose?" and "my cousin Bob lost 4000
 * dollars"), or a line holds at least half of the question's distinct content terms.
 */
export function chatAnswers(question: string, lines: string[]): boolean {
  if (!lines.length) return false;
  if (asksAboutDiscussion(question)) return true;
  const terms = [...new Set(contentTerms(question))];
  if (!terms.length) return false;
  const names = new Set(contentTerms(namesIn(question).join(' ')));
  return lines.some((line) => {
    const have = new Set(contentTerms(line));
    if ([...names].some((t) => have.has(t))) return true;
    return terms.filter((t) => have.has(t)).length / terms.length >= CHAT_COVERAGE_MIN;
  });
}

/** Distinct content terms of the question that `line` holds too. */
export function sharedTerms(question: string, line: string): number {
  const have = new Set(contentTerms(line));
  return new Set(contentTerms(question).filter((t) => have.has(t))).size;
}

/** Capitalised words after the first: the names a question mentions. */
function namesIn(question: string): string[] {
  return (question.match(/\p{L}[\p{L}\p{N}'-]*/gu) ?? []).slice(1).filter((w) => /^\p{Lu}/u.test(w));
}
