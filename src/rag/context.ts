/**
 * Stage 3, full context: for each selected candidate, its most relevant passage (≤ 1,000 chars).
 * Comments become sources of their own (`HN comment by X`, `Reddit comment by X`), never mixed into article text.
 */
import { readableBody } from '../content/sources/posts.js';
import type { GroundedSource } from '../ai/grounded-prompt.js';
import { askedTerms, contentTerms, idfTable, splitSentences, weightedOverlap } from '../ai/local/extractive-text.js';
import { attributes, quotedPeople } from '../ai/local/quoted-people.js';
import { chapterLines, parseChapters } from '../ai/video-chapters.js';
import type { Comment, ItemWithoutComments, StoredItem } from '../content/types.js';
import type { Source } from '../protocol/messages.js';
import type { Store } from '../store/types.js';
import { bestPassage, PASSAGE_CHARS, passageRegion } from './passage.js';
import { termsNeeded } from './candidates.js';
import { answerType } from '../ai/local/extractive-answer.js';
import { headlineCause } from '../ai/local/answer-cues.js';
import { stripTitle } from './snippets.js';
import { readAsLatin } from '../protocol/confusables.js';
import type { Candidate } from './types.js';

export interface BuiltContext {
  /** What the prompt shows, numbered from 1 in reranked order. */
  grounded: GroundedSource[];
  /** What the answer lists, with the same numbers. */
  sources: Source[];
}

export interface ContextOptions {
  /** The item of the room asked in (an item room's): its document is marked `roomItem`. */
  roomItemId?: string;
  /** A passage's length, at most. */
  maxChars?: number;
  /**
   * The room item's passage chosen for what is asked of the item as a whole, not by the question's
   * words: `quotes` ("who is quoted?"), its sentences giving someone words, from all of its text
   * (`said Selma Achterberg, the deputy mayor`); `chapters` ("what happens at 3:00?"), a video's
   * chapter lines (ai/video-chapters.ts). The usual passage where the item has none.
   */
  itemPassage?: 'quotes' | 'chapters';
}

/** The quotes passage may run this many passages long: an article's speakers are spread through it. */
const QUOTES_PASSAGES = 2;
/** So may a video's chapter lines: a long video lists dozens. */
const CHAPTERS_PASSAGES = 2;

/**
 * Loads the selected items and picks each one's passage. Items that vanished are skipped. Only the
 * items a commenter was selected from are read with their comments.
 */
export async function buildContext(store: Store, selected: Candidate[], question: string, options: ContextOptions = {}): Promise<BuiltContext> {
  const maxChars = options.maxChars ?? PASSAGE_CHARS;
  const commented = new Set(selected.filter((c) => c.kind === 'comment').map((c) => c.itemId));
  const ids = [...new Set(selected.map((c) => c.itemId))];
  const [whole, texts] = await Promise.all([
    store.getItems(ids.filter((id) => commented.has(id))),
    store.getItemsWithoutComments(ids.filter((id) => !commented.has(id))),
  ]);
  const withComments = new Map<string, StoredItem>(whole.map((item) => [item.id, item]));
  const items = new Map<string, ItemWithoutComments>([...texts, ...whole].map((item) => [item.id, item]));
  const grounded: GroundedSource[] = [];
  const sources: Source[] = [];
  for (const c of selected) {
    const item = items.get(c.itemId);
    if (!item) continue;
    const commentedItem = c.kind === 'comment' ? withComments.get(c.itemId) : undefined;
    const content = commentedItem
      ? commentPassage(commentedItem, c, question, maxChars)
      : (c.itemId === options.roomItemId && wholeItemPassage(item, options.itemPassage, maxChars)) || documentPassage(item, c, question, maxChars);
    if (!content) continue;
    const n = grounded.length + 1;
    if (c.kind === 'comment') grounded.push({ n, label: c.label, content });
    else grounded.push({ n, label: documentLabel(c.label), content, ...(c.itemId === options.roomItemId ? { roomItem: true as const } : {}) });
    sources.push({ n, id: c.itemId, kind: c.kind, title: c.label, url: c.url, sourceType: 'document', snippet: c.excerpt });
  }
  return { grounded, sources };
}

/**
 * The words that begin the labels of what is not a document: a comment's (`HN comment by …`, see
 * commentLabel) and room talk's (`From this discussion — …`, recent-chat.ts). Read past any
 * leading punctuation or spaces, in any case, in the text as it reads (readAsLatin), as a model
 * would read it.
 */
const NOT_A_DOCUMENT = /^[^\p{L}\p{N}]*(?:from\s+this\s+discussion|(?:(?:hn|reddit)\s+)?comment\s+by)(?![\p{L}\p{N}])/iu;

/**
 * A document's label in the prompt: its title, or `Page: <title>` where the title starts as a
 * comment's or room talk's label does. The instructions and the built-in model tell sources apart
 * by label, so a fetched page titled `HN comment by pg` must not pass for pg's comment, nor one
 * spelled with a Cyrillic `С`, fullwidth letters or combining marks, which a model reads alike.
 */
export function documentLabel(title: string): string {
  return NOT_A_DOCUMENT.test(readAsLatin(title)) ? `Page: ${title}` : title;
}

/** The room item's passage of `kind` (ContextOptions.itemPassage); '' for none, or when the item has nothing of the kind. */
function wholeItemPassage(item: ItemWithoutComments, kind: ContextOptions['itemPassage'], maxChars: number): string {
  if (kind === 'quotes') return quotesPassage(item, maxChars * QUOTES_PASSAGES);
  if (kind === 'chapters') return chapterLines(parseChapters(readableBody(item).trim() || item.description), maxChars * CHAPTERS_PASSAGES);
  return '';
}

/**
 * The item's sentences that give someone words, in order, as many as fit in `maxChars`; '' when
 * none does. A person quoted by surname alone (`Lund said`) brings the sentence first writing their
 * full name (`Nils Lund, a 19-year-old physics student`), so the passage names them whole.
 */
function quotesPassage(item: ItemWithoutComments, maxChars: number): string {
  const sentences = splitSentences(readableBody(item)).map((s) => s.text);
  const quoting = sentences.map(attributes);
  const wanted = new Set<number>();
  for (const person of quotedPeople(sentences.filter((_, i) => quoting[i]).join(' '), sentences.join(' '))) {
    if (sentences.some((text, i) => quoting[i] && text.includes(person.name))) continue;
    const first = sentences.findIndex((text) => text.includes(person.name));
    if (first >= 0) wanted.add(first);
  }
  const kept: string[] = [];
  let chars = 0;
  for (const [i, text] of sentences.entries()) {
    if (!quoting[i] && !wanted.has(i)) continue;
    if (chars + text.length + 1 > maxChars) break;
    kept.push(text);
    chars += text.length + 1;
  }
  return kept.join(' ');
}

function documentPassage(item: ItemWithoutComments, c: Candidate, question: string, maxChars: number): string {
  const hint = stripTitle(c.chunk.text, item.title);
  // A long body's passage comes from around the chunk the search matched (passageRegion).
  const text = passageRegion(readableBody(item).trim() || item.description.trim() || hint, hint);
  return bestPassage(text, withHeadlineCause(question, item.title, text), maxChars, hint, item.title);
}

/**
 * A "why" question about what the item's title reports, with the word heading the cause the title
 * gives (headlineCause): the passage of `… workers vote to unionise after 'Ember Tide' crunch`
 * for "why did the workers vote to unionise?" is the one on the crunch, which shares no other word
 * with the question.
 */
function withHeadlineCause(question: string, title: string, text: string): string {
  if (answerType(question) !== 'reason') return question;
  let said: Set<string> | undefined;
  const isSaid = (term: string) => (said ??= new Set(contentTerms(text))).has(term);
  const cause = headlineCause(title, new Set(askedTerms(question)), termsNeeded(question), isSaid);
  return cause ? `${question} ${cause.word}` : question;
}

/** The commenter's words: their comment that best matches the question, then their others while they fit. */
function commentPassage(item: StoredItem, c: Candidate, question: string, maxChars: number): string {
  const by = c.chunk.commentBy;
  const own: Comment[] = item.comments.filter((m) => m.by === by && m.text.trim());
  if (!own.length) return bestPassage(stripTitle(c.chunk.text, item.title), question, maxChars);
  const query = new Set(contentTerms(question));
  const terms = own.map((m) => contentTerms(m.text));
  const idf = idfTable(terms, query);
  const order = own.map((_, i) => i).sort((a, b) => weightedOverlap(query, terms[b], idf) - weightedOverlap(query, terms[a], idf) || a - b);
  const first = bestPassage(own[order[0]].text, question, maxChars);
  let text = first;
  for (const i of order.slice(1)) {
    const next = own[i].text.replace(/\s+/g, ' ').trim();
    if (text.length + 1 + next.length > maxChars) break;
    text += `\n${next}`;
  }
  return text;
}
