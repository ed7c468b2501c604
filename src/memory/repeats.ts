/**
 * What makes two memory chunks the same talk: the same words in the same order, whatever the
 * spacing, case, punctuation and the times on window lines (the same thing said at another time is
 * still a repeat). The store keeps each chunk's key, so a repeat is found by one indexed lookup
 * before any vector is compared.
 */
import { createHash } from 'node:crypto';
import { CHAT_STAMP } from '../text.js';

const LINE_STAMP = new RegExp(CHAT_STAMP.source, 'g');

/** The chunk text's words key (sha-256 of its normalised words, 22 base64url characters). */
export function wordsKey(text: string): string {
  const words = (
    text
      .replace(LINE_STAMP, ' ')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  ).join(' ');
  return createHash('sha256').update(words).digest('base64url').slice(0, 22);
}
