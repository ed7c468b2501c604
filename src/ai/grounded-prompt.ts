/**
 * The shape of the user message the RAG pipeline sends to a ChatModel: the room's primary topic,
 * numbered sources and the question. Untrusted text (pages, comments, room context) sits inside
 * tags named with a per-request nonce, so content cannot close its own block or forge another.
 * Remote models read it as text; the local extractive model parses it back with
 * parseGroundedPrompt.
 */
import { randomFillSync } from 'node:crypto';
import { squash } from './local/extractive-text.js';

export interface GroundedSource {
  n: number;
  /** `Title of the article` or `HN comment by pg`. */
  label: string;
  content: string;
}

export interface GroundedPrompt {
  topic: string;
  sources: GroundedSource[];
  question: string;
}

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

/** Wraps untrusted text in nonce tags; any copy of the tag inside the text is defused. */
export function fence(text: string, nonce: string): string {
  const safe = text.split(`data-${nonce}`).join(`data-${'x'.repeat(nonce.length)}`);
  return `<data-${nonce}>\n${safe}\n</data-${nonce}>`;
}

/**
 * Renders the user message. A source's label (a page title, a commenter's name: fetched text too)
 * is squashed to one line and fenced on its own, then its content.
 */
export function renderGroundedPrompt(prompt: GroundedPrompt, nonce: string): string {
  const parts = ['[PRIMARY TOPIC]', fence(prompt.topic, nonce), ''];
  for (const s of prompt.sources) parts.push(`[Source ${s.n}]`, fence(squash(s.label), nonce), fence(s.content, nonce), '');
  parts.push('[QUESTION]', fence(prompt.question, nonce));
  return parts.join('\n');
}

/** Parses a message made by renderGroundedPrompt; null when `text` is not one. */
export function parseGroundedPrompt(text: string): GroundedPrompt | null {
  const m = /^\[PRIMARY TOPIC\]\n<data-([0-9a-f]+)>\n/.exec(text);
  if (!m) return null;
  const nonce = m[1];
  const block = (label: string) => new RegExp(`${label}\\n<data-${nonce}>\\n([\\s\\S]*?)\\n</data-${nonce}>`, 'g');
  const topic = block('\\[PRIMARY TOPIC\\]').exec(text)?.[1];
  const question = block('\\[QUESTION\\]').exec(text)?.[1];
  if (topic === undefined || question === undefined) return null;
  const sources: GroundedSource[] = [];
  const source = new RegExp(`\\[Source (\\d+)\\]\\n<data-${nonce}>\\n([^\\n]*)\\n</data-${nonce}>\\n<data-${nonce}>\\n([\\s\\S]*?)\\n</data-${nonce}>`, 'g');
  for (const s of text.matchAll(source)) {
    sources.push({ n: Number(s[1]), label: s[2], content: s[3] });
  }
  return { topic, sources, question };
}
