import { createHash } from 'node:crypto';
import type { ContentItem } from '../content/types.js';

/** sha256 hex of a string. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Hash of everything about an item that matters to readers; equal hashes mean nothing changed. */
export function hashItem(item: ContentItem): string {
  const { id, kind, title, url, description, body, comments, category, publishedAt, image, author, channel, thumbnail, siteName } = item;
  return sha256(JSON.stringify([id, kind, title, url, description, body, comments, category, publishedAt, image, author, channel, thumbnail, siteName]));
}

/** Opaque page cursor: base64url of a JSON array. */
export function encodeCursor(parts: unknown[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

/** Decodes a cursor made by encodeCursor; null when it is not one. */
export function decodeCursor(cursor: string): unknown[] | null {
  try {
    const parts = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    return Array.isArray(parts) ? parts : null;
  } catch {
    return null;
  }
}
