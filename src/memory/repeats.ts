/**
 * What makes two memory chunks the same talk: the same words in the same order, whatever the
 * spacing, case, punctuation and the times on window lines (the same thing said at another time is
 * still a repeat). The store keeps each chunk's key, so a repeat is found by one indexed lookup
 * before any vector is compared.
 */
import { createHash } from 'node:crypto';
import { CHAT_STAMP } from '../text.js';

const LINE_STAMP = new RegExp(CHAT_STAMP.source, 'g');
const ASCII_ONLY = /^[\x00-\x7f]*$/;
/** In ASCII text, what separates WORD's matches. */
const ASCII_GAPS = /[^a-z0-9]+/g;
const WORD = /[\p{L}\p{N}]+/gu;

/** The chunk text's words key (sha-256 of its normalised words, 22 base64url characters). */
export function wordsKey(text: string): string {
  const lower = text.replace(LINE_STAMP, ' ').toLowerCase();
  // ASCII text (nearly all) has its gaps made single spaces in one pass: the same words joined by
  // spaces, without a string per word or Unicode property lookups (a fusion keys 3,000 chunks).
  const words = ASCII_ONLY.test(lower) ? lower.replace(ASCII_GAPS, ' ').trim() : (lower.match(WORD) ?? []).join(' ');
  return createHash('sha256').update(words).digest('base64url').slice(0, 22);
}

/** How a fusion's fused pair begins (fusion.ts: `[A]: …\n[B]: …`). */
const FUSED_PAIR_START = '[A]: ';

/**
 * The key a stored chunk is found by as a repeat: its wordsKey, or '' for a pair made one by a
 * thread fusion, whose `[A]: …\n[B]: …` text is no window's, so no window can repeat it (a fusion
 * stores ~3,000 of them, and hashing their texts cost ~0.15 s of its event loop). No text has the
 * key '', so nothing finds those chunks as repeats.
 */
export function repeatKey(c: { text: string; fusion?: string }): string {
  return c.fusion === 'fused' && c.text.startsWith(FUSED_PAIR_START) ? '' : wordsKey(c.text);
}
