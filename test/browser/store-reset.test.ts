import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/protocol/messages.js';
import { MessageLog } from '../../public/src/lib/message-log.js';
import { judgeStorePage } from '../../public/src/lib/reset-probe.js';
import { heldMessages, judgeWelcome } from '../../public/src/lib/store-reset.js';

const BOB = { id: 'u_bob', name: 'Bob', kind: 'user' as const };

function msg(seq: number, id = `m${seq}`): Message {
  return { id, seq, roomId: 'news_1', threadId: 't1', author: BOB, text: `message ${seq}`, ts: new Date(1_700_000_000_000 + seq * 1000).toISOString() };
}

function held(...seqs: number[]): MessageLog {
  const log = new MessageLog();
  for (const seq of seqs) log.receive(msg(seq));
  return log;
}

describe('judgeWelcome', () => {
  it('is current when the welcome is not behind the page', () => {
    expect(judgeWelcome({ seq: 5, history: [] }, held(3, 4, 5))).toBe('current');
  });

  it('takes a node behind the others for what it is: its history agrees with what the page holds', () => {
    expect(judgeWelcome({ seq: 4, history: [msg(3), msg(4)] }, held(3, 4, 5, 6))).toBe('behind');
    // Messages the page has not held (below its window) do not contradict it.
    expect(judgeWelcome({ seq: 4, history: [msg(1), msg(2), msg(3), msg(4)] }, held(3, 4, 5, 6))).toBe('behind');
  });

  it('is a reset when the history gives a held seq to another message', () => {
    expect(judgeWelcome({ seq: 2, history: [msg(1, 'n1'), msg(2, 'n2')] }, held(1, 2, 3))).toBe('reset');
    expect(judgeWelcome({ seq: 4, history: [msg(3), msg(4, 'n4')] }, held(3, 4, 5))).toBe('reset');
  });

  it('is unsure when the history names nothing the page holds (the store is asked then)', () => {
    expect(judgeWelcome({ seq: 0, history: [] }, held(1, 2, 3))).toBe('unsure');
    expect(judgeWelcome({ seq: 2, history: [msg(1), msg(2)] }, held(10, 11))).toBe('unsure');
  });
});

describe('judgeStorePage', () => {
  const page = heldMessages(held(10, 11, 12));

  it("finds the store still holding the page's messages when one of them is there at its seq", () => {
    expect(judgeStorePage(page, [msg(9), msg(10), msg(11), msg(12)])).toBe('held');
    // The newest held ones gone (their thread deleted), an older one still there: not a wipe.
    expect(judgeStorePage(page, [msg(9), msg(10)])).toBe('held');
  });

  it('finds them gone when none of them is there at its seq', () => {
    expect(judgeStorePage(page, [])).toBe('gone');
    expect(judgeStorePage(page, [msg(1, 'n1'), msg(2, 'n2')])).toBe('gone');
    expect(judgeStorePage(page, [msg(10, 'n10'), msg(11, 'n11')])).toBe('gone');
    expect(judgeStorePage(page, [{ ...msg(5), id: 'm10' }])).toBe('gone');
  });
});
