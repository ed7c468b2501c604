/**
 * A thread's count is exact whichever comes first, the count or a live message's echo: the count
 * carries the room's seq it was read at, and an echo at or below it is in the count already.
 */
import { describe, expect, it } from 'vitest';
import { countLabel, RoomThreads, type ThreadsSource } from '../../public/src/lib/room-threads.js';
import type { ThreadDetail } from '../../public/src/lib/threads-api.js';
import { threadView } from './thread-fixture.js';

const main = threadView('main', { main: true });

/** A source whose details wait until the test answers them. */
function gatedSource() {
  const details: Array<(d: ThreadDetail) => void> = [];
  const source: ThreadsSource = {
    listThreads: () => Promise.resolve({ threads: [main], archivedTotal: 0 }),
    threadDetail: () => new Promise((resolve) => details.push(resolve)),
  };
  const answer = async (messages: number, seq?: number, unsettledImports?: { fromSeq: number; toSeq: number }[]) => {
    details.shift()!({ thread: main, messages, suggestions: [], ...(seq === undefined ? {} : { seq }), ...(unsettledImports ? { unsettledImports } : {}) });
    await new Promise((r) => setTimeout(r, 0));
  };
  return { source, details, answer };
}

describe('thread counts and live messages', () => {
  it('does not count twice a message stored before the count was read whose echo came after it', async () => {
    const { source, details, answer } = gatedSource();
    const threads = new RoomThreads('news_seq', source);
    const refreshed = threads.refresh('main');
    await new Promise((r) => setTimeout(r, 0));
    expect(details).toHaveLength(1);
    // Messages 1–10 in the thread, the room at seq 10 when they were counted; 10's echo was still on its way.
    await answer(10, 10);
    await refreshed;
    threads.noteMessage('main', true, 10);
    expect(threads.counts.main).toBe(10);
    // A message after the count is counted as it arrives.
    threads.noteMessage('main', true, 11);
    expect(threads.counts.main).toBe(11);
  });

  it('adds the messages that arrived while the count was on its way and were stored after it was read', async () => {
    const { source, details, answer } = gatedSource();
    const threads = new RoomThreads('news_seq2', source);
    const refreshed = threads.refresh('main');
    await new Promise((r) => setTimeout(r, 0));
    expect(details).toHaveLength(1);
    // Echoes of 10 (counted: stored before the count was read) and 11 (stored after) come before the count.
    threads.noteMessage('main', true, 10);
    threads.noteMessage('main', true, 11);
    await answer(10, 10);
    await refreshed;
    expect(threads.counts.main).toBe(11);
    // Each echo comes once: a catch-up's message the log holds already is not new.
    threads.noteMessage('main', false, 11);
    expect(threads.counts.main).toBe(11);
  });

  it('counts every later message when the count carries no seq', async () => {
    const { source, answer } = gatedSource();
    const threads = new RoomThreads('news_seq3', source);
    const refreshed = threads.refresh('main');
    await new Promise((r) => setTimeout(r, 0));
    await answer(4);
    await refreshed;
    threads.noteMessage('main', true, 5);
    expect(threads.counts.main).toBe(5);
  });

  it('counts an import delivered after the count, below its seq, when the count left it out, and says so until it arrives', async () => {
    const { source, details, answer } = gatedSource();
    const threads = new RoomThreads('news_seq4', source);
    const refreshed = threads.refresh('main');
    await new Promise((r) => setTimeout(r, 0));
    expect(details).toHaveLength(1);
    // An import took seqs 1–20 and is being written; a live message said meanwhile is seq 21, counted.
    await answer(1, 21, [{ fromSeq: 1, toSeq: 20 }]);
    await refreshed;
    expect(threads.counts.main).toBe(1);
    expect(threads.importing.main).toBe(true);
    expect(countLabel(threads.counts.main, threads.importing.main)).toBe('1 message (an import is not counted yet)');
    // Readable now: its 20 messages are delivered late, each once (a second delivery is no new message).
    for (let seq = 1; seq <= 20; seq++) threads.noteMessage('main', true, seq);
    threads.noteMessage('main', true, 3);
    threads.noteMessage('main', false, 4);
    expect(threads.counts.main).toBe(21);
    expect(threads.importing.main).toBeUndefined();
    expect(countLabel(threads.counts.main, threads.importing.main)).toBe('21 messages');
    // What the count holds already is not counted again.
    threads.noteMessage('main', true, 21);
    expect(threads.counts.main).toBe(21);
  });

  it('adds what an import it left out delivered while the count was on its way', async () => {
    const { source, details, answer } = gatedSource();
    const threads = new RoomThreads('news_seq5', source);
    const refreshed = threads.refresh('main');
    await new Promise((r) => setTimeout(r, 0));
    expect(details).toHaveLength(1);
    threads.noteMessage('main', true, 2);
    await answer(1, 21, [{ fromSeq: 1, toSeq: 20 }]);
    await refreshed;
    expect(threads.counts.main).toBe(2);
    expect(threads.importing.main).toBeUndefined();
    threads.noteMessage('main', true, 2);
    threads.noteMessage('main', true, 1);
    expect(threads.counts.main).toBe(3);
  });
});
