/**
 * Small, dependency-free text tools shared by the local extractive model and the RAG pipeline:
 * tokens, a light stemmer, stopwords, sentence splitting with offsets and IDF-weighted overlap.
 */
import { CHAT_STAMP, squash } from '../../text.js';

/**
 * Function words that carry no topic; questions words are kept out of matching too. "against" is
 * not one: "who voted against …" was answered with who voted in favour, the sentence without the
 * word, as neither search nor sentence choice saw it. "not" and "no" stay: a question's negation is
 * seldom its answer's words ("how many firms did not keep the four-day week?" is answered by "four
 * have returned to their previous hours"), and as terms they drew sentences that merely hold one.
 */
export const STOPWORDS = new Set(
  `a about above after again all also am an and any are as at be because been before being below between both but by
  can could did do does doing down during each few for from further had has have having he her here hers herself him himself his
  how i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours ourselves
  out over own same she should so some such than that the their theirs them themselves then there these they this those through
  to too under until up very was we were what when where which while who whom why will with would you your yours yourself
  yourselves s t one many much name named called type kind according`.split(/\s+/),
);

const ASCII_ONLY = /^[\x00-\x7f]*$/;
const ASCII_WORD = /[a-z0-9]+/g;
const WORD = /[\p{L}\p{N}]+/gu;

/** Lower-cased word tokens (runs of letters and digits). Plain-ASCII text takes a faster path. */
export function words(text: string): string[] {
  const lower = text.toLowerCase();
  return (ASCII_ONLY.test(lower) ? lower.match(ASCII_WORD) : lower.match(WORD)) ?? [];
}

/**
 * Irregular forms and their base word (which is then stemmed like any other). Maps, not object
 * literals: a word is anyone's text, and `constructor` or `__proto__` must not find Object's own.
 * The forms of a base of a vowel, a consonant and a final e (use, age, owe, eye, ice) are here
 * too: too short for the suffix rules, `used` and `using` were terms of their own, and "what are
 * cilia used for?" held one term of `animals that use cilia … as their main method of locomotion`.
 * So are `rising` and `losing`, whose final e baseOf does not give back after an s. `bit` is not
 * `bite`'s: it is mostly the noun ("a bit of", "64-bit", "bits of software"), and as `bite` it met
 * `biting` and `bites` and stayed apart from `bits`. Nor is `lay` `lie`'s: it is the verb lay
 * ("lay off thousands", "lay-it-anywhere"), whose `laid` is here; no `lay` of the corpora is lie's
 * past. `shot` stays `shoot`'s though most of the corpora's are the noun (docs/benchmarks.md).
 */
const IRREGULAR = new Map<string, string>(
  `children:child men:man women:woman people:person mice:mouse feet:foot teeth:tooth geese:goose
  sang:sing sung:sing ran:run won:win wrote:write written:write began:begin begun:begin became:become gave:give given:give
  took:take taken:take made:make held:hold led:lead built:build bought:buy brought:bring fought:fight found:find
  thought:think taught:teach sold:sell told:tell paid:pay spent:spend sent:send met:meet knew:know known:know
  grew:grow grown:grow drew:draw drawn:draw chose:choose chosen:choose fell:fall fallen:fall rose:rise risen:rise
  spoke:speak spoken:speak stood:stand struck:strike went:go gone:go saw:see seen:see did:do done:do ate:eat eaten:eat
  used:use using:use aged:age aging:age owed:owe owing:owe eyed:eye eying:eye iced:ice icing:ice rising:rise losing:lose
  died:die dying:die dies:die lying:lie laid:lay tied:tie lied:lie flew:fly flown:fly threw:throw thrown:throw
  wore:wear worn:wear broke:break broken:break froze:freeze frozen:freeze drove:drive driven:drive rode:ride ridden:ride
  hid:hide hidden:hide bitten:bite shot:shoot kept:keep slept:sleep felt:feel dealt:deal meant:mean lost:lose
  caught:catch sought:seek shook:shake shaken:shake forgot:forget forgotten:forget
  better:good best:good worse:bad worst:bad
  oppose:against opposed:against opposes:against opposing:against
  favor:favour favors:favour favored:favour favoring:favour favorable:favour
  support:favour supports:favour supported:favour supporting:favour backed:favour backing:favour
  drop:fall drops:fall dropped:fall dropping:fall decline:fall declines:fall declined:fall declining:fall
  decrease:fall decreases:fall decreased:fall decreasing:fall
  increase:rise increases:rise increased:rise increasing:rise`
    .split(/\s+/)
    .filter(Boolean)
    .map((pair) => pair.split(':') as [string, string])
    .concat(americanSpellings()),
);

/**
 * American spellings read as the British ones (`license` is `licence`, `color` `colour`,
 * `organize` `organise`; but `travelled` is `traveled`): the demo's sources and many feeds spell the
 * British way, and "what is the new license?" missed TesseraDB's "Tessera Community Licence"
 * for a word its question held in the other spelling. Whole words, each form listed: the
 * stemmer only strips suffixes, so a rewritten ending (-ize to -ise) would leave terms that are
 * no prefix of their words (termSpellings). `meter` stays: it is also the device. `programme` is
 * read as `program`, whose -ing and -ed forms both spellings share.
 */
function americanSpellings(): [string, string][] {
  const pairs: [string, string][] = [];
  const forms = (american: string, british: string, endings: string[]) => {
    for (const ending of endings) pairs.push([`${american}${ending}`, `${british}${ending}`]);
  };
  const ize =
    'organ real recogn apolog critic emphas priorit author summar standard optim minim maxim util special final union privat legal subsid mobil stabil modern normal categor character custom memor penal civil'.split(
      ' ',
    );
  for (const base of ize) forms(`${base}iz`, `${base}is`, ['e', 'es', 'ed', 'ing', 'ation', 'ations', 'er', 'ers']);
  forms('analyz', 'analys', ['e', 'es', 'ed', 'ing']);
  forms('paralyz', 'paralys', ['e', 'es', 'ed', 'ing']);
  const our = 'col hon lab neighb behavi harb rum hum flav vap arm endeav sav rig vig od cand'.split(' ');
  for (const base of our) forms(`${base}or`, `${base}our`, ['', 's', 'ed', 'ing', 'ful', 'able', 'al']);
  forms('neighbor', 'neighbour', ['hood', 'hoods']);
  forms('favorit', 'favourit', ['e', 'es']);
  for (const [american, british] of [
    ['center', 'centre'],
    ['theater', 'theatre'],
    ['liter', 'litre'],
    ['fiber', 'fibre'],
    ['caliber', 'calibre'],
    ['specter', 'spectre'],
  ])
    forms(american, british, ['', 's']);
  pairs.push(['centered', 'centred'], ['centering', 'centring']);
  forms('licens', 'licenc', ['e', 'es']);
  forms('defens', 'defenc', ['e', 'es']);
  forms('offens', 'offenc', ['e', 'es']);
  forms('pretens', 'pretenc', ['e', 'es']);
  forms('catalog', 'catalogue', ['', 's']);
  forms('dialog', 'dialogue', ['', 's']);
  forms('analog', 'analogue', ['', 's']);
  // The other way: `programming` and `programmed` are `program`'s in both spellings.
  forms('programme', 'program', ['', 's']);
  // The other way too: `labelled` is `labeled`, whose -ed comes off to leave `label`.
  for (const base of ['travel', 'cancel', 'model', 'label', 'fuel', 'signal', 'level', 'counsel', 'total', 'channel', 'tunnel', 'quarrel', 'marvel'])
    forms(`${base}l`, base, ['ed', 'ing', 'er', 'ers']);
  pairs.push(['gray', 'grey'], ['grays', 'greys'], ['jewelry', 'jewellery'], ['aluminum', 'aluminium'], ['licensed', 'licenced'], ['licensing', 'licencing']);
  return pairs;
}

/** The base word of an irregular form (`wrote` → `write`, `won` → `win`), or undefined for a regular one. */
export function irregularBase(word: string): string | undefined {
  return IRREGULAR.get(word);
}

/**
 * The one stemmer (the local embedder, the extractive model and the RAG stages all use it): plurals,
 * -ing, -ed, -ly, a final -e and derivational endings stripped, irregular forms mapped, number
 * words made digits.
 */
export function stem(word: string): string {
  let out = stemCache.get(word);
  if (out === undefined) {
    out = suffixes(IRREGULAR.get(word) ?? word);
    if (!worthRemembering(word)) return out;
    if (stemCache.size >= STEM_CACHE_SIZE) stemCache.clear();
    stemCache.set(word, out);
  }
  return out;
}

const HAS_DIGIT = /\p{N}/u;

/**
 * Longest token whose derived forms are memoised: longer than any word. The memos count entries,
 * not characters, and a message's 4,000-letter "word" was kept whole in each of them (and its
 * 8,000 character n-grams in the embedder's) until they filled: a few tens of thousands of such
 * messages were gigabytes of heap.
 */
export const REMEMBERED_TOKEN_MAX_CHARS = 64;

/**
 * Whether a token's derived forms are worth a memo: not when it holds a digit, nor when it is
 * longer than REMEMBERED_TOKEN_MAX_CHARS. Times, prices and ids rarely come back; remembered, they
 * grow the memos without end, each growth rehashing a table of up to 200,000 entries on the event
 * loop, and the memos outlive every young-generation GC, which they lengthen (docs/benchmarks.md,
 * issue 17's fifth session).
 */
export function worthRemembering(token: string): boolean {
  return token.length <= REMEMBERED_TOKEN_MAX_CHARS && !HAS_DIGIT.test(token);
}

/** Words whose stems are remembered now. */
export function rememberedStems(): number {
  return stemCache.size;
}

/** Stems are asked for the same words over and over (every ask re-reads its sources). */
const STEM_CACHE_SIZE = 200_000;
const stemCache = new Map<string, string>();

const NUMBER_WORDS = new Map<string, string>([
  ...'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty'
    .split(' ')
    .map((w, i): [string, string] => [w, String(i)]),
  ['thirty', '30'],
  ['forty', '40'],
  ['fifty', '50'],
  ['sixty', '60'],
  ['seventy', '70'],
  ['eighty', '80'],
  ['ninety', '90'],
  ['hundred', '100'],
  ['thousand', '1000'],
  ['first', '1st'],
  ['second', '2nd'],
  ['third', '3rd'],
]);

function suffixes(word: string): string {
  const number = NUMBER_WORDS.get(word);
  if (number) return number;
  if (word.length <= 3 || /^\d/.test(word)) return word;
  let w = word;
  if (/ie[sd]$/.test(w)) w = w.length > 4 ? `${w.slice(0, -3)}y` : w.slice(0, -1);
  else if (w.endsWith('sses') || SIBILANT_PLURAL.test(w) || ES_AFTER_S.has(w)) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(ss|us|is|os)$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length > 5) w = baseOf(w.slice(0, -3));
  else if (w.endsWith('eed') && EE_VERBS.has(w.slice(0, -1))) w = w.slice(0, -1);
  else if (w.endsWith('ed') && w.length > 4) w = baseOf(w.slice(0, -2));
  else if (w.endsWith('ly') && w.length > 5) w = w.slice(0, -2);
  if (w.endsWith('eed') && w.length > 4 && !EE_VERBS.has(w.slice(0, -1))) w = w.slice(0, -2);
  if (w.endsWith('e') && w.length > 4 && !KEEPS_FINAL_E.has(w)) w = w.slice(0, -1);
  return derivation(w);
}

/**
 * The -es plural of a word of three letters ending in sh (`ashes`): only -s came off, so `ash` was
 * `ash` and `ashes` `ashe`, a final e kept by a four-letter word (longer ones, `wishes`, lost it
 * anyway). After ch the e of `aches` is the base's. After x (`boxes`, `fixes`) the e is the
 * plural's too, but merging `fixes` with `fix` moved an XQuAD answer (docs/benchmarks.md), so x waits.
 */
const SIBILANT_PLURAL = /^.shes$/;
/** Plurals whose e is the plural's after s: mostly it is the base's (`cases`, `roses`, `uses`), so a closed list. */
const ES_AFTER_S = new Set(['buses', 'gases']);

/**
 * Bases ending in -ee whose -ed form ends in -eed (`agreed`, `freed`, `guaranteed`): the d goes,
 * and the form is its base's. Any other -eed word of five letters or more is a base of its own
 * (`speed`, `succeed`, `proceed`), which loses its -ed as if it were one, as it always did (`spe`,
 * `succ`: given the whole word instead, `speed` moved a bench:embedder question, docs/benchmarks.md);
 * its -s, -ing and -ed forms now lose it too, where `speeding` was `speed` and `succeeded` `succeed`.
 * A closed list, as the -ee verbs are few and the -eed words are not (`breed`, `steed`, `lockheed`);
 * `feed`, `seed` and `need` are too short to lose anything.
 */
const EE_VERBS = new Set(['agree', 'disagree', 'free', 'decree', 'guarantee', 'referee', 'pedigree', 'filigree', 'emcee', 'knee', 'tee']);

/**
 * Derivational endings, longest first. They are only ever stripped, never rewritten, so a term
 * stays a prefix of every word it stands for (termSpellings relies on that): `organisation` and
 * `organise` both become `organ`, `connection` and `connected` `connect`. A verb's -ise has lost
 * its e before these are read, so `-is` and `-iz` take it (`criticise` is `critic`, as `criticism`
 * is, where "what do critics say?" missed `criticised`), and a noun's -is with it (`analysis`,
 * `analyse`); a stem is left five letters or more, so `crisis`, `basis` and `tennis` stay whole.
 */
const DERIVATIONS = [
  'ization',
  'ational',
  'fulness',
  'ousness',
  'iveness',
  'ation',
  'ition',
  'ement',
  'ment',
  'ness',
  'ance',
  'ence',
  'able',
  'ible',
  'ator',
  'ful',
  'ism',
  'ist',
  'ity',
  'ive',
  'ize',
  'ise',
  'ous',
  'ion',
  'al',
  'is',
  'iz',
];
const MIN_DERIVED_STEM = 5;

function derivation(word: string): string {
  let w = word;
  // Twice at most: `relational` → `relation` → `relat`, the stem of `relate`.
  for (let pass = 0; pass < 2; pass++) {
    const suffix = DERIVATIONS.find((x) => w.endsWith(x) && w.length - x.length >= MIN_DERIVED_STEM);
    if (!suffix) break;
    w = w.slice(0, -suffix.length);
  }
  return w;
}

/**
 * The base of a regular -ed or -ing form, once the ending is off: a doubled consonant undone
 * (`hopped` → `hop`), or, where three letters are left, the final e given back to a base of a
 * consonant, a vowel and a consonant, which doubles none (`voted` → `vote`, `hoping` → `hope`). A
 * base of five letters or more loses its final e anyway (`writing` and `write` are `writ`); one of
 * four kept it, so `vote` and `votes` were `vote` but `voted` and `voting` `vot`, and `noted`,
 * `rated`, `coded` and `hoped` were the words `not`, `rat`, `cod` and `hop`. The last consonant is
 * no w, x or y, which are never doubled (`sewed`, `fixed`, `played`), and no s: `bused` is the bus's,
 * and `based` is mostly "based on", no base (given back, it moved two XQuAD questions' passages
 * from first to second, docs/benchmarks.md). Three letters left are the whole base otherwise: the
 * double of `added` or `erred` is the base's own, not the form's. Four letters left get the e back
 * where the base keeps it (KEEPS_FINAL_E: `united` → `unite`, `shining` → `shine`).
 */
function baseOf(w: string): string {
  if (w.length === 3) return SHORT_E_BASE.test(w) ? `${w}e` : w;
  return KEEPS_FINAL_E.has(`${w}e`) ? `${w}e` : undouble(w);
}
const SHORT_E_BASE = /^[b-df-hj-np-tv-z][aeiouy][b-df-hj-nprtvz]$/;

/**
 * Bases of five letters that keep their final e, where the word without it is another word: the e
 * stripped, `plane` was `plan` (and `planning`), `quite` `quit`, `theme` `them`, `shame` `sham`,
 * `shine` `shin`, `spite` `spit`, `probe` `prob`, `scared` `scar`, `staring` `star`, `united`
 * `unit`, `ranging` `rang`, `routes` `rout`. A closed list: given back by spelling to every base of
 * two consonants, a vowel, a consonant and e (`plane`, `state`, `close`, `write`), the e moved the
 * stems of some 200 words of the corpora, met `statement` with `state`, and lowered recall@5 and
 * the own-room figure of eval:retrieval (docs/benchmarks.md). `state` is left out for that reason,
 * and `suite` as `suited` is the suit's.
 */
const KEEPS_FINAL_E = new Set(['plane', 'quite', 'theme', 'shame', 'shine', 'spite', 'probe', 'scare', 'stare', 'unite', 'range', 'route']);

function undouble(w: string): string {
  return /([b-df-hj-np-tv-z])\1$/.test(w) && !/(ll|ss|zz)$/.test(w) ? w.slice(0, -1) : w;
}

/** Stems of the words of `text` that are not stopwords. */
export function contentTerms(text: string): string[] {
  const out: string[] = [];
  for (const w of words(text)) {
    const t = termOf(w);
    if (t) out.push(t);
  }
  return out;
}

/**
 * "how long", "how far", "how old": the word after "how" says what kind of answer is asked, not
 * what it is about. Counted as a question term it drew "removing heat for long periods" before
 * "held a plasma for 26 minutes" to "how long did Orrery-2 sustain plasma?".
 */
const HOW_MEASURE = /\bhow\s+(long|far|old|large|big|tall|high|often|wide|deep|heavy|fast)\b/gi;

/**
 * "What happened to the Meridian stablecoin?": `happened` asks for an event, and says none. Rare
 * among the sources' sentences, it weighed most of the question, and Orrery-2's `No fusion
 * happened, and that is fine.` came before Tollgate's halt after Meridian lost its peg.
 */
const WHAT_HAPPENED = /\bwhat\s+(?:(?:has|had|is|was)\s+)?(happen(?:s|ed|ing)?|occurred|went\s+on)\s+(?:to|with|at|in|on|after|during|between)\b/gi;

/**
 * "What went wrong with the migration?", "how did the vote go?": the verb of going wrong, or of how
 * something went, says no more than the rest (the tram post's `They go wrong on the street` held
 * both of the first; `The motion passed by 31 votes to 18` holds no "go", and was "not covered").
 */
const GONE_WRONG =
  /\b(go|goes|went|gone|going)\s+wrong\b|\bhow\s+(?:did|does|do|is|was|has|have|will)\s+[^?.!]{1,60}?\s+(go|goes|went|gone|going)(?=\s*(?:$|[?!.,]|so\s+far|for\b|in\b|at\b))/gi;

/**
 * "How does it compare with injections?": the verb asks how two things stand, and the sentences
 * telling it rarely say "compare" (`not quite as effective as the best injectables`), while the
 * sources' `compared with 2.4 per cent on placebo` hold it and nothing of the other thing.
 */
const HOW_COMPARED = /\bhow\s+(?:does|do|did|would|will|could|might)\s+[^?.!]{1,60}?\s+(compare|stack\s+up|measure\s+up)\s+(?:with|to|against)\b/gi;

/**
 * "How does the triage AI work?": the verb asks how the thing does what it does, and the sentences
 * telling it rarely say "work" (`the software … combined their answers with vital signs … to
 * suggest an urgency category`), while any `work` of another source ("a four-day work week") held it.
 */
const HOW_IT_WORKS =
  /\bhow\s+(?:does|do|did|will|would|can|could)\s+[^?.!]{1,60}?\s+(work|works|function|operate)(?=\s*(?:$|[?!.,]|exactly\b|in\s+practice\b))/gi;

/**
 * "What do nurses think?", "how do the traders feel about it?": the verb asks for their view, which
 * sources tell as what they said, supported or worried about; weighed as a term, another post's
 * `I think that is the wrong lesson.` answered the nurses' question.
 */
const VIEW_ASKED = /\b(?:what|how)\s+(?:do|does|did)\s+[^?.!]{1,60}?\s+(think|feel|believe|reckon)\b/gi;

/**
 * "What is being done about the outbreak?", "what are officials doing about it?": the verb asks
 * for what is done, which sources tell by the deed (`would extend emergency vaccination clinics`);
 * weighed as a term, a tram post's `Cities that have done this well` answered it.
 */
const BEING_DONE = /\bwhat\s+(?:(?:is|are|was|were|'s)\s+being\s+(done)|(?:has|have)\s+been\s+(done)|(?:is|are)\s+[^?.!]{1,40}?\s+(doing)\s+about)\b/gi;

/**
 * "What does it say about the keyboard?", "what is said of the cost?": the verb asks what a source
 * tells of the thing after it, as "what about the keyboard?" does. Weighed as a term, `says` made
 * `The company says it has taken about 18,000 preorders` the answer, and `said` any quote's. Not
 * when a person is the subject: "what did Achterberg say about the cost?" asks for her words.
 */
const SAID_ABOUT =
  /\bwhat\s+(?:(?:does|do|did)\s+(?:(?:it|they|this|that|(?:the|this|that)\s+[\p{L}-]+)\s+)?(say|tell|write|mention)|(?:is|was|are|were|has\s+been|have\s+been)\s+(said|told|written|mentioned))\s+(?:about|of|regarding|concerning)\b/giu;

/**
 * "What did the spreadsheet show?", "what does the survey find?", "what did the study conclude?":
 * what a thing (group 1) tells as a whole (asksForOverview in questions.ts). Its verb (group 2) is
 * no asked term, the thing's sentences telling it without the verb: weighed as one, a stellarator
 * video's `to show the difference` answered in the room of `We tried the four-day week … Here is
 * the spreadsheet.`
 */
export const WHAT_IT_TELLS =
  /^\s*(?:so\s+|and\s+)?what\s+(?:does|do|did|has|have)\s+((?:the|this|that|these|those|its|their)\s+[^?.!]{1,50}?)\s+(show|shown|find|found|reveal|revealed|conclude|concluded|tell|say)(?:\s+us)?(?:\s*\?)?\s*$/i;

/**
 * "Which laptop is discussed here?", "what companies are mentioned?": the verb says the room's
 * sources hold the thing, not what they tell of it. Weighed as a term, `discussed` made a post's
 * `the excellent discussion of it on the Ops Hour channel` the answer.
 */
const DISCUSSED_HERE =
  /\b(?:is|are|was|were|being|been|get|gets|got)\s+(discussed|covered|mentioned|featured|named|reported\s+on|talked\s+about|written\s+about)(?=\s*(?:here|in\s+(?:this|the|these)\b|on\s+(?:this|the)\s+(?:page|site|room)\b|$|[?!.]))/giu;

/**
 * "How long did the plasma last?": `last` asks the span as `long` does. Rare among a topic room's
 * sentences, it weighed most of the question, and a commission's pause that `would last at least
 * until … March 2027` came before Orrery-2's `ran a hydrogen plasma for 26 minutes`.
 */
const HOW_LONG_VERB = /\bhow\s+long\b[^?]*?\b(last(?:s|ed)?|take|takes|took|taken)\b/gi;

/**
 * "When does it take effect?", "… come into force?": the verb asks for the rule's start, as `effect`
 * or `force` does (kin.ts reads the sources' other words for it), and the sentence telling it
 * (`The law applies to … from 1 January 2027`) holds neither. Weighed as a term, `take` halved it.
 */
export const IN_FORCE =
  /\b(take|takes|taking|took|taken|come|comes|came|coming|enter|enters|entered|entering|go|goes|going|went)\s+(?:into\s+)?(?:effect|force)\b/gi;

/**
 * "Who brought the case?": the verb of a legal action says no more than its noun (kin.ts reads the
 * sources' other words for it: `dismissed a legal challenge by shopkeepers`, `sued`).
 */
export const LEGAL_ACTION =
  /\b(bring|brings|brought|bringing|file|files|filed|filing|launch|launches|launched|launching|lodge|lodges|lodged|lodging|mount|mounts|mounted|mounting)\s+(?:the|a|an|this|that|their|its)\s+(?:legal\s+)?(?:case|lawsuit|suit|challenge|complaint|claim|action|appeal|petition)s?\b/gi;

/** Whether `question` asks a measure ("how deep …?", "how long did it last?"): its answer is a number. */
export function asksMeasure(question: string): boolean {
  return question.search(HOW_MEASURE) >= 0 || question.search(HOW_LONG_VERB) >= 0;
}

/**
 * The question's content terms in order, less the measure word of a "how long"-type question, the
 * verb of its span (`last`, `take`), the verb of a rule's start (`take effect`) or of a legal action
 * (`brought the case`), the "happened" of a "what happened to …?", the "say" of a "what does
 * it say about …?" and the "show" of a "what did the spreadsheet show?".
 */
export function askedTerms(question: string): string[] {
  const measures = new Set(
    [
      ...question.matchAll(HOW_MEASURE),
      ...question.matchAll(HOW_LONG_VERB),
      ...question.matchAll(WHAT_HAPPENED),
      ...question.matchAll(GONE_WRONG),
      ...question.matchAll(SAID_ABOUT),
      ...question.matchAll(HOW_COMPARED),
      ...question.matchAll(HOW_IT_WORKS),
      ...question.matchAll(VIEW_ASKED),
      ...question.matchAll(BEING_DONE),
      ...question.matchAll(DISCUSSED_HERE),
      ...question.matchAll(IN_FORCE),
      ...question.matchAll(LEGAL_ACTION),
    ].flatMap((m) => contentTerms(m[1] ?? m[2] ?? m[3] ?? '')),
  );
  for (const verb of contentTerms(WHAT_IT_TELLS.exec(question)?.[2] ?? '')) measures.add(verb);
  const terms = contentTerms(question);
  if (!measures.size) return terms;
  const kept = terms.filter((t) => !measures.has(t));
  return kept.length ? kept : terms;
}

/** A lower-cased word's term: its stem, or '' for a stopword (cached with the stems, up to REMEMBERED_TOKEN_MAX_CHARS). */
export function termOf(word: string): string {
  let t = termCache.get(word);
  if (t === undefined) {
    t = STOPWORDS.has(word) ? '' : stem(word);
    if (word.length > REMEMBERED_TOKEN_MAX_CHARS) return t;
    if (termCache.size >= STEM_CACHE_SIZE) termCache.clear();
    termCache.set(word, t);
  }
  return t;
}

const termCache = new Map<string, string>();

/**
 * Where the words whose term is `term` are, so a text can be searched for a term without
 * tokenising it: every such word starts with `prefix` or with one of `whole` (irregular forms,
 * number words, and a short base's -ing form: `ratings` begins with `rating`). The stemmer only
 * strips suffixes, except that -ies/-ied become -y and a short base gets its final e back
 * (`voting` → `vote`), so a term is a prefix of its other words once a final y is dropped.
 * Candidates still need termOf to confirm.
 */
export function termSpellings(term: string): { prefix: string; whole: readonly string[] } {
  return { prefix: spellingPrefix(term), whole: wholeSpellings(term) };
}

function spellingPrefix(term: string): string {
  return term.length > 1 && term.endsWith('y') ? term.slice(0, -1) : term;
}

/**
 * Spellings that begin the words of `term` without its prefix: irregular forms and number words,
 * and the -ing form of a base that baseOf gives its final e back to (`voting` for `vote`; its
 * `voted` and `votes` begin with the term). Searched for as the start of a word, as the prefix is.
 */
function wholeSpellings(term: string): readonly string[] {
  const forms = spelledApart().get(term) ?? NO_FORMS;
  return SHORT_E_TERM.test(term) || KEEPS_FINAL_E.has(term) ? [...forms, `${term.slice(0, -1)}ing`] : forms;
}
const NO_FORMS: readonly string[] = [];
/** A term of four letters baseOf may have given a final e back to. */
const SHORT_E_TERM = /^[b-df-hj-np-tv-z][aeiouy][b-df-hj-nprtvz]e$/;

let apart: Map<string, string[]> | undefined;

/** Irregular forms and number words by their term, where the term is not a prefix of them. */
function spelledApart(): Map<string, string[]> {
  if (!apart) {
    apart = new Map();
    for (const word of [...IRREGULAR.keys(), ...NUMBER_WORDS.keys()]) {
      const term = termOf(word);
      if (!term || word.startsWith(spellingPrefix(term))) continue;
      const forms = apart.get(term) ?? [];
      if (!forms.includes(word)) forms.push(word);
      apart.set(term, forms);
    }
  }
  return apart;
}

/** A sentence of a longer text with its character range. */
export interface Sentence {
  text: string;
  start: number;
  end: number;
}

const ABBREVIATIONS = new Set(
  'mr mrs ms dr st jr sr prof gen col lt sgt rev vs etc inc ltd co corp no vol fig al e.g i.e u.s u.k jan feb mar apr jun jul aug sep sept oct nov dec approx est'.split(
    ' ',
  ),
);

/**
 * A number or a degree sign just before a capital: the capital is a unit's symbol (`362 °C`,
 * `230 V`), not a name's initial.
 */
const AFTER_A_NUMBER = /(?:\p{N}|°)\s?$/u;

/** Whether the text before a full stop ends in an abbreviation or an initial, not a sentence. */
function isAbbreviation(before: string): boolean {
  const m = /([\p{L}.]+)\.$/u.exec(before);
  if (!m) return false;
  const token = m[1].toLowerCase();
  if (ABBREVIATIONS.has(token)) return true;
  if (/^\p{Lu}$/u.test(m[1])) return !AFTER_A_NUMBER.test(before.slice(0, m.index));
  return /^(\p{L}\.)+\p{L}$/u.test(m[1]);
}

/**
 * A line that starts an entry of a list: a time stamp (`22:10 Friday: withdrawals halted`, a video's
 * chapter), a bullet or a number (`1. `). Entries end without a full stop, and a video's chapter
 * list read as one sentence held most of the words of any question about the video: "why did
 * Tollgate halt withdrawals?" was answered with the whole list.
 */
const ENTRY_START = String.raw`(?:\d{1,2}:\d{2}(?::\d{2})?|[-*•]|\d{1,3}[.)])[ \t]`;
const LIST_ENTRY = String.raw`\n(?=[ \t]*${ENTRY_START})`;
/**
 * Whitespace before a list entry (kept as one line break), a blank line after a heading (a line
 * ending without a sentence's mark, kept as a blank line), or any other run of whitespace.
 */
const ENTRY_BREAK_OR_SPACE = new RegExp(String.raw`(\s*\n[ \t]*(?=${ENTRY_START}))|((?<=[^\s.!?…:;"'\u201d\u2019)\]])[ \t]*\n[ \t]*\n\s*)|\s+`, 'g');

/**
 * `text` with each run of whitespace made one space, except a line break before a list entry,
 * which stays one, and a blank line after a heading, which stays one: squashed, a video's chapter
 * list reaches the built-in model as one sentence, and a post's heading as the first words of the
 * paragraph after it (`Three more things the postmortem gets right Failure detectors must not …`
 * was quoted for "who wrote the post-mortem?", its heading's capital read as a name).
 */
export function squashKeepingListEntries(text: string): string {
  return text.includes('\n')
    ? text.replace(ENTRY_BREAK_OR_SPACE, (_, entry?: string, heading?: string) => (entry ? '\n' : heading ? '\n\n' : ' ')).trim()
    : squash(text);
}

/**
 * A line break before a line of chat (`Ann (24 Nov 2026, 19:20): …`): each message is said apart,
 * though the one before may end without a mark (`… [shares a photo: a lake]`), where a sentence
 * ran on into the next message and was quoted under the first one's speaker.
 */
const CHAT_LINE = String.raw`\n(?=[^\n]{1,200}? ${CHAT_STAMP.source}: )`;

/**
 * Where a sentence may end. The lookbehind starts a match only at the first mark of a run: without
 * it a long run of dots that no capital follows is rescanned from every dot (quadratic on hostile
 * text). matchAll runs on a copy, so one pattern serves every call. An ellipsis standing alone
 * after a sentence (`… 25 minutes this year. …`, a long chat line cut: cutAtSentence) is a
 * sentence of its own, which says nothing and is never quoted.
 */
const SENTENCE_BOUNDARY = new RegExp(
  String.raw`(?<![.!?])([.!?]+["'\u201d\u2019)\]]*)(\s+)(?=["'\u201c\u2018(\[]?[\p{Lu}\p{N}]|…(?:\s|$))|\n\s*\n|${LIST_ENTRY}|${CHAT_LINE}`,
  'gu',
);

/** Splits text into sentences (and at blank lines and list entries), keeping offsets into the original text. */
export function splitSentences(text: string): Sentence[] {
  const out: Sentence[] = [];
  let start = 0;
  for (const m of text.matchAll(SENTENCE_BOUNDARY)) {
    const cut = m.index + (m[1] ? m[1].length : 0);
    if (m[1] && m[1] === '.' && isAbbreviation(text.slice(Math.max(0, cut - 12), cut))) continue;
    if (m[2] && !m[2].includes('\n') && LEAD_IN.test(text.slice(start, cut))) continue;
    push(out, text, start, cut);
    start = m.index + m[0].length;
  }
  push(out, text, start, text.length);
  return out;
}

/**
 * One capitalised word and a stop, read with the sentence after it on the same line: mostly a
 * list entry's label (`2. **Cold.** VS-2 kept 91% …`, its bold and number gone, and its line
 * squashed into a passage's). Alone, `Cold.` was quoted as the answer to how the cells do in the
 * cold; a one-word sentence of prose ("Yes.") says nothing without the next one either.
 */
const LEAD_IN = /^\s*\p{Lu}[\p{L}'’-]{0,30}\.$/u;

function push(out: Sentence[], text: string, start: number, end: number): void {
  const raw = text.slice(start, end);
  const lead = raw.length - raw.trimStart().length;
  const trimmed = raw.trim();
  if (trimmed) out.push({ text: trimmed, start: start + lead, end: start + lead + trimmed.length });
}

/**
 * Inverse document frequency over a set of term lists (BM25's form, always positive). A term found
 * in no document counts as found in one, so words the texts lack do not outweigh those they share.
 * With `only`, frequencies are counted for those terms alone (callers that weigh query terms).
 */
export function idfTable(docs: string[][], only?: Set<string>): (term: string) => number {
  const df = new Map<string, number>();
  for (const d of docs) {
    for (const t of new Set(only ? d.filter((x) => only.has(x)) : d)) df.set(t, (df.get(t) ?? 0) + 1);
  }
  const n = docs.length;
  return (term) => {
    const f = Math.max(1, df.get(term) ?? 0);
    return Math.log(1 + (n - f + 0.5) / (f + 0.5));
  };
}

/** Sum of the IDF of the distinct query terms found in `terms`. */
export function weightedOverlap(query: Set<string>, terms: Iterable<string>, idf: (t: string) => number): number {
  let score = 0;
  const seen = new Set<string>();
  for (const t of terms) {
    if (query.has(t) && !seen.has(t)) {
      seen.add(t);
      score += idf(t);
    }
  }
  return score;
}
