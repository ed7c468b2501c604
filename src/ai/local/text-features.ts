/**
 * Tokens for the local hashing embedder: Unicode-aware, lowercased, diacritics folded. Stems and
 * stop words come from extractive-text.ts, the one place the local models and the RAG stages
 * share them.
 */

const COMBINING_MARKS = /\p{M}+/gu;
const TOKEN = /[\p{L}\p{N}]+/gu;

/** Lowercased tokens with diacritics folded (`Café` → `cafe`). Keeps numbers. */
export function tokenize(text: string): string[] {
  return text.normalize('NFKD').replace(COMBINING_MARKS, '').toLowerCase().match(TOKEN) ?? [];
}
