/**
 * Threads as the HTTP API shows them (docs/api.md), shared by the server's routes and the browser
 * client: the shape of a thread, a merge suggestion, and the limits of thread operations.
 */

/** What releases a split lock: compacting the thread, or only an explicit unlock. */
export type SplitLock = 'compaction' | 'agent_release' | 'force';
export const SPLIT_LOCKS: readonly SplitLock[] = ['compaction', 'agent_release', 'force'];

/** Longest thread title. */
export const TITLE_MAX_CHARS = 120;
/** Parts one split may create. */
export const SPLIT_MAX_PARTS = 20;
/** Messages a split lists and takes from at most (the newest), and may move in all its parts together. */
export const SPLIT_MAX_MESSAGES = 5_000;
/**
 * Active threads one room holds at most (starting, splitting and fusing refuse past it): a room's
 * bridges compare every pair of its active threads, so their number must stay small.
 */
export const ROOM_MAX_ACTIVE_THREADS = 100;

/** A thread (`GET /api/v1/rooms/:id/threads`, `GET /api/v1/threads/:id`). */
export interface ThreadView {
  id: string;
  roomId: string;
  title: string;
  main: boolean;
  createdAt: string;
  status: 'active' | 'archived';
  tags: string[];
  summary: string;
  weight: number;
  parentId: string | null;
  /** The newest 100 threads split off it, oldest first. */
  childIds: string[];
  /** How many threads were split off it in all. */
  childCount: number;
  origin: 'original' | 'split' | 'merged' | 'fused';
  splitLocked: boolean;
  splitLockedUntil: SplitLock | null;
  mergedInto: string | null;
  isMerged: boolean;
  config: { enable_chat_history_rag: boolean; privileged: boolean };
}

/** Two threads worth merging: shown as a suggestion, never merged by itself. */
export interface MergeSuggestion {
  survivorId: string;
  absorbedId: string;
  weight: number;
}
