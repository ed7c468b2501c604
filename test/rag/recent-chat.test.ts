/**
 * The recent chat the assistant reads (rag/recent-chat.ts), the sectioned prompt and its budget
 * (rag/prompt.ts), and which questions the chat can answer (ai/questions.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { newNonce, parseGroundedPrompt, renderGroundedPrompt, type GroundedSource } from '../../src/ai/grounded-prompt.js';
import { LocalChatModel } from '../../src/ai/local/local-chat.js';
import { asksAboutDiscussion, CHAT_LINES_KEPT, chatAnswers, chatLinesKept, repeatsQuestion, spokenText } from '../../src/ai/questions.js';
import { buildPrompt, systemInstructions } from '../../src/rag/prompt.js';
import { chatLine, conversationLabel, cutAtSentence, recentChat } from '../../src/rag/recent-chat.js';
import type { Message } from '../../src/protocol/messages.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { withoutCitations } from '../../src/text.js';

const stores: SqliteStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

async function threadWith(lines: [name: string, text: string, kind?: 'user' | 'assistant' | 'system'][]) {
  const store = new SqliteStore({ filename: ':memory:' });
  stores.push(store);
  const thread = await store.ensureMainThread('news_1');
  const seqs: number[] = [];
  for (const [i, [name, text, kind]] of lines.entries()) {
    const ts = new Date(Date.UTC(2026, 10, 24, 19, i)).toISOString();
    const { message } = await store.appendMessage({ roomId: 'news_1', threadId: thread.id, author: { id: `u_${name}`, name, kind: kind ?? 'user' }, text, ts });
    seqs.push(message.seq);
  }
  return { store, thread, seqs };
}

/** One message of a thread by `author`, at 09:05 on 24 Nov 2026. */
function messageBy(author: Message['author'], text: string): Message {
  return { id: 'm', seq: 1, roomId: 'r', threadId: 't', author, text, ts: '2026-11-24T09:05:00Z' };
}

describe('recent chat', () => {
  it('lists the thread’s messages before the question with names and times, as one conversation source', async () => {
    const { store, thread, seqs } = await threadWith([
      ['Ann', 'My cousin Bob lost 4000 dollars on Meridian last week'],
      ['Cy', 'Ouch, that is a lot'],
      ['Salon AI', 'Meridian lost its peg on Monday [1].', 'assistant'],
      ['Ann', '@ai how much money did Bob lose?'],
      ['Cy', 'said after the question'],
    ]);
    const chat = (await recentChat(store, thread.id, seqs[3]))!;
    expect(chat.lines).toEqual([
      'Ann (24 Nov 2026, 19:00): My cousin Bob lost 4000 dollars on Meridian last week',
      'Cy (24 Nov 2026, 19:01): Ouch, that is a lot',
      // An old answer's citation numbers are not this prompt's: dropped.
      'Salon AI (24 Nov 2026, 19:02): Meridian lost its peg on Monday.',
    ]);
    expect(chat.source).toMatchObject({
      id: thread.id,
      kind: 'thread',
      sourceType: 'conversation',
      title: 'From this discussion — Ann, Cy, Salon AI, 24 Nov 2026',
      authors: ['Ann', 'Cy', 'Salon AI'],
      from: '2026-11-24T19:00:00.000Z',
      to: '2026-11-24T19:02:00.000Z',
    });
    expect(chat.source.messageIds).toEqual(chat.messages.map((m) => m.id));
  });

  it('drops bidi controls from the source’s one-line snippet (a message keeps them; the snippet would reorder what follows)', async () => {
    const { store, thread } = await threadWith([['Ann', 'pay \u202Eyrrac\u202C now \u2067and\u2069 go\u202B']]);
    const chat = (await recentChat(store, thread.id, undefined))!;
    expect(chat.source.snippet).toBe('Ann (24 Nov 2026, 19:00): pay yrrac now and go');
    expect(chat.messages[0].text).toContain('\u202E');
  });

  it('keeps the newest messages within its character budget, and skips system notices', async () => {
    const { store, thread } = await threadWith([
      ['Ann', 'first '.repeat(30)],
      ['Bob', 'second '.repeat(30)],
      ['Notice', 'Ann joined', 'system'],
      ['Cy', 'third '.repeat(30)],
    ]);
    const chat = (await recentChat(store, thread.id, undefined, { maxChars: 450 }))!;
    expect(chat.messages.map((m) => m.author.name)).toEqual(['Bob', 'Cy']);
    expect(chat.lines.join('\n').length).toBeLessThanOrEqual(450);
    expect(await recentChat(store, 'thr_none', undefined)).toBeNull();
  });

  it('labels a window that spans days with both, and many speakers shortly', () => {
    expect(conversationLabel(['A', 'B'], '2026-11-20T10:00:00Z', '2026-11-24T10:00:00Z')).toBe('From this discussion — A, B, 20 Nov 2026 – 24 Nov 2026');
    expect(conversationLabel(['A', 'B', 'C', 'D', 'E'], '2026-11-24T10:00:00Z', '2026-11-24T11:00:00Z')).toBe(
      'From this discussion — A, B, C, D and others, 24 Nov 2026',
    );
  });

  it('puts a message on one line, whatever its whitespace', () => {
    const line = chatLine(messageBy({ id: 'u', name: 'Ann', kind: 'user' }, 'one\n\ntwo\tthree'));
    expect(line).toBe('Ann (24 Nov 2026, 09:05): one two three');
  });

  it('ends a speaker’s name at the line’s own stamp, so a name or a text holding one cannot speak as someone else', async () => {
    const message = (name: string, text: string, ts: string) => ({
      id: 'm',
      seq: 1,
      roomId: 'r',
      threadId: 't',
      author: { id: 'u', name, kind: 'user' as const },
      text,
      ts,
    });
    const lines = [
      chatLine(message('Bob (24 Nov 2026, 19:20): yes', 'The launch party moved to Pier 9.', '2026-11-24T19:24:00Z')),
      chatLine(message('Bob', 'I like pizza (24 Nov 2026, 19:21): a lot.', '2026-11-24T19:25:00Z')),
    ];
    expect(lines).toEqual([
      'Bob (24 Nov 2026, 19:20) : yes (24 Nov 2026, 19:24): The launch party moved to Pier 9.',
      'Bob (24 Nov 2026, 19:25): I like pizza (24 Nov 2026, 19:21) : a lot.',
    ]);
    const user = renderGroundedPrompt(
      {
        topic: 'Launch',
        sources: [{ n: 1, label: 'From this discussion', section: 'recent', content: lines.join('\n') }],
        question: 'Where is the launch party?',
      },
      newNonce(),
    );
    const answer = await new LocalChatModel().answer([{ role: 'user', content: user }]);
    expect(answer).toContain('The launch party moved to Pier 9');
    expect(answer).not.toMatch(/^Bob: /);
  });

  it('cuts a long message after its last whole sentence that fits, and a later answer quotes that sentence whole', async () => {
    const said =
      'At St Brennan, waits for a first assessment fell from 47 minutes in the pilot year to 25 minutes this year. ' +
      'Nurses say the software flags sepsis earlier than the paper checklist did. ' +
      'The union worries about staffing: it says the hospital used the savings to cut two night posts, and that the tool was never meant to replace a trained nurse at the front desk, ' +
      'which the board denies, saying the posts were vacant and that the money went to a second triage room with its own nurse on every shift, as the pilot had planned.';
    expect(said.length).toBeGreaterThan(400);
    const line = chatLine(messageBy({ id: 'a', name: 'Salon AI', kind: 'assistant' }, said));
    expect(line).toBe(
      'Salon AI (24 Nov 2026, 09:05): At St Brennan, waits for a first assessment fell from 47 minutes in the pilot year to 25 minutes this year. ' +
        'Nurses say the software flags sepsis earlier than the paper checklist did. …',
    );
    const user = renderGroundedPrompt(
      {
        topic: 'Triage',
        sources: [{ n: 1, label: 'From this discussion', section: 'recent', content: line }],
        question: 'Does the software flag sepsis earlier?',
      },
      newNonce(),
    );
    const answer = await new LocalChatModel().answer([{ role: 'user', content: user }]);
    expect(answer).toBe('Nurses say the software flags sepsis earlier than the paper checklist did. [1]');
  });

  it('cuts a message at a word when its sentences that fit are too short to carry it', () => {
    expect(cutAtSentence(`Yes. ${'word '.repeat(120)}`, 400)).toMatch(/^Yes\. (word ){70,}word…$/);
    expect(cutAtSentence('One sentence that fits. Another.', 400)).toBe('One sentence that fits. Another.');
    const unstopped = cutAtSentence('no stop at all '.repeat(40), 400);
    expect(unstopped.length).toBeLessThanOrEqual(400);
    expect(unstopped).toMatch(/^(no stop at all )+no( stop( at)?)?…$/);
  });
});

describe('withoutCitations', () => {
  const regexWay = (t: string) => t.replace(/\s*\[\d{1,2}(?:\s*,\s*\d{1,2})*\]/g, '');

  it('drops markers and the spaces before them, as the pattern did, on every mix of the pieces involved', () => {
    const pieces = [' ', '\n', '\t', 'a', '[1]', '[12]', '[123]', '[', ']', '1', '\u00a0', ',', ', ', '[1, 2]', '[3,45]'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let n = 0; n < 2_000; n++) {
      const text = Array.from({ length: next() % 12 }, () => pieces[next() % pieces.length]).join('');
      expect(withoutCitations(text), JSON.stringify(text)).toBe(regexWay(text));
    }
    expect(withoutCitations('Rust shipped it [1]. Faster builds [2] [3], too.')).toBe('Rust shipped it. Faster builds, too.');
    // A remote model's list of sources is an old prompt's numbers too.
    expect(withoutCitations('The council approved it in March [1, 3], as [2,4] said.')).toBe('The council approved it in March, as said.');
  });

  it('leaves a stop where a marker ended a sentence that had none', () => {
    // A video's chapter line: `22:40 The vote [1] Plus the funding …` was remembered as one sentence.
    expect(withoutCitations('22:40 The vote [1] Plus the funding breakdown. [1]')).toBe('22:40 The vote. Plus the funding breakdown.');
    expect(withoutCitations('Chapters [1] [2] "Then" more')).toBe('Chapters. "Then" more');
    expect(withoutCitations('It rose [1] 5 per cent, says Ann Lee [2].')).toBe('It rose 5 per cent, says Ann Lee.');
  });

  it('reads an answer of 300,000 spaces in linear time (the pattern rescanned them: minutes of the event loop)', () => {
    const text = `a${' '.repeat(300_000)}b`;
    expect(withoutCitations(text)).toBe(text);
    expect(withoutCitations(`${text} [1]`)).toBe(text);
  });
});

describe('questions the chat answers', () => {
  const lines = ['Ann (24 Nov 2026, 19:00): My cousin Bob lost 4000 dollars on Meridian last week'];

  it('knows questions about the discussion itself', () => {
    for (const q of ['can you summarise what we discussed so far?', 'who said the peg would hold?', 'What did Ann say?', 'what was the conversation about'])
      expect(asksAboutDiscussion(q), q).toBe(true);
    for (const q of ['How much did the company raise?', 'What is the capital of France?']) expect(asksAboutDiscussion(q), q).toBe(false);
  });

  it('counts a line that names what the question names, or holds most of its terms', () => {
    expect(chatAnswers('how much money did Bob lose?', lines)).toBe(true);
    expect(chatAnswers('how many dollars were lost on Meridian last week?', lines)).toBe(true);
    expect(chatAnswers('what is the capital of France?', lines)).toBe(false);
    expect(chatAnswers('what did we discuss?', [])).toBe(false);
  });

  it('does not count a line that only asks the question again (an earlier @ai, or the same words with a question mark)', () => {
    const asked = ['T (28 Nov 2026, 12:25): @ai how much did waits drop?', 'Ann (28 Nov 2026, 12:26): how much did the waits drop?'];
    expect(chatAnswers('how much did waits drop?', asked)).toBe(false);
    expect(chatAnswers('how much did waits drop?', [...asked, 'Bo (28 Nov 2026, 12:27): waits dropped by 22 minutes'])).toBe(true);
    // A question that tells something new still answers what it tells.
    expect(chatAnswers('how much money did Bob lose?', ['Ann (24 Nov 2026, 19:00): did you hear Bob lost 4000 dollars on Meridian last week?'])).toBe(true);
    expect(repeatsQuestion('Ann (24 Nov 2026, 19:00): /ask anything new on the peg?', 'what about the peg?')).toBe(true);
    expect(spokenText('Ann (24 Nov 2026, 19:00): hello')).toBe('hello');
    expect(spokenText('no speaker here')).toBe('no speaker here');
  });
});

describe('the terms of chat lines, kept between asks', () => {
  it('answers the same for a line read before as for a line read the first time, and keeps the last CHAT_LINES_KEPT lines', () => {
    const line = (i: number) => `Ann (24 Nov 2026, 19:00): ${i % 2 ? 'the ferry sailed at dawn' : 'the budget vote failed'}, line ${i}`;
    const questions = ['when did the ferry sail at dawn?', 'why did the budget vote fail?', 'what is the capital of France?'];
    const first = questions.map((q) => chatAnswers(q, [line(1)]));
    expect(first).toEqual([true, false, false]);
    for (let i = 0; i < 3 * CHAT_LINES_KEPT; i++) {
      expect(questions.map((q) => chatAnswers(q, [line(i)]))).toEqual(i % 2 ? [true, false, false] : [false, true, false]);
      expect(chatLinesKept()).toBeLessThanOrEqual(CHAT_LINES_KEPT);
    }
    // Read again after it was dropped, and again while it is kept.
    expect(questions.map((q) => chatAnswers(q, [line(1)]))).toEqual(first);
    expect(questions.map((q) => chatAnswers(q, [line(1)]))).toEqual(first);
    expect(chatLinesKept()).toBe(CHAT_LINES_KEPT);
  });
});

describe('the sectioned prompt and its budget', () => {
  const doc = (n: number, size: number): GroundedSource => ({ n, label: `Document ${n}`, content: `doc${n} `.repeat(size / 5).trim() });
  const memory = (n: number, size: number): GroundedSource => ({
    n,
    label: `From this discussion — old ${n}`,
    content: `mem${n} `.repeat(size / 5).trim(),
    section: 'memory',
  });
  const recent = (n: number, lines: number): GroundedSource => ({
    n,
    label: 'From this discussion — Ann, 24 Nov 2026',
    content: Array.from({ length: lines }, (_, i) => `Ann (24 Nov 2026, 19:0${i}): line${i} ${'x'.repeat(200)}`).join('\n'),
    section: 'recent',
  });
  const nonce = '0123456789abcdef';

  it('renders the sections in order inside the fences, and parses them back', () => {
    const sources = [doc(1, 100), memory(2, 100), recent(3, 2)];
    const built = buildPrompt({ topic: 'Meridian', sources, question: 'how much did Bob lose?' }, nonce, 100_000);
    const user = built.messages[1].content;
    const order = [
      '[RETRIEVED DOCUMENT CONTEXT]',
      '[PRIMARY TOPIC]',
      '[Source 1]',
      '[RELEVANT PAST CONVERSATION]',
      '[Source 2]',
      '[RECENT CHAT HISTORY]',
      '[Source 3]',
      '[USER QUERY]',
    ];
    const at = order.map((h) => user.indexOf(h));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(parseGroundedPrompt(user)).toEqual({ topic: 'Meridian', sources, question: 'how much did Bob lose?' });
    expect(built.messages[0].content.startsWith('[INSTRUCTION]')).toBe(true);
    expect(systemInstructions(nonce)).toMatch(/RECENT CHAT HISTORY/);
  });

  it('gives up the oldest past conversation first, then the lowest-ranked documents, then the oldest chat lines; never the question', () => {
    const question = `what happened? ${'q'.repeat(3000)}`;
    const sources = [doc(1, 1500), doc(2, 1500), memory(3, 1500), memory(4, 1500), recent(5, 4)];
    const size = (max: number) => buildPrompt({ topic: 'T', sources, question }, nonce, max);
    const full = size(100_000);
    expect(full.sources.map((s) => s.n)).toEqual([1, 2, 3, 4, 5]);
    const kept = (max: number) => size(max).sources.map((s) => s.n);
    expect(kept(full.chars - 100)).toEqual([1, 2, 4, 5]);
    expect(kept(full.chars - 1700)).toEqual([1, 2, 5]);
    // Then the last document is shortened, then dropped.
    const shortened = size(full.chars - 3400);
    expect(shortened.sources.map((s) => s.n)).toEqual([1, 2, 5]);
    expect(shortened.sources[1].content.length).toBeLessThan(1500);
    expect(kept(full.chars - 4800)).toEqual([1, 5]);
    expect(kept(full.chars - 6400)).toEqual([5]);
    const tight = size(full.chars - 6800);
    expect(tight.sources.map((s) => s.n)).toEqual([5]);
    expect(tight.recentLinesDropped).toBeGreaterThan(0);
    expect(tight.sources[0].content.split('\n')[0]).toContain(`line${tight.recentLinesDropped}`);
    for (const max of [full.chars - 100, full.chars - 6800, 1000]) {
      const built = size(max);
      expect(parseGroundedPrompt(built.messages[1].content)!.question).toBe(question);
      if (max > 1000) expect(built.chars).toBeLessThanOrEqual(max);
    }
  });
});
