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
