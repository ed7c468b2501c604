import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/protocol/messages.js';
import { Backoff } from '../../public/src/lib/backoff.js';
import { MAX_LOG_ENTRIES, MAX_SCROLLBACK_ENTRIES, MessageLog } from '../../public/src/lib/message-log.js';
import { parseUntrustedJson } from '../../public/src/lib/untrusted-json.js';

const ADA = { id: 'u_ada', name: 'Ada', kind: 'user' as const };
const BOB = { id: 'u_bob', name: 'Bob', kind: 'user' as const };

function msg(seq: number, fields: Partial<Message> = {}): Message {
  return {
    id: `m${seq}`,
    seq,
    roomId: 'news_1',
    threadId: 't1',
    author: BOB,
    text: `message ${seq}`,
    ts: new Date(1_700_000_000_000 + seq * 1000).toISOString(),
    ...fields,
  };
}

const texts = (log: MessageLog) => log.entries.map((e) => e.message.text);

describe('MessageLog', () => {
  it('keeps a command refused as written final (no Retry) across a reload, and only a failed one', () => {
    const log = new MessageLog();
    log.addLocal('c1', '/split', ADA, 't1', 'news_1');
    log.addLocal('c2', 'too fast', ADA, 't1', 'news_1');
    log.fail('c1', 'a split needs a thread id', true);
    log.fail('c2', 'You are sending messages too fast');
    const restored = MessageLog.restore(JSON.parse(JSON.stringify(log.snapshot())));
    const byClient = (id: string) => restored.entries.find((e) => e.message.clientId === id);
    expect(byClient('c1')).toMatchObject({ state: 'failed', final: true });
    expect(byClient('c2')?.final).toBeUndefined();
  });

  it('counts a private question as sent once handed over, places it after what is known, and keeps it out of the room snapshot', () => {
    const log = new MessageLog();
    log.receive(msg(1));
    log.addLocal('p1', 'what is my code?', ADA, 't1', 'news_1', true);
    log.addLocal('c1', 'a public hello', ADA, 't1', 'news_1');
    expect(log.unsent().map((e) => e.message.clientId)).toEqual(['p1', 'c1']);
    log.sentPrivately('p1');
    log.sentPrivately('c1');
    expect(log.unsent().map((e) => e.message.clientId)).toEqual(['c1']);
    log.receive(msg(2));
    expect(texts(log)).toEqual(['message 1', 'what is my code?', 'message 2', 'a public hello']);
    // The room snapshot is replaced by the server's history on a reload: private entries are kept apart (private-asks.test.ts).
    const restored = MessageLog.restore(JSON.parse(JSON.stringify(log.snapshot())));
    expect(restored.entries.find((e) => e.message.clientId === 'p1')).toBeUndefined();
    expect(log.privateEntries().map((e) => e.message.clientId)).toEqual(['p1']);
    expect(restored.entries.find((e) => e.message.clientId === 'c1')?.private).toBeUndefined();
  });

  it('moves what was written under a replaced main thread to the main view, fails a gone thread’s message for good there, and files unfiled private entries', () => {
    const log = new MessageLog();
    log.addLocal('c1', 'in the old main', ADA, 't_old', 'news_1');
    log.addLocal('c2', 'failed in the old main', ADA, 't_old', 'news_1');
    log.fail('c2', 'refused');
    log.addLocal('c3', 'in a side thread', ADA, 't_side', 'news_1');
    log.addLocal('p1', 'asked before the welcome', ADA, '', 'news_1', true);
    log.sentPrivately('p1', 't_old');
    log.addLocal('p2', 'asked in a side thread', ADA, 't_side', 'news_1', true);
    log.sentPrivately('p2', 't_old');
    log.receive(msg(1, { threadId: 't_old' }));
    const threadOf = (clientId: string) => log.entries.find((e) => e.message.clientId === clientId)?.message.threadId;
    expect([threadOf('p1'), threadOf('p2')]).toEqual(['t_old', 't_side']);

    expect(log.toMainView('t_old')).toBe(true);
    // Unsent ones (failed too, for Retry) go to the main view; confirmed messages and private entries stay with their thread.
    expect(['c1', 'c2', 'c3', 'p1'].map(threadOf)).toEqual(['', '', 't_side', 't_old']);
    expect(log.entries.find((e) => e.message.id === 'm1')?.message.threadId).toBe('t_old');

    expect(log.failInGoneThread('c3', 'the thread is gone')).toBe(true);
    expect(log.entries.find((e) => e.message.clientId === 'c3')).toMatchObject({
      state: 'failed',
      final: true,
      error: 'the thread is gone',
      message: { threadId: '' },
    });

    // A private entry an older page kept under '' is filed under the main thread it was asked in.
    const restored = new MessageLog();
    restored.restorePrivate([
      { key: 'c:p9', message: { ...msg(0, { id: '', threadId: '', author: ADA, clientId: 'p9' }) }, state: 'sent', order: 0.5, private: true },
    ]);
    expect(restored.fileUnfiled('')).toBe(false);
    expect(restored.fileUnfiled('t_main')).toBe(true);
    expect(restored.privateEntries()[0].message.threadId).toBe('t_main');
  });

  it('files private questions and answers of a merged thread, sent or not, under its survivor, and leaves the rest where it is', () => {
    const log = new MessageLog();
    log.receive(msg(1, { threadId: 't_absorbed' }));
    log.addLocal('p1', 'asked in the absorbed thread', ADA, 't_absorbed', 'news_1', true);
    log.sentPrivately('p1');
    log.receive(msg(0, { id: 'private_1', author: { id: 'assistant', name: 'Salon AI', kind: 'assistant' }, text: 'answered there', threadId: 't_absorbed' }));
    log.addLocal('p2', 'still sending there', ADA, 't_absorbed', 'news_1', true);
    log.addLocal('p3', 'asked elsewhere', ADA, 't_other', 'news_1', true);
    log.sentPrivately('p3');
    log.addLocal('c1', 'a public message still sending', ADA, 't_absorbed', 'news_1');
    const survivorOf = (id: string) => (id === 't_absorbed' ? 't_survivor' : undefined);
    expect(log.followMergesPrivately(survivorOf)).toBe(true);
    const threadOf = (text: string) => log.entries.find((e) => e.message.text === text)?.message.threadId;
    expect(['asked in the absorbed thread', 'answered there', 'still sending there'].map(threadOf)).toEqual(['t_survivor', 't_survivor', 't_survivor']);
    // Public messages are the server's to move (the page files them again from the survivor's pages); one still sending, the server files there itself.
    expect(['message 1', 'asked elsewhere', 'a public message still sending'].map(threadOf)).toEqual(['t_absorbed', 't_other', 't_absorbed']);
    expect(texts(log)).toEqual([
      'message 1',
      'asked in the absorbed thread',
      'answered there',
      'asked elsewhere',
      'still sending there',
      'a public message still sending',
    ]);
    expect(log.followMergesPrivately(survivorOf)).toBe(false);
  });

  it('shows a message the server acked as sent without counting a seq for it, until its echo places it among the older ones still coming', () => {
    const log = new MessageLog();
    log.receive(msg(1));
    log.addLocal('c1', 'mine', ADA, 't1', 'news_1');
    expect(log.stored('c1', 'm9')).toBe(true);
    expect(log.entries.at(-1)).toMatchObject({ state: 'sent', message: { id: 'm9', seq: 0, text: 'mine' } });
    expect(log.unsent()).toEqual([]);
    // A reconnect now asks for everything after seq 1: the older messages the echo waits behind are not skipped.
    expect(log.lastSeq).toBe(1);
    // A failure naming its clientId (an answer to it failed) does not make it unsent.
    expect(log.fail('c1', 'the assistant failed')).toBe(false);
    log.receive(msg(2));
    log.receive(msg(9, { author: ADA, text: 'mine', clientId: 'c1' }));
    expect(texts(log)).toEqual(['message 1', 'message 2', 'mine']);
    expect(log.entries.filter((e) => e.message.clientId === 'c1')).toHaveLength(1);
    expect(log.lastSeq).toBe(9);
    expect(log.stored('c1', 'm9')).toBe(false);
  });

  it('shows an acked message once across a truncated rejoin and the paging back that follows, in its place', () => {
    const mine = msg(5, { author: ADA, text: 'mine', clientId: 'c1' });
    const page = [msg(3), msg(4), mine, msg(6)];
    // Acked, then the rejoin's history starts after it: the ack's copy goes with the rest, and
    // its echo and the page back each place it once.
    const acked = new MessageLog();
    acked.receive(msg(2));
    acked.addLocal('c1', 'mine', ADA, 't1', 'news_1');
    acked.stored('c1', 'm5');
    acked.resetTo([msg(7), msg(8)]);
    acked.receive(mine);
    acked.receiveOlder(page);
    expect(texts(acked)).toEqual(['message 3', 'message 4', 'mine', 'message 6', 'message 7', 'message 8']);
    // Sent again after the rejoin (its first ack was lost with the socket) and acked: the page
    // back comes before its echo, and gives it its seq and place.
    const resent = new MessageLog();
    resent.addLocal('c1', 'mine', ADA, 't1', 'news_1');
    resent.resetTo([msg(7), msg(8)]);
    resent.stored('c1', 'm5');
    resent.receiveOlder(page);
    expect(texts(resent)).toEqual(['message 3', 'message 4', 'mine', 'message 6', 'message 7', 'message 8']);
    expect(resent.entries.find((e) => e.message.clientId === 'c1')?.message.seq).toBe(5);
    resent.receive(mine);
    expect(texts(resent)).toEqual(['message 3', 'message 4', 'mine', 'message 6', 'message 7', 'message 8']);
  });

  it('marks a private question the server refused as failed (nothing echoes it), so it is offered again and not kept as asked', () => {
    const log = new MessageLog();
    log.receive(msg(1));
    log.addLocal('p1', 'too many questions', ADA, 't1', 'news_1', true);
    log.sentPrivately('p1');
    expect(log.unconfirmed('p1')?.private).toBe(true);
    expect(log.fail('p1', 'the assistant takes 1 question a minute')).toBe(true);
    expect(log.entries.at(-1)).toMatchObject({ state: 'failed', error: 'the assistant takes 1 question a minute', private: true });
    expect(log.privateEntries()).toEqual([]);
    expect(log.retry('p1')).toMatchObject({ state: 'sending', private: true });
    log.sentPrivately('p1');
    expect(log.privateEntries().map((e) => e.message.text)).toEqual(['too many questions']);
  });

  it('takes pages of older messages past its usual size, and says where paging continues', () => {
    const log = new MessageLog();
    for (let seq = 1001; seq <= 1000 + MAX_LOG_ENTRIES; seq++) log.receive(msg(seq));
    expect(log.oldestSeq).toBe(1001);
    expect(log.receiveOlder([msg(999), msg(1000), msg(1001)])).toBe(true);
    expect(log.size).toBe(MAX_LOG_ENTRIES + 2);
    expect(log.oldestSeq).toBe(999);
    expect(texts(log).slice(0, 3)).toEqual(['message 999', 'message 1000', 'message 1001']);
  });

  it('orders by seq and shows a message seen twice once', () => {
    const log = new MessageLog();
    expect(log.receive(msg(2))).toBe(true);
    expect(log.receive(msg(1))).toBe(true);
    expect(log.receive(msg(2))).toBe(false);
    expect(texts(log)).toEqual(['message 1', 'message 2']);
    expect(log.lastSeq).toBe(2);
  });

  it("replaces the member's sending copy with the server's echo (same clientId), keeping its key", () => {
    const log = new MessageLog();
    log.receive(msg(1));
    const local = log.addLocal('c-1', 'hi', ADA, 't1', 'news_1');
    expect(log.entries.at(-1)).toMatchObject({ state: 'sending', key: 'c:c-1' });
    log.receive(msg(5, { author: ADA, text: 'hi', clientId: 'c-1' }));
    expect(log.size).toBe(2);
    expect(log.entries.at(-1)).toMatchObject({ key: local.key, state: 'sent' });
    expect(log.entries.at(-1)!.message.seq).toBe(5);
    expect(log.unsent()).toEqual([]);
  });

  it("never lets another author's message take a member's message's place by reusing its clientId", () => {
    const EVE = { id: 'u_eve', name: 'Eve', kind: 'user' as const };
    const bobs = msg(1, { text: 'the meeting is at 10, room 4', clientId: 'bob-c1' });
    const eves = msg(2, { author: EVE, text: 'lol', clientId: 'bob-c1' });
    const live = new MessageLog();
    live.receive(bobs);
    live.receive(eves);
    expect(texts(live)).toEqual(['the meeting is at 10, room 4', 'lol']);
    const fresh = new MessageLog();
    fresh.resetTo([bobs, eves]);
    expect(texts(fresh)).toEqual(['the meeting is at 10, room 4', 'lol']);
    // Bob's own page: his confirmed message keeps its place too.
    const own = new MessageLog();
    own.addLocal('bob-c1', bobs.text, BOB, 't1', 'news_1');
    own.receive(bobs);
    own.receive(eves);
    expect(texts(own)).toEqual(['the meeting is at 10, room 4', 'lol']);
    expect(own.entries.map((e) => e.state)).toEqual(['sent', 'sent']);
  });

  it("never lets a member's message take an assistant answer's place by reusing its stream id", () => {
    const AI = { id: 'assistant', name: 'Salon AI', kind: 'assistant' as const };
    const answer = msg(1, { author: AI, text: 'the answer', clientId: 'ans_1' });
    const log = new MessageLog();
    log.receive(answer);
    log.receive(msg(2, { clientId: 'ans_1', text: 'fake' }));
    expect(texts(log)).toEqual(['the answer', 'fake']);
  });

  it("matches a member's unconfirmed message only to their own echo, under the identity the welcome gave", () => {
    const log = new MessageLog();
    log.addLocal('c-1', 'mine', { id: '', name: 'Ada', kind: 'user' }, 't1', 'news_1');
    log.adopt(ADA);
    // Someone replays the clientId (say the member's echo was lost and the replay cut): not the member's message.
    log.receive(msg(3, { clientId: 'c-1', text: 'not mine' }));
    expect(log.entries.map((e) => [e.message.text, e.state])).toEqual([
      ['not mine', 'sent'],
      ['mine', 'sending'],
    ]);
    expect(log.unsent().map((e) => e.message.clientId)).toEqual(['c-1']);
    log.receive(msg(4, { author: ADA, text: 'mine', clientId: 'c-1' }));
    expect(log.entries.map((e) => [e.key, e.message.text, e.state])).toEqual([
      ['m:m3', 'not mine', 'sent'],
      ['c:c-1', 'mine', 'sent'],
    ]);
    expect(log.fail('c-1', 'late error')).toBe(false);
  });

  it('keeps unconfirmed messages after the confirmed ones and lists them for resending', () => {
    const log = new MessageLog();
    log.addLocal('c-a', 'first', ADA, 't1', 'news_1');
    log.receive(msg(3));
    log.addLocal('c-b', 'second', ADA, 't1', 'news_1');
    expect(texts(log)).toEqual(['message 3', 'first', 'second']);
    expect(log.unsent().map((e) => e.message.clientId)).toEqual(['c-a', 'c-b']);
  });

  it('keeps a failed message where it was written: what others write next comes after it, also after a reload', () => {
    const log = new MessageLog();
    log.receive(msg(1));
    log.addLocal('c-1', 'refused', ADA, 't1', 'news_1');
    log.receive(msg(2));
    log.fail('c-1', 'slow down');
    log.receive(msg(3));
    log.receive(msg(4));
    expect(texts(log)).toEqual(['message 1', 'message 2', 'refused', 'message 3', 'message 4']);
    log.addLocal('c-2', 'on its way', ADA, 't1', 'news_1');
    log.receive(msg(5));
    expect(texts(log)).toEqual(['message 1', 'message 2', 'refused', 'message 3', 'message 4', 'message 5', 'on its way']);
    const copy = MessageLog.restore(JSON.parse(JSON.stringify(log.snapshot())));
    copy.receive(msg(6));
    expect(texts(copy)).toEqual(['message 1', 'message 2', 'refused', 'message 3', 'message 4', 'message 5', 'message 6', 'on its way']);
    // Sent again, it goes where it will be confirmed: after what is known now.
    copy.retry('c-1');
    expect(texts(copy).slice(-2)).toEqual(['refused', 'on its way']);
  });

  it('keeps a failed message after what already shared its place, and before what takes that place later', () => {
    const log = new MessageLog();
    log.receive(msg(1));
    log.addLocal('c-1', 'refused', ADA, 't1', 'news_1');
    const system = { id: 'system', name: 'Salon', kind: 'system' as const };
    log.receive(msg(0, { id: 'sys_1', author: system, text: 'a reply before' }));
    log.fail('c-1', 'slow down');
    log.receive(msg(0, { id: 'sys_2', author: system, text: 'a reply after' }));
    expect(texts(log)).toEqual(['message 1', 'a reply before', 'refused', 'a reply after']);
  });

  it('marks a refused message failed, retries it, and discards it on request', () => {
    const log = new MessageLog();
    log.addLocal('c-1', 'too fast', ADA, 't1', 'news_1');
    expect(log.fail('c-1', 'slow down')).toBe(true);
    expect(log.entries[0]).toMatchObject({ state: 'failed', error: 'slow down' });
    expect(log.unsent()).toEqual([]);
    expect(log.retry('c-1')?.state).toBe('sending');
    log.fail('c-1', 'again');
    log.discard('c-1');
    expect(log.size).toBe(0);
  });

  it('does not fail a message the server already confirmed', () => {
    const log = new MessageLog();
    log.addLocal('c-1', 'q', ADA, 't1', 'news_1');
    log.receive(msg(1, { author: ADA, text: 'q', clientId: 'c-1' }));
    expect(log.fail('c-1', 'assistant failed')).toBe(false);
    expect(log.entries[0].state).toBe('sent');
  });

  it('makes the server history the truth on reset, keeping unsent messages', () => {
    const log = new MessageLog();
    log.receive(msg(1));
    log.receive(msg(2, { text: 'stale copy' }));
    log.addLocal('c-1', 'pending', ADA, 't1', 'news_1');
    log.resetTo([msg(2), msg(3)]);
    expect(texts(log)).toEqual(['message 2', 'message 3', 'pending']);
  });

  it('drops a cached message whose seq the server now gives to another message (a reset store)', () => {
    const log = new MessageLog();
    log.receive(msg(1, { id: 'old-1', text: 'old' }));
    log.receive(msg(1, { id: 'new-1', text: 'new' }));
    expect(texts(log)).toEqual(['new']);
  });

  it('puts a slash command reply (seq 0) in place of the command, after what was there', () => {
    const log = new MessageLog();
    log.receive(msg(4));
    log.addLocal('c-cmd', '/threads', ADA, 't1', 'news_1');
    const reply = msg(0, { id: 'sys_1', author: { id: 'system', name: 'Salon', kind: 'system' }, text: 'threads: main', clientId: 'c-cmd' });
    log.receive(reply);
    log.receive(msg(5));
    expect(texts(log)).toEqual(['message 4', 'threads: main', 'message 5']);
    expect(log.unsent()).toEqual([]);
    log.receive(msg(0, { id: 'sys_2', author: reply.author, text: 'second reply', clientId: 'c-2' }));
    expect(texts(log)).toEqual(['message 4', 'threads: main', 'message 5', 'second reply']);
  });

  it('survives a sessionStorage round trip and ignores malformed snapshots', () => {
    const log = new MessageLog();
    log.receive(msg(1));
    log.addLocal('c-1', 'offline note', ADA, 't1', 'news_1');
    const copy = MessageLog.restore(JSON.parse(JSON.stringify(log.snapshot())));
    expect(texts(copy)).toEqual(['message 1', 'offline note']);
    expect(copy.unsent()).toHaveLength(1);
    copy.receive(msg(2, { author: ADA, text: 'offline note', clientId: 'c-1' }));
    expect(copy.size).toBe(2);
    for (const junk of [null, 42, { v: 2 }, { v: 1, entries: [{ key: 1 }, null, { key: 'x', state: 'sent', message: { text: 1 } }] }]) {
      expect(MessageLog.restore(junk).size).toBe(0);
    }
  });

  it('keeps the older pages the member loaded when new messages come in, up to the scrollback cap', () => {
    const log = new MessageLog();
    for (let seq = 1001; seq <= 1000 + MAX_LOG_ENTRIES; seq++) log.receive(msg(seq));
    const older = Array.from({ length: 50 }, (_, i) => msg(951 + i));
    expect(log.receiveOlder(older)).toBe(true);
    log.receive(msg(1000 + MAX_LOG_ENTRIES + 1));
    // The page the member is reading stays (it went with the first live message).
    expect(log.entries[0].message.seq).toBe(951);
    expect(log.size).toBe(MAX_LOG_ENTRIES + 51);
    // Still bounded: past the scrollback cap the oldest go.
    for (let seq = 2000; seq < 2000 + MAX_SCROLLBACK_ENTRIES; seq++) log.receive(msg(seq));
    expect(log.size).toBe(MAX_SCROLLBACK_ENTRIES);
  });

  it('trims a catch-up into a scrolled-back log without sorting the log for each message, and keeps the newest', () => {
    const log = new MessageLog();
    expect(log.receiveOlder(Array.from({ length: MAX_SCROLLBACK_ENTRIES }, (_, i) => msg(i + 1)))).toBe(true);
    log.addLocal('c-1', 'still sending', ADA, 't1', 'news_1');
    const sort = Array.prototype.sort;
    let sorts = 0;
    Array.prototype.sort = function (this: unknown[], ...args) {
      sorts++;
      return sort.apply(this, args as never);
    } as typeof sort;
    try {
      // A reconnect's catch-up: 500 missed messages, each one over the full log.
      for (let seq = MAX_SCROLLBACK_ENTRIES + 1; seq <= MAX_SCROLLBACK_ENTRIES + 500; seq++) log.receive(msg(seq));
    } finally {
      Array.prototype.sort = sort;
    }
    // Sorting 2,000 entries for each of them took ~150 ms on a desktop.
    expect(sorts).toBe(0);
    expect(log.size).toBe(MAX_SCROLLBACK_ENTRIES);
    expect(log.entries[0].message.seq).toBe(502);
    expect(log.entries.at(-2)?.message.seq).toBe(MAX_SCROLLBACK_ENTRIES + 500);
    expect(log.entries.at(-1)?.message.text).toBe('still sending');
  });

  it(`keeps at most ${MAX_LOG_ENTRIES} messages, dropping the oldest`, () => {
    const log = new MessageLog();
    for (let seq = 1; seq <= MAX_LOG_ENTRIES + 10; seq++) log.receive(msg(seq));
    expect(log.size).toBe(MAX_LOG_ENTRIES);
    expect(log.entries[0].message.seq).toBe(11);
  });
});

describe('parseUntrustedJson', () => {
  it('cuts every string of a frame to 16 extending code points per character, and nothing else', () => {
    const skin = '\u{1F3FB}'.repeat(2000);
    const acute = `a${'\u0301'.repeat(4000)}`;
    const frame = { type: 'welcome', seq: 7, history: [{ text: skin, author: { name: `Eve${acute}` }, ok: true }], note: 'plain 👍🏽 café' };
    expect(parseUntrustedJson(JSON.stringify(frame))).toEqual({
      type: 'welcome',
      seq: 7,
      history: [{ text: '\u{1F3FB}'.repeat(16), author: { name: `Eve${acute.slice(0, 17)}` }, ok: true }],
      note: 'plain 👍🏽 café',
    });
    // Escaped in the JSON too.
    expect(parseUntrustedJson(`"a${'\\u0301'.repeat(100)}"`)).toBe(acute.slice(0, 17));
    expect(() => parseUntrustedJson('{')).toThrow(SyntaxError);
  });
});

describe('Backoff', () => {
  it('grows exponentially within [ceiling/2, ceiling], caps, and resets', () => {
    const low = new Backoff({ baseMs: 100, capMs: 1000, random: () => 0 });
    expect([1, 2, 3, 4, 5, 6].map(() => low.next())).toEqual([50, 100, 200, 400, 500, 500]);
    const high = new Backoff({ baseMs: 100, capMs: 1000, random: () => 0.999999 });
    expect([1, 2, 3, 4, 5].map(() => high.next())).toEqual([100, 200, 400, 800, 1000]);
    high.reset();
    expect(high.attempts).toBe(0);
    expect(high.next()).toBe(100);
  });

  it('jitters: two clients do not retry in lockstep', () => {
    const a = new Backoff({ random: () => 0.1 });
    const b = new Backoff({ random: () => 0.9 });
    expect(a.next()).not.toBe(b.next());
  });

  it('rejects nonsense options by name', () => {
    expect(() => new Backoff({ baseMs: 0 })).toThrow(/baseMs/);
    expect(() => new Backoff({ baseMs: 100, capMs: 10 })).toThrow(/capMs/);
  });
});
