/**
 * Stage 1, broad search: the room's title + the question, and the question alone; merged,
 * deduplicated by chunk and by item (a commenter's words count as their own candidate), and each
 * turned into a short snippet for the reranker.
 */
import { commentLabel } from '../ai/grounded-prompt.js';
import { askedTerms, asksMeasure, contentTerms, idfTable, termSpellings } from '../ai/local/extractive-text.js';
import { deedAsked } from '../ai/local/answer-cues.js';
import { asAsked, compoundsOf, joinerFor, phraseKinOf } from '../ai/local/kin.js';
import { asksWhetherItIs } from '../ai/questions.js';
import { headlineMeasure } from '../ai/local/headline-measure.js';
import type { ChunkRow } from '../content/types.js';
import { chunkGroup } from '../search/chunk-refs.js';
import type { SearchService } from '../search/types.js';
import type { Store } from '../store/types.js';
import { mergeHits, SEARCH_K } from './merge.js';
import { matchQuery, type MatchedText } from './query-match.js';
import { squash } from '../text.js';
import { makeSnippet, stripTitle, termsOf, windowOf } from './snippets.js';
import type { Candidate, RoomView } from './types.js';
import type { Logger } from '../logger.js';

export { SEARCH_K };
/** Chunks each search asks for: several may belong to one item, so more than SEARCH_K. */
export const SEARCH_CHUNKS = 30;
/** A title chunk with less text than this besides the title shows a body chunk in its snippet instead. */
const THIN_TITLE_CHARS = 40;

export interface BroadSearchDeps {
  search: SearchService;
  store: Store;
  log: Logger;
}

export interface BroadSearchResult {
  candidates: Candidate[];
  /** Hits each search returned, before deduplication. */
  counts: number[];
  /** Time spent in the search service call (embedding and vector search), ms. */
  serviceMs: number;
  /**
   * The best score of the search for the question alone: how relevant the indexed content is to
   * the question itself (the room-title search always finds the room's own item).
   */
  questionBest: number;
}

/** The queries of stage 1: room title + question, then the question alone (once if they coincide). */
export function stageOneQueries(room: RoomView, question: string): string[] {
  const title = room.title.trim();
  return title && title !== question.trim() ? [`${title}\n${question}`, question] : [question];
}

/**
 * Runs both searches and returns the candidates, best first. `onQuestionVector` is told the
 * question's own vector as soon as it is made (null when embedding failed), for the memory search;
 * `signal` cancels the queries' embedding.
 */
export async function broadSearch(
  deps: BroadSearchDeps,
  room: RoomView,
  question: string,
  k = SEARCH_K,
  onQuestionVector?: (vector: Float32Array | null) => void,
  signal?: AbortSignal,
): Promise<BroadSearchResult> {
  const queries = stageOneQueries(room, question);
  // Broad on purpose: the similarity threshold would drop some answer-bearing chunks that only
  // paraphrase the question; deciding relevance is the reranker's and the model's job.
  const t = performance.now();
  let told = false;
  const tell = (vector: Float32Array | null) => {
    if (!told) onQuestionVector?.(vector);
    told = true;
  };
  const results = await deps.search
    .searchChunkRefsMany(queries, {
      k: SEARCH_CHUNKS,
      filter: { sourceType: 'document' },
      useThreshold: false,
      onVectors: (vectors) => tell(vectors?.[queries.length - 1] ?? null),
      signal,
    })
    .finally(() => tell(null));
  const serviceMs = performance.now() - t;
  // The seed's troubleshooting lines, word for word ("Search 1/2 returned N results"), at debug.
  results.forEach((hits, i) => deps.log.debug({ roomId: room.id, search: i + 1, hits: hits.length }, `Search ${i + 1}/2 returned ${hits.length} results`));
  // Grouping needs only references; rows are read for the candidates kept (about a third of the hits).
  const grouped = mergeHits(results, k);
  const rows = new Map((await deps.store.getChunks([...new Set(grouped.flatMap((m) => [m.hit.rowId, m.evidence.rowId]))])).map((c) => [c.rowId, c]));
  // A row removed since the search drops its candidate.
  const merged = grouped.filter((m) => rows.has(m.hit.rowId) && rows.has(m.evidence.rowId));
  const query = new Set(contentTerms(question));
  const texts: MatchedText[] = [];
  const evidence: ChunkRow[] = [];
  const titleOf = (i: number) => rows.get(merged[i].hit.rowId)!.itemTitle;
  for (const m of merged) {
    const title = rows.get(m.hit.rowId)!.itemTitle;
    const chunk = await evidenceChunk(deps.store, rows.get(m.evidence.rowId)!, title, query);
    evidence.push(chunk);
    texts.push(matchQuery(stripTitle(chunk.text, title), query, squash, true));
  }
  const idf = idfTable(texts.map(termsOf), query);
  const held = heldIn(question, query);
  const candidates: Candidate[] = [];
  merged.forEach(({ hit, search, score }, i) =>
    candidates.push(
      candidateOf(
        hit.group,
        rows.get(hit.rowId)!,
        evidence[i],
        score,
        search,
        windowOf(texts[i], idf),
        held(stripTitle(evidence[i].text, titleOf(i)), texts[i]),
      ),
    ),
  );
  const questionBest = results[results.length - 1].reduce((best, hit) => Math.max(best, hit.score), -Infinity);
  return { candidates, counts: results.map((r) => r.length), serviceMs, questionBest };
}

/** The most distinct query terms one sentence of a matched text holds. */
function mostHeld(m: MatchedText): number {
  return m.matches.reduce((most, terms) => Math.max(most, terms.length), 0);
}

/**
 * The most distinct terms of `question` (`query`, its terms) one sentence of a text holds, a
 * compound found however either writes it (kin.ts): the question's `post-mortem` or `post mortem`
 * as the text's `postmortem`, its `postmortem` as the text's `post-mortem` or `post mortem`. "Who
 * wrote the post-mortem?" held one term of the article's "according to the postmortem, signed by
 * …" and abstained. A compound that is a kind of an asked word is that word (`gigafactory` for
 * "factory", matchQuery's `kinds`), as it is where sentences are chosen. `matched` is the text
 * matched with `query` already.
 */
function heldIn(question: string, query: ReadonlySet<string>): (text: string, matched: MatchedText) => number {
  const compounds = compoundsOf(question, query);
  const wider = new Set([...query, ...compounds.keys()]);
  const joined = [...compounds.keys()].map((t) => termSpellings(t).prefix);
  const withJoined = joinerFor(query);
  return (text, matched) => {
    // Matched again only where a compound written as one may stand (two words side by side make one for any question).
    // A prefix is a word's letters, no whitespace: it stands in `text` where it stands in its squashed
    // copy, so the split's lower-cased copy is read when there is one.
    const lower = joined.length ? (matched.lower ?? text.toLowerCase()) : '';
    const rematch = joined.some((prefix) => lower.includes(prefix));
    // No compound either way (most texts): the most distinct terms a sentence holds, as matched, with
    // no set of terms built for each sentence of each candidate.
    if (!rematch && !withJoined.mayJoin(matched.flat, matched.lower)) return mostHeld(matched);
    const found = rematch ? matchQuery(text, wider, squash, true) : matched;
    return found.matches.reduce((most, terms, i) => Math.max(most, new Set(asAsked(withJoined(terms, found.sentences[i].text), compounds)).size), 0);
  };
}

/** Share of a question's distinct content terms one sentence must hold to show the question is about it. */
export const HELD_TOGETHER_SHARE = 2 / 3;

/** How many of the question's distinct content terms one sentence must hold to be about it: most of them, at least two. */
export function termsNeeded(question: string): number {
  return Math.max(2, Math.ceil(HELD_TOGETHER_SHARE * new Set(contentTerms(question)).size));
}

/**
 * Whether one sentence of a candidate's chunk, or of the room's own item (`itemId`, in an item's
 * room), holds most of the question's content terms: the question is about it, whatever the cosine
 * of its few words. "How much did the wait times drop?" scored 0.14 against the triage pilot's
 * article, under the built-in embedder's 0.18, so the item's own room abstained, where "by how many
 * minutes did waits fall?" scored 0.23; "waiting time" stands in one of its sentences. The room's
 * item is read only when the candidates' chunks fall short: its title search shows the chunk
 * naming its title, not the one holding the question's words.
 */
export async function heldTogether(store: Store, candidates: Candidate[], question: string, itemId?: string): Promise<boolean> {
  const needed = termsNeeded(question);
  if (candidates.some((c) => (c.held ?? 0) >= needed)) return true;
  // "How much did waits drop?" beside `… cuts emergency waits by 22 minutes …`: the headline tells it.
  if (candidates.some((c) => c.kind !== 'comment' && headlineMeasure(question, c.label))) return true;
  if (itemId === undefined) return false;
  const query = new Set(contentTerms(question));
  // Only in the thing's own room: anywhere, one term in a sentence let "who wrote the postmortem?"
  // in an unrelated room quote a video that walks through a postmortem and names no author.
  const subject = deedSubject(question, query);
  const holdsSubject = (text: string) => subject !== undefined && matchQuery(text, subject).matches.some((m) => m.length > 0);
  const measured = measuredSubject(question, query);
  const holdsMeasured = (text: string) => {
    if (!measured) return false;
    const found = matchQuery(text, measured);
    return found.matches.some((terms, i) => terms.length > 0 && /\p{N}/u.test(found.sentences[i].text));
  };
  const held = heldIn(question, query);
  const chunks = await store.chunksOfItem(itemId);
  if (chunks[0]?.itemTitle && headlineMeasure(question, chunks[0].itemTitle)) return true;
  const holdsRest = asksWhetherItIs(question) ? restOfTitle(query, needed, chunks[0]?.itemTitle ?? '') : () => false;
  return chunks.some((c) => {
    if (c.part === 'comment') return false;
    return held(c.text, matchQuery(c.text, query, squash, true)) >= needed || holdsSubject(c.text) || holdsMeasured(c.text) || holdsRest(c.text);
  });
}

/**
 * Whether a sentence of the room's item holds what a question of whether something is so asks
 * besides what the item's title names: the title says it of every sentence. "Is the K1 fast?" in
 * the K1 article's room abstained beside `Early reviews suggest it is not yet fast.`, which holds
 * one of its two terms. Never when the title names none of the question's terms, or all of them.
 */
function restOfTitle(query: ReadonlySet<string>, needed: number, title: string): (text: string) => boolean {
  const named = namedInTitle(query, title);
  if (!named) return () => false;
  const rest = new Set([...query].filter((t) => !named.has(t)));
  const wanted = Math.max(1, needed - named.size);
  return (text) => mostHeld(matchQuery(text, rest, squash, true)) >= wanted;
}

/**
 * The terms of `terms` that `title` names, when it names some of them and not all (the title then
 * says which text, and the rest where in it); null otherwise.
 */
export function namedInTitle(terms: ReadonlySet<string>, title: string): ReadonlySet<string> | null {
  const named = new Set(contentTerms(title).filter((t) => terms.has(t)));
  return named.size && named.size < terms.size ? named : null;
}

/**
 * The one thing a question asks a measure of ("how deep were the dives?" → dive), as a query;
 * undefined for any other question. Its measure word is no term of the sentence telling it (`41
 * dives at 2,300 to 3,100 metres`), so one sentence of the room's item holding the thing and a
 * number shows the question is about it: the video's own room abstained.
 */
function measuredSubject(question: string, query: ReadonlySet<string>): ReadonlySet<string> | undefined {
  if (query.size < 2 || !asksMeasure(question)) return undefined;
  const asked = new Set(askedTerms(question));
  return asked.size === 1 ? asked : undefined;
}

/**
 * The one term a "who did it?" question names besides its deed ("who wrote the postmortem?" →
 * postmortem), as a query; undefined for any other question. Sources tell a deed in their own
 * words (`the postmortem, signed by …`, `published by`), and with the deed counted a question of
 * one thing needs both in a sentence: the one-word "postmortem" abstained where "post-mortem",
 * two terms found in the article's "postmortem", passed.
 */
function deedSubject(question: string, query: ReadonlySet<string>): ReadonlySet<string> | undefined {
  const deed = deedAsked(question);
  const others = deed ? [...query].filter((t) => t !== deed.term) : [];
  // "Who brought the case?": `a legal challenge by shopkeepers` holds the case in its own word.
  return others.length === 1 ? new Set([...others, ...phraseKinOf(new Set(others), question).keys()]) : undefined;
}

function candidateOf(key: string, hitRow: ChunkRow, chunk: ChunkRow, score: number, search: 1 | 2, excerpt: string, held: number): Candidate {
  const comment = hitRow.part === 'comment' && hitRow.commentBy ? hitRow.commentBy : null;
  const label = comment ? commentLabel(comment, hitRow.itemSource) : hitRow.itemTitle;
  return {
    key,
    itemId: hitRow.itemId,
    kind: comment ? 'comment' : hitRow.itemKind,
    chunk,
    score,
    search,
    label,
    itemTitle: hitRow.itemTitle,
    url: hitRow.itemUrl,
    excerpt,
    held,
    snippet: makeSnippet(label, excerpt),
  };
}

/**
 * The comments on an item as candidates, one for each commenter not in `exclude` (candidate keys),
 * at most `max`: those sharing most of the question's words first, then in the item's order. A
 * question about the comments rarely shares their words, so search alone may find none of them.
 */
export async function itemCommentCandidates(store: Store, itemId: string, question: string, exclude: Set<string>, max: number): Promise<Candidate[]> {
  if (max <= 0) return [];
  const byCommenter = new Map<string, ChunkRow>();
  for (const c of await store.chunksOfItem(itemId)) {
    if (c.part !== 'comment' || !c.commentBy) continue;
    const key = chunkGroup(c);
    if (!exclude.has(key) && !byCommenter.has(key)) byCommenter.set(key, c);
  }
  const query = new Set(contentTerms(question));
  const entries = [...byCommenter];
  const texts = entries.map(([, c]) => matchQuery(c.text, query));
  const idf = idfTable(texts.map(termsOf), query);
  const found = texts.map((t) => termsOf(t).length);
  return entries
    .map(([key, c], i) => ({ key, c, i }))
    .sort((a, b) => found[b.i] - found[a.i] || a.i - b.i)
    .slice(0, max)
    .map(({ key, c, i }) => candidateOf(key, c, c, 0, 2, windowOf(texts[i], idf), mostHeld(texts[i])));
}

/**
 * The chunk a candidate's snippet shows: the best non-title chunk search found; for an item found
 * only by a title chunk with little else in it, its body chunk sharing most words with the question.
 */
async function evidenceChunk(store: Store, chunk: ChunkRow, title: string, query: Set<string>): Promise<ChunkRow> {
  if (chunk.part !== 'title' || stripTitle(chunk.text, title).length >= THIN_TITLE_CHARS) return chunk;
  const body = (await store.chunksOfItem(chunk.itemId)).filter((c) => c.part === 'body');
  if (!body.length) return chunk;
  // The question's terms in each body chunk; the chunk whose distinct ones weigh most wins.
  const found = body.map((c) => termsOf(matchQuery(c.text, query)));
  const idf = idfTable(found);
  const weight = (terms: string[]) => terms.reduce((sum, t) => sum + idf(t), 0);
  let best = 0;
  for (let i = 1; i < found.length; i++) if (weight(found[i]) > weight(found[best])) best = i;
  return body[best];
}
