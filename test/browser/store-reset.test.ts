import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/protocol/messages.js';
import { MessageLog } from '../../public/src/lib/message-log.js';
import { storeWasReset } from '../../public/src/lib/store-reset.js';

const BOB = { id: 'u_bob', name: 'Bob', kind: 'user' as const };

function msg(seq: number, id = `m${seq}`): Message {
  return { id, seq, roomId: 'news_1', threadId: 't1', author: BOB, text: `message ${seq}`, ts: new Date(1_700_000_000_000 + seq * 1000).toISOString() };
}

function held(...seqs: number[]): MessageLog {
  const log = new MessageLog();
  for (const seq of seqs) log.receive(msg(seq));
  return log;
}

describe('storeWasReset', () => {
  it('is not a reset when the welcome is not behind the page', () => {
    expect(storeWasReset({ seq: 5, history: [] }, held(3, 4, 5))).toBe(false);
  });

  it('takes a node behind the others for what it is: its history agrees with what the page holds', () => {
    expect(storeWasReset({ seq: 4, history: [msg(3), msg(4)] }, held(3, 4, 5, 6))).toBe(false);
    // Messages the page has not held (below its window) do not contradict it.
    expect(storeWasReset({ seq: 4, history: [msg(1), msg(2), msg(3), msg(4)] }, held(3, 4, 5, 6))).toBe(false);
  });

  it('is a reset when the history gives a held seq to another message, or names nothing the page holds', () => {
    expect(storeWasReset({ seq: 2, history: [msg(1, 'n1'), msg(2, 'n2')] }, held(1, 2, 3))).toBe(true);
    expect(storeWasReset({ seq: 4, history: [msg(3), msg(4, 'n4')] }, held(3, 4, 5))).toBe(true);
    expect(storeWasReset({ seq: 0, history: [] }, held(1, 2, 3))).toBe(true);
    expect(storeWasReset({ seq: 2, history: [msg(1), msg(2)] }, held(10, 11))).toBe(true);
  });
});
