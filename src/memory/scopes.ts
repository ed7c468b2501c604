/**
 * Memory scopes: a public chunk belongs to its thread's scope, a private exchange to the scope of
 * its thread and owner together. Searches name the scopes an asker may see, so privileged text
 * is filtered out before anything is ranked (in the vector index and the line search alike).
 */
import type { MemoryAsker, NewMemoryChunk } from './types.js';

/** The scope of a thread's private exchanges with one asker. */
export function privateScope(threadId: string, owner: string): string {
  return `${threadId}\u0000${owner}`;
}

/** The thread a scope belongs to. */
export function threadOfScope(scope: string): string {
  const end = scope.indexOf('\u0000');
  return end < 0 ? scope : scope.slice(0, end);
}

/** The scope a chunk is stored and indexed under. */
export function scopeOf(chunk: Pick<NewMemoryChunk, 'threadId' | 'privileged' | 'owner'>): string {
  return chunk.privileged && chunk.owner ? privateScope(chunk.threadId, chunk.owner) : chunk.threadId;
}

/** The scopes an asker may search: their thread, and for a private ask their own private exchanges. */
export function scopesFor(asker: MemoryAsker): string[] {
  return asker.private ? [asker.threadId, privateScope(asker.threadId, asker.userId)] : [asker.threadId];
}
