/**
 * The shape of the user message the RAG pipeline sends to a ChatModel: the room's primary topic,
 * numbered sources and the question. Untrusted text (pages, comments, room context) sits inside
 * tags named with a per-request nonce, so content cannot close its own block or forge another.
 * Remote models read it as text; the local extractive model parses it back with
 * parseGroundedPrompt.
 */
import { randomFillSync } from 'node:crypto';
import { squash, wellFormed, withoutBidiControls, withoutCitations, withoutNul } from '../text.js';
import { labelName } from './label-name.js';
import type { ItemDetails } from '../content/item-details.js';
import { withoutNonceLookalikes } from './nonce-lookalikes.js';

/** Where a source comes from: the indexed content, the thread's memory, or its recent chat. */
export type SourceSection = 'document' | 'memory' | 'recent';

export interface GroundedSource {
  n: number;
  /** `Title of the article`, `HN comment by pg` (see commentLabel) or `From this discussion — Alice, Bob, 24 Nov 2026`. */
  label: string;
  content: string;
  /** Absent means `document`. */
  section?: SourceSection;
  /**
   * The room's own item (an item room's document the [PRIMARY TOPIC] is about), known by its id,
   * not by its title: another page may have the same title, and the room's may be labelled `Page: …`.
   */
  roomItem?: true;
}

export interface GroundedPrompt {
  topic: string;
  /** The room's own item's details (an item's room), rendered after the topic. */
  item?: ItemDetails;
  /** Numbered in prompt order; rendered by section (documents, past conversation, recent chat). */
  sources: GroundedSource[];
  question: string;
}

/** The sites whose comments Salon reads, by the item's `source`, as a comment's label names them. */
const COMMENT_SITES: Record<string, string> = { hn: 'HN', reddit: 'Reddit' };
const COMMENT_LABEL = /^(?:(?:HN|Reddit) comment|Comment) by /;

/**
 * The label of a source that is one commenter's words on an item: `HN comment by pg`, `Reddit
 * comment by spez`, or `Comment by ana` where the item came from elsewhere (the demo, an import).
 * The commenter's name is shown as labelName shows a speaker's: quoted where it reads as another
 * label or an order (`Comment by “Page: Docs”`).
 */
export function commentLabel(by: string, itemSource: string): string {
  const site = Object.hasOwn(COMMENT_SITES, itemSource) ? COMMENT_SITES[itemSource] : null;
  return `${site ? `${site} comment` : 'Comment'} by ${labelName(by)}`;
}

/** The commenter a source's label names, or null when the source is not a comment. */
export function commenterOf(label: string): string | null {
  const prefix = COMMENT_LABEL.exec(label);
  return prefix ? label.slice(prefix[0].length) : null;
}

/**
 * What a model answers, whole, when its sources do not hold the answer: the system instructions
 * ask remote models for this sentence and the built-in model writes it, so the pipeline can tell
 * a declined question from an answer and list no sources with it.
 */
export const NOT_COVERED = 'The sources I found do not answer this question.';

/**
 * Whether an answer is the model declining (NOT_COVERED alone, whatever its case, final stop or
 * citation markers: a model that cites out of habit declines all the same).
 */
export function isNotCovered(answer: string): boolean {
  return withoutCitations(answer).trim().replace(FINAL_STOPS, '').toLowerCase() === NOT_COVERED.slice(0, -1).toLowerCase();
}

/**
 * The stops that end a text, matched only from the start of a run: `/[.!]+$/` tried again from
 * every stop of a run that does not end the text, quadratic in the run (an answer of 32,000 dots
 * and a letter held the event loop 1.4 s).
 */
const FINAL_STOPS = /(?<![.!])[.!]+$/;

/** After a source's number, what marks the room's own item: `[Source 1] (primary topic)`. */
export const ROOM_ITEM_MARK = '(primary topic)';

/** The user message's section headers, in the order they appear. */
export const SECTION_HEADERS = {
  document: '[RETRIEVED DOCUMENT CONTEXT]',
  memory: '[RELEVANT PAST CONVERSATION]',
  recent: '[RECENT CHAT HISTORY]',
  query: '[USER QUERY]',
} as const;
const TOPIC_HEADER = '[PRIMARY TOPIC]';
/** The header of the room's own item's details, a fenced block of `Key: value` lines after the topic. */
export const ITEM_DETAILS_HEADER = '[ITEM DETAILS]';
/** The lines of the details block, by field, in the order they are rendered. */
const DETAIL_KEYS = { kind: 'Kind', author: 'Author', channel: 'Channel', site: 'Site', published: 'Published' } as const;
const ITEM_KINDS = new Set<string>(['article', 'post', 'video']);

/** `details` as the details block's lines, each value on one line. */
function detailLines(details: ItemDetails): string {
  const lines: string[] = [];
  for (const [field, key] of Object.entries(DETAIL_KEYS) as [keyof ItemDetails, string][]) {
    const value = details[field];
    if (value) lines.push(`${key}: ${squash(value)}`);
  }
  return lines.join('\n');
}

/** The details a block of detailLines holds; null when it names no kind of item. */
function parseDetails(block: string): ItemDetails | null {
  const fields = new Map<string, string>();
  for (const line of block.split('\n')) {
    const colon = line.indexOf(': ');
    if (colon > 0 && !fields.has(line.slice(0, colon))) fields.set(line.slice(0, colon), line.slice(colon + 2));
  }
  const kind = fields.get(DETAIL_KEYS.kind);
  if (kind === undefined || !ITEM_KINDS.has(kind)) return null;
  const details: ItemDetails = { kind: kind as ItemDetails['kind'] };
  for (const field of ['author', 'channel', 'site', 'published'] as const) {
    const value = fields.get(DETAIL_KEYS[field]);
    if (value) details[field] = value;
  }
  return details;
}
const SECTION_ORDER: SourceSection[] = ['document', 'memory', 'recent'];

const NONCE_BYTES = 8;
/** Random bytes drawn 64 nonces at a time: one call into the CSPRNG per 64 requests instead of one each. */
const noncePool = Buffer.alloc(NONCE_BYTES * 64);
let nonceAt = noncePool.length;

/** A fresh nonce (16 hex digits from a CSPRNG) for one request's delimiters. */
export function newNonce(): string {
  if (nonceAt === noncePool.length) {
    randomFillSync(noncePool);
    nonceAt = 0;
  }
  nonceAt += NONCE_BYTES;
  return noncePool.toString('hex', nonceAt - NONCE_BYTES, nonceAt);
}

/**
 * Text spelled like a chat template's control tokens: ChatML's and Llama 3's `<|im_end|>`,
 * `<|eot_id|>` (any `<|`, and DeepSeek's full-width `<｜`), Llama 2's and Mistral's `<s>`,
 * `</s>`, `[INST]`, `<<SYS>>`, Gemma's `<start_of_turn>`. Model servers (llama.cpp, Ollama, vLLM)
 * tokenise the prompt their template makes with its special tokens parsed, so such text from a
 * page or a member becomes the token itself and ends the user's turn, whatever tags fence it.
 */
const TEMPLATE_TOKEN =
  /<[|｜]|<\/?s>|<<\/?SYS>>|\[\/?(?:INST|SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_CALLS|TOOL_RESULTS)\]|<(?:start_of_turn|end_of_turn|bos|eos)>/g;

/** `text` with every TEMPLATE_TOKEN spelled apart by a space after its first character (`< |im_end|>`). */
function withoutTemplateTokens(text: string): string {
  return text.replace(TEMPLATE_TOKEN, (token) => `${token[0]} ${token.slice(1)}`);
}

/**
 * Wraps untrusted text in nonce tags. Inside the text, the nonce and every look-alike of it
 * (withoutNonceLookalikes) becomes `x`s, so no copy of a tag can close the block, and any spelling of a
 * chat template's control tokens is defused (withoutTemplateTokens). The text is made well-formed
 * (a lone surrogate is JSON a model server may refuse) and loses its NULs (a server reading C
 * strings ends the prompt there, leaving the block unclosed), each becoming U+FFFD, and its bidi
 * controls (withoutBidiControls: a model reads the logical order, which they only hide from the
 * people reading a prompt, `\u202E>…-atad/<` shown as a closing tag).
 */
export function fence(text: string, nonce: string): string {
  if (fenced.nonce !== nonce || fenced.blocks.size >= FENCED_MAX) {
    fenced.nonce = nonce;
    fenced.blocks.clear();
  }
  let block = fenced.blocks.get(text);
  if (block === undefined) {
    const safe = withoutNonceLookalikes(withoutTemplateTokens(withoutBidiControls(withoutNul(wellFormed(text)))), nonce)
      .split(`data-${nonce}`)
      .join(`data-${'x'.repeat(nonce.length)}`);
    block = `<data-${nonce}>\n${safe}\n</data-${nonce}>`;
    fenced.blocks.set(text, block);
  }
  return block;
}

/**
 * The texts fenced with the latest nonce, as fenced: buildPrompt renders the prompt again after
 * each cut it makes, fencing the same texts, and the scan for look-alikes of the nonce, done each
 * time, made a prompt four times as slow to build (1.3 ms against 0.35).
 */
const fenced = { nonce: '', blocks: new Map<string, string>() };
/** Blocks kept at most: one prompt's, with the versions of its cut sources. */
const FENCED_MAX = 256;

/**
 * Renders the user message: the primary topic and the document sources, then the past conversation
 * and the recent chat (each header only when it has sources), then the query. A source's label
 * (a page title, a commenter's or member's name: untrusted too) is squashed to one line and
 * fenced on its own, then its content.
 */
export function renderGroundedPrompt(prompt: GroundedPrompt, nonce: string): string {
  const parts = [SECTION_HEADERS.document, TOPIC_HEADER, fence(prompt.topic, nonce), ''];
  if (prompt.item) parts.push(ITEM_DETAILS_HEADER, fence(detailLines(prompt.item), nonce), '');
  for (const section of SECTION_ORDER) {
    const sources = prompt.sources.filter((s) => (s.section ?? 'document') === section);
    if (section !== 'document' && sources.length) parts.push(SECTION_HEADERS[section]);
    for (const s of sources) parts.push(`[Source ${s.n}]${s.roomItem ? ` ${ROOM_ITEM_MARK}` : ''}`, fence(squash(s.label), nonce), fence(s.content, nonce), '');
  }
  parts.push(SECTION_HEADERS.query, fence(prompt.question, nonce));
  return parts.join('\n');
}

/** `[Source 3]`, or `[Source 1] (primary topic)` for the room's own item (ROOM_ITEM_MARK). */
const SOURCE_LINE = /^\[Source (\d+)\]( \(primary topic\))?$/;

/**
 * Parses a message made by renderGroundedPrompt; null when `text` is not one. One forward pass:
 * a block ends at the first closing tag with the nonce, which fenced text cannot contain.
 */
export function parseGroundedPrompt(text: string): GroundedPrompt | null {
  const head = `${SECTION_HEADERS.document}\n${TOPIC_HEADER}\n<data-`;
  if (!text.startsWith(head)) return null;
  const nonceEnd = text.indexOf('>\n', head.length);
  const nonce = text.slice(head.length, nonceEnd);
  if (!/^[0-9a-f]+$/.test(nonce)) return null;
  const open = `<data-${nonce}>\n`;
  const close = `\n</data-${nonce}>`;
  let at = head.length - '<data-'.length;
  /** The fenced block at `at` (after optional newlines); null when there is none. */
  const block = (): string | null => {
    while (text[at] === '\n') at++;
    if (!text.startsWith(open, at)) return null;
    const end = text.indexOf(close, at + open.length);
    if (end < 0) return null;
    const content = text.slice(at + open.length, end);
    at = end + close.length;
    return content;
  };
  const topic = block();
  if (topic === null) return null;
  let item: ItemDetails | null = null;
  while (text[at] === '\n') at++;
  if (text.startsWith(`${ITEM_DETAILS_HEADER}\n`, at)) {
    at += ITEM_DETAILS_HEADER.length + 1;
    const details = block();
    if (details === null) return null;
    item = parseDetails(details);
  }
  const sources: GroundedSource[] = [];
  let section: SourceSection = 'document';
  const headers = new Map<string, SourceSection | 'query'>([
    [SECTION_HEADERS.memory, 'memory'],
    [SECTION_HEADERS.recent, 'recent'],
    [SECTION_HEADERS.query, 'query'],
  ]);
  for (;;) {
    while (text[at] === '\n') at++;
    const lineEnd = text.indexOf('\n', at);
    if (lineEnd < 0) return null;
    const line = text.slice(at, lineEnd);
    at = lineEnd + 1;
    const next = headers.get(line);
    if (next === 'query') {
      const question = block();
      return question === null ? null : { topic, ...(item ? { item } : {}), sources, question };
    }
    if (next) {
      section = next;
      continue;
    }
    const m = SOURCE_LINE.exec(line);
    if (!m) return null;
    const label = block();
    const content = label === null ? null : block();
    if (label === null || content === null) return null;
    sources.push({ n: Number(m[1]), label, content, ...(section === 'document' ? {} : { section }), ...(m[2] ? { roomItem: true as const } : {}) });
  }
}
