/**
 * JSON the page did not write itself — the room's frames, the API's answers, the sessionStorage
 * copy of them — parsed with every string cut to what a browser can lay out: each run of
 * combining marks, modifiers or joiners longer than MAX_CLUSTER_EXTENDERS keeps only its first
 * ones (src/protocol/clusters.ts). The server refuses such text in new messages, but stored
 * history, fetched pages and names predate that rule or come from elsewhere, and one character
 * carrying 2,000 modifiers holds the page's layout for a second (a page of history of them, for
 * ten or more). Cutting where data comes in
 * covers every message, name, title, description and reply the page shows; the markdown
 * renderer cuts again what the page assembles itself (an answer's streamed pieces).
 */
import { clampClusters } from '../../../src/protocol/clusters.js';

/** `JSON.parse(text)` with clampClusters applied to every string value; throws as JSON.parse does. */
export function parseUntrustedJson(text: string): unknown {
  return JSON.parse(text, clampStrings);
}

function clampStrings(_key: string, value: unknown): unknown {
  return typeof value === 'string' ? clampClusters(value) : value;
}
