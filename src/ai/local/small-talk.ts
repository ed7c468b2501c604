/**
 * Small talk in a discussion: greetings, thanks and goodbyes (`Hey Mel! Good to see you!`, `Hi
 * Caroline, how's it going?`, `Thanks, Melanie!`, `Talk to you soon!`). Such a line addresses
 * someone the question names, or says a word the question asks in a set phrase, and so held as
 * much of a question as the line telling its answer; it tells nothing of what is asked.
 */
import { askedTerms, contentTerms } from './extractive-text.js';
import { asAsked, kinOf, type Kin } from './kin.js';
import { LINE_SPEAKER } from './speaker-asked.js';
import { OWN_TERMS_MIN } from './follow-up.js';
import { spokenText } from '../questions.js';

/**
 * The set phrases of small talk, said of no matter (their words are no answer to a question that
 * uses them: `Enjoy your day!` for "which musicians does Melanie enjoy?"). Matched as whole words.
 */
const SMALL_TALK_PHRASES = [
  // greetings
  // A time of day's greeting, not what it was like: "what did Jon do on Friday night?" is told `Had a
  // good night at the concert!`.
  String.raw`hey|hi|hello|hiya|howdy|(?<!\b(?:a|one|such) )good (?:morning|afternoon|evening)`,
  String.raw`(?:good|great|nice|lovely|so good) to (?:see|hear from|chat with|talk to|catch up with) you`,
  String.raw`long time no (?:see|chat|talk)`,
  String.raw`how(?:'s| is| are| have) (?:it going|you(?: been| doing)?|things|everything|life|your (?:day|week|weekend))`,
  String.raw`what's up`,
  // thanks
  String.raw`thanks(?: so much| a lot| a ton)?|thank you(?: so much)?|cheers`,
  // goodbyes
  String.raw`bye|goodbye|(?<!\b(?:a|one|such) )good ?night|take care`,
  String.raw`talk (?:to you )?(?:soon|later)|see you(?: soon| later| around| then)?|catch you later`,
  String.raw`(?:enjoy|have) (?:a |an |your |the )?(?:good |great |nice |lovely |wonderful |fun )?(?:day|evening|night|weekend|week)`,
];
const SMALL_TALK = new RegExp(`(?<![\\p{L}\\p{N}'])(?:${SMALL_TALK_PHRASES.join('|')})(?![\\p{L}\\p{N}'])`, 'giu');

/** The `Q: ` or `A: ` a remembered exchange's lines start with. */
const EXCHANGE_MARK = /^[QA]: /;

/** The content terms of the people speaking in the discussion's lines: who a line addresses is one of them. */
export function speakerTerms(contents: readonly string[]): Set<string> {
  const names = contents.flatMap((c) => c.split('\n').flatMap((line) => LINE_SPEAKER.exec(line)?.[1] ?? []));
  return new Set(names.flatMap((name) => contentTerms(name)));
}

/**
 * A test of whether a sentence is small talk for `question`: it holds no term of the question (a
 * kin counting as its term) but in small talk's set phrases or as the name of a speaker
 * (`speakers`, speakerTerms), whom a line addresses (`That's great, Caroline!`), and says little
 * else (fewer than OWN_TERMS_MIN content terms): a line telling something in other words than the
 * question's (`I've been running farther to de-stress …` for "what does Melanie do to destress?")
 * is none. Never when the question asks nothing but who speaks: then a name is what is asked.
 */
export function smallTalkFor(question: string, speakers: ReadonlySet<string>): (sentence: string) => boolean {
  const asked = askedTerms(question).filter((t) => !speakers.has(t));
  return smallTalkOf(asked, speakers, kinOf(asked, question));
}

/** The same for a question's `terms` (content terms), without their kin. */
export function smallTalkOf(terms: Iterable<string>, speakers: ReadonlySet<string>, kin: Kin = new Map()): (sentence: string) => boolean {
  const asked = new Set([...terms].filter((t) => !speakers.has(t)));
  if (!asked.size) return () => false;
  return (sentence) => {
    const said = spokenText(sentence).replace(EXCHANGE_MARK, '').replace(/’/g, "'").replace(SMALL_TALK, ' ');
    const own = asAsked(contentTerms(said), kin).filter((t) => !speakers.has(t));
    return !own.some((t) => asked.has(t)) && new Set(own).size < OWN_TERMS_MIN;
  };
}
