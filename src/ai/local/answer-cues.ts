/**
 * What a question's words say beyond its terms, for the built-in model's sentence choice: which of
 * them only name the kind of answer asked (the "cost" of "how much did the ships cost?"), which
 * deed a "who" question asks the doer of ("who forked TesseraDB?"), and whether a sentence's
 * reason bears on the question's words ("resigned because …").
 */
import { contentTerms, irregularBase, termOf, words } from './extractive-text.js';

/**
 * A price asked: "how much did Orrery-2 cost?", "how much was paid …?". The words after "how much"
 * that name a price are the kind of answer, not what it is about.
 */
const PRICE_WORD =
  /\b(costs?|costing|pa(?:y|ys|id)|spen(?:d|ds|t)|charge[ds]?|worth|price[ds]?|budget(?:s|ed)?|funds?|funded|invest(?:s|ed)?|raise[ds]?|earn(?:s|ed)?|money)\b/gi;
const HOW_MUCH = /\bhow much\b/i;

/**
 * The terms of the words that name the price a "how much …?" question asks (`cost`, `price`,
 * `paid`); empty for any other question. A sentence holding only these of the question's terms
 * prices another thing: `the plant, which it estimates will cost €2.3 billion` for "how much did
 * the ships cost?".
 */
export function priceTerms(question: string): Set<string> {
  const at = HOW_MUCH.exec(question);
  if (!at) return new Set();
  const after = question.slice(at.index + at[0].length);
  return new Set([...after.matchAll(PRICE_WORD)].map((m) => termOf(m[0].toLowerCase())).filter(Boolean));
}

/**
 * Whether `held` (a sentence's question terms) names something of what the question is about, not
 * only the kind of answer (`kind`, e.g. priceTerms): true when the question has nothing else to
 * name (`subject` empty) or the sentence holds none of the question's terms at all.
 */
export function namesSubject(held: Iterable<string>, kind: ReadonlySet<string>, subject: ReadonlySet<string>): boolean {
  if (!kind.size || !subject.size) return true;
  let any = false;
  for (const t of held) {
    if (subject.has(t)) return true;
    any = true;
  }
  return !any;
}

/**
 * A word, or words joined by hyphens: each match starts where the last one ended. Bounded (a part
 * up to 256 letters, 32 parts) as every such pattern here is: unbounded, megabytes of one word in
 * astral letters or of `a-a-…` threw RangeError (V8 keeps a backtrack entry a step).
 */
const WORD_OR_COMPOUND = /[\p{L}\p{N}]{1,256}(?:-[\p{L}\p{N}]{1,256}){0,32}/gu;
const LETTER = /\p{L}/u;
const DIGIT = /\p{N}/u;

/**
 * Models' names in `text`, letters and digits in one word: `K2`, `A9`, `VS-2`, `Orrery-2`. Words
 * first, then a look inside each: lookaheads for both at every position of one regular expression
 * read a long word again from each of its letters (a 32,000-letter word held the loop ~1 s).
 */
function modelNames(text: string): string[] {
  return (text.match(WORD_OR_COMPOUND) ?? []).filter((w) => LETTER.test(w) && DIGIT.test(w));
}

/** `3rd`, `21st`, `1990s`: a number's ending, no model. */
const ORDINAL_OR_DECADE = /^\p{N}+(?:st|nd|rd|th|s)$/iu;

/**
 * Whether `sentence` writes every model the question names (`K2`, `VS-2`): a price of the K1 or
 * of its battery (`a replacement battery costs €69`) is none of the K2, though both are Kestrel's.
 */
export function namesModels(question: string, sentence: string): boolean {
  const models = modelNames(question).filter((m) => !ORDINAL_OR_DECADE.test(m));
  if (!models.length) return true;
  const written = new Set(modelNames(sentence).map((m) => m.toLowerCase()));
  return models.every((m) => written.has(m.toLowerCase()));
}

/** Words after "who" that are no deed: "who is …?", "who did the council choose?". */
const NOT_A_DEED = new Set(`is was are were be been am has have had do does did will would can could shall should may might must 's s else`.split(/\s+/));
/**
 * "who forked", "who will build", "who has won", "who was elected": the deed's word is the second
 * group; the first is "has", "have" or "had" before it, where the word after may be a participle
 * (`has won`) or what is had (`had five sacks`).
 */
const WHO_THEN =
  /^\W*(?:(?:and|so|but)\s+)?who\s+(?:(?:will|would|can|could|shall|should|may|might|must)\s+|(has|have|had)\s+|(?:is|was|are|were)\s+(?=\p{L}+(?:ed|ing)\b))?([\p{L}'’-]+)/iu;
/** A participle after "has", "have" or "had": `won`, `forked`, `written`. */
const PARTICIPLE = /(?:ed|en|wn)$/;
/** Sides taken are read by the stance weight ("who against …?" once "opposed" is "against"). */
const SIDE_TERMS = new Set(['against', 'favour']);

/**
 * The deed a "who" question asks the doer of, as its word and term: "who forked TesseraDB?" →
 * `forked`/`fork`, "who will build the ships?" → `build`. Null for "who is …?", "who did …?", what
 * is had ("who had five sacks …?") and a side taken alone ("who against …?"; "who voted against"
 * asks a vote, which is its deed).
 */
export function deedAsked(question: string): { word: string; term: string } | null {
  const m = WHO_THEN.exec(question);
  if (!m) return null;
  const word = m[2].toLowerCase().replace(/['’]s$/, '');
  if (NOT_A_DEED.has(word)) return null;
  // "Who had five sacks …?" asks who had them: "five" is no deed.
  if (m[1] && !PARTICIPLE.test(word) && irregularBase(word) === undefined) return null;
  const term = termOf(word);
  return term && !SIDE_TERMS.has(term) ? { word, term } : null;
}

/** Words after which a word is a thing, not a deed: `the forked release`, `its founding`. */
const THING_BEFORE = new Set(`the a an this that these those its their his her our my your whose each every any no another such of`.split(/\s+/));
/** A word in a form a verb takes: `forked`, `forking`. */
const VERB_ENDING = /(?:ed|ing)$/;
/** A word as written, a hyphenated compound (`game-winning`, an adjective) kept whole. */
const WRITTEN = /[\p{L}\p{N}]{1,256}(?:[-\u2010\u2011][\p{L}\p{N}]{1,256}){0,32}/gu;

/**
 * Verbs whose sense is carried by what follows them: `makes a weekly tablet possible`, `made more
 * than 50 commits`, `takes six months`, `gives it a half-life` tell no making, taking or giving of
 * the thing asked about.
 */
const LIGHT_VERBS = new Set(['make', 'take', 'give', 'get'].map(termOf));
/** Words after a light verb within which the thing asked about must stand to be what the deed is done to: `makes the drug orvaglutide`. */
const DONE_TO_WITHIN = 3;

/**
 * Whether the sentence tells the deed done (`had forked the last release`, `wrote it`), not only
 * names it as a thing (`a public letter supporting the fork`, `on a hard fork`): a word of the
 * deed's term in the question's own form, a verb's ending or an irregular form (`wrote`, `won`),
 * not right after a determiner or a number, nor part of a compound (`a game-winning drive`). A
 * light verb (`make`, `take`, …) tells the deed only when done to what the question names
 * (`others`, its terms besides the deed's; doneTo): "who makes orvaglutide?" was answered with `orvaglutide's half-life of about six days makes
 * a weekly tablet possible`, which names no maker.
 */
export function tellsDeed(sentence: string, deed: { word: string; term: string }, others?: ReadonlySet<string>): boolean {
  const tokens = sentence.toLowerCase().match(WRITTEN) ?? [];
  const light = others !== undefined && isLightDeed(deed);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (termOf(t) !== deed.term) {
      // `the Vessbridge laptop maker Kestrel Systems`: a light verb's doer is told by its noun.
      if (light && doerNoun(t, deed.term) && doneTo(tokens, i, others, true)) return true;
      continue;
    }
    if (t !== deed.word && !VERB_ENDING.test(t) && irregularBase(t) === undefined) continue;
    const before = tokens[i - 1] ?? '';
    if (THING_BEFORE.has(before) || /^\d/.test(before)) continue;
    if (!light || doneTo(tokens, i, others)) return true;
  }
  return false;
}

/** Whether the deed's verb is a light one (`make`, `take`, `give`, `get`), whose sense is what it is done to. */
export function isLightDeed(deed: { term: string }): boolean {
  return LIGHT_VERBS.has(deed.term);
}

/**
 * Whether the light verb at `at` is done to one of `others`: within DONE_TO_WITHIN words after it
 * (`makes orvaglutide`), or before it in a passive with its doer (`orvaglutide, made by`; not
 * `the software, TriageAssist, made by …` for "who makes orvaglutide?").
 */
function doneTo(tokens: string[], at: number, others: ReadonlySet<string>, either = false): boolean {
  const asked = (w: string) => contentTerms(w).some((t) => others.has(t));
  if (tokens[at + 1] === 'by') return tokens.slice(0, at).some(asked);
  return tokens.slice(at + 1, at + 1 + DONE_TO_WITHIN).some(asked) || (either && tokens.slice(Math.max(0, at - DONE_TO_WITHIN), at).some(asked));
}

/**
 * Whether `word` is the noun of the one who does the deed whose term is `term`: `maker` (make),
 * `founder` (found), `writer` (write), `supplier` (supply), `investor` (invest). Read for a light
 * verb only (tellsDeed): its verb mostly tells another sense (`makes a weekly tablet possible`), so
 * news text names its doer by the noun, with what is asked about within three words either side
 * (`Aino Pellervo, founder of the Vessbridge laptop maker Kestrel Systems`, `the K1's maker`).
 * Another verb tells its deed itself: read for "who led the Panthers in sacks?", `the NFL's active
 * career sack leader` came before `Kawann Short led the team in sacks`.
 */
export function doerNoun(word: string, term: string): boolean {
  const bases: string[] = [];
  if (word.endsWith('ier')) bases.push(`${word.slice(0, -3)}y`);
  if (word.endsWith('er')) bases.push(word.slice(0, -2), word.slice(0, -2).replace(/([b-df-hj-np-tv-z])\1$/, '$1'), word.slice(0, -1));
  if (word.endsWith('or')) bases.push(word.slice(0, -2));
  return bases.some((b) => b.length > 2 && termOf(b) === term);
}

/** Words before the doer's name in a passive: `built by the`, `restored by a`. */
const DOER_DETERMINERS = new Set(['the', 'a', 'an']);
/** A word as written, its case kept: a name starts with a capital. */
const WRITTEN_CASED = /[\p{L}\p{N}]{1,256}(?:[-\u2010\u2011'’][\p{L}\p{N}]{1,256}){0,32}/gu;

/**
 * Whether the sentence names the doer of the deed in the passive, a name right after `by`: "who
 * will build the ships?" and `will be built by Seowon Heavy Industries`, not `being built on time`
 * nor `vessels built between 2004 and 2008`, which tell the deed and name nobody who did it. An
 * adverb may stand between (`built largely by`).
 */
export function namesDoer(sentence: string, deed: { word: string; term: string }): boolean {
  const tokens = sentence.match(WRITTEN_CASED) ?? [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i].toLowerCase();
    if (termOf(t) !== deed.term || (!VERB_ENDING.test(t) && irregularBase(t) === undefined)) continue;
    let at = i + 1;
    if (/ly$/i.test(tokens[at] ?? '')) at++;
    if (tokens[at]?.toLowerCase() !== 'by') continue;
    at++;
    if (DOER_DETERMINERS.has(tokens[at]?.toLowerCase() ?? '')) at++;
    if (/^\p{Lu}/u.test(tokens[at] ?? '')) return true;
  }
  return false;
}

/** Words that give a reason: `because`, `due to`, `arguing that`. */
export const REASON_CUE = /\b(because|due to|owing to|thanks to|caused by|as a result|the reasons?|so that|in order to|arguing|argued|argues|citing|blamed)\b/i;
const REASON_CUE_ALL = new RegExp(REASON_CUE.source, 'gi');
/** Words either side of a reason's cue a question term may stand to be what it explains. */
const EXPLAINED_WITHIN = 3;

/**
 * Whether a reason in the sentence bears on one of the question's terms: the cue stands within
 * three words of one (`Harrow & Finch, resigned because it could not verify …` for "why did the
 * auditor resign?"), not only somewhere in the sentence.
 */
export function explainsQuestionTerm(sentence: string, qTerms: ReadonlySet<string>): boolean {
  for (const m of sentence.matchAll(REASON_CUE_ALL)) {
    const before = words(sentence.slice(0, m.index)).slice(-EXPLAINED_WITHIN);
    const after = words(sentence.slice(m.index + m[0].length)).slice(0, EXPLAINED_WITHIN);
    if ([...before, ...after].some((w) => qTerms.has(termOf(w)))) return true;
  }
  return false;
}

/** A headline's cause of what it reports: `… vote to unionise after 'Ember Tide' crunch`. */
const HEADLINE_CAUSE = /^(.*)\b(?:after|amid|following)\s+(.+)$/i;

/**
 * For a "why" question about what a headline (`label`) reports, the word heading the cause the
 * headline gives it, as written and as a term: "why did the workers vote to unionise?" and
 * `Brightwater Interactive workers vote to unionise after 'Ember Tide' crunch` → `crunch`. The
 * headline's words before the cause must hold most of the question's terms (`needed` of `qTerms`);
 * the cause's last word heads it (`Meridian losses`, `'Ember Tide' crunch`). When the sources never
 * say the head (`said`: whether they hold a term), the cause's last word they do say stands for it:
 * Tollgate's `… halts withdrawals … after Meridian losses` reports what its article tells as
 * `after the Meridian USD stablecoin lost its dollar peg` and `the value of the Meridian position
 * fell`, never "losses". Null otherwise.
 */
export function headlineCause(
  label: string,
  qTerms: ReadonlySet<string>,
  needed: number,
  said: (term: string) => boolean = () => true,
): { word: string; term: string } | null {
  const m = HEADLINE_CAUSE.exec(label.trim());
  if (!m) return null;
  const event = new Set(words(m[1]).map(termOf));
  if ([...qTerms].filter((t) => event.has(t)).length < needed) return null;
  const cause = words(m[2]).filter((w) => termOf(w) && !qTerms.has(termOf(w)));
  const word = cause.findLast((w) => said(termOf(w))) ?? cause[cause.length - 1];
  return word ? { word, term: termOf(word) } : null;
}
