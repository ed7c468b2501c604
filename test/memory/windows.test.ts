/** People's messages grouped into memory windows (src/memory/windows.ts). */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Message } from '../../src/protocol/messages.js';
import { MessageWindows } from '../../src/memory/windows.js';
import type { NewMemoryChunk } from '../../src/memory/types.js';

let seq = 0;
function message(threadId: string, name: string, text: string): Message {
  seq++;
  return {
    id: `m${seq}`,
    seq,
    roomId: 'news_1',
    threadId,
    author: { id: `u_${name}`, name, kind: 'user' },
    text,
    ts: new Date(Date.UTC(2026, 10, 24, 10, seq)).toISOString(),
  };
}

describe('memory windows', () => {
  let closed: NewMemoryChunk[];
  let windows: MessageWindows;
  beforeEach(() => {
    vi.useFakeTimers();
    closed = [];
    windows = new MessageWindows({ maxMessages: 12, maxChars: 1_500, quietMs: 60_000, onWindow: (c) => closed.push(c) });
  });
  afterEach(() => vi.useRealTimers());

  it('moves split-off messages out of open windows into one of their new thread, and lets an emptied window go unkept', () => {
    const [a1, a2, b1] = [
      message('t1', 'Ann', 'the train leaves at ten'),
      message('t1', 'Cy', 'tomatoes need sun'),
      message('t2', 'Bo', 'basil keeps pests away'),
    ];
    for (const m of [a1, a2, b1]) windows.add(m);
    windows.move(new Set([a2.id, b1.id]), 't3');
    expect([windows.waiting('t1'), windows.waiting('t2'), windows.waiting('t3')]).toEqual([1, 0, 2]);
    // Nothing else closes: t2's emptied window went unkept.
    vi.advanceTimersByTime(60_000);
    expect(closed.map((c) => [c.threadId, c.messageIds])).toEqual([
      ['t1', [a1.id]],
      ['t3', [a2.id, b1.id]],
    ]);
    expect(closed[1].text).toContain('tomatoes need sun');
  });

  it("reopens a closed window's last messages in front of the open one, after the line before them, cut again from there; a message heard twice is windowed once", () => {
    const sent = Array.from({ length: 16 }, (_, i) => message('t1', i % 2 ? 'Cy' : 'Ann', `line ${i}`));
    for (const m of sent.slice(0, 14)) windows.add(m);
    windows.add(sent[13]);
    expect(closed.map((c) => c.messageIds)).toEqual([sent.slice(0, 12).map((m) => m.id)]);
    // Another node filed sent[0..9]: sent[10..11] go back in front of the open window (sent[12..13]).
    windows.reopen('t1', sent.slice(10, 12), { line: 'Cy (24 Nov 2026, 10:10): line 9', ts: Date.parse(sent[9].ts), roomId: 'news_1' });
    expect(windows.waiting('t1')).toBe(4);
    for (const m of sent.slice(14)) windows.add(m);
    windows.close('t1');
    expect(closed[1].messageIds).toEqual(sent.slice(10).map((m) => m.id));
    expect(closed[1].text.split('\n')[0]).toBe('Cy (24 Nov 2026, 10:10): line 9');
  });

  it('ends the open windows of a room whose messages went out unheard, and reads no line from before as the next window’s context', () => {
    const before = [message('t1', 'Ann', 'the ferry is late'), message('t2', 'Bo', 'basil keeps pests away')];
    const elsewhere = { ...message('t4', 'Cy', 'the tram is on time'), roomId: 'post_2' };
    for (const m of [...before, elsewhere]) windows.add(m);
    windows.close('t2');
    windows.endRoom('news_1');
    expect(closed.map((c) => c.messageIds)).toEqual([[before[1].id], [before[0].id]]);
    const after = [message('t1', 'Ann', 'it is back at noon'), message('t2', 'Bo', 'and mint too')];
    for (const m of after) windows.add(m);
    windows.close();
    // Each starts a window of its own, with no context line; the other room's window was not cut.
    expect(closed.slice(2).map((c) => [c.messageIds, c.text.split('\n').length])).toEqual([
      [[elsewhere.id], 1],
      [[after[0].id], 1],
      [[after[1].id], 1],
    ]);
  });

  it("marks the chunks of live windows, and gives each closed window's messages with it", () => {
    const got: [NewMemoryChunk, readonly Message[]][] = [];
    const live = new MessageWindows({ live: true, onWindow: (c, m) => got.push([c, m]) });
    const m = message('t1', 'Ann', 'the ferry leaves at nine');
    live.add(m);
    live.close();
    expect(got).toEqual([[expect.objectContaining({ live: true, messageIds: [m.id] }), [m]]]);
    windows.add(message('t1', 'Ann', 'not live'));
    windows.close();
    expect(closed[0].live).toBeUndefined();
  });

  it('closes a window after twelve messages, with each speaker and the times of its first and last message', () => {
    const sent = Array.from({ length: 13 }, (_, i) => message('t1', i % 2 ? 'Cy' : 'Ann', `message number ${i}`));
    for (const m of sent) windows.add(m);
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({
      threadId: 't1',
      roomId: 'news_1',
      kind: 'window',
      messageIds: sent.slice(0, 12).map((m) => m.id),
      authors: ['Ann', 'Cy'],
      firstTs: sent[0].ts,
      lastTs: sent[11].ts,
      privileged: false,
      owner: null,
    });
    expect(closed[0].text.split('\n')).toHaveLength(12);
    expect(closed[0].text.split('\n')[0]).toMatch(/^Ann \(24 Nov 2026, 10:\d\d\): message number 0$/);
    expect(windows.waiting('t1')).toBe(1);
  });

  it('closes a window before 1,500 characters, and after a quiet spell', () => {
    for (let i = 0; i < 5; i++) windows.add(message('t1', 'Ann', 'x'.repeat(400)));
    expect(closed.map((c) => c.messageIds.length)).toEqual([3]);
    expect(closed[0].text.length).toBeLessThanOrEqual(1_500);
    expect(windows.waiting('t1')).toBe(2);
    vi.advanceTimersByTime(59_000);
    windows.add(message('t1', 'Ann', 'still talking'));
    vi.advanceTimersByTime(59_000);
    expect(closed).toHaveLength(1);
    vi.advanceTimersByTime(2_000);
    expect(closed.map((c) => c.messageIds.length)).toEqual([3, 3]);
    expect(windows.waiting()).toBe(0);
  });

  it('leaves a full window’s closing question to the next window, with its answer', () => {
    const sent = Array.from({ length: 11 }, (_, i) => message('t1', i % 2 ? 'Cy' : 'Ann', `message number ${i}`));
    const asked = message('t1', 'Cy', 'Did you make that bowl yourself? ');
    const answer = message('t1', 'Ann', 'Yes, in my pottery class.');
    for (const m of [...sent, asked, answer]) windows.add(m);
    expect(closed.map((c) => c.messageIds)).toEqual([sent.map((m) => m.id)]);
    expect(windows.waiting('t1')).toBe(2);
    windows.close();
    expect(closed[1].messageIds).toEqual([asked.id, answer.id]);
    // The window before's last line leads it, as its context; the question is said once, in it.
    expect(closed[1].text.split('\n').map((l) => l.replace(/^.*\): /, ''))).toEqual([
      'message number 10',
      'Did you make that bowl yourself?',
      'Yes, in my pottery class.',
    ]);
    expect(closed[0].text).not.toContain('bowl');
    // A window of one question is not left empty: it closes with it.
    const one = new MessageWindows({ maxMessages: 1, onWindow: (c) => closed.push(c) });
    one.add(message('t2', 'Ann', 'Anyone here?'));
    expect(closed[2].messageIds).toHaveLength(1);
  });

  it('starts a window with the line said just before it, read but not cited; none after a quiet spell', () => {
    const sent = Array.from({ length: 14 }, (_, i) => message('t1', i % 2 ? 'Cy' : 'Ann', `message number ${i}`));
    for (const m of sent) windows.add(m);
    windows.close();
    expect(closed.map((c) => c.messageIds)).toEqual([sent.slice(0, 12).map((m) => m.id), sent.slice(12).map((m) => m.id)]);
    expect(closed[0].text.split('\n')).toHaveLength(12);
    expect(closed[1].text.split('\n').map((l) => l.replace(/^.*\): /, ''))).toEqual(['message number 11', 'message number 12', 'message number 13']);
    expect(closed[1].authors).toEqual(['Ann', 'Cy']);
    vi.advanceTimersByTime(120_000);
    const later = { ...message('t1', 'Ann', 'back again'), ts: new Date(Date.UTC(2026, 10, 24, 12, 0)).toISOString() };
    windows.add(later);
    windows.close();
    expect(closed[2].text).toMatch(/^Ann \([^)]*\): back again$/);
  });

  it('keeps threads apart, closes on demand, and discards a deleted thread’s window', () => {
    windows.add(message('t1', 'Ann', 'in one'));
    windows.add(message('t2', 'Cy', 'in two'));
    windows.add(message('t3', 'Bo', 'in three'));
    windows.close('t2');
    expect(closed.map((c) => c.threadId)).toEqual(['t2']);
    windows.discard('t3');
    windows.close();
    expect(closed.map((c) => c.threadId)).toEqual(['t2', 't1']);
    vi.advanceTimersByTime(120_000);
    expect(closed).toHaveLength(2);
  });

  it('keeps the last line of at most maxContextLines threads, and forgets a merged thread’s', () => {
    const w = new MessageWindows({ quietMs: 3_600_000, maxContextLines: 2, onWindow: (c) => closed.push(c) });
    for (const t of ['t1', 't2', 't3']) {
      w.add(message(t, 'Ann', `${t} first`));
      w.close(t);
    }
    // t1's line was let go (the least recent), t2's forgotten on a merge: only t3's leads its next window.
    w.forgetContext('t2');
    for (const t of ['t1', 't2', 't3']) w.add(message(t, 'Ann', `${t} again`));
    w.close();
    const next = closed.slice(3).map((c) => c.text.split('\n').map((line) => line.replace(/^.*\): /, '')));
    expect(next).toEqual([['t1 again'], ['t2 again'], ['t3 first', 't3 again']]);
  });
});

describe('memory windows over an imported history', () => {
  it('closes a window where the messages’ own times show a quiet spell', () => {
    const closed: NewMemoryChunk[] = [];
    const windows = new MessageWindows({ quietMs: 60_000, onWindow: (c) => closed.push(c) });
    const at = (minutes: number, text: string): Message => ({ ...message('t9', 'Ann', text), ts: new Date(Date.UTC(2023, 4, 8, 13, minutes)).toISOString() });
    for (const m of [at(0, 'one'), at(0, 'two'), at(5, 'next session'), at(5, 'still it')]) windows.add(m);
    windows.close();
    expect(closed.map((c) => c.text.split('\n').map((l) => l.replace(/^.*\): /, '')))).toEqual([
      ['one', 'two'],
      ['next session', 'still it'],
    ]);
  });
});
