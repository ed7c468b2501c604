/** The memory chunks the store tests file. */
import type { NewMemoryChunk } from '../../src/memory/types.js';

/**
 * A public window of Ann's and Cy's two messages in thread `thr_a` of `news_1`, from 10:00 to 10:05
 * on `day` (YYYY-MM-DD), saying `text`; `over` replaces any of its fields.
 */
export function windowChunk(text: string, day: string, over: Partial<NewMemoryChunk> = {}): NewMemoryChunk {
  return {
    threadId: 'thr_a',
    roomId: 'news_1',
    kind: 'window',
    text,
    messageIds: ['m1', 'm2'],
    authors: ['Ann', 'Cy'],
    firstTs: `${day}T10:00:00.000Z`,
    lastTs: `${day}T10:05:00.000Z`,
    privileged: false,
    owner: null,
    ...over,
  };
}

/**
 * Ann's private exchange in thread `thr_a` of `news_1` at `at`, saying `text`, filed under her
 * forget mark `forgetMark`.
 */
export function privateExchange(text: string, at: string, forgetMark: number): NewMemoryChunk {
  return {
    threadId: 'thr_a',
    roomId: 'news_1',
    kind: 'exchange',
    text,
    messageIds: [],
    authors: ['Ann'],
    firstTs: at,
    lastTs: at,
    privileged: true,
    owner: 'u_ann',
    forgetMark,
  };
}

/**
 * Ann's window of one message (`messageId`) in `threadId` of `news_1` at `at`, saying `text`;
 * private to `owner` when one is given.
 */
export function annsWindow(w: { threadId: string; text: string; messageId: string; at: string; owner?: string | null }): NewMemoryChunk {
  const owner = w.owner ?? null;
  return {
    threadId: w.threadId,
    roomId: 'news_1',
    kind: 'window',
    text: w.text,
    messageIds: [w.messageId],
    authors: ['Ann'],
    firstTs: w.at,
    lastTs: w.at,
    privileged: owner !== null,
    owner,
  };
}
