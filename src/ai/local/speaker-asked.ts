/**
 * Questions about what one person in the discussion said ("what did Ann say?", "what has Guest
 * 7414 said about the nurses?"). Their words are the lines under their name, which the sentence
 * ranking cannot find: it matches what a line says, and the question names only who said it, so
 * "what did Guest 7414 say earlier?" was answered that the sources do not say, with the guest's
 * line in the recent chat.
 */
import type { GroundedSource } from '../grounded-prompt.js';
import { caselessLatin } from '../../protocol/confusables.js';
import { CHAT_STAMP } from '../../text.js';
import { contentTerms } from './extractive-text.js';
import { putToAssistant, spokenText } from '../questions.js';

/** `Alice (24 Nov 2026, 19:20): ` at a chat line's start, with the name. */
export const LINE_SPEAKER = new RegExp(`^([^\\n]{1,200}?) ${CHAT_STAMP.source}: `);

/**
 * "What did <name> say", and the verbs that ask the same (mention, write, ask, suggest, post,
 * think). Only the question's head is matched: what follows the verb ("about the nurses",
 * "earlier") is read from the rest of the text, so no pattern runs over it.
 */
const SPEAKER_ASKED =
  /^\W*what\s+(?:did|does|do|has|have|had|was|is)\s+(\S.{0,63}?)\s+(?:say|said|saying|mention(?:ed)?|write|wrote|written|writing|(ask(?:ed)?)|suggest(?:ed)?|post(?:ed)?|think|thought)\b/i;

/** Who a question asks about without naming a person of the discussion (left to other answers). */
const NOT_A_NAME =
  /^(?:we|you|people|everyone|everybody|they|y'?all|he|she|it|i|someone|somebody|anyone|the|this|that|these|those|a|an|[^\p{L}\p{N}])(?:\s|$)/iu;

/** Words after the verb that say when, not what about ("earlier", "so far"). */
const WHEN_WORDS = new Set(contentTerms('earlier before today here so far until now recently lately last time previously already yet again'));

/** Lines of one person an answer quotes, at most. */
export const SPEAKER_LINES_MAX = 4;

/** A line of the discussion a person said, with the source it is in. */
export interface SpokenLine {
  n: number;
  line: string;
}

/**
 * The person a question asks the words of, what about (its content terms; empty: anything), and
 * whether it asks what they asked (`asks`): their questions to the assistant, not what they said.
 */
export function speakerAsked(question: string): { name: string; about: string[]; asks: boolean } | null {
  const head = SPEAKER_ASKED.exec(question);
  if (!head) return null;
  const name = head[1].trim();
  if (NOT_A_NAME.test(name)) return null;
  const about = contentTerms(question.slice(head[0].length)).filter((t) => !WHEN_WORDS.has(t));
  return { name, about, asks: head[2] !== undefined };
}

/**
 * The lines of the person a question asks about (speakerAsked) in the discussion's sources: their
 * last SPEAKER_LINES_MAX, or, asked what they said about something, those of theirs sharing most
 * of its words, in the order they were said. Null when the question asks no person's words, no line
 * is theirs, or none of theirs is about what is asked (the other answers look further then).
 */
export function linesOfSpeakerAsked(question: string, sources: readonly GroundedSource[]): SpokenLine[] | null {
  const asked = speakerAsked(question);
  if (!asked) return null;
  const name = caselessLatin(asked.name);
  const spoken = sources.flatMap((s) =>
    s.content.split('\n').flatMap((line) => {
      const speaker = LINE_SPEAKER.exec(line)?.[1];
      return speaker !== undefined && caselessLatin(speaker.trim()) === name ? [{ n: s.n, line: line.trim() }] : [];
    }),
  );
  // "What did Cara say about the clinic?" quoted her `@ai When did the clinics close?` beside what
  // she said of it: her questions to the assistant are what she asked, the rest what she said.
  // Asked all she said, both are.
  const matching = asked.asks || asked.about.length ? spoken.filter((l) => putToAssistant(l.line) === asked.asks) : spoken;
  const theirs = matching.length ? matching : spoken;
  if (!theirs.length) return null;
  if (!asked.about.length) return theirs.slice(-SPEAKER_LINES_MAX);
  const wanted = new Set(asked.about);
  const shared = theirs.map((l) => new Set(contentTerms(spokenText(l.line)).filter((t) => wanted.has(t))).size);
  const kept = theirs
    .map((_, i) => i)
    .filter((i) => shared[i] > 0)
    .sort((a, b) => shared[b] - shared[a] || a - b)
    .slice(0, SPEAKER_LINES_MAX)
    .sort((a, b) => a - b);
  return kept.length ? kept.map((i) => theirs[i]) : null;
}
