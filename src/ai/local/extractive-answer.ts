/**
 * Answer-sentence selection for the local extractive model: which sentences of the numbered
 * sources answer the question. Scores combine IDF-weighted question-term coverage (IDF over the
 * given sources' sentences), matched word pairs, proximity of the matches, an answer-type cue
 * (numbers for "how many", dates for "when", names for "who", places for "where", a reason's
 * words for "why") and the
 * source's rank.
 */
import { askedTerms, contentTerms, idfTable, splitSentences, stem, termOf, words, STOPWORDS } from './extractive-text.js';
import { commenterOf, type GroundedSource } from '../grounded-prompt.js';
import { asksWhetherItIs, repeatsQuestion, spokenText } from '../questions.js';
import { askedUnits, type UnitWeigher } from './asked-units.js';
import { asAsked, deedFromTheOtherSide, headsAsked, kinOf, joinerFor } from './kin.js';
import { deedAsked, explainsQuestionTerm, headlineCause, isLightDeed, namesModels, namesSubject, priceTerms, REASON_CUE, tellsDeed } from './answer-cues.js';

/**
 * What a question asks for. `manner` is how something happened or is done ("how did he die?",
 * "how are the packets routed?"): no one kind of word answers it, so it has no cue, but a `who`
 * or `where` in a clause after it ("how did the man who founded it die?") asks no person or place.
 */
export type AnswerType = 'number' | 'duration' | 'date' | 'person' | 'place' | 'reason' | 'manner' | 'other';

/** A scored sentence of one source. */
export interface ScoredSentence {
  n: number;
  /** Position of the sentence in its source. */
  index: number;
  text: string;
  score: number;
  /** Share of the question's IDF weight this sentence covers, 0..1. */
  coverage: number;
  /**
   * Whether the sentence takes a side that does not answer a "who" question asking one: the other
   * side (`voted in favour` for "who voted against …?"), or the side asked in a source about
   * another thing.
   */
  contrary?: boolean;
  /**
   * Whether the question asks for a figure, a span or a date and this sentence holds none of it:
   * it may continue an answer from its own source, not add another's.
   */
  lacksAnswer?: boolean;
}

/** Tuning weights; defaults chosen on SQuAD-style questions. */
export interface AnswerWeights {
  pair: number;
  proximity: number;
  cue: number;
  rank: number;
  /** Pull of the neighbouring sentences' coverage (answers often sit next to the matching words). */
  neighbour: number;
  /** Weight of the question–sentence embedding cosine, when cosines are given. */
  semantic: number;
  /**
   * How much a question term found in the source's label (its title) counts when ranking that
   * source's sentences: such words say which document, not which sentence, answers.
   */
  label: number;
  /**
   * Pull of the room's own item (the source the room is about), scaled by what the sentence covers
   * of the question: a question asked in an item's room is about that item first.
   */
  primary: number;
  /**
   * Pull of a number that counts what a "how many" or "how much" question asks about (`140 confirmed cases`), on
   * top of `cue`, which any number in the sentence earns (`confirmed on 12 January`). Asked what
   * will be ("how many passengers will the line carry?"), only a count foretold pulls (`projects
   * 68,000 passengers`), not today's (`the buses carry about 41,000 passengers a day`).
   */
  count: number;
  /**
   * Pull of a negation bearing on a question term (`is not affected`) when the question is negated
   * ("what is not affected by the delay?"): without it the sentence saying the opposite (`the
   * delay affects …`), which holds the same terms, came first.
   */
  negation: number;
  /**
   * Pull of a sentence taking the side the question asks about ("who opposed the budget?" and
   * `voted against`): the side is what is asked, the subject often named a sentence before.
   */
  stance: number;
  /**
   * Pull of a reason bearing on a question term ("why did the auditor resign?" and `resigned
   * because it could not verify …`), on top of `cue`, which a reason's word anywhere earns: the
   * sentence holding the question's words without a reason (a commenter's `the auditor resigning is
   * the first time anybody read the footnotes`) came first.
   */
  reason: number;
  /**
   * Pull of a sentence telling the deed a "who" question asks the doer of ("who forked TesseraDB?"
   * and `contributors had forked the last Apache-licensed release`), not only naming it as a thing
   * (`a public letter supporting the fork`).
   */
  deed: number;
  /**
   * What a commenter's sentence loses beside an article's: comments are opinions, not facts from
   * the article (as the prompt tells remote models), and `the auditor resigning is the first time
   * anybody read the footnotes`, which holds the question's words, came before the reason.
   */
  comment: number;
}

export const DEFAULT_ANSWER_WEIGHTS: AnswerWeights = {
  pair: 0.15,
  proximity: 0.05,
  cue: 0.2,
  rank: 0.06,
  neighbour: 0.25,
  semantic: 1,
  label: 0.5,
  primary: 1,
  count: 0.4,
  negation: 0.4,
  stance: 1,
  reason: 0.4,
  deed: 0.4,
  comment: 0.3,
};

const MONTHS = 'january|february|march|april|may|june|july|august|september|october|november|december';
/** A preposition of place followed by a capitalised name. */
const PLACE_CUE = /\b(in|at|near|from|to|across|outside|inside)\s+(the\s+)?\p{Lu}/u;
/** A unit of time after a number: `26 minutes`, `a 26-minute run`, `eight years`. */
const TIME_UNIT = '(seconds?|minutes?|hours?|days?|weeks?|months?|years?|decades?|century|centuries)\\b';
/** Numbers in words, as an alternation for regular expressions. */
export const NUMBER_WORDS =
  'one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|million|billion|trillion|dozen|half';

/** The question words, the first of which is what a question asks. */
const QUESTION_WORD = /\b(who|whom|whose|where|why|how|when|what|which)\b/;

/** What kind of thing the question asks for. */
export function answerType(question: string): AnswerType {
  const q = question.toLowerCase();
  // "How long did it run?" asks a time; "how long is the line?" may ask a length, a number of any kind.
  if (/\bhow long\b(?!\s+(is|was|are|were)\b)/.test(q)) return 'duration';
  if (/\bhow (many|much|long|far|old|large|big|tall|high|often)\b|\bwhat (percentage|percent|number|amount|size|proportion)\b/.test(q)) return 'number';
  // The first question word is what is asked: "who was the leader when the Franks came?" asks a person.
  const lead = QUESTION_WORD.exec(q)?.[1];
  if (lead === 'who' || lead === 'whom' || lead === 'whose') return 'person';
  if (lead === 'where') return 'place';
  if (lead === 'why') return 'reason';
  if (lead === 'how') return howAsks(q);
  if (/\bwhen\b|\bwhat (year|date|day|month|time|century|decade|era|period)\b|\b(which|in what) (year|century|decade|month)\b/.test(q)) return 'date';
  if (/\bwho\b|\bwhom\b|\bwhose\b|\b(which|what) (person|man|woman|people|scientist|author|leader|president|king|queen|company|organization|group)\b/.test(q))
    return 'person';
  if (/\bwhy\b|\bfor what reason\b|\bwhat (was|is|were|are) the reasons?\b/.test(q)) return 'reason';
  if (/\bwhere\b|\b(which|what) (city|country|state|place|region|location|continent|river|island|area)\b/.test(q)) return 'place';
  return 'other';
}

/** "how did/does/is …": an auxiliary after `how` asks the way something happened or is done. */
const HOW_MANNER = /\bhow\s+(?:do|does|did|is|are|was|were|has|have|had|can|could|will|would|should|may|might|must)\b/;

/**
 * What a question led by `how` asks, past the figures and spans answerType read first: "how come
 * …?" a reason, "how did/is …?" a manner (howAsks is never reached for "how many"), anything else
 * ("how dense is the cell?") no kind of word. Never a person, place or date, whatever clause
 * follows: "how did the man who founded it die?" was scored as a person question, and answered
 * with who founded it.
 */
function howAsks(q: string): AnswerType {
  if (/\bhow come\b/.test(q)) return 'reason';
  return HOW_MANNER.test(q) ? 'manner' : 'other';
}

/** Whether `sentence` holds something of the asked type that the question does not already name. */
export function hasCue(type: AnswerType, sentence: string, questionWords: Set<string>): boolean {
  switch (type) {
    case 'number':
      return new RegExp(`\\d|\\b(${NUMBER_WORDS})\\b`, 'i').test(stripKnown(sentence, questionWords));
    case 'duration':
      return new RegExp(`(\\d|\\b(${NUMBER_WORDS}))[\\s-]+${TIME_UNIT}`, 'i').test(stripKnown(sentence, questionWords));
    case 'date':
      return new RegExp(`\\b(1\\d{3}|20\\d{2}|\\d{1,2}(st|nd|rd|th))\\b|\\b(${MONTHS})\\b|\\bcentury\\b|\\b\\d{2,4}s\\b`, 'i').test(
        stripKnown(sentence, questionWords),
      );
    case 'person':
      return newNames(sentence, questionWords).length > 0;
    case 'place':
      return PLACE_CUE.test(stripKnown(sentence, questionWords));
    case 'reason':
      return REASON_CUE.test(stripKnown(sentence, questionWords));
    default:
      return false;
  }
}

function stripKnown(sentence: string, questionWords: Set<string>): string {
  return sentence.replace(/[\p{L}\p{N}]+/gu, (w) => (questionWords.has(w.toLowerCase()) ? ' ' : w));
}

/** Capitalised words past the sentence's first word that the question does not contain. */
function newNames(sentence: string, questionWords: Set<string>): string[] {
  const out: string[] = [];
  let first = true;
  for (const m of sentence.matchAll(/[\p{L}][\p{L}'’-]*/gu)) {
    const w = m[0];
    if (!first && /^\p{Lu}/u.test(w) && !questionWords.has(w.toLowerCase()) && !STOPWORDS.has(w.toLowerCase())) out.push(w);
    first = false;
  }
  return out;
}

/** Names of days and months: `on Thursday` names a time, not someone. */
const TIME_NAMES = new Set([...MONTHS.split('|'), 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday']);
const NUMBER_WORD = new RegExp(`^(${NUMBER_WORDS})$`, 'i');
/** A word as written, a possessive's `'s` and a hyphenated name (`Okonkwo-Reyes`) kept with it. */
const NAME_TOKEN = /[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu;

/** "I" and its contractions (`I'm`, `I've`, `I'd`). */
const SPEAKER_I = /^I(?:['’]\p{L}+)?$/u;

/**
 * Whether `sentence` names someone a "who" question does not name already (`asked`, the question's
 * lower-cased words): a capitalised word, an organisation's as much as a person's (`Nimbic's`,
 * `Tessera Data`, `Fjordline Capital`), the sentence's first too when it is not a word the sources
 * write in lower case (`common`): not a day or a month (`By Thursday evening, 41 of the 63 people
 * …`), a number word, a unit after a number (`16 GB`), nor a common word written with a capital
 * (`Three more things the postmortem gets right Failure detectors …`, a heading run into its
 * first line).
 */
export function namesSomeone(sentence: string, asked: ReadonlySet<string>, common: (word: string) => boolean): boolean {
  const tokens = sentence.match(NAME_TOKEN) ?? [];
  for (let i = 0; i < tokens.length; i++) {
    // `I'm`, `I've`: the speaker, named by no name of theirs.
    if (!/^\p{Lu}/u.test(tokens[i]) || SPEAKER_I.test(tokens[i])) continue;
    const word = tokens[i].toLowerCase().replace(/['’]s$/, '');
    if (asked.has(word) || STOPWORDS.has(word) || TIME_NAMES.has(word) || NUMBER_WORD.test(word) || common(word)) continue;
    if (i > 0 && /^\p{N}/u.test(tokens[i - 1])) continue;
    return true;
  }
  return false;
}

/** The sentences of each source, in order: what scoreSentences scores. */
export function sourceSentences(sources: GroundedSource[]): string[] {
  return sources.flatMap((src) => splitSentences(src.content).map((s) => s.text));
}

/**
 * Scores every sentence of every source for `question`, best first. `cosines` (question vs
 * sentence embeddings, keyed by sentence text) adds a meaning-level signal when given; `primary`
 * is the number of the source the room is about, when one is.
 */
export function scoreSentences(
  sources: GroundedSource[],
  question: string,
  weights: AnswerWeights = DEFAULT_ANSWER_WEIGHTS,
  cosines?: Map<string, number>,
  primary?: number,
): ScoredSentence[] {
  const asked = askedTerms(question);
  const qTerms = [...new Set(asked)];
  const qSet = new Set(qTerms);
  const joined = joinerFor(qSet);
  const kin = kinOf(qTerms, question);
  const type = answerType(question);
  // "Who makes orvaglutide?": a light verb not done to what is asked (`makes a weekly tablet
  // possible`) is another sense of the word, and holds no term of the question.
  const deed = type === 'person' ? deedAsked(question) : null;
  const doneTo = deed ? new Set([...qTerms, ...kin.keys()].filter((t) => t !== deed.term)) : undefined;
  const otherSense = (text: string, terms: string[]) =>
    deed !== null && isLightDeed(deed) && terms.includes(deed.term) && !tellsDeed(text, deed, doneTo) ? terms.filter((t) => t !== deed.term) : terms;
  const all = sources
    .flatMap((src, rank) => {
      const label = new Set(asAsked(contentTerms(src.label), kin));
      const document = (src.section ?? 'document') === 'document';
      const comment = document && commenterOf(src.label) !== null;
      // Each line of the discussion is a message of its own: its sentences lend their weight to
      // one another, not to the next speaker's (an answer's words lifted the question before it).
      let message = 0;
      let from = 0;
      return splitSentences(src.content).map((s, index) => {
        if (!document) for (let at = src.content.indexOf('\n', from); at !== -1 && at < s.start; at = src.content.indexOf('\n', at + 1)) message++;
        from = Math.max(from, s.start);
        return {
          n: src.n,
          rank,
          index,
          message,
          text: s.text,
          terms: otherSense(s.text, asAsked(joined(contentTerms(s.text), s.text), kin)),
          label,
          comment,
        };
      });
    })
    .filter((s) => !repeatsQuestion(s.text, qSet));
  if (!all.length) return [];
  // "How much does the gigafactory cost?": in a source naming the gigafactory, `the factory's total
  // cost` is its cost; elsewhere a factory may be any (a market is no supermarket).
  const heads = headsAsked(question, qTerms);
  if (heads.size) readHeads(all, heads);
  const idf = idfTable(
    all.map((s) => s.terms),
    new Set(qTerms),
  );
  const weigh = askedUnits(question, qTerms);
  const total = weigh(qTerms, idf) || 1;
  const qPairs = pairs(asked);
  const qWords = new Set(words(question));
  const counting = COUNT_ASKED.test(question);
  // "How many people were affected?": a count of people (`employs about 240 people`) is no count of those affected.
  const countedTerms = counting ? beyondAnyone(qSet) : qSet;
  const negated = NEGATOR.test(question);
  // "How much did the ships cost?": `cost` names the kind of answer; a sentence whose only
  // question term it is prices another thing (`the plant … will cost €2.3 billion`).
  const price = priceTerms(question);
  const subject = new Set(qTerms.filter((t) => !price.has(t)));
  // "How many passengers will the line carry?": only a count foretold answers it, as only a span
  // that happened answers "how long did it run?" (measuresAskedSpan), when the sources foretell one
  // ("how much methanol will it buy?" and `agreed to buy 400,000 tonnes` foretell nothing). Not a
  // price: `will cost €2.3 billion` names the cost before the sum.
  const forecasting = counting && !price.size && asksWhatWillBe(question) && all.some((s) => foretellsCount(s.text, qSet));
  const sides = asksWhoTookSide(question, type) ? qTerms.filter((t) => STANCES.has(t)) : [];
  // "Who voted against the Harbour Line budget?": a side taken in a source about another thing
  // (`The Lowmark Liberals voted against.`, on another act) is no side taken on what is asked. A
  // source is about what the side is taken on when it holds half of the question's other terms
  // (not `against` nor `voted`).
  // Naming nothing ("who voted against?"), it is asked of the room's subject: in the tram vote's
  // room, the repair act's `The Lowmark Liberals voted against.` came first.
  const sidedOn = qTerms.filter((t) => !STANCES.has(t) && !SIDE_TAKING_TERMS.has(t));
  const roomSubject =
    !sidedOn.length && primary !== undefined ? [...(all.find((s) => s.n === primary)?.label ?? [])].filter((t) => !SIDE_TAKING_TERMS.has(t)) : [];
  const takenOn = sidedOn.length ? sidedOn : roomSubject;
  const aboutSideTaken = (n: number) => 2 * takenOn.filter((t) => bySource.get(n)!.has(t)).length >= takenOn.length;
  // "Who forked TesseraDB?": where a source about what is asked tells the deed, a name answers
  // only beside it (not `due on 1 June, TesseraDB will be distributed under the Tessera Community
  // Licence`); where none does, a name beside the question's words still may (`the defending
  // Super Bowl XLIX champion New England Patriots` for "who won Super Bowl XLIX?").
  // The deed told in a source naming something else the question does (`I've made mistakes`, in
  // the studio's article, tells no deed for "who makes orvaglutide?").
  const bySource = new Map<number, Set<string>>();
  for (const s of all) {
    const terms = bySource.get(s.n) ?? new Set(s.label);
    for (const t of s.terms) terms.add(t);
    bySource.set(s.n, terms);
  }
  const aboutTheRest = (n: number, term: string) => qTerms.some((t) => t !== term && bySource.get(n)!.has(t));
  // `The company raised €310 million …, led by Fjordline Capital` tells "who invested?" from the other side.
  const otherSide = deed ? deedFromTheOtherSide(deed.term) : undefined;
  const tells = (text: string) => tellsDeed(text, deed!, doneTo) || (otherSide !== undefined && tellsDeed(text, { word: otherSide, term: otherSide }));
  const told = deed ? all.map((s) => tells(s.text) && aboutTheRest(s.n, deed.term)) : [];
  const deedTold = told.some(Boolean);

  const whetherOfItem = primary !== undefined && asksWhetherItIs(question);
  const coverage: number[] = [];
  const ranking: number[] = [];
  const helds: string[][] = [];
  for (const s of all) {
    const held = s.terms.filter((t) => qSet.has(t));
    helds.push(held);
    // Asked whether something is so, a sentence of the room's own item holds what its title names
    // ("is the K1 fast?" and `Early reviews suggest it is not yet fast.`, under `Kestrel K1, a €899
    // RISC-V laptop …`): whether it covers the question counts them; how it ranks does not
    // (`ranking`). Not for other questions: `$94 million in annual recurring revenue` would price
    // MosaicDB, named in its article's title.
    coverage.push(weigh(whetherOfItem && s.n === primary ? [...new Set([...held, ...qTerms.filter((t) => s.label.has(t))])] : held, idf) / total);
    ranking.push(weigh(held, (t) => idf(t) * (s.label.has(t) ? weights.label : 1)) / total);
  }
  // "Why did the workers vote to unionise?" under `… workers vote to unionise after 'Ember Tide'
  // crunch`: a sentence on the crunch gives the reason in words the question lacks, and covers the
  // question as much as the headline does. Only in a source about the question's event: another
  // article's `without risking data loss` gives no reason for Tollgate's `… after Meridian losses`.
  const causes = type === 'reason' ? headlineCauses(sources, qSet, weigh, idf, total, all) : new Map<string, number>();
  const needed = eventTermsNeeded(qSet);
  const aboutEvent = (n: number) => qTerms.filter((t) => bySource.get(n)!.has(t)).length >= needed;
  const caused = all.map((s) => (causes.size && aboutEvent(s.n) ? Math.max(0, ...s.terms.map((t) => causes.get(t) ?? 0)) : 0));
  caused.forEach((share, i) => {
    coverage[i] = Math.max(coverage[i], share);
    ranking[i] = Math.max(ranking[i], share);
  });
  const happened = type === 'duration' && asksWhatHappened(question);
  // Cued by an amount of money, not any number (`1,260 water-cooled tungsten tiles` beside
  // Orrery-2's name came before `was built for €1.9 billion`), and no count: a price is no count
  // of what is priced (`9,200 TEU ships` does not say what they cost).
  const pricing = type === 'number' && price.size > 0;
  const measuring = type === 'number' && LENGTH_ASKED.test(question);
  const holdsOrNot = HELD_OR_NOT.has(type) && !ASKS_WHO_SOMEONE_IS.test(question);
  const scored = all.map((s, i) => {
    const sPairs = pairs(s.terms);
    const counted = counting && !pricing && (forecasting ? foretellsCount(s.text, countedTerms) : countsQuestionTerm(s.text, countedTerms));
    const cue =
      // A chat line's time stamp is when it was said, no date it tells (`Ann (4 Dec 2026, 08:34): …`).
      (hasCue(type, spokenText(s.text), qWords) || caused[i] > 0) &&
      (type !== 'duration' || measuresAskedSpan(s.text, qSet, happened)) &&
      (!pricing || (MONEY.test(stripKnown(s.text, qWords)) && namesSubject(helds[i], price, subject) && namesModels(question, s.text))) &&
      (!deedTold || told[i]) &&
      (!measuring || MEASURE.test(stripKnown(s.text, qWords))) &&
      (!forecasting || counted);
    let pairHits = 0;
    for (const p of qPairs) if (sPairs.has(p)) pairHits++;
    const pairScore = qPairs.size ? pairHits / qPairs.size : 0;
    const beside = (j: number) => all[j].n === s.n && all[j].message === s.message;
    const prev = i > 0 && beside(i - 1) ? ranking[i - 1] : 0;
    const next = i + 1 < all.length && beside(i + 1) ? ranking[i + 1] : 0;
    const sided = sides.some((t) => s.terms.includes(t)) && takesSide(s.text, sides) && aboutSideTaken(s.n);
    const score =
      ranking[i] +
      weights.pair * pairScore +
      weights.proximity * proximity(s.terms, qSet) +
      (cue ? weights.cue * Math.min(1, ranking[i] * 2) : 0) +
      (counted ? weights.count : 0) +
      (negated && negatesQuestionTerm(s.text, qSet) ? weights.negation * Math.min(1, ranking[i] * 2) : 0) +
      (sided ? weights.stance : 0) +
      (type === 'reason' && (caused[i] > 0 || explainsQuestionTerm(s.text, qSet)) ? weights.reason : 0) +
      (deedTold && told[i] ? weights.deed : 0) +
      weights.neighbour * Math.max(prev, next) +
      weights.semantic * (cosines?.get(s.text) ?? 0) +
      (s.n === primary && (cue || !holdsOrNot) ? weights.primary * Math.min(1, coverage[i] * 2) : 0) -
      weights.rank * s.rank -
      (s.comment ? weights.comment : 0);
    // A side taken is read with the sentence before it, which names what it is taken on: `The Durable
    // Devices Act was approved by 88 votes to 62. The governing coalition … voted in favour`.
    const before = sided && i > 0 && all[i - 1].n === s.n ? weigh([...helds[i - 1], ...helds[i]], idf) / total : 0;
    const contrary = sides.length > 0 && !sided && takesSide(s.text, [...STANCES]);
    const lacksAnswer = MEASURED.has(type) && !cue;
    return {
      n: s.n,
      index: s.index,
      text: s.text,
      score,
      coverage: Math.max(coverage[i], before),
      ...(contrary ? { contrary } : {}),
      ...(lacksAnswer ? { lacksAnswer } : {}),
    };
  });
  return scored.sort((a, b) => b.score - a.score);
}

/**
 * The sentences' terms (`all`, each with its source `n` and its label's terms) with the head of
 * each compound asked (`heads`, headsAsked) read as the compound, in the sources whose label or
 * sentences name it.
 */
function readHeads(all: { n: number; terms: string[]; label: Set<string> }[], heads: ReadonlyMap<string, string>): void {
  const compounds = new Set(heads.values());
  const naming = new Set(all.filter((s) => s.terms.some((t) => compounds.has(t)) || [...s.label].some((t) => compounds.has(t))).map((s) => s.n));
  const labels = new Set<Set<string>>();
  for (const s of all) {
    if (!naming.has(s.n)) continue;
    s.terms = asAsked(s.terms, heads);
    if (labels.has(s.label)) continue;
    labels.add(s.label);
    for (const [head, compound] of heads) if (s.label.delete(head)) s.label.add(compound);
  }
}

/** How many of the question's terms a headline or a source must hold to be about what it asks (rag/candidates.ts's termsNeeded). */
function eventTermsNeeded(qSet: Set<string>): number {
  return Math.max(2, Math.ceil((2 / 3) * qSet.size));
}

/**
 * The causes headlines give for what the question asks about (headlineCause, read in the words of
 * each headline's own source), each as its term and the share of the question its headline covers.
 */
function headlineCauses(
  sources: GroundedSource[],
  qSet: Set<string>,
  weigh: UnitWeigher,
  idf: (t: string) => number,
  total: number,
  sentences: { n: number; terms: string[] }[],
): Map<string, number> {
  const needed = eventTermsNeeded(qSet);
  const out = new Map<string, number>();
  for (const src of sources) {
    // What the headline's own article says: another's `data loss` does not say Tollgate's losses.
    let said: Set<string> | undefined;
    const isSaid = (term: string) => (said ??= new Set(sentences.filter((s) => s.n === src.n).flatMap((s) => s.terms))).has(term);
    const cause = headlineCause(src.label, qSet, needed, isSaid);
    if (!cause) continue;
    const share =
      weigh(
        contentTerms(src.label).filter((t) => qSet.has(t)),
        idf,
      ) / total;
    out.set(cause.term, Math.max(out.get(cause.term) ?? 0, share));
  }
  return out;
}

/**
 * Types whose answer a sentence either holds or does not (a measure, a date, a name): the room's
 * item pulls only its sentences that hold one. It comes first among the answers, not over them:
 * "the run ended as planned", pulled as the item's own, came before another source's "ran a
 * hydrogen plasma for 26 minutes" for "how long did Orrery-2 run?", and "the Durable Devices Act
 * was approved by 88 votes to 62", which names nobody new, before "the governing coalition of …
 * voted in favour" for "who supported the Durable Devices Act?". Not a reason: its cue words
 * (`because`, `due to`) are too few to tell a sentence without one from no answer.
 */
const HELD_OR_NOT = new Set<AnswerType>(['number', 'duration', 'date', 'person']);
/**
 * Types whose cue a sentence without an answer never earns: a figure, a span or a date is seen
 * wherever it stands, where a name is missed as a sentence's first word (`Paleoclimatologists
 * seek …`), so a sentence without a name's cue may still answer "who".
 */
const MEASURED = new Set<AnswerType>(['number', 'duration', 'date']);
/**
 * "Who is Selma Achterberg?", "who's Ana?": asks what someone is, not for a name the sentence
 * holds. A typed `’` is read as `'` where the question is read (withPlainApostrophes).
 */
const ASKS_WHO_SOMEONE_IS = /\b[Ww]ho(?:'s|\s+(?:is|was|are|were))\s+\p{Lu}/u;

/** Whether the question asks what someone is ("who is Selma Achterberg?"), not for someone a sentence names. */
export function asksWhoSomeoneIs(question: string): boolean {
  return ASKS_WHO_SOMEONE_IS.test(question);
}

/** An amount of money: `€1.9 billion`, `$410m`, `12 million euros`, `US$3`. */
const MONEY = /[€$£¥₹]\s?\d|\d\s*(million|billion|thousand|bn|m|k)?\s*(euros?|dollars?|pounds?|yen|francs?|marks|kron(a|or|er)|rupees?|pesos?|cents?)\b/i;

/** Whether the sentence holds an amount of money (`€1.9 billion`, `12 million euros`). */
export function holdsMoney(sentence: string): boolean {
  return MONEY.test(sentence);
}

/**
 * "How long is the film?", "how long was the line?": a length or a span of time, not any number.
 * `About 4 per cent of the film` and `2,100 hours … restoring the film` were as good an answer as
 * `the 78-minute melodrama` (a span beside a question term is not asked: "is" does not time a deed).
 */
const LENGTH_ASKED = /\bhow long\s+(is|was|are|were)\b/i;
/** A number with a unit of time or length: `78-minute`, `11.8 kilometres`, `36 metres long`. */
const MEASURE = new RegExp(
  `(\\d|\\b(${NUMBER_WORDS}))[\\s-]+(${TIME_UNIT}|(kilometres?|kilometers?|km|metres?|meters?|m|miles?|feet|foot|ft|inch(es)?|yards?|centimetres?|centimeters?|cm|millimetres?|millimeters?|mm)\\b)`,
  'i',
);

/** "did", "was", "were", "had": a question asked of the past. */
const ASKED_OF_THE_PAST = /\b(did|was|were|had)\b/i;
/** "will", "can", "may", "might", "could": a modal in the question asks what may happen, not what did. */
const MODAL = /\b(will|would|can|could|may|might|shall|should)\b/;
/** What is planned or possible, not what happened: `can in principle run`, `plans to push`, `is expected to take`. */
const PLAN_OR_POSSIBILITY =
  /\b(will|can|may|might|shall)\b|\b(plans?|planned|planning|aims?|aimed|aiming|intends?|intended|hopes?|hoped|expects?|expected|scheduled)\s+to\b/;

/**
 * Whether a sentence states the span of time a "how long" question asks: one beside a question
 * term (timesQuestionTerm) and, asked what happened (`happened`), not a plan or a possibility
 * (`plans to push … for runs of at least ten minutes`, `can in principle run continuously`). Only
 * for spans: a count may be stated beside a plan ("54 will continue …, four have returned …").
 */
function measuresAskedSpan(sentence: string, qTerms: Set<string>, happened: boolean): boolean {
  return timesQuestionTerm(sentence, qTerms) && !(happened && tellsPlanOrPossibility(sentence));
}

/** Whether the question asks what happened ("how long did Orrery-2 run?"), not what may or will. */
function asksWhatHappened(question: string): boolean {
  return ASKED_OF_THE_PAST.test(question) && !MODAL.test(question.toLowerCase());
}

/** Whether the sentence tells what is planned or possible (`the team now plans to push …`), lower-case modals only (`May` is a month). */
function tellsPlanOrPossibility(sentence: string): boolean {
  return PLAN_OR_POSSIBILITY.test(sentence);
}

/**
 * A question that asks how many or how much of something: a number before one of its terms counts
 * it (`140 confirmed cases`). Not "how long did Orrery-2 run?": `6 MW for runs of at least ten
 * minutes` does not count runs, and was quoted before "ran a hydrogen plasma for 26 minutes".
 */
const COUNT_ASKED = /\bhow (many|much)\b|\bwhat (number|amount)\b/i;
/**
 * The full stops and commas a token of a sentence ends with (`68,000,` → `68,000`), matched only
 * from the start of a run: `/[.,]+$/` was tried again from every mark of a run that a digit ends
 * (`1,,,…,,2`), quadratic in the run (a second of the event loop for 20,000 commas).
 */
const TRAILING_STOPS = /(?<![.,])[.,]+$/;
/** A number, in digits or words. */
const NUMBER_TOKEN = new RegExp(`^(\\d[\\d.,]*|${NUMBER_WORDS})$`, 'i');
/** A rate's word: the term after it is what a number is counted by, not what it counts. */
const RATE_WORD = /^(?:per|each|every|a|an)$/i;
/** Words a number may stand before the term it counts: `140 confirmed cases`. */
const COUNTED_WITHIN = 3;

/**
 * Whether a number in the sentence counts one of the question's terms ("how many cases?" and
 * `140 confirmed cases`), not only stands somewhere in it (`confirmed on 12 January`).
 */
function countsQuestionTerm(sentence: string, qTerms: Set<string>): boolean {
  const tokens = sentence.match(/[\p{L}\p{N}][\p{L}\p{N}.,'’-]*/gu) ?? [];
  for (let i = 0; i < tokens.length; i++) {
    if (!NUMBER_TOKEN.test(tokens[i].replace(TRAILING_STOPS, ''))) continue;
    for (let j = i + 1; j <= i + COUNTED_WITHIN && j < tokens.length; j++) {
      // `12 to 18 people per case` counts people: what follows a rate's word is what they are counted by.
      if (RATE_WORD.test(tokens[j])) break;
      if (contentTerms(tokens[j]).some((t) => qTerms.has(t))) return true;
    }
  }
  return false;
}

/**
 * Words for whoever something happened to, as terms: "how many people were affected?" asks a
 * count of those affected, and "how much weight did people lose?" of the trial's participants,
 * whatever the sources call them.
 */
export const ANYONE = new Set(contentTerms('people person someone anyone everyone individuals'));

/** `terms` without ANYONE's, unless nothing else would be left. */
export function beyondAnyone(terms: Set<string>): Set<string> {
  const rest = [...terms].filter((t) => !ANYONE.has(t));
  return rest.length ? new Set(rest) : terms;
}

/** "Will" or "shall", or "going to": a question asked of what will be. */
const ASKED_OF_THE_FUTURE = /\b(will|shall|going to)\b/i;
/** Words that foretell a figure: `projects 68,000`, `is expected to reach 3 million`, `will carry 240`. */
const FORETELLING =
  /^(will|shall|projects?|projected|projecting|projections?|forecasts?|forecasted|forecasting|expects?|expected|predicts?|predicted|anticipates?|anticipated|plans?|planned|aims?|targets?|targeted)$/i;
/** Words a foretelling word may stand before the number it foretells: `is expected to reach 3 million`. */
const FORETOLD_WITHIN = 3;

/** Whether the question asks what will be ("how many passengers will the line carry?"), not what was or is. */
function asksWhatWillBe(question: string): boolean {
  return ASKED_OF_THE_FUTURE.test(question) && !ASKED_OF_THE_PAST.test(question);
}

/**
 * Whether a number in the sentence is foretold (a foretelling word within three words before it)
 * and counts one of the question's terms (`projects 68,000 passengers per weekday`). Not a number
 * after a foretelling word that counts something else (`will order 24 low-floor trams, each …
 * carrying up to 240 passengers`), nor a count of today far from one (`the buses, which the tram
 * will largely replace, carry about 41,000 passengers`).
 */
function foretellsCount(sentence: string, qTerms: Set<string>): boolean {
  const tokens = sentence.match(/[\p{L}\p{N}][\p{L}\p{N}.,'’-]*/gu) ?? [];
  for (let i = 0; i < tokens.length; i++) {
    if (!NUMBER_TOKEN.test(tokens[i].replace(TRAILING_STOPS, ''))) continue;
    const before = tokens.slice(Math.max(0, i - FORETOLD_WITHIN), i).map((t) => t.replace(TRAILING_STOPS, ''));
    if (!before.some((t) => FORETELLING.test(t))) continue;
    for (let j = i + 1; j <= i + COUNTED_WITHIN && j < tokens.length; j++) {
      // `12 to 18 people per case` counts people: what follows a rate's word is what they are counted by.
      if (RATE_WORD.test(tokens[j])) break;
      if (contentTerms(tokens[j]).some((t) => qTerms.has(t))) return true;
    }
  }
  return false;
}

/** The terms of a side taken ("against", "opposed"; "in favour", "voted for", "supported", "backed": extractive-text.ts). */
const STANCES = new Set(['against', 'favour']);
/**
 * A side taken, as a question says it once questionFocus has read it (`opposed` is `against`), or
 * taken by the question's verb: "who supported …?", "which party backed …?".
 */
const SIDE_TAKEN = /\b(against|in favou?r|support(s|ed|ing)?|back(s|ed))\b/i;
/** Who took it: a person, or a party, group or country. */
const WHICH_SIDE = /\b(which|what)\s+(party|parties|group|groups|members?|countries|country|nations?|states?|councillors?|MPs?)\b/i;

/**
 * Whether the question asks who took a side ("who voted against …?", "which party opposed …?"),
 * not where "against" or "favoured" only stands in it ("his claim against ENEL", "what party is
 * favored in Bendigo?"): a sentence taking a side answers only the first.
 */
function asksWhoTookSide(question: string, type: AnswerType): boolean {
  return SIDE_TAKEN.test(question) && (type === 'person' || WHICH_SIDE.test(question));
}

/** A span of time: `26 minutes`, `18-month`, `eleven years`. */
const DURATION_TOKEN = new RegExp(`^(\\d[\\d.,]*|${NUMBER_WORDS})(-${TIME_UNIT.replace('\\b', '')})?$`, 'i');
const TIME_UNIT_TOKEN = new RegExp(`^${TIME_UNIT}`, 'i');
/** Words either side of a span of time that a question term may stand to be what it times. */
const TIMED_WITHIN = 6;

/**
 * Whether a span of time in the sentence stands beside one of the question's terms ("how long did
 * Orrery-2 run?" and `ran a hydrogen plasma for 26 minutes`), and so may time what is asked, not
 * something else the sentence names (`Orrery-2's divertor … installed during an 18-month upgrade`).
 */
function timesQuestionTerm(sentence: string, qTerms: Set<string>): boolean {
  const tokens = sentence.match(/[\p{L}\p{N}][\p{L}\p{N}.,'’-]*/gu) ?? [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i].replace(TRAILING_STOPS, '');
    const m = DURATION_TOKEN.exec(token);
    if (!m || (!m[2] && !TIME_UNIT_TOKEN.test(tokens[i + 1] ?? ''))) continue;
    for (let j = Math.max(0, i - TIMED_WITHIN); j <= i + TIMED_WITHIN && j < tokens.length; j++) {
      if (j !== i && contentTerms(tokens[j]).some((t) => qTerms.has(t))) return true;
    }
  }
  return false;
}

/**
 * Words after which a side is taken (`voted against`, `is against`, `spoke in favour`), not only
 * named: `a legal challenge by shopkeepers … against Vessbridge's Harbour Line tram` is no vote.
 */
const TAKING_SIDE = new Set(
  `vote votes voted voting is are was were be been being am stand stands stood standing speak speaks spoke spoken speaking
  argue argues argued arguing campaign campaigns campaigned campaigning lobby lobbies lobbied lobbying come comes came
  side sides sided siding rule rules ruled ruling decide decides decided deciding`.split(/\s+/),
);
/** The terms of the words of taking a side: `vote` for "who voted against …?". */
const SIDE_TAKING_TERMS = new Set([...TAKING_SIDE].map(termOf).filter(Boolean));
/**
 * The side words themselves (`against`, `in favour`, `in support`), taken only after a word of
 * taking a side: `vector extension support` takes none. A verb that stems to a side (`opposed`,
 * `supported`, `backed`) takes it by itself.
 */
const SIDE_WORDS = new Set(['against', 'favour', 'favor', 'support']);

/**
 * Whether the sentence takes one of `sides` (terms such as `against`): by a verb that stems to it
 * (`opposed the plan`), or after a word of taking a side (`voted against`, `were in favour`), an
 * adverb (`voted narrowly against`) or `out` (`came out against`) between them.
 */
function takesSide(sentence: string, sides: string[]): boolean {
  const tokens = words(sentence);
  for (let i = 0; i < tokens.length; i++) {
    if (!sides.includes(termOf(tokens[i]))) continue;
    if (!SIDE_WORDS.has(tokens[i])) return true;
    let before = i - 1;
    if (tokens[i] !== 'against' && tokens[before] === 'in') before--;
    if (/ly$/.test(tokens[before] ?? '') || tokens[before] === 'out') before--;
    if (TAKING_SIDE.has(tokens[before] ?? '')) return true;
  }
  return false;
}

/** A word that negates what follows it. */
const NEGATOR = /\b(not|no|never|cannot|nobody|nothing|none|neither|nor|without)\b|n[’']t\b/i;
/** Words a negation may stand before the term it negates: `was not yet affected`. */
const NEGATED_WITHIN = 3;

/**
 * Whether a negation in the sentence bears on one of the question's terms (`not eligible to vote`),
 * not only stands somewhere in it (`work that could not be compressed` for "how many firms did not
 * keep the four-day week?", whose answer is "four have returned to their previous hours").
 */
function negatesQuestionTerm(sentence: string, qTerms: Set<string>): boolean {
  const tokens = sentence.match(/[\p{L}\p{N}][\p{L}\p{N}'’]*/gu) ?? [];
  for (let i = 0; i < tokens.length; i++) {
    if (!NEGATOR.test(tokens[i])) continue;
    for (let j = i + 1; j <= i + NEGATED_WITHIN && j < tokens.length; j++) {
      if (contentTerms(tokens[j]).some((t) => qTerms.has(t))) return true;
    }
  }
  return false;
}

function pairs(terms: string[]): Set<string> {
  const out = new Set<string>();
  for (let i = 1; i < terms.length; i++) out.add(`${terms[i - 1]} ${terms[i]}`);
  return out;
}

/** 1 when the matched question terms sit together, falling towards 0 as they spread out. */
function proximity(terms: string[], query: Set<string>): number {
  const at: number[] = [];
  terms.forEach((t, i) => query.has(t) && at.push(i));
  if (at.length < 2) return 0;
  const span = at[at.length - 1] - at[0] + 1;
  return at.length / span;
}

/** The question's terms, stemmed (for callers that test their own text). */
export function questionTerms(question: string): Set<string> {
  return new Set(
    words(question)
      .filter((w) => !STOPWORDS.has(w))
      .map(stem),
  );
}
