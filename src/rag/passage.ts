/**
 * Stage 3 passage choice: the part of an item (up to 1,000 chars) that best answers the question,
 * not its first 1,000 chars. Windows of whole sentences are scored by the IDF-weighted question
 * terms they cover (a hyphenated word's terms once, ai/local/asked-units.ts) and by their best
 * sentence; ties go to the window best centred on the strongest sentence. A window holding a
 * strongest sentence that also holds most of the question's terms and an answer of the asked type
 * (a date for "when", a number for "how many", for "who did it" a sentence telling the deed, best
 * with its doer; asked no kind of answer, every asked term) comes before any that holds none. A
 * list's entries keep their line breaks.
 */
import { askedTerms, idfTable, squashKeepingListEntries, words } from '../ai/local/extractive-text.js';
import { answerType, hasCue, type AnswerType } from '../ai/local/extractive-answer.js';
import { askedUnits, type UnitWeigher } from '../ai/local/asked-units.js';
import { deedAsked, isLightDeed, namesDoer, tellsDeed } from '../ai/local/answer-cues.js';
import { asAsked, headsAsked, kindsOf, kinOf, joinerFor, RECENT_QUESTIONS, type Joiner, type Kin } from '../ai/local/kin.js';
import { recently } from '../ai/local/recently.js';
import { asksWhetherItIs } from '../ai/questions.js';
import { matchQuery } from './query-match.js';
import { namedInTitle, termsNeeded } from './candidates.js';
import { clip } from '../text.js';
import { safeCut } from '../content/text.js';

export const PASSAGE_CHARS = 1000;
/**
 * Characters either side of the chunk the search matched that a long body's passage is chosen
 * from (passageRegion): reading a whole body costs ~12 ms a source at the default BODY_MAX_CHARS
 * (200,000) and seconds at its largest (10 million), on the event loop, for each source of an ask.
 */
export const PASSAGE_REACH = 30_000;
/** Weight of the per-sentence scores beside the window's distinct coverage. */
const DENSITY_WEIGHT = 0.25;
/**
 * Weight of the window's best sentence on top: the question's words together in one sentence
 * answer it more than the same words spread over several. Without it the window naming Veldra
 * in four sentences beat the one whose sentence held "energy density" beside Veldra and the cell.
 */
const STRONGEST_WEIGHT = 0.25;

/**
 * The most relevant passage of `text` for `question`, at most `max` chars. `hint` (the chunk search
 * matched) locates the passage when the question shares no words with the text; `title`, the
 * text's, is read for a question of whether something is so (namedInTitle).
 */
export function bestPassage(text: string, question: string, max = PASSAGE_CHARS, hint?: string, title?: string): string {
  // A list's entries keep their lines: the built-in model reads each as a sentence of its own.
  if (text.length <= max) return squashKeepingListEntries(text);
  const q = readingOf(question);
  const found = matchQuery(text, q.searched, squashKeepingListEntries, true);
  const { flat, sentences } = found;
  if (flat.length <= max) return flat;
  // Asked whether something is so, the asked terms the text's title names say which text, not
  // where in it ("is the K1 fast?" in the K1 article: the window naming the K1 most, its
  // specifications, not the one saying `Early reviews suggest it is not yet fast.`). Other
  // questions read them as usual: "how much did the ships cost?" under `… orders 12 … ships` asks
  // the ships' price, not the plant's in another paragraph.
  const named = title === undefined || !q.whether ? null : namedInTitle(q.searched, title);
  const read = q.heads.size ? readingHeads(found.matches, q.kin, q.heads) : q.kin;
  const { light, doneTo } = q;
  // Read once on the whole text: most texts write no asked term apart, and their sentences are not read again.
  const joined = q.joiner.mayJoin(flat, found.lower) ? q.joiner : (terms: string[]) => terms;
  const matched = found.matches.map((m, i) => {
    // "Who wrote the postmortem?" and a report's `post-mortem`: the compound written apart is the question's word.
    const terms = [...new Set(asAsked(joined(m, sentences[i].text), read))].filter((t) => !named?.has(t));
    return light && terms.includes(light.term) && !tellsDeed(sentences[i].text, light, doneTo) ? terms.filter((t) => t !== light.term) : terms;
  });
  const idf = idfTable(matched);
  const { weigh } = q;
  const scores = matched.map((m) => weigh(m, idf));
  const top = scores.reduce((b, s, i) => (s > scores[b] ? i : b), 0);
  if (scores[top] === 0) return fromHint(flat, max, hint);
  const answering = answeringSentences(q, sentences, matched, scores, scores[top]);

  // Windows of whole sentences, slid with counts of the question terms inside, so a long body
  // costs one pass.
  let best = { start: 0, end: 0, score: -1, answers: 0, offCentre: Infinity };
  const anchorCentre = (sentences[top].start + sentences[top].end) / 2;
  const inside = new Map<string, number>();
  let density = 0;
  // Sentences inside the window answering at each level (answeringSentences).
  const answered = [0, 0, 0];
  // The window's sentences that no later one in it outscores, from `front` on, best first: its
  // strongest is the first. Spreading the window's scores for each window read a body of short
  // sentences a window's worth of times (~50 ms a source).
  const strongestFirst: number[] = [];
  let front = 0;
  let j = -1;
  for (let i = 0; i < sentences.length; i++) {
    while (j + 1 < sentences.length && (j < i || sentences[j + 1].end - sentences[i].start <= max)) {
      j++;
      density += scores[j];
      answered[answering[j]]++;
      for (const t of matched[j]) inside.set(t, (inside.get(t) ?? 0) + 1);
      while (strongestFirst.length > front && scores[strongestFirst[strongestFirst.length - 1]] <= scores[j]) strongestFirst.pop();
      strongestFirst.push(j);
    }
    while (strongestFirst[front] < i) front++;
    if (density > 0) {
      const covered = weigh(held(inside), idf);
      const strongest = scores[strongestFirst[front]];
      const score = covered + DENSITY_WEIGHT * density + STRONGEST_WEIGHT * strongest;
      const offCentre = Math.abs((sentences[i].start + sentences[j].end) / 2 - anchorCentre);
      const answers = answered[2] > 0 ? 2 : answered[1] > 0 ? 1 : 0;
      const outscores = score > best.score + 1e-9 || (Math.abs(score - best.score) <= 1e-9 && offCentre < best.offCentre);
      if (answers !== best.answers ? answers > best.answers : outscores) {
        best = { start: i, end: j, score, answers, offCentre };
      }
    }
    density -= scores[i];
    answered[answering[i]]--;
    for (const t of matched[i]) inside.set(t, inside.get(t)! - 1);
  }
  return clip(flat.slice(sentences[best.start].start, sentences[best.end].end), max);
}

/**
 * Per sentence, how well it answers: 1 when it is a strongest one (`strongest`, the top score),
 * holds most of the question's terms (as the relevance gate counts them, rag/candidates.ts) and an
 * answer of the type the question asks (asked no kind, as "what did Aurelian order?", every term
 * it asks: a window further on naming Aurelian in more sentences, with `the order was a
 * significant bet`, left out the lead saying what it ordered), else 0. "When will the comet be visible?": the lead
 * sentence says "could become visible to the naked eye in October", but the window further on
 * named the comet in more sentences and won, and with it "magnitude 3.5, which would make the
 * comet visible", which holds the same words and no date. Only a sentence holding most of the question counts: in the tram
 * budget's room, "how much does the Kestrel K1 cost?" found the budget's "estimated cost was €960
 * million", which holds the one word "cost". No type ("what is not affected by the delay?") marks
 * none.
 *
 * Asked who did a deed ("who will build the ships?"), where a sentence holding most of the question
 * tells the deed (answer-cues.ts's tellsDeed) those are the ones that answer, 2 when they name its
 * doer after "by" (`will be built by Seowon Heavy Industries`): the lead sentence saying so lost to
 * a window further on naming the ships in more sentences, `older vessels built between 2004 and
 * 2008` and an analyst's `plant being built on time` among them; "who restored the film?" got the
 * passage of `the restored film will tour` and `the restoration cost`, not of `… restoring the film`.
 */
function answeringSentences(q: QuestionReading, sentences: { text: string }[], matched: string[][], scores: number[], strongest: number): number[] {
  const { type, needed, deed } = q;
  if (deed) {
    const others = new Set(matched.flat().filter((t) => t !== deed.term));
    const told = sentences.map((s, i) => matched[i].length >= needed && tellsDeed(s.text, deed, others));
    if (told.some(Boolean)) return told.map((t, i) => (!t ? 0 : namesDoer(sentences[i].text, deed) ? 2 : 1));
  }
  const whole = type === 'other' ? Math.max(needed, q.asked) : Infinity;
  return sentences.map((s, i) =>
    scores[i] >= strongest - 1e-9 && matched[i].length >= needed && (hasCue(type, s.text, q.words) || matched[i].length >= whole) ? 1 : 0,
  );
}

/**
 * What the passage choice reads of a question, whatever the text: its terms, their kin, the heads
 * of the compounds it asks, the deed and the type of answer it asks for. An ask quotes several
 * sources (context.ts), each read with the same question; this is made once for them all.
 */
interface QuestionReading {
  /** The terms a text is matched with: the asked terms, their kin (not the kinds matchQuery finds inside them) and the heads of compounds asked. */
  searched: ReadonlySet<string>;
  kin: Kin;
  heads: ReadonlyMap<string, string>;
  /** "Who makes orvaglutide?": a light verb, which counts only where it is done to what is asked (`doneTo`). */
  light: { word: string; term: string } | null;
  doneTo: ReadonlySet<string>;
  joiner: Joiner;
  weigh: UnitWeigher;
  type: AnswerType;
  /** Terms of the question a sentence must hold to be about it (termsNeeded). */
  needed: number;
  /** How many distinct terms the question asks (askedTerms). */
  asked: number;
  /** Whether it asks whether something is so (asksWhetherItIs). */
  whether: boolean;
  /** The deed a "who did it?" question asks, if it is one. */
  deed: { word: string; term: string } | null;
  words: Set<string>;
}

const readings = new Map<string, QuestionReading>();

function readingOf(question: string): QuestionReading {
  return recently(readings, question, () => newReading(question), RECENT_QUESTIONS);
}

function newReading(question: string): QuestionReading {
  const asked = askedTerms(question);
  // Only question terms matter, so each sentence is reduced to the question terms it holds.
  // A kin ("melodrama" for "film") is found as the question's own term.
  const kin = kinOf(asked, question);
  // A compound that is a kind of an asked word (`gigafactory` for "factory") is found inside the
  // word's own finds (matchQuery's `kinds`), not searched for under each combining form.
  const kinds = kindsOf(asked);
  // The head of a compound asked (`factory` for "gigafactory") is the compound in a text naming it.
  const heads = headsAsked(question, asked);
  const type = answerType(question);
  // "Who makes orvaglutide?": a light verb not done to what is asked (`makes a weekly tablet
  // possible`) is not the deed asked, and holds no term of the question (extractive-answer.ts).
  const deed = type === 'person' ? deedAsked(question) : null;
  const light = deed !== null && isLightDeed(deed) ? deed : null;
  return {
    searched: new Set([...asked, ...[...kin.keys()].filter((k) => !kinds.has(k)), ...heads.keys()]),
    kin,
    heads,
    light,
    doneTo: new Set(asked.filter((t) => t !== light?.term)),
    joiner: joinerFor(new Set(asked)),
    weigh: askedUnits(question, asked),
    type,
    needed: termsNeeded(question),
    asked: new Set(asked).size,
    whether: asksWhetherItIs(question),
    deed,
    words: new Set(words(question)),
  };
}

/**
 * The kin a text's sentences (`matches`, their query terms) are read with, given the heads of the
 * compounds the question asks (headsAsked): where a sentence names a compound, its head stands for
 * it; elsewhere the head is no term of the question (a market is no supermarket).
 */
function readingHeads(matches: string[][], kin: Kin, heads: ReadonlyMap<string, string>): Kin {
  const compounds = new Set(heads.values());
  if (matches.some((m) => m.some((t) => compounds.has(t)))) return new Map([...heads, ...kin]);
  const out = new Map<string, string | readonly string[]>(kin);
  for (const head of heads.keys()) if (!out.has(head)) out.set(head, []);
  return out;
}

/** The terms a window holds now. */
function* held(inside: Map<string, number>): Iterable<string> {
  for (const [t, n] of inside) if (n > 0) yield t;
}

/**
 * The part of a long `text` its passage is chosen from: `reach` characters either side of where
 * `hint` (the matched chunk, a piece of the text) stands, cut at line breaks or spaces, or the
 * text's first 2 × `reach` characters when the hint is not found in it (a title chunk).
 */
export function passageRegion(text: string, hint: string | undefined, reach = PASSAGE_REACH): string {
  if (text.length <= 2 * reach) return text;
  const probe = hint?.trim().slice(0, 200) ?? '';
  const at = probe ? text.indexOf(probe) : -1;
  const centre = at < 0 ? reach : at + probe.length / 2;
  const from = Math.max(0, Math.min(text.length - 2 * reach, Math.round(centre - reach)));
  const to = from + 2 * reach;
  // Whole lines where there are any, else whole words: a cut word would read as a term of its own.
  const start = from === 0 ? 0 : cutAfter(text, from, to);
  const end = to >= text.length ? text.length : cutBefore(text, start, to);
  return text.slice(start, end);
}

/** Where the first line, else word, after `from` (before `limit`) starts; else `from`, not inside a character. */
function cutAfter(text: string, from: number, limit: number): number {
  for (const mark of ['\n', ' ']) {
    const i = text.indexOf(mark, from);
    if (i >= 0 && i < limit) return i + 1;
  }
  return safeCut(text, from);
}

/** Where the last line, else word, before `to` (after `start`) ends; else `to`, not inside a character. */
function cutBefore(text: string, start: number, to: number): number {
  for (const mark of ['\n', ' ']) {
    const i = text.lastIndexOf(mark, to);
    if (i > start) return i;
  }
  return safeCut(text, to);
}

function fromHint(flat: string, max: number, hint?: string): string {
  const probe = hint === undefined ? '' : squashKeepingListEntries(hint).slice(0, 60);
  const at = probe ? flat.indexOf(probe) : -1;
  return clip(flat.slice(Math.max(0, at)), max);
}
