/** The message list's window over a thread's entries (public/src/lib/render-window.ts), without a browser. */
import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../public/src/lib/message-log.js';
import { windowRange } from '../../public/src/lib/render-window.js';

const SIZE = 150;
const entries: LogEntry[] = Array.from({ length: 400 }, (_, i) => {
  const seq = i + 1;
  const message = { id: `m${seq}`, seq, roomId: 'news_1', threadId: 't1', author: { id: 'u', name: 'U', kind: 'user' as const }, text: `m ${seq}`, ts: '' };
  return { key: `m:m${seq}`, message, state: 'sent', order: seq };
});

describe('windowRange', () => {
  it('is the newest SIZE at the bottom, runs from its start to its end or the newest, and falls back to the newest when its start is gone', () => {
    expect(windowRange(entries, '', '', SIZE)).toEqual({ from: 250, to: 400 });
    expect(windowRange(entries, 'm:m10', '', SIZE)).toEqual({ from: 9, to: 400 });
    expect(windowRange(entries, 'm:m10', 'm:m159', SIZE)).toEqual({ from: 9, to: 159 });
    expect(windowRange(entries, 'm:gone', '', SIZE)).toEqual({ from: 250, to: 400 });
    expect(windowRange(entries.slice(0, 20), '', '', SIZE)).toEqual({ from: 0, to: 20 });
  });

  it('stays a window when its last entry is gone (moved to another thread, discarded), not everything after its start', () => {
    expect(windowRange(entries, 'm:m10', 'm:gone', SIZE)).toEqual({ from: 9, to: 159 });
    expect(windowRange(entries.slice(0, 100), 'm:m10', 'm:gone', SIZE)).toEqual({ from: 9, to: 100 });
  });
});
