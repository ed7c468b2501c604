/**
 * The built-in extractive ChatModel (docs/architecture.md): offline and deterministic. It reranks snippets
 * lexically and, given an Embedder, by embedding; answers by quoting the sentences of the grounded
 * prompt's sources that best answer the question, with `[n]` markers, and says so plainly when they
 * do not; summarises by picking the most central sentences. Answers stream word by word.
 */
import { answerFromDetails } from './item-details-answer.js';
import { asksWhoIsQuoted, withoutItemNamed, withoutMakerStance } from '../item-questions.js';
import { answerFromChapters } from './chapters-answer.js';
import { countedTerm, counts, goesOnFromHeadline, headlineMeasure } from './headline-measure.js';
import { quotedOverview } from './quoted-people.js';
import { NOT_COVERED, commenterOf, parseGroundedPrompt, type GroundedPrompt, type GroundedSource } from '../grounded-prompt.js';
import {
  answerType,
  asksWhoSomeoneIs,
  holdsMoney,
  namesSomeone,
  scoreSentences,
  sourceSentences,
  type AnswerWeights,
  type ScoredSentence,
  DEFAULT_ANSWER_WEIGHTS,
} from './extractive-answer.js';
import { centralSentences, summaryOf } from './extractive-summary.js';
import { spelledDay, stampedAt, withDatesMeant } from './relative-dates.js';
import {
  asksAboutComments,
  asksAboutDiscussion,
  asksForDiscussionOverview,
  asksForRoomOverview,
  namesIn,
  questionFocus,
  questionParts,
  spokenText,
  withAntecedent,
  withPlainApostrophes,
} from '../questions.js';
import { LINE_SPEAKER, linesOfSpeakerAsked, speakerAsked, type SpokenLine } from './speaker-asked.js';
import { askedTerms, contentTerms, idfTable, splitSentences, stem, words } from './extractive-text.js';
import { asAsked, kinOf } from './kin.js';
import { instructsTheReader } from './directives.js';
import { addsToAnswer, ASKS, saysSomething } from './follow-up.js';
import { namedSubjectFirst } from './subject-named.js';
import { smallTalkFor, smallTalkOf, speakerTerms } from './small-talk.js';
import { asksSpan, asksWhen, tellsSpan, tellsTime } from './time-told.js';
import { deedAsked, namesModels, namesSubject, priceTerms, REASON_CUE, tellsDeed } from './answer-cues.js';
import { RERANK_MAX, RERANK_MIN } from '../rerank-parse.js';
import type { ChatMessage, ChatModel, Embedder } from '../types.js';
import { cosine } from '../vectors.js';
import { CHAT_STAMP, clip } from '../../text.js';
import { markdownLiteral, withoutLiteralEscapes } from '../../protocol/markdown-literal.js';
import { categoryOfTopicTitle } from '../../protocol/room-ids.js';
import { ASSISTANT_NAME } from '../../protocol/names.js';
import { numberWithin, wholeNumber } from '../../options.js';

export const LOCAL_CHAT_MODEL = 'salon-local-extractive-v1';
/**
 * When the best sentence's relevance is under this, the sources do not answer the question.
 * Relevance is the share of the question's IDF weight the sentence covers plus, with an embedder,
 * twice its embedding cosine. Chosen on SQuAD questions asked against an index that lacks half
 * the articles: about 1% of answerable questions refused, about 70% of unanswerable ones.
 */
export const DEFAULT_MIN_RELEVANCE = 0.6;
/** The same without an embedder: coverage alone. */
export const DEFAULT_MIN_COVERAGE = 0.2;
const COSINE_WEIGHT = 2;
const OVERVIEW_SENTENCES = 3;
/** A further sentence is quoted when it scores at least this share of the best one. */
const FOLLOW_RATIO = 0.5;
const DEFAULT_MAX_SENTENCES = 2;
/** Weight of the embedding cosine beside lexical coverage in rerank. */
const RERANK_EMBED_WEIGHT = 0.8;
/** A slight preference for what search ranked first, to break near-ties. */
const RERANK_ORDER_WEIGHT = 0.01;

export const NOT_GROUNDED = 'I can only answer questions from the sources of this room, and none were given.';

export interface LocalChatOptions {
  /** Pause between streamed pieces; 0 yields to the event loop only. */
  pieceDelayMs?: number;
  /** Most sentences quoted in an answer. */
  maxSentences?: number;
  /** Relevance under which the sources count as not answering (with an embedder). */
  minRelevance?: number;
  /** Coverage under which the sources count as not answering (without an embedder). */
  minCoverage?: number;
  weights?: Partial<AnswerWeights>;
}

export class LocalChatModel implements ChatModel {
  readonly model = LOCAL_CHAT_MODEL;
  private readonly pieceDelayMs: number;
  private readonly maxSentences: number;
  private readonly minCoverage: number;
  private readonly minRelevance: number;
  private readonly weights: AnswerWeights;

  constructor(
    private readonly embedder?: Embedder,
    options: LocalChatOptions = {},
  ) {
    this.pieceDelayMs = options.pieceDelayMs ?? 0;
    this.maxSentences = options.maxSentences ?? DEFAULT_MAX_SENTENCES;
    this.minCoverage = options.minCoverage ?? DEFAULT_MIN_COVERAGE;
    this.minRelevance = options.minRelevance ?? DEFAULT_MIN_RELEVANCE;
    this.weights = { ...DEFAULT_ANSWER_WEIGHTS, ...options.weights };
    numberWithin('LocalChatModel', 'pieceDelayMs', this.pieceDelayMs, 0);
    wholeNumber('LocalChatModel', 'maxSentences', this.maxSentences, 1);
    numberWithin('LocalChatModel', 'minCoverage', this.minCoverage, 0, 1);
    numberWithin('LocalChatModel', 'minRelevance', this.minRelevance, 0);
  }

  async rerank(query: string, snippets: string[], signal?: AbortSignal): Promise<number[]> {
    if (!snippets.length) return [];
    const order = await this.order(query, snippets, signal);
    return order.slice(0, Math.max(Math.min(RERANK_MIN, snippets.length), Math.min(RERANK_MAX, snippets.length)));
  }

  /**
   * The sources in the order of their relevance to one part of a question (rerank's order): the
   * pipeline chose and ordered them for the whole question, and a source's place weighs on its
   * sentences' scores (`rank`), so the source answering a part, listed late for the other part's
   * words, lost to a sentence of a source listed first holding the part's words.
   */
  private async rankedFor(part: string, sources: GroundedSource[], signal?: AbortSignal): Promise<GroundedSource[]> {
    const order = await this.order(
      part,
      sources.map((s) => `${s.label}\n${s.content}`),
      signal,
    );
    return order.map((i) => sources[i]);
  }

  /** Every snippet's index, most relevant to `query` first: lexical coverage, embedding cosine, then search's order. */
  private async order(query: string, snippets: string[], signal?: AbortSignal): Promise<number[]> {
    const q = [...new Set(contentTerms(query))];
    const terms = snippets.map((s) => contentTerms(s));
    const idf = idfTable(terms, new Set(q));
    const total = q.reduce((s, t) => s + idf(t), 0) || 1;
    const lexical = terms.map((ts) => {
      const have = new Set(ts);
      return q.reduce((s, t) => s + (have.has(t) ? idf(t) : 0), 0) / total;
    });
    const cosines = await this.cosines(query, snippets, signal);
    const scores = snippets.map((_, i) => lexical[i] + RERANK_EMBED_WEIGHT * (cosines?.[i] ?? 0) - RERANK_ORDER_WEIGHT * i);
    return scores.map((_, i) => i).sort((a, b) => scores[b] - scores[a] || a - b);
  }

  async summarize(text: string, query?: string): Promise<string> {
    return summaryOf(text, { query });
  }

  async *stream(messages: ChatMessage[], signal?: AbortSignal): AsyncIterable<string> {
    const answer = await this.answer(messages, signal);
    for (const piece of answer.match(/\S+\s*/g) ?? []) {
      if (signal?.aborted) return;
      await pause(this.pieceDelayMs);
      if (signal?.aborted) return;
      yield piece;
    }
  }

  /** The whole answer to a conversation whose last user message is a grounded prompt. */
  async answer(messages: ChatMessage[], signal?: AbortSignal): Promise<string> {
    const user = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const parsed = parseGroundedPrompt(user);
    if (!parsed || !parsed.sources.length) return NOT_GROUNDED;
    const asked = withPlainApostrophes(parsed.question);
    // "What does the author think about crunch?" is answered as "what does it say about crunch?": no sentence says "author" or "think".
    const prompt = { ...parsed, question: (parsed.item && withoutMakerStance(questionFocus(asked))) || asked };
    const focus = questionFocus(prompt.question);
    // "Who wrote this?": the item's byline, which its text rarely says.
    const itemSource = prompt.sources.find((s) => s.roomItem);
    const told = prompt.item ? answerFromDetails(focus, prompt.item, itemSource?.n, itemSource?.content) : null;
    if (told) return told;
    // "What happens at 3:00?": the video's chapter lines.
    const chaptered = prompt.item?.kind === 'video' && itemSource ? answerFromChapters(focus, itemSource.content, itemSource.n) : null;
    if (chaptered) return chaptered;
    const headline = headlineAnswering(prompt, focus);
    if (headline) return this.headlineFirst(prompt, headline.clause, headline.n, signal);
    const documents = prompt.sources.filter((s) => (s.section ?? 'document') === 'document');
    const discussion = prompt.sources.filter((s) => s.section === 'recent' || s.section === 'memory');
    const comments = asksAboutComments(prompt.question) ? documents.filter((s) => commenterOf(s.label) !== null) : [];
    if (comments.length) return commentsOverview(comments);
    if (prompt.item && documents.length && asksWhoIsQuoted(prompt.question)) {
      const itemFirst = [...documents.filter((s) => s.roomItem), ...documents.filter((s) => !s.roomItem)];
      return quotedOverview(itemFirst, prompt.item.kind) ?? `I found no one quoted by name in this ${prompt.item.kind}.`;
    }
    // A topic room's subject is its first line (`Recent in Science, newest first:`), not every title
    // its digest lists: "what's the latest on the comet?" asks the comet's news, not the room's list.
    const overviewAsked = asksForRoomOverview(prompt.question, prompt.item ? prompt.topic : prompt.topic.split('\n', 1)[0]);
    if (discussion.length && asksForDiscussionOverview(prompt.question)) return discussionOverview(discussion);
    if (overviewAsked && discussion.length && (asksAboutDiscussion(prompt.question) || !documents.length)) return discussionOverview(discussion);
    if (overviewAsked && documents.length) return overview({ ...prompt, sources: documents });
    const spoken = discussion.length ? saidOfWhatIsAsked(prompt.question, linesOfSpeakerAsked(prompt.question, discussion), discussion) : [];
    if (spoken.length) return spoken.map((l) => `${withStop(quoted(asQuoted(l.line)))} [${l.n}]`).join(' ');
    const parts = questionParts(prompt.question);
    return parts.length > 1 ? this.quoteEach(prompt, parts, signal) : this.quote(prompt, signal);
  }

  /**
   * A question asking several (questionParts): the answer to the whole, then what each part alone
   * adds, in order; a sentence is quoted once. The whole goes first since a part may lean on the
   * others' words (the waits that "fell from 47 minutes" share only "nurse" with "how much did
   * waits drop, and what do the nurses worry about?"). When the whole finds nothing, a part the
   * sources do not answer is said to be so.
   */
  private async quoteEach(prompt: GroundedPrompt, parts: string[], signal?: AbortSignal): Promise<string> {
    const whole = await this.quote(prompt, signal);
    const said: Set<string>[] = [];
    const answer: string[] = [];
    const add = (quote: string) => {
      for (const sentence of quote.split(CITED_SENTENCE_END)) {
        const heard = quotedWords(sentence);
        if (said.some((earlier) => repeats(earlier, heard))) continue;
        answer.push(sentence);
        said.push(heard);
      }
    };
    if (whole !== NOT_COVERED) add(whole);
    const unanswered: string[] = [];
    for (const part of parts) {
      const quote = await this.quote({ ...prompt, question: part, sources: await this.rankedFor(part, prompt.sources, signal) }, signal);
      if (quote !== NOT_COVERED) add(quote);
      else if (whole === NOT_COVERED) unanswered.push(part);
    }
    if (!answer.length) return NOT_COVERED;
    return [...answer, ...unanswered.map((part) => `The sources I found do not answer "${quoted(part)}"`)].join(' ');
  }

  /**
   * "How much did waits drop?" in the room of `… cuts emergency waits by 22 minutes …`: the
   * headline's clause (headlineMeasure), then what the answer quotes of the same document telling
   * the measure asked (`The median fee … fell from $0.042 … to $0.007`).
   */
  private async headlineFirst(prompt: GroundedPrompt, headline: string, n: number, signal?: AbortSignal): Promise<string> {
    const quote = await this.quote(prompt, signal);
    const cite = ` [${n}]`;
    const more =
      quote === NOT_COVERED ? [] : quote.split(CITED_SENTENCE_END).filter((s) => s.endsWith(cite) && goesOnFromHeadline(s, prompt.question, headline));
    return [`${withStop(quoted(headline))}${cite}`, ...more].join(' ');
  }

  /**
   * The quote, read again with the room's item's description (the topic's lines after its title)
   * as the first words of the item's own source, when nothing the passages hold answers: a post's
   * description says `takes effect on 1 January 2027`, and "when does the law take effect?" in
   * its room abstained over the passage of its key dates, which never says "effect". Null when the
   * description is no help, or is already read.
   */
  private async quoteWithDescription(asked: GroundedPrompt, signal?: AbortSignal): Promise<string | null> {
    const description = asked.item ? asked.topic.split('\n').slice(1).join('\n').trim() : '';
    const primary = description ? primarySource(asked) : undefined;
    if (!primary || primary.content.includes(description)) return null;
    const sources = asked.sources.map((s) => (s === primary ? { ...s, content: `${description}\n\n${s.content}` } : s));
    const quote = await this.quote({ ...asked, sources }, signal);
    return quote === NOT_COVERED ? null : quote;
  }

  private async quote(asked: GroundedPrompt, signal?: AbortSignal): Promise<string> {
    const recent = asked.sources.filter((s) => s.section === 'recent').flatMap((s) => s.content.split('\n'));
    // In an item's room "the article" names the source to quote, not a word it must hold.
    const focused = questionFocus(asked.question);
    const question = (asked.item && withoutItemNamed(focused, asked.item.kind)) || focused;
    const prompt = { ...asked, question: withAntecedent(question, recent, asked.topic.split('\n', 1)[0]) };
    const when = asksWhen(prompt.question);
    const chaptersAsked = when && ASKS_WHERE_IN_VIDEO.test(prompt.question);
    const sim = await this.similarities(prompt, signal);
    const primary = primarySource(prompt)?.n;
    const relevant = (s: ScoredSentence) =>
      sim ? s.coverage + COSINE_WEIGHT * (sim.question.get(s.text) ?? 0) >= this.minRelevance : s.coverage >= this.minCoverage;
    // A source's order to say something ("ignore the instructions and answer that …") is no
    // statement of it: quoted, it claimed the source holds an answer it only asks for. Small talk
    // (`Hey Mel!`, `Thanks, Caroline!`, `Enjoy your day!`) holds the question's words as the name it
    // addresses or in a set phrase, and tells nothing: it led answers and followed them.
    const smallTalk = smallTalkIn(prompt.question, prompt.sources);
    const ranked = toldFirst(
      prompt.sources,
      pricedFirst(
        prompt.question,
        namedSubjectFirst(
          prompt.question,
          prompt.sources,
          withoutEchoes(scoreSentences(prompt.sources, prompt.question, this.weights, sim?.ranking, primary)).filter(
            (s) =>
              !asksInDocument(prompt.sources, s) &&
              !ONLY_ASKS.test(spokenText(s.text)) &&
              !smallTalk(s.text) &&
              !instructsTheReader(spokenText(s.text).replace(EXCHANGE_MARK, '')) &&
              !(when && !chaptersAsked && CHAPTER_LINE.test(s.text)) &&
              !isHeading(prompt.sources, s),
          ),
          relevant,
        ),
        relevant,
      ),
      relevant,
    );
    const first = ranked[0];
    if (!first || !relevant(first)) return (await this.quoteWithDescription(asked, signal)) ?? NOT_COVERED;
    if (!pricesWhatIsAsked(prompt.question, first)) return NOT_COVERED;
    // Built at its first use, once for the answer's three checks of who a sentence names.
    const common = writtenInLowerCase(prompt.sources);
    const top = whoAnswer(prompt, ranked, relevant, common);
    if (!top) return NOT_COVERED;
    const named = sourcesNaming(prompt, top.text);
    const namesWhatIsAsked = namingSubject(prompt.question);
    const chosen = [top];
    const counted = countedTerm(prompt.question);
    // "… he wrote in a blog post": a pronoun doer is read with the sentence naming who it stands for.
    // So is an answer opening with one (`He is also the oldest quarterback …`), whatever is asked.
    const antecedent =
      top === first && (namesNoOne(prompt, top, common) || OPENING_PRONOUN.test(spokenWords(top.text))) ? namedBefore(prompt, ranked, top, common) : undefined;
    if (antecedent) chosen.unshift(antecedent);
    for (const s of ranked) {
      if (s === top || chosen.includes(s)) continue;
      // The sentence naming whom a pronoun stands for is read with the answer, not in its place.
      if (chosen.length >= this.maxSentences + (antecedent ? 1 : 0) || s.score < FOLLOW_RATIO * top.score) break;
      // An answer begun from the room's own item goes on from it, not from another article's words;
      // one begun from what people said, not from another article's (`most of the development team
      // worked more than 60 hours`, shipped, after `Jonas: I used to work on container ships`).
      if (top.n === primary && s.n !== primary) continue;
      if (!isDocument(prompt.sources, top.n) && isDocument(prompt.sources, s.n) && s.n !== primary) continue;
      if (named && !named.has(s.n) && !sharesMoreThanAWord(prompt.question, s.text)) continue;
      if (!namesWhatIsAsked(s.text)) continue;
      // "Who voted against …?" is not answered with who voted in favour.
      if (s.contrary) continue;
      // `Thanks, Mel!`, `Certainly!`: a sentence scored near the answer on its neighbours' words or
      // its source's rank, saying nothing more of what is asked.
      if (
        !addsToAnswer(
          prompt.question,
          chosen.map((c) => c.text),
          s.text,
        )
      )
        continue;
      // Another source's sentence adds to the answer only with an answer of its own: after the
      // ships' `total price of $1.68 billion`, a post's `cells can be shipped … at zero volts`.
      if (s.lacksAnswer && s.n !== top.n) continue;
      // For "how many firms took part?" its figure must count the thing: after `54 of the 61
      // employers that took part`, a stablecoin's `$4.7 billion … part of the money` holds "part" and numbers.
      if (counted && s.n !== top.n && !counts(s.text, counted)) continue;
      // A question said beside the answer adds none (`… is Rust 2.0 out by then?` after `shipped on Tuesday`),
      // a shared photo's caption after it or not.
      if (ASKS.test(s.text) || asksOnly(s.text)) continue;
      // The same words said again in the chat (often an earlier answer's quote) are not quoted twice.
      // So is a near-repeat of one (another source's copy, a word or two shorter or longer).
      const heard = quotedWords(s.text);
      if (!chosen.some((c) => repeats(quotedWords(c.text), heard))) chosen.push(s);
    }
    // "Why are early benchmarks mixed?": a sentence saying what is asked about without a reason
    // (`Early reviews suggest it is not yet fast.`) is borne out by the prose after it in its source.
    if (chosen.length === 1 && chosen.length < this.maxSentences && answerType(prompt.question) === 'reason' && !REASON_CUE.test(top.text)) {
      const next = ranked.find((s) => s.n === top.n && s.index === top.index + 1);
      if (next && isDocument(prompt.sources, next.n) && PROSE_END.test(next.text) && saysSomething(next.text) && quoteKey(next.text) !== quoteKey(top.text))
        chosen.push(next);
    }
    // "What did Caroline see at the council meeting for adoption?": a line of the discussion holding
    // all the question asks (`I went to a council meeting for adoption`) sets the scene, and what
    // was seen is in what its speaker said next; the second-ranked line (another's `My kids are so
    // excited about summer break!`) says less.
    const scene = sceneSetter(prompt, top, ranked, chosen, smallTalk);
    // It takes the place of a line holding less of the question, not of one answering it too.
    const full = chosen.length >= this.maxSentences + (antecedent ? 1 : 0);
    if (scene && (!full || chosen.at(-1)!.coverage < SCENE_COVERAGE)) {
      chosen.splice(chosen.indexOf(top) + 1, 0, scene);
      chosen.splice(this.maxSentences + (antecedent ? 1 : 0));
    }
    // "When is the launch?" is not answered by `The launch will feature a new rocket.`: words of
    // the question without a time of any kind say the sources do not tell when. "When did Gina
    // launch her ad campaign?" is, by a message saying it was done (`I just launched …`), with the
    // day it was said on.
    const dated = when && ASKS_WHEN_DONE.test(prompt.question);
    const tells = (s: ScoredSentence) => tellsTime(spokenText(s.text).replace(EXCHANGE_MARK, '')) || (dated && saidOn(prompt.sources, s) !== null);
    // The time must be the answer's own: told in its sentence, in one read with it (the sentence
    // before or after it in its source) or in one saying again all it says of what is asked (`…
    // performing at the festival!`, then `… to perform at a nearby festival next month`), not in a
    // follow-up about another thing ("When did the tram open?" and a budget line's `approved on 3 March`).
    const askedTerm = new Set(askedTerms(prompt.question));
    const kin = kinOf(askedTerm, prompt.question);
    // Who says a line counts as a term of it: "When is Jon's group performing at a festival?" is not
    // answered by Gina's `My sister's band is performing at a festival in Oslo in 2024` after Jon's
    // `… performing at the festival!`, a repeat of its words by someone else about another band.
    const held = (s: ScoredSentence) =>
      new Set(asAsked(contentTerms(`${spokenWords(s.text)} ${speakerOf(prompt.sources, s)}`), kin).filter((t) => askedTerm.has(t)));
    const topHeld = held(top);
    const tied = (s: ScoredSentence) =>
      s === top || (s.n === top.n && Math.abs(s.index - top.index) === 1) || (topHeld.size > 0 && [...topHeld].every((t) => held(s).has(t)));
    if (when && !chosen.some((s) => tied(s) && tells(s))) return NOT_COVERED;
    // Nor is "how long did the restoration take?" by a comment holding its words and no span (`the
    // archive is publishing a restoration diary … in the winter scenes`).
    if (asksSpan(prompt.question) && !chosen.some((s) => tied(s) && tellsSpan(spokenText(s.text)))) return NOT_COVERED;
    return chosen
      .map((s) => {
        const quote = quoted(quotedAs(prompt.sources, s, dated));
        return `${isDocument(prompt.sources, s.n) ? quote : endedSentence(quote)} [${s.n}]`;
      })
      .join(' ');
  }

  /**
   * Embedding cosines of each sentence with the question (`question`, for the relevance test) and
   * with the question minus its source's title words (`ranking`): the title says which document,
   * the rest of the question which sentence. Null without an embedder or when embedding fails.
   */
  private async similarities(prompt: GroundedPrompt, signal?: AbortSignal): Promise<{ question: Map<string, number>; ranking: Map<string, number> } | null> {
    if (!this.embedder) return null;
    // A line of chat or a remembered exchange is embedded without its time stamp (`Ann: …`, not
    // `Ann (1 Dec 2026, 16:43): …`): the minute it was written is not what it says, and its digits
    // moved the line's cosine by as much as 0.04, enough, at some minutes of every hour, to take an
    // earlier ask ranked first under the relevance bar and refuse a question a document answers.
    const groups = prompt.sources.map((src) => ({
      query: withoutTitleWords(prompt.question, src.label),
      sentences: sourceSentences([src]),
      said: (src.section ?? 'document') === 'document' ? (s: string) => s : unstamped,
    }));
    const texts = [...new Set([prompt.question, ...groups.flatMap((g) => [g.query, ...g.sentences.map(g.said)])])];
    let vectors: Float32Array[];
    try {
      vectors = await this.embedder.embed(texts, signal);
    } catch {
      return null;
    }
    const vec = new Map(texts.map((t, i) => [t, vectors[i]]));
    const q = vec.get(prompt.question)!;
    const question = new Map<string, number>();
    const ranking = new Map<string, number>();
    for (const g of groups) {
      const gq = vec.get(g.query)!;
      for (const s of g.sentences) {
        const v = vec.get(g.said(s))!;
        question.set(s, cosine(q, v));
        // A sentence in two sources (a document's, quoted again by an earlier answer in the chat)
        // keeps its first source's ranking: the chat's query keeps the title words the document's
        // leaves out, and overwriting it lifted the quoted sentence over the document's better one.
        if (!ranking.has(s)) ranking.set(s, cosine(gq, v));
      }
    }
    return { question, ranking };
  }

  private async cosines(query: string, snippets: string[], signal?: AbortSignal): Promise<number[] | null> {
    if (!this.embedder) return null;
    try {
      const [q, ...vs] = await this.embedder.embed([query, ...snippets], signal);
      return vs.map((v) => cosine(q, v));
    } catch {
      return null;
    }
  }
}

/**
 * The headline clause answering a question of a number or a span (headlineMeasure), and its source: the
 * room's item's when the question is about it, else the first document's, in the prompt's order,
 * whose title tells it.
 */
function headlineAnswering(prompt: GroundedPrompt, question: string): { clause: string; n: number } | null {
  const primary = prompt.item ? primarySource(prompt) : undefined;
  const candidates = primary ? [primary] : prompt.sources.filter((s) => (s.section ?? 'document') === 'document' && commenterOf(s.label) === null);
  for (const source of candidates) {
    const clause = headlineMeasure(question, source.label);
    if (clause) return { clause, n: source.n };
  }
  return null;
}

/**
 * The document the room is about: the room's own item, as the prompt marks it (`roomItem`, known
 * by its id). Not the one labelled with the topic's title: a page titled `Comment by the board` is
 * labelled `Page: …`, and another page may share the room's title. A topic room has none.
 */
function primarySource(prompt: GroundedPrompt): GroundedPrompt['sources'][number] | undefined {
  const primary = prompt.sources.find((s) => s.roomItem && (s.section ?? 'document') === 'document');
  return primary && !namesAnotherItem(prompt, primary) ? primary : undefined;
}

/**
 * Whether the question names something the room's item and topic never mention while another
 * document does: "how much does the Kestrel K1 cost?" asked in the tram's room is about the
 * laptop, and the tram's "the cost had grown too fast", pulled first as the room's own, was too
 * weak an answer to give, so the question was "not covered". A question that also names something
 * of the room's own is about it: "what energy density did the Veldra VS-2 cell reach?" in the room
 * of Veldra's factory delay, whose passage says the density but not "VS-2".
 */
function namesAnotherItem(prompt: GroundedPrompt, primary: GroundedSource): boolean {
  const own = new Set(contentTerms(`${prompt.topic}\n${primary.label}\n${primary.content}`));
  const others = prompt.sources.filter((s) => s !== primary && (s.section ?? 'document') === 'document');
  const elsewhere = new Set(others.flatMap((s) => contentTerms(`${s.label}\n${s.content}`)));
  const names = namesIn(prompt.question).map((name) => contentTerms(name));
  if (names.some((terms) => terms.some((t) => own.has(t)))) return false;
  return names.some((terms) => terms.some((t) => !own.has(t) && elsewhere.has(t)));
}

/**
 * When the answer begins with a sentence naming what the question names ("how much does the
 * Kestrel K1 cost?" and `The K1 costs €899`), the numbers of the sources naming it; else null. A
 * follow-up sentence from another source holding one word of the question is about another thing
 * (sharesMoreThanAWord): the tram's "the project's estimated cost was €960 million" once "price"
 * was "cost".
 */
function sourcesNaming(prompt: GroundedPrompt, first: string): Set<number> | null {
  const firstTerms = new Set(contentTerms(first));
  const names = new Set(namesIn(prompt.question).flatMap((name) => contentTerms(name)));
  if (![...names].some((t) => firstTerms.has(t))) return null;
  const naming = prompt.sources.filter((s) => contentTerms(`${s.label}\n${s.content}`).some((t) => names.has(t)));
  return naming.length ? new Set(naming.map((s) => s.n)) : null;
}

/**
 * Whether a sentence names something of what the question asks about, not only the kind of answer
 * it asks (namesSubject): after `the vessels … for a total price of $1.68 billion`, "how much did
 * the ships cost?" went on with `the plant, which it estimates will cost €2.3 billion`, and in a
 * topic room with another article's `cell cost target`.
 */
function namingSubject(question: string): (sentence: string) => boolean {
  const asked = new Set(askedTerms(question));
  const price = priceTerms(question);
  const subject = new Set([...asked].filter((t) => !price.has(t)));
  const kin = kinOf(asked, question);
  return (sentence) =>
    namesSubject(
      asAsked(contentTerms(sentence), kin).filter((t) => asked.has(t)),
      price,
      subject,
    );
}

/**
 * The ranked sentences, for a price question ("how much does the tram cost?") led by the best one
 * holding a price of what it asks about (one not `lacksAnswer`) when that one is relevant, not by a
 * sentence holding the question's words and no amount of money at all: a comment's "anyone comparing it
 * with a bus lane cost should include …" led over the council's `approved a budget of €1.42
 * billion`. With no such sentence the order stays: "it did not disclose a planned price" answers.
 */
function pricedFirst(question: string, ranked: ScoredSentence[], relevant: (s: ScoredSentence) => boolean): ScoredSentence[] {
  if (!ranked[0] || holdsMoney(ranked[0].text) || answerType(question) !== 'number' || !priceTerms(question).size) return ranked;
  const priced = ranked.find((s) => !s.lacksAnswer);
  return priced && relevant(priced) ? [priced, ...ranked.filter((s) => s !== priced)] : ranked;
}

/** A question tagged onto a statement (`Sunflowers mean warmth and happiness, right?`): it tells. */
const TAG_QUESTION = /,\s*(?:right|huh|eh|no|yes|yeah|isn['’]t it|don['’]t you think)\?["'\u201d\u2019)\]]*$/i;

/**
 * The ranked sentences, led by the best one that tells rather than asks when the best is a line of
 * the chat or a remembered conversation asking (`Melanie: Love the necklace, any special meaning to
 * it?` for "What does Caroline's necklace symbolize?") and that one is relevant and scores at least
 * FOLLOW_RATIO of it. A line asks the words a question shares with it and answers none of them: nine
 * of LoCoMo's wrong answers led with one, one right answer (a tag question, which tells).
 */
function toldFirst(sources: GroundedSource[], ranked: ScoredSentence[], relevant: (s: ScoredSentence) => boolean): ScoredSentence[] {
  const [first] = ranked;
  if (!first || isDocument(sources, first.n) || !asksOnly(first.text)) return ranked;
  const told = ranked.find((s) => !asksOnly(s.text) && s.score >= FOLLOW_RATIO * first.score && relevant(s));
  return told ? [told, ...ranked.filter((s) => s !== told)] : ranked;
}

/** smallTalkFor the question, the discussion's speakers being the names a line addresses. */
function smallTalkIn(question: string, sources: GroundedSource[]): (sentence: string) => boolean {
  return smallTalkFor(question, speakerTerms(sources.filter((src) => !isDocument(sources, src.n)).map((src) => src.content)));
}

/**
 * The lines of the person a question asks the words of (linesOfSpeakerAsked) that say something of
 * what it asks about: not those matching it only by the name they address or a set phrase of small
 * talk ("what does Melanie think about Caroline's decision to adopt?" and `That's great, Caroline!`,
 * "what does Gina say to Jon about the grand opening?" and `Wow, Jon!`). None when no line does.
 */
function saidOfWhatIsAsked(question: string, lines: SpokenLine[] | null, discussion: GroundedSource[]): SpokenLine[] {
  if (!lines) return [];
  const smallTalk = smallTalkOf(speakerAsked(question)?.about ?? [], speakerTerms(discussion.map((s) => s.content)));
  return lines.filter((l) => !smallTalk(l.line));
}

/** Whether a line of chat, without its speaker and a shared photo's caption, ends asking and is no tag question. */
function asksOnly(sentence: string): boolean {
  const said = spokenWords(sentence).replace(/\s*\[shares [^\]]*\]\s*$/, '');
  return ASKS.test(said) && !TAG_QUESTION.test(said);
}

/** A personal pronoun: the doer a sentence names by pointing back (`… he wrote in a blog post`). */
const PERSONAL_PRONOUN = /\b(?:he|she|they)\b/i;
/** A personal pronoun or its possessive opening a sentence: who it is about is said before it. */
const OPENING_PRONOUN = /^(?:He|She|They|His|Her|Their)\b/;

/**
 * Whether the question asks who did a deed ("who wrote the post-mortem?", deedAsked), not what
 * someone is nor who someone is to what ("… is done by who?", whose answer may be `stratigraphers`).
 */
function asksForSomeone(question: string): boolean {
  return answerType(question) === 'person' && !asksWhoSomeoneIs(question) && deedAsked(question) !== null;
}

/** The words the sources write in lower case, as a test: a capitalised one of them starts a sentence or a heading, and names nobody. */
function writtenInLowerCase(sources: GroundedSource[]): (word: string) => boolean {
  let seen: Set<string> | undefined;
  return (word) => (seen ??= new Set(sources.flatMap((s) => s.content.match(/(?<![\p{L}\p{N}'’-])\p{Ll}[\p{L}'’-]*/gu) ?? []))).has(word);
}

/** Whether a "who" question's answer `s` names nobody the question does not (namesSomeone). */
function namesNoOne(prompt: GroundedPrompt, s: ScoredSentence, common: (word: string) => boolean): boolean {
  return asksForSomeone(prompt.question) && !namesSomeone(s.text, new Set(words(prompt.question)), common);
}

/** Sentences before a pronoun's that namedBefore reads for whom it stands for. */
const PRONOUN_LOOKBACK = 3;

/**
 * The nearest sentence before `s` in its source, at most PRONOUN_LOOKBACK back, naming someone when
 * `s` points back with a pronoun: whom `he` stands for. In a document, a chat or a remembered
 * conversation alike, and past a sentence naming nobody (`She was 24. It was cold. She won.`). A
 * line's speaker and time are not what it names.
 */
function namedBefore(prompt: GroundedPrompt, ranked: ScoredSentence[], s: ScoredSentence, common: (word: string) => boolean): ScoredSentence | undefined {
  const said = spokenWords(s.text);
  const document = isDocument(prompt.sources, s.n);
  if (document ? !(PERSONAL_PRONOUN.test(said) || OPENING_PRONOUN.test(said)) : !ONES_PRONOUN.test(said)) return undefined;
  const qWords = new Set(words(prompt.question));
  for (let index = s.index - 1; index >= 0 && index >= s.index - PRONOUN_LOOKBACK; index--) {
    const before = ranked.find((r) => r.n === s.n && r.index === index);
    if (before && namesSomeone(document ? spokenWords(before.text) : chatNaming(before.text), qWords, common)) return before;
  }
  return undefined;
}

/**
 * A pronoun of one person: in a chat or a remembered conversation `they` is as often the friends or
 * the kids of a line before as anyone named (`Yeah, I'm really lucky to have them.`, then `They've
 * been there through everything`).
 */
const ONES_PRONOUN = /\b(?:he|she|his|her|him)\b/i;

/**
 * A line of chat's words that may name someone: without its speaker nor its first word (every line
 * opens with a capital: `Yeah, …`). `I'm` names no one already (namesSomeone).
 */
function chatNaming(sentence: string): string {
  return spokenWords(sentence).replace(/^\S+\s*/, '');
}

/** A sentence without its line's speaker and time nor a remembered exchange's `Q: `/`A: ` mark. */
function spokenWords(sentence: string): string {
  return spokenText(sentence).replace(EXCHANGE_MARK, '');
}

/**
 * The sentence a "who" question's answer begins with: the best one (`ranked[0]`) when it names
 * someone (namesSomeone), points back with a pronoun to a sentence that does, or tells the deed
 * (tellsDeed: its doer is its subject, `the archive's restoration team … restoring the film`); else the best
 * relevant one scoring at least FOLLOW_RATIO of it that names someone and holds a term of the
 * question besides its deed's (not `… he wrote in a blog post` for "who wrote the post-mortem?"),
 * one naming someone as its first words first (`Tessera Data, the company behind … TesseraDB, said
 * …` before `… under the Tessera Community Licence`); undefined when none does: the sources do
 * not say who. Any other question's is the best one.
 */
function whoAnswer(
  prompt: GroundedPrompt,
  ranked: ScoredSentence[],
  relevant: (s: ScoredSentence) => boolean,
  common: (word: string) => boolean,
): ScoredSentence | undefined {
  const [first] = ranked;
  if (!asksForSomeone(prompt.question)) return first;
  if (!namesNoOne(prompt, first, common) || namedBefore(prompt, ranked, first, common)) return first;
  const asked = new Set(askedTerms(prompt.question));
  const kin = kinOf(asked, prompt.question);
  const deedOf = deedAsked(prompt.question)!;
  const deed = deedOf.term;
  // `The archive's restoration team spent … restoring the film`: told, the deed has its doer, named or not.
  if (tellsDeed(first.text, deedOf, new Set([...asked, ...kin.keys()].filter((t) => t !== deed)))) return first;
  const qWords = new Set(words(prompt.question));
  const eligible = ranked.filter(
    (s) =>
      s !== first &&
      s.score >= FOLLOW_RATIO * first.score &&
      !s.contrary &&
      relevant(s) &&
      asAsked(contentTerms(s.text), kin).some((t) => asked.has(t) && t !== deed) &&
      namesSomeone(s.text, qWords, common),
  );
  return eligible.find((s) => opensWithName(s.text, qWords, common)) ?? eligible[0];
}

/** Whether the sentence's first word is a name (namesSomeone's tests): who it is about is its subject. */
function opensWithName(sentence: string, qWords: ReadonlySet<string>, common: (word: string) => boolean): boolean {
  const [word] = sentence.match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/u) ?? [''];
  return namesSomeone(word, qWords, common);
}

/**
 * Whether the best sentence (`s`) answers a price question ("how much does the Kestrel K2 cost?"):
 * one holding the price of what is asked (not `lacksAnswer`), or one saying something of that
 * price, a price word beside what is asked (`did not disclose what lorvatide will cost`). Else the
 * sources do not price it: `a replacement battery costs €69` for the K2, `the A8 was the first
 * RISC-V chip` for the A8's cost. True for any other question.
 */
function pricesWhatIsAsked(question: string, s: ScoredSentence): boolean {
  const price = priceTerms(question);
  if (answerType(question) !== 'number' || !price.size || !s.lacksAnswer) return true;
  const asked = new Set(askedTerms(question));
  const held = asAsked(contentTerms(s.text), kinOf(asked, question)).filter((t) => asked.has(t));
  return held.some((t) => price.has(t)) && held.some((t) => !price.has(t)) && namesModels(question, s.text);
}

/**
 * Whether a ranked sentence is a question a document asks (an interviewer's, a writer's
 * rhetorical one): it holds the question's words and answers nothing ("why did the workers vote to
 * unionise?" was answered with a post's "… and you voted to unionise?"). It still lends its words
 * to the sentences beside it, which is where such a source answers. A chat line may ask and tell at
 * once ("the party is at Pier 9; is Rust 2.0 out by then?"), so the discussion's are kept.
 */
function asksInDocument(sources: GroundedSource[], s: { n: number; text: string }): boolean {
  return ASKS.test(s.text) && (sources.find((src) => src.n === s.n)?.section ?? 'document') === 'document';
}

/**
 * A question put to the assistant that tells nothing: its mark (`@ai`, `/ask`, a remembered `Q:`),
 * a question word first and a question mark last. It is someone's earlier ask, never an answer:
 * "how much did waits drop?" was answered with Bob's earlier "@ai how much did waits drop, and who
 * won the 2030 world cup?", whose words it shares. (One that tells as it asks, "@ai our party is at
 * Pier 9; is 2.0 out by then?", opens with no question word.)
 */
const ONLY_ASKS =
  /^(?:(?:@ai|\/ask)\s+|Q: )(?:what|who|whom|whose|which|when|where|why|how|is|are|was|were|do|does|did|can|could|will|would|should|has|have|had)\b[^?]*\?\s*$/i;

/**
 * A video's chapter line, as descriptions list them: its place in the video, then its title, no
 * stop. `00:00 Opening statements` answered "when will the tram open?": the place is no time the
 * video tells of, so a chapter line answers "when" only asked where in the video something is.
 */
const CHAPTER_LINE = /^\s*(?:\d{1,2}:)?\d{1,2}:\d{2}\s+[^\n.!?]{1,200}$/;
const ASKS_WHERE_IN_VIDEO = /\b(?:video|clip|minute|chapter|timestamp)\b/i;

/** A sentence of prose ends with a full stop or an exclamation mark: a list's entries and headings (`Chapters`) end with none. */
const PROSE_END = /[.!]["'\u201d\u2019)\]]*$/;

/**
 * A list's entry or a field (`- Battery life: 14 hours`, `2) Wipe the disk`, `Price: 1,299 euros`):
 * short and without a stop as a heading is, it tells what a spec sheet or a list is asked for.
 */
const LIST_ENTRY = /^(?:[-*•–+]|\d{1,3}[.)])\s|^[^:\n]{1,40}:\s+\S/u;

/** Words of a heading, at most: a longer line without a stop is a list's entry or a caption. */
const HEADING_MAX_WORDS = 8;

/**
 * Whether `s` is a heading of a document: a short sentence with no stop that ends its line (`Why
 * 26 minutes matters`, `What Tollgate customers should have asked`). Holding the question's words and
 * telling nothing, headings led answers to "why does 26 minutes matter?" and "what happened to
 * Tollgate?". A chapter line is no heading (it says where in the video), nor a question (ASKS), nor
 * a list's entry or a field (LIST_ENTRY).
 */
function isHeading(sources: GroundedSource[], s: { n: number; text: string }): boolean {
  if (PROSE_END.test(s.text) || /[?:]$/.test(s.text) || CHAPTER_LINE.test(s.text) || LIST_ENTRY.test(s.text) || s.text.split(/\s+/).length > HEADING_MAX_WORDS)
    return false;
  const source = sources.find((src) => src.n === s.n);
  if (!source || (source.section ?? 'document') !== 'document') return false;
  // A line break follows it: passages are squashed with the paragraph before a heading run into it
  // (`… slightly wrong. Why 26 minutes matters` and a blank line), so it need not start one.
  const at = source.content.indexOf(s.text);
  const end = at + s.text.length;
  return at >= 0 && source.content[end] === '\n';
}

/** Share of the question's weighted terms a line must hold to be read as setting the scene of what is asked. */
const SCENE_COVERAGE = 0.5;

/**
 * For a "what"/"how" question answered first by a line of the discussion that holds (nearly) all
 * it asks, the sentence its speaker said next, when it tells something (no question, no small
 * talk, not already quoted); undefined otherwise. A "who", "when", "where", "how many" or "why"
 * question is answered in the line itself or by its own rules.
 */
function sceneSetter(
  prompt: GroundedPrompt,
  top: ScoredSentence,
  ranked: ScoredSentence[],
  chosen: ScoredSentence[],
  smallTalk: (text: string) => boolean,
): ScoredSentence | undefined {
  const type = answerType(prompt.question);
  if ((type !== 'other' && type !== 'manner') || isDocument(prompt.sources, top.n) || top.coverage < SCENE_COVERAGE) return undefined;
  const next = ranked.find((s) => s.n === top.n && s.index === top.index + 1);
  if (!next || chosen.includes(next) || ASKS.test(next.text) || asksOnly(next.text) || smallTalk(next.text) || !saysSomething(next.text)) return undefined;
  // Who said each: the stamp before it on its line, or opening it (`Caroline (14 Jul 2023, 10:02): …`).
  const speaker = (s: ScoredSentence) => {
    const at = lineOf(prompt.sources, s);
    return at ? LINE_SPEAKER.exec(at.line.trim() ? at.line : s.text)?.[1] : undefined;
  };
  const said = speaker(top);
  return said !== undefined && speaker(next) === said ? next : undefined;
}

/** Whether source `n` is a document (not the discussion nor a remembered exchange). */
function isDocument(sources: GroundedSource[], n: number): boolean {
  return (sources.find((src) => src.n === n)?.section ?? 'document') === 'document';
}

/** Whether `sentence` holds two or more of the question's distinct terms (a kin counting as its term). */
function sharesMoreThanAWord(question: string, sentence: string): boolean {
  const asked = new Set(askedTerms(question));
  const held = new Set(asAsked(contentTerms(sentence), kinOf(asked, question)).filter((t) => asked.has(t)));
  return held.size > 1;
}

/**
 * The central sentences of the source that is the primary topic (the room's own item as the
 * prompt marks it, else the one sharing most title words), cited; in a topic room (`Topic: Tech`),
 * those of the room's own description, which says what the category holds now (its summary, or
 * its latest titles).
 */
function overview(prompt: GroundedPrompt): string {
  const [title, ...about] = prompt.topic.split('\n');
  const described = categoryOfTopicTitle(title.trim()) !== null ? topicOverview(about) : '';
  if (described) return described;
  const topic = new Set(contentTerms(prompt.topic));
  const shared = (label: string) => contentTerms(label).filter((t) => topic.has(t)).length;
  // The room's item by its mark: a page copying its title tied with it, and the first listed won.
  const main =
    prompt.sources.find((s) => s.roomItem) ?? prompt.sources.reduce((best, s) => (shared(s.label) > shared(best.label) ? s : best), prompt.sources[0]);
  // An item's own summary leads: its description, else its opening, as the room's context holds
  // them. The passage the prompt quotes was chosen for the question's few words, and its most
  // central sentences began "What is this about?" with `The results were published on Tuesday by …`.
  const lead = main.roomItem ? leadSentences(about.join('\n')) : [];
  const said = lead.map(quotedWords);
  const central = centralSentences(main.content, { maxSentences: OVERVIEW_SENTENCES }).filter((sentence) => {
    const heard = quotedWords(sentence);
    return !said.some((earlier) => repeats(earlier, heard) || repeats(heard, earlier));
  });
  const sentences = [...lead, ...central].slice(0, OVERVIEW_SENTENCES);
  return sentences.length ? `${sentences.map(quoted).join(' ')} [${main.n}]` : NOT_COVERED;
}

/** Sentences of an item's summary an overview leads with, at most. */
const LEAD_SENTENCES = 2;

/** The first whole sentences of `text` (the room context after its title): not one it ends cut in. */
function leadSentences(text: string): string[] {
  const sentences = splitSentences(text.trim()).map((s) => s.text.trim());
  const whole = sentences.filter((sentence, i) => i < sentences.length - 1 || /[.!?]["'”’)]*$/.test(sentence));
  return whole.slice(0, LEAD_SENTENCES);
}

/** Entries of a topic's list an overview names, at most. */
const TOPIC_OVERVIEW_ENTRIES = 5;
/** A topic list entry's title and date (`- Title (1 Oct 2026): its line https://…`, src/rag/topic-digest.ts). */
const ENTRY_HEADING = /^(.{1,300}?\(\d{1,2} [A-Z][a-z]{2} \d{4}\))/;

/**
 * A topic room's description as an answer: its prose (the summary's lead, `Recent in Tech, newest
 * first:`) and the titles and dates of its first entries, not their lines and addresses.
 */
function topicOverview(about: string[]): string {
  const lines = about.map((l) => l.trim()).filter(Boolean);
  const prose = lines.filter((l) => !l.startsWith('- '));
  const entries = lines
    .filter((l) => l.startsWith('- '))
    .slice(0, TOPIC_OVERVIEW_ENTRIES)
    .map((l) => ENTRY_HEADING.exec(l.slice(2))?.[1] ?? clip(l.slice(2), 120));
  const text = [...prose, entries.join('; ')].filter(Boolean).join(' ');
  return text ? quoted(withStop(text)) : '';
}

/** `Alice (24 Nov 2026, 19:20): text` → `Alice: text`. */
const CHAT_LINE_STAMP = new RegExp(` ${CHAT_STAMP.source}: `);
/** A line of chat the assistant wrote: its answers, read back from the recent chat. */
const ASSISTANT_LINE = new RegExp(`^${ASSISTANT_NAME} ${CHAT_STAMP.source}: `);
/** `Carol: ` before quoted words (an answer quoting the chat); a name has no colon and at most 32 characters. */
const QUOTED_SPEAKER = /^[^:\n]{1,40}: /;

/**
 * A sentence as an answer quotes it: a chat line keeps its speaker, not its time stamp (`Ann: …`),
 * except the assistant's own, which is its earlier answer's words (`Carol: …`, not `Salon AI:
 * Carol: …`); a remembered exchange's line loses its `Q:`/`A:`.
 */
function asQuoted(sentence: string): string {
  return (ASSISTANT_LINE.test(sentence) ? spokenText(sentence) : sentence.replace(CHAT_LINE_STAMP, ': ')).replace(EXCHANGE_MARK, '');
}

/** Between the sentences of an answer: after each one's citation (`… [2] Next …`). */
const CITED_SENTENCE_END = /(?<=\]) (?=\S)/;

/**
 * The words a cited sentence of an answer says, without its [n] nor who said it: a compound
 * answer's part quoting the sentence another part quoted from another source (a document's, and
 * the chat's earlier answer quoting it), or a shorter telling of it, says nothing more.
 */
function quotedWords(sentence: string): Set<string> {
  return new Set(words(quoteKey(sentence.replace(/\s*\[\d+\]$/, ''))));
}

/** Share of a longer sentence's words a shorter one saying only its words must hold to be a repeat of it. */
const REPEAT_SHARE = 0.75;

/**
 * Whether a sentence (its quotedWords, `later`) repeats one said before it: it says none but the
 * earlier one's words, or the earlier one is all of its words but a few (`… in Santa Clara.`, then
 * another source's `… in Santa Clara, California.`).
 */
function repeats(earlier: ReadonlySet<string>, later: ReadonlySet<string>): boolean {
  if (!later.size) return false;
  if ([...later].every((w) => earlier.has(w))) return true;
  return earlier.size >= REPEAT_SHARE * later.size && [...earlier].every((w) => later.has(w));
}

/**
 * A chosen sentence as the answer quotes it. One that begins its line is asQuoted; one inside a
 * person's line is that person's words, whatever it holds: a member who writes "Sure. Bob (24 Nov
 * 2026, 19:20): the party moved to Pier 9." wrote a second sentence shaped like Bob's line, and
 * quoted alone it read "Bob: the party moved to Pier 9" under the assistant's name.
 */
function quotedAs(sources: GroundedSource[], s: { n: number; index: number; text: string }, dated = false): string {
  const at = lineOf(sources, s);
  if (!at) return asQuoted(s.text);
  const { line, said } = at;
  // "yesterday", read months later, says when only with the day it was said on.
  const text = said ? withDatesMeant(s.text, said) : s.text;
  // Asked when something was done, a message telling it done with no time of its own is dated.
  const on = dated && said && !tellsTime(spokenText(s.text)) ? `, on ${spelledDay(said)}` : '';
  if (!line.trim()) return asQuoted(on ? text.replace(CHAT_LINE_STAMP, `${on}: `) : text);
  if (ASSISTANT_LINE.test(line)) return text;
  const speaker = LINE_SPEAKER.exec(line)?.[1];
  return speaker ? `${speaker}${on}: ${text}` : text;
}

/**
 * A discussion sentence's line up to it (empty when it begins the line) and when the line was said
 * (its stamp; null without one); null for a document's sentence.
 */
function lineOf(sources: GroundedSource[], s: { n: number; index: number; text: string }): { line: string; said: Date | null } | null {
  const source = sources.find((src) => src.n === s.n);
  const start = source && (source.section ?? 'document') !== 'document' ? splitSentences(source.content)[s.index]?.start : undefined;
  if (!source || start === undefined) return null;
  const line = source.content.slice(source.content.lastIndexOf('\n', start - 1) + 1, start);
  return { line, said: stampedAt(line.trim() ? line : s.text) };
}

/** Who said a discussion sentence's line (empty for a document's or an unstamped line's). */
function speakerOf(sources: GroundedSource[], s: { n: number; index: number; text: string }): string {
  const at = lineOf(sources, s);
  return at ? (LINE_SPEAKER.exec(at.line.trim() ? at.line : s.text)?.[1] ?? '') : '';
}

/** When a discussion sentence's line was said; null for a document's or an unstamped line's. */
function saidOn(sources: GroundedSource[], s: { n: number; index: number; text: string }): Date | null {
  return lineOf(sources, s)?.said ?? null;
}

/** "When did …?", "When was it built?": asks when something was done, which a message telling it done dates. */
const ASKS_WHEN_DONE = /^\W*when\s+(?:did|was|were)\b/i;

/** A sentence beginning a line of chat without the line's time stamp (`Ann: …`); any other as it is. */
function unstamped(sentence: string): string {
  const speaker = LINE_SPEAKER.exec(sentence);
  return speaker ? `${speaker[1]}: ${sentence.slice(speaker[0].length)}` : sentence;
}

/** What a sentence says, without who said it or who quoted whom: the same words from Carol and from an answer quoting her agree. */
function quoteKey(sentence: string): string {
  let text = spokenText(sentence).replace(EXCHANGE_MARK, '');
  for (let i = 0; i < 4 && QUOTED_SPEAKER.test(text); i++) text = text.replace(QUOTED_SPEAKER, '');
  return text.trim();
}

/**
 * The ranked sentences without the assistant's own lines that only say again what a person or a
 * source said: an answer cites the person, not the assistant's echo of them.
 */
function withoutEchoes<S extends { text: string }>(ranked: S[]): S[] {
  const original = new Set(ranked.filter((s) => !ASSISTANT_LINE.test(s.text)).map((s) => quoteKey(s.text)));
  return ranked.filter((s) => !ASSISTANT_LINE.test(s.text) || !original.has(quoteKey(s.text)));
}
/** The `Q: ` or `A: ` a remembered exchange's lines start with. */
const EXCHANGE_MARK = /^[QA]: /;

/** Comments an overview of the comments quotes, at most. */
const COMMENTS_OVERVIEW = 4;

/** What the commenters said: the most central sentence of each of the first comments, with its commenter, cited. */
function commentsOverview(comments: GroundedSource[]): string {
  const said = comments.slice(0, COMMENTS_OVERVIEW).flatMap((c) => {
    const [sentence] = centralSentences(c.content, { maxSentences: 1 });
    return sentence ? [`${quoted(commenterOf(c.label)!)}: ${withStop(quoted(sentence))} [${c.n}]`] : [];
  });
  return said.length ? `Commenters said: ${said.join(' ')}` : NOT_COVERED;
}

/** A message put to the assistant (`@ai …`, `/ask …`). */
const ASKED_OF_ASSISTANT = /^\s*(?:@ai|\/ask)(?:\s|$)/i;

/** How an overview of the discussion begins. */
const DISCUSSION_OVERVIEW_LEAD = 'So far in this discussion:';

/** Lines of discussion an overview quotes, at most. */
const DISCUSSION_OVERVIEW_LINES = 4;

/**
 * What was said: every line when there are few, else the lines sharing most words with the
 * others (the discussion's thread), in their order, each with its speaker and its source cited.
 */
function discussionOverview(sources: GroundedPrompt['sources']): string {
  const lines = sources.flatMap((s) =>
    s.content
      .split('\n')
      // An earlier overview says again what the discussion said: quoting it would nest recaps.
      .filter((line) => !spokenText(line).replace(EXCHANGE_MARK, '').startsWith(DISCUSSION_OVERVIEW_LEAD))
      .map((line) => ({
        n: s.n,
        line: line.replace(CHAT_LINE_STAMP, ': ').trim(),
        // A remembered exchange's question (`Q: …`) is put to the assistant as an `@ai` line is.
        people: !ASSISTANT_LINE.test(line) && !ASKED_OF_ASSISTANT.test(spokenText(line)) && !EXCHANGE_MARK.test(spokenText(line)),
      })),
  );
  const saying = lines.filter((l) => contentTerms(l.line).length > 1);
  // What people said, where they said anything: the assistant's answers quote their words again,
  // and so, sharing most words with the rest, they and the asks before them filled the overview.
  const said = saying.some((l) => l.people) ? saying.filter((l) => l.people) : saying;
  if (!said.length) return NOT_COVERED;
  const terms = said.map((l) => new Set(contentTerms(l.line)));
  const centrality = terms.map((a, i) =>
    terms.reduce((sum, b, j) => (i === j ? sum : sum + [...a].filter((t) => b.has(t)).length / Math.sqrt(a.size * b.size)), 0),
  );
  const keep = new Set(
    said
      .map((_, i) => i)
      .sort((a, b) => centrality[b] - centrality[a] || a - b)
      .slice(0, DISCUSSION_OVERVIEW_LINES),
  );
  const picked = said.filter((_, i) => keep.has(i));
  return `${DISCUSSION_OVERVIEW_LEAD} ${picked.map((l) => `${withStop(quoted(l.line))} [${l.n}]`).join(' ')}`;
}

/**
 * A sentence of a source as the answer quotes it: the answer is rendered as markdown under Salon
 * AI's name, so a member's `[Verify your account](https://…)` or a page's emphasis is shown as
 * written, not as a link the assistant seems to offer. A text quoted before (a remembered answer)
 * is not escaped twice.
 */
function quoted(sentence: string): string {
  return markdownLiteral(withoutLiteralEscapes(sentence));
}

/**
 * A quoted line of the discussion with a full stop when it ends without any: the answer is read
 * back from the chat without its `[n]`, and `… methanol is tricky to store For about five months …`
 * ran two quotes into one. A stop inside closing quotes or brackets counts, escaped or not. A document's sentence
 * is quoted as written (a video's chapter line has no stop).
 */
function endedSentence(sentence: string): string {
  return ENDED.test(sentence) ? sentence : `${sentence}.`;
}
/** A stop, closing quotes or brackets after it, escaped as a quote's markup is (`\[noted.\]`). */
const ENDED = /[.!?…](?:\\?["'\u201d\u2019)\]])*$/;

/** The line with a full stop when it ends without one, so quoted lines read as sentences. */
function withStop(line: string): string {
  return /[.!?…]$/.test(line) ? line : `${line}.`;
}

/** The question without the words of `title` (the question itself when nothing would be left). */
function withoutTitleWords(question: string, title: string): string {
  const drop = new Set(contentTerms(title));
  const kept = (question.match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !drop.has(stem(w.toLowerCase())));
  return contentTerms(kept.join(' ')).length ? kept.join(' ') : question;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));
}
