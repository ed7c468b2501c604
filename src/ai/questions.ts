/**
 * What a question asks for, read from its words: an overview of the room's subject, or something
 * about the discussion itself (who said what, what was discussed). The pipeline uses it to decide
 * whether the recent chat can answer (so the ask is no abstention); the local model to choose
 * what to quote.
 */
import { askedTerms, contentTerms, splitSentences, WHAT_IT_TELLS } from './local/extractive-text.js';
import { recently } from './local/recently.js';
import { CHAT_STAMP } from '../text.js';
import { ASSISTANT_NAME } from '../protocol/names.js';

/**
 * "What is this about?", "tl;dr", "summarize": questions about the subject as a whole. The space
 * before a final `?` is tried only with the mark (`(?:\s*\?)?`): as `\s*\??\s*$`, a question
 * whose `about` was followed by a long run of spaces and a word split the run between the two
 * `\s*` every way, quadratic in its length.
 */
const OVERVIEW =
  /\b(summar(y|i[sz]e)|tl;?\s?dr|overview|gist|(main|central|core|big|key) (point|idea|argument|claim|message|lesson|takeaway)s?|(the|its) bottom line)\b|\bwhat('s| is| are)? (it|(this|that|the)( (article|post|video|story|thread|room|topic|piece|page))?) (all )?about\b|^\s*what('s| is| are| was) [^?.!]{1,60} about(?:\s*\?)?\s*$/i;

/** "what we discussed", "who said", "what did Ann say", "earlier", "the conversation": questions about the room's own talk. */
const DISCUSSION =
  /\b(we|us|you|everyone|people|somebody|someone|anyone)\b[^.?!]{0,40}\b(discuss(ed|ing)?|talk(ed|ing)?|sa(y|id)|mention(ed)?|chat(ted)?|agree[ds]?|decide[ds]?|ask(ed)?)\b|\b(discussion|conversation|chat|thread)\b|\bwho (said|asked|mentioned|wrote|thinks?|thought|agreed|claimed)\b|\bdid \p{L}+ (say|mention|ask|write|claim|think)\b|\b(earlier|so far|above|before|last time|previously)\b/iu;

/** "What do commenters think?", "what does HN say?": questions about the comments on the room's item. */
const COMMENTS = /\b(comments?|comment(er|ator)s?|hn|hacker ?news|reddit(ors)?)\b/i;

/** Whether the question asks what the comments on the room's item say. */
export function asksAboutComments(question: string): boolean {
  return COMMENTS.test(question);
}

/**
 * "What happened?", "what's going on here?": the story as a whole, asked in its room. Read as a
 * fact, it was a question of one word, "happen", that the item's sentences rarely hold: "not
 * covered" in the item's own room.
 */
const WHAT_GOES_ON = /^\s*what(?:'s| is| has| had)?(?: just)? (?:happened|happening|going on)(?: here| there| then)?(?:\s*\?)?\s*$/i;

/**
 * "What's new?", "what's the latest in tech?", "what went wrong?", "any news?", "what is being done
 * about it?": the room's news as a whole, of what group 1 names when it names something. "What
 * went wrong?" in the cloud outage's video room was answered from the tram post's `They go wrong
 * on the street`; "what is being done about it?" in the measles outbreak's room was "not
 * answered", no sentence of it saying "done" (`… would extend emergency vaccination clinics`).
 */
const WHAT_IS_NEW =
  /^\s*(?:what(?:'s| is)(?: the)? (?:new|latest|news|story)|what (?:went|has gone|had gone|is going) wrong|what(?:(?:'s| is| are| was| were) being| has been| have been) done|what (?:is|are) (?:they|we|people|officials|the authorities|authorities|the government|the council) doing(?= about\b)|any (?:news|updates?))(?:\s+(?:in|with|on|at|from|about)\s+([^?.!]{1,60}?))?(?: here| there| then| today| now)?(?:\s*\?)?\s*$/i;

/**
 * "Why does it matter?", "why is this important?", "what's the significance?", "why should I
 * care?": the story as a whole, which tells its own weight (`a record for the design`). The words
 * asked were in none of its sentences, and a commenter's `Important caveat: …` answered.
 */
const WHY_IT_MATTERS =
  /^\s*(?:so\s+)?(?:why\s+(?:does|do|did|would|should)\s+(?:it|this|that|any\s+of\s+this)\s+matter|why\s+(?:is|was|are)\s+(?:it|this|that)\s+(?:(?:so|such)\s+)?(?:important|significant|a\s+big\s+deal|big\s+news|news|newsworthy)|what(?:'s|\s+is|\s+was)\s+the\s+(?:significance|importance|big\s+deal)(?:\s+of\s+(?:it|this|that))?|why\s+should\s+(?:i|we|anyone|people)\s+care|so\s+what)(?:\s+here)?(?:\s*\?)?\s*$/i;

/** Whether the question asks for an overview rather than a fact. */
export function asksForOverview(question: string): boolean {
  return OVERVIEW.test(question) || WHAT_GOES_ON.test(question) || WHAT_IS_NEW.test(question) || WHY_IT_MATTERS.test(question) || WHAT_IT_TELLS.test(question);
}

/**
 * What an overview is asked of: "the main idea of X", "the gist of X", "summarize X", "what was X
 * about?". X runs to the end of the question, or to what says how the overview is wanted ("in
 * three sentences", "for me", "so far").
 */
const OVERVIEW_OF =
  /\b(?:summary|overview|gist|(?:main|central|core|big|key) (?:points?|ideas?|arguments?|claims?|messages?|lessons?|takeaways?))\s+(?:of|in|behind|from)\s+([^?.!]{1,80})|\bsummari[sz]e\s+([^?.!]{1,80})|^\s*what(?:'s| is| are| was| were)\s+([^?.!]{1,60}?)\s+(?:all\s+)?about\b/i;
/** Where an overview's object ends and how it is wanted begins. */
const HOW_WANTED = /\s+(?:in|for|to|so far|please|briefly|quickly|again|here|now|until now|up to now)\b.*$/i;
/** Words an overview is asked of that name no particular thing: this article, the thread, the discussion. */
const OVERVIEW_OBJECTS = new Set(
  contentTerms(
    'article articles post posts video story stories thread room topic piece page paper link site text document discussion conversation chat everything all whole',
  ),
);

/**
 * Whether a question asks for an overview of the room (asksForOverview), not of some particular
 * thing the room's `topic` does not name: "what was the main idea of James Hutton's paper?" in a
 * topic room, or "what was the poetry reading that Caroline attended about?" in a conversation's
 * memory, asks what that one thing said, and the built-in model answered it with the room's
 * description (`Recent in Reference: …`) or with the conversation's overview. A thing asked of that
 * the topic names ("what is the Ember Tide strike about?" in its article's room) is the room's.
 */
export function asksForRoomOverview(question: string, topic: string): boolean {
  if (!asksForOverview(question)) return false;
  // "What is being done about it?" is news asked of "it", not of "being done" (OVERVIEW_OF's "what is X about").
  const news = WHAT_IS_NEW.exec(question) ?? WHAT_IT_TELLS.exec(question);
  const of = news ? null : OVERVIEW_OF.exec(question);
  const object = (news?.[1] ?? of?.[1] ?? of?.[2] ?? of?.[3] ?? '').replace(HOW_WANTED, '');
  const room = new Set(contentTerms(topic));
  return contentTerms(object).every((t) => room.has(t) || OVERVIEW_OBJECTS.has(t) || /^\d+$/.test(t));
}

/** Content terms a question needs before its words can show it is off the room's subject. */
export const SPECIFIC_TERMS_MIN = 2;

/**
 * Whether a question is too general to be judged off-topic by its words: an overview, or one
 * asking fewer than SPECIFIC_TERMS_MIN content terms ("what happened?", "why?"; askedTerms, so
 * not the "go" of "how did the vote go?", which no sentence telling the vote holds). Asked in a
 * room, such a question is about the room's subject.
 */
export function aboutTheRoom(question: string): boolean {
  return asksForOverview(question) || new Set(askedTerms(question)).size < SPECIFIC_TERMS_MIN;
}

/** "What did we discuss so far?", "what has been said?", "recap", "what did I miss?": asking what the discussion said, not one thing in it. */
const DISCUSSION_OVERVIEW =
  /^\W*(?:(?:so|and|ok|okay)\W+)?what\s+(?:have|has|did|were|was)\s+(?:we|you|people|everyone|they|y'?all)(?:\s+all)?(?:\s+been)?\s+(?:discuss|talk|chatt?|sa(?:y|id))\w*(?:\s+about)?(?:\s+(?:so far|here|earlier|today|before|until now))?\W*$|^\W*(?:(?:so|and|ok|okay)\W+)?what(?:'s|\s+has|\s+have|\s+had)\s+been\s+(?:discuss|talk|chatt?|sa(?:y|id))\w*(?:\s+about)?(?:\s+(?:so far|here|earlier|today|before|until now))?\W*$|^\W*(?:(?:so|and|ok|okay)\W+)?what\s+(?:are|were)\s+(?:we|you|people|everyone|they|y'?all)(?:\s+all)?\s+(?:talking|chatting|discussing)(?:\s+about)?(?:\s+(?:so far|here|today|now))?\W*$|\b(?:recap|catch me up|what did i miss|what have i missed)\b/i;

/** Whether the question asks what the discussion has said as a whole (an overview of it). */
export function asksForDiscussionOverview(question: string): boolean {
  return DISCUSSION_OVERVIEW.test(question);
}

/** Whether the question is about the discussion itself rather than the indexed content. */
export function asksAboutDiscussion(question: string): boolean {
  return DISCUSSION.test(question) || DISCUSSION_OVERVIEW.test(question);
}

/** Share of a line's distinct content terms the question needs before the line counts as answering it. */
export const CHAT_COVERAGE_MIN = 0.5;

/** `Alice (24 Nov 2026, 19:20): ` at the start of a line of chat (src/rag/recent-chat.ts). */
const SPEAKER = new RegExp(`^[^\\n]{0,200}? ${CHAT_STAMP.source}: `);
/** The mark of a message put to the assistant (`@ai …`, `/ask …`; src/rooms/commands.ts) or of a remembered exchange's question (`Q: …`, src/memory/memory-service.ts). */
const ASKED = /^(?:(?:@ai|\/ask)(?:\s+|$)|Q: )/i;
/**
 * A sentence that ends as a question, a citation marker after it allowed. The space before the
 * marker is tried only with the marker: as `\?\s*(marker)?\s*$`, a `?` followed by a long run of
 * spaces and a word (a page's preformatted text) split the run between the two `\s*` every way,
 * quadratic in its length (1.3 s of the event loop for 16,000 spaces).
 */
const QUESTION_END = /\?(?:\s*(?:\[\d{1,2}\]|\(\d+\)))?\s*$/;
/** Content terms a question line must add to the asked question to be more than the same question again. */
export const NEW_TERMS_MIN = 3;

/** What a line of chat says, without its speaker and time (`Alice (24 Nov 2026, 19:20): `); other text as it is. */
export function spokenText(line: string): string {
  const speaker = SPEAKER.exec(line);
  return speaker ? line.slice(speaker[0].length) : line;
}

/** Whether a line of chat (its speaker and time before it or not) is a question put to the assistant (`@ai …`, `/ask …`) or a remembered one (`Q: …`). */
export function putToAssistant(line: string): boolean {
  return ASKED.test(spokenText(line).trimStart());
}

/**
 * Whether a sentence or line of chat only asks `question` again, and so holds no answer to it: a
 * question that adds fewer than NEW_TERMS_MIN content terms to it, once its speaker and the mark
 * of an ask (`@ai`, `/ask`, a remembered `Q:`) are set aside: someone's earlier ask, a FAQ line.
 * Such a line matches the question better than any answer does. (A question that tells something,
 * "our party is at the Blue Harbor; is 2.0 out by then?", is no repeat: members state facts so.)
 */
export function repeatsQuestion(sentence: string, question: string | Set<string>): boolean {
  const said = spokenText(sentence).trimStart().replace(ASKED, '');
  if (!QUESTION_END.test(said)) return false;
  const asked = typeof question === 'string' ? new Set(contentTerms(question)) : question;
  return new Set(contentTerms(said).filter((t) => !asked.has(t))).size < NEW_TERMS_MIN;
}

/**
 * Whether the chat `lines` can answer `question`: it asks about the discussion, a line names
 * someone or something the question names ("how much did Bob lose?" and "my cousin Bob lost 4000
 * dollars"), or a line holds at least half of the question's distinct content terms. A line that
 * only asks the question again (repeatsQuestion) answers nothing.
 */
export function chatAnswers(question: string, lines: string[]): boolean {
  if (!lines.length) return false;
  if (asksAboutDiscussion(question)) return true;
  const terms = [...new Set(contentTerms(question))];
  if (!terms.length) return false;
  const asked = new Set(terms);
  const names = new Set(contentTerms(namesIn(question).join(' ')));
  return lines.some((line) => {
    if (repeatsQuestion(line, asked)) return false;
    const have = termsOfLine(line);
    if ([...names].some((t) => have.has(t))) return true;
    return terms.filter((t) => have.has(t)).length / terms.length >= CHAT_COVERAGE_MIN;
  });
}

/**
 * Chat lines whose terms are kept (chatAnswers): an ask reads its thread's last dozen lines, and
 * the asks after it read most of them again; a line's terms depend on its text alone.
 */
export const CHAT_LINES_KEPT = 64;
const chatLineTerms = new Map<string, ReadonlySet<string>>();

/** The distinct content terms of a line of chat, kept for the last CHAT_LINES_KEPT lines read. */
function termsOfLine(line: string): ReadonlySet<string> {
  return recently(chatLineTerms, line, () => new Set(contentTerms(line)), CHAT_LINES_KEPT);
}

/** How many chat lines' terms are kept (tests). */
export function chatLinesKept(): number {
  return chatLineTerms.size;
}

/** Distinct content terms of the question that `line` holds too. */
export function sharedTerms(question: string, line: string): number {
  const have = new Set(contentTerms(line));
  return new Set(contentTerms(question).filter((t) => have.has(t))).size;
}

/** A sentence that asks: it ends with a question mark, or begins with a question word or an auxiliary. */
const ASKING = /\?\s*$|^\W*(?:who|whom|whose|what|which|when|where|why|how|is|are|was|were|do|does|did|can|could|will|would|should|has|have|had)\b/i;

/**
 * The part of a question that asks, for searching and choosing sentences: in "My locker code is
 * 7391. How long did Orrery-2 sustain plasma?" the first sentence's rare words drowned the
 * question: the answer abstained, or quoted the chat line where the code was said before. It is
 * the last sentence that asks and what follows it ("… I mean for Orrery-2."), without what came
 * before; when that part points back ("how long did it run?") or says too little alone, the names
 * said before go with it ("I read about Orrery-2. How long did it run?"), and without any names
 * the whole question is kept. A question whose only asking sentence is its first is kept whole.
 */
export function questionFocus(question: string): string {
  return sidesAsSaid(askingPart(withoutCourtesies(withPlainApostrophes(question))));
}

/**
 * Words that greet, announce a question or hedge it and ask nothing themselves. Not `and`, `so`,
 * `also`: they say a question goes on from the one before (GOES_ON).
 */
const FILLER = String.raw`(?:hey|hi|hello|yo|ok|okay|um+|uh+|hmm+|well|sorry|btw|quick|real|serious|silly|dumb|stupid|random|honest|simple|follow-up|another|one|more|question|q|thing|curious|just|wondering|ai|bot|salon|there|all|everyone|folks|guys|again)`;
/** A lead-in of filler words and the stop after it: "hey,", "quick question:", "one more thing -". */
const LEAD_IN = new RegExp(String.raw`^[^\p{L}\p{N}]*${FILLER}(?:\s+${FILLER}){0,4}\s*(?:[,:;!.…—–]|\s-)+\s*`, 'iu');
/** Lead-ins read one after another: "Hey AI, quick question: …". */
const LEAD_INS_MAX = 3;
/** Words of thanks. */
const THANKS = String.raw`(?:thanks|thank you|thx|cheers)`;
/** Thanks or a please after the question's stop or a comma: "…? thanks", "…, please?". */
const TRAILING_THANKS = new RegExp(String.raw`([?.!])\s*${THANKS}(?:\s+(?:so much|a lot|in advance))?[\s.!]*$`, 'i');
const THANKS_WORDS = new RegExp(String.raw`\b${THANKS}\b`, 'gi');
const TRAILING_PLEASE = /,\s*(?:please|pls|plz)\s*([?.!]*)\s*$/i;

/**
 * The question without a greeting or announcement before it and thanks after it: the built-in
 * model read "quick question: how many emergency visits were there?" as asking about questions,
 * and "…? thanks" as asking about thanks; the words the sources lack took the answer under its
 * relevance bar, and it said the sources do not answer what they answer without them. A question
 * that is only such words is kept as it is.
 */
export function withoutCourtesies(question: string): string {
  let rest = question;
  for (let i = 0; i < LEAD_INS_MAX; i++) {
    const after = rest.replace(LEAD_IN, '');
    if (after === rest) break;
    rest = after;
  }
  rest = rest.replace(TRAILING_THANKS, '$1').replace(TRAILING_PLEASE, '$1');
  return contentTerms(rest.replace(THANKS_WORDS, ' ')).length ? rest : question;
}

/** Apostrophes as phones and word processors type them: `’` (and `‘`, `ʼ`, `＇`). */
const TYPED_APOSTROPHE = /[\u2018\u2019\u02bc\uff07]/g;

/**
 * The question with every apostrophe written `'`, as the cues that read questions spell it: "Who’s
 * Ana?" (U+2019, a phone's) was no "who's …?" to them, nor "what’s this about?" an overview. Done
 * once where a question is read (questionFocus, the built-in model's answer), not in each cue.
 */
export function withPlainApostrophes(question: string): string {
  return question.replace(TYPED_APOSTROPHE, "'");
}

/**
 * A side taken, as sources say it: "voted for" is "voted in favour of" ("for" is a stopword, and
 * "who voted for the Durable Devices Act?" was answered with how many votes it passed by),
 * "opposed" is "against" ("who opposed the Harbour Line budget?" was answered with the budget
 * sentence, or under the relevance gate "not covered"), and "who supported …?", "which party
 * backed …?" ask who was in favour (answered with how many votes it passed by, or "not covered").
 * The stemmer makes "opposed" in a source "against", and "supported" and "backed" "favour", too
 * (extractive-text.ts); the question's own words are changed so that the embedder's character
 * n-grams see the sources' word as well. "Support" is changed only as the verb of who or which
 * took the side: "which platforms does the laptop support?" asks no side.
 */
const SIDES: [RegExp, string][] = [
  [/\b(vot(?:e|es|ed|ing))\s+for\b/gi, '$1 in favour of'],
  [/\bopposed\s+to\b/gi, 'against'],
  [/\boppos(?:e|es|ed|ing)\b/gi, 'against'],
  [/\b(who|(?:which|what)\s+\p{L}+)\s+(?:support|back)(?:s|ed)\b/giu, '$1 in favour of'],
];

function sidesAsSaid(question: string): string {
  return SIDES.reduce((q, [side, said]) => q.replace(side, said), question);
}

function askingPart(question: string): string {
  const sentences = splitSentences(question).map((s) => s.text);
  if (sentences.length < 2) return question;
  const at = sentences.findLastIndex((s) => ASKING.test(s));
  if (at <= 0) return question;
  const asked = sentences.slice(at).join(' ');
  if (!pointsBack(asked) && new Set(contentTerms(asked)).size >= SPECIFIC_TERMS_MIN) return asked;
  const have = new Set(contentTerms(asked));
  const names = [...new Set(sentences.slice(0, at).flatMap(namesIn))].filter((w) => contentTerms(w).some((t) => !have.has(t)));
  return names.length ? `${asked} (${names.join(' ')})` : question;
}

/** A pronoun that points back at someone or something named before: "what did she say?", "when did it open?". */
const POINTS_BACK = /\b(?:she|he|her|hers|him|his|they|them|their|theirs|it|its)\b/i;

/** Whether the question points back with a pronoun, and so may need an earlier question's names (withAntecedent). */
export function pointsBack(question: string): boolean {
  return POINTS_BACK.test(question);
}

/** "and …", "so …", "what about …": a question that goes on from the exchange before it. */
const GOES_ON = /^\W*(?:and|so|but|also|then|what about|how about)\b/i;

/**
 * Whether the question leans on the exchange before it, and so is read with the recent chat
 * (withAntecedent): it points back with a pronoun, goes on from it ("and the cost?"), or says too
 * little alone ("why?"). Not a question about the room's subject or its discussion as a whole
 * ("what is this about?", "what did we discuss?"), which needs no antecedent.
 */
export function leansBack(question: string): boolean {
  if (pointsBack(question)) return true;
  if (asksForOverview(question) || asksAboutDiscussion(question)) return false;
  return GOES_ON.test(question) || new Set(contentTerms(question)).size < SPECIFIC_TERMS_MIN;
}

/**
 * The question a follow-up stands for, to search and to pick sentences with: "what did she say
 * about density?" after "@ai who is Ingrid Aasvold?" is about Ingrid Aasvold too. When the
 * question leans on the exchange before it (leansBack), the names of the last question put to the
 * assistant in the chat `lines` (oldest first, as recentChat gives them) that the question lacks
 * are appended to it, and for a pronoun after a "who"/"which" question those of the lead of its
 * answer, looking further back past questions that leaned back themselves ("and what does she run?").
 * A question that names nobody new lends its subject instead: "how long does it last?" after "how
 * dense is the cell?" is about the cell (subjectOf). Otherwise the question is returned as it is.
 * Words the room's `title` holds are not appended: the room's own subject is searched for already,
 * and a term found in most of its sentences would only favour the wordiest.
 */
export function withAntecedent(question: string, lines: readonly string[], title = ''): string {
  if (!leansBack(question)) return question;
  const have = new Set(contentTerms(`${question} ${title}`));
  const lacking = (words: string[]) => [...new Set(words)].filter((w) => w.length <= LENT_WORD_MAX_CHARS && contentTerms(w).some((t) => !have.has(t)));
  for (let i = lines.length - 1; i >= 0; i--) {
    const said = spokenText(lines[i]).trimStart();
    if (!ASKED.test(said)) continue;
    const earlier = said.replace(ASKED, '');
    // "They" after "who voted against?" stands for whom the answer named; "what about the budget?"
    // goes on from the question's subject, not the answer's names.
    const named = pointsBack(question) && asksWhoOrWhich(earlier) ? namesIn(firstSentence(answerAfter(lines, i))) : [];
    // "why?" asks the reason of what was asked: "who voted against the budget?" → "and why?" is
    // why they voted against, which the earlier question's names or subject alone ("budget") lose.
    // Its every word, the title's too: so the chat line asking it is that question again, not an answer.
    if (asksOnlyWhy(question)) {
      const asked = [...new Set(earlier.match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) ?? [])].filter(
        (w) => w.length <= LENT_WORD_MAX_CHARS && contentTerms(w).length,
      );
      if (asked.length) return `${question} (${asked.join(' ')})`;
    }
    const names = lacking([...namesIn(earlier), ...named]);
    if (names.length) return `${question} (${names.join(' ')})`;
    // A follow-up before this one is about what its own question was: look further back.
    if (leansBack(earlier)) continue;
    // "What about the keyboard?" after "is the battery life good?" asks whether the keyboard is
    // good: a thing of its own put in the earlier one's place, which lends what was asked of it.
    const lent = goesOnWithItsOwn(question) && YES_NO_OF_BEING.test(earlier) ? predicateOf(earlier) : subjectOf(earlier);
    const subject = lacking(lent);
    return subject.length ? `${question} (${subject.join(' ')})` : question;
  }
  return question;
}

/** "why?", "and why not?": a question of its reason alone, naming nothing. */
function asksOnlyWhy(question: string): boolean {
  return /\bwhy\b/i.test(question) && contentTerms(question).length === 0;
}

/** "who voted against?", "which parties…": a question whose answer names someone it does not ("who is Ingrid Aasvold?" names her). */
const WHO_OR_WHICH = /^\W*(?:(?:and|so)\s+)?(?:who|whom|which)\b(?!\s+(?:is|was|are|were)\b)/i;

/**
 * Whether the question asks who or which: the names its answer gives are what a follow-up's
 * "they" stands for ("who voted against the tram?" → "the Liberals and the Citizens' Alliance
 * voted against…" → "and what did they argue?").
 */
function asksWhoOrWhich(question: string): boolean {
  return WHO_OR_WHICH.test(question);
}

/** A line of chat the assistant wrote (`Salon AI (24 Nov 2026, 19:20): …`). */
const ANSWER_LINE = new RegExp(`^${ASSISTANT_NAME} ${CHAT_STAMP.source}: `);

/** What the assistant answered first after the line at `at`, or '' when it has not. */
function answerAfter(lines: readonly string[], at: number): string {
  for (let j = at + 1; j < lines.length; j++) if (ANSWER_LINE.test(lines[j])) return spokenText(lines[j]);
  return '';
}

/** The first sentence of a text: an answer's lead, which names what it is about. */
function firstSentence(text: string): string {
  return splitSentences(text)[0]?.text ?? '';
}

/** "the cell", "this new battery", "a pilot": a determiner and up to three words after it. */
const DETERMINED = /\b(?:the|a|an|this|that|these|those)\s+((?:\p{L}[\p{L}\p{N}'-]*\s*){1,3})/giu;

/** The word just before a determiner, read from the few characters before it (a long run of letters costs nothing). */
const WORD_BEFORE = /(\p{L}+)\s+$/u;

/** Longest word lent to a follow-up: a longer "word" is no name or subject anyone asked about. */
const LENT_WORD_MAX_CHARS = 40;

/** "did", "will", "has": after one of these a noun phrase is the subject, and the verb follows it ("did the nurses think"). */
const AUXILIARY = /^(?:do|does|did|will|would|can|could|should|shall|may|might|must|has|have|had)$/i;

/**
 * The subject a question names by its noun phrases ("how dense is the cell?" → cell): the content
 * words after each determiner, up to the first that is not one, less the verb that follows a
 * subject after an auxiliary ("what did the nurses think?" → nurses) and what a yes-or-no question
 * of being asks of it ("is the battery life good?" → battery life). Only these, not every
 * content word: "dense" appended to "how long does it last?" would draw density sentences as much
 * as the cell's life.
 */
function subjectOf(question: string): string[] {
  const phrases = nounPhrases(question);
  // "Is the battery life good?": the first phrase runs on into what is asked of it (predicateOf).
  if (YES_NO_OF_BEING.test(question) && phrases.length && phrases[0].content.length > 1) phrases[0].content.pop();
  return phrases.flatMap(({ content, before }) => (content.length > 1 && before && AUXILIARY.test(before) ? content.slice(0, -1) : content));
}

/** The content words after each determiner of `question`, up to the first that is not one, with the word before the determiner. */
function nounPhrases(question: string): { content: string[]; before?: string }[] {
  const out: { content: string[]; before?: string }[] = [];
  for (const match of question.matchAll(DETERMINED)) {
    const before = WORD_BEFORE.exec(question.slice(Math.max(0, match.index - 12), match.index))?.[1];
    const content: string[] = [];
    for (const w of match[1].split(/\s+/)) {
      if (!w || !contentTerms(w).length) break;
      content.push(w);
    }
    out.push({ content, before });
  }
  return out;
}

/** "Is the battery life good?": a yes-or-no question of what something is. */
const YES_NO_OF_BEING = /^\W*(?:(?:and|so)\s+)?(?:is|are|was|were)\s+(?:the|this|that|these|those|its|their)\s/i;

/**
 * Whether `question` asks whether something is so ("is the K1 fast?", "was the film restored?"):
 * its subject is often what the room's item is about, named in the item's title and by a pronoun in
 * its sentences (`Early reviews suggest it is not yet fast.`).
 */
export function asksWhetherItIs(question: string): boolean {
  return YES_NO_OF_BEING.test(question);
}

/**
 * What a yes-or-no question of being asks of its subject ("is the battery life good?" → good):
 * the last content word of its first noun phrase when more follow the subject's (the phrase runs
 * on into the predicate, "battery life good"), else nothing.
 */
function predicateOf(question: string): string[] {
  const [first] = nounPhrases(question);
  return first && first.content.length > 1 ? first.content.slice(-1) : [];
}

/** "What about the keyboard?", "and the screen?": goes on from the question before with a thing of its own, no pronoun for one of that question's. */
function goesOnWithItsOwn(question: string): boolean {
  return GOES_ON.test(question) && !pointsBack(question) && nounPhrases(question).some((p) => p.content.length > 0);
}

/**
 * Capitalised words after the first: the names a question mentions. Not `I` nor its contractions
 * (`I'm`, `I've`): "should I buy one?" names no one, and `I'm` read as a name whose term is `m`.
 */
export function namesIn(question: string): string[] {
  return (question.match(/\p{L}[\p{L}\p{N}'-]*/gu) ?? []).slice(1).filter((w) => /^\p{Lu}/u.test(w) && !SPEAKER_I.test(w));
}

/** "I", "I'm", "I've": capitalised, and no name. */
const SPEAKER_I = /^I(?:['’]\p{L}+)?$/u;

/** Question words that begin a second question joined to a first ("…, and what …", "…; why …"). */
const SECOND_QUESTION = /[,;]? and (?=(?:what|who|whom|whose|which|when|where|why|how)\b)|; (?=(?:what|who|whom|whose|which|when|where|why|how)\b)|\? (?=\S)/gi;
/** Content terms each part of a split question needs: fewer ("…, and why?") leans on the first part, which is kept whole. */
export const PART_TERMS_MIN = 2;
/** Parts a question is split into, at most (the rest stays with the last). */
const PARTS_MAX = 3;

/**
 * The questions a question asks: "how much did waits drop, and what do the nurses worry about?"
 * is two, each answered on its own (the built-in model answered the first alone). A part too short
 * to stand alone ("…, and why?", "Really? What …") keeps the question whole. Each part ends with
 * its question mark.
 */
export function questionParts(question: string): string[] {
  // Spaces made single first, so the pattern's spaces match one each and never a run many ways.
  const parts = question.replace(/\s+/g, ' ').trim().split(SECOND_QUESTION);
  if (parts.length < 2) return [question];
  const kept = [...parts.slice(0, PARTS_MAX - 1), parts.slice(PARTS_MAX - 1).join(' ')].map(withoutFinalMarks).filter(Boolean);
  if (kept.length < 2 || kept.some((p) => new Set(contentTerms(p)).size < PART_TERMS_MIN)) return [question];
  return kept.map((p) => `${p}?`);
}

/** The text without the question marks and spaces it ends with. */
function withoutFinalMarks(text: string): string {
  let end = text.length;
  while (end > 0 && (text[end - 1] === '?' || text[end - 1] === ' ')) end--;
  return text.slice(0, end);
}
