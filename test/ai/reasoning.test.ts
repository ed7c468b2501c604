import { describe, expect, it } from 'vitest';
import { ReasoningFilter, type ReplyShape, type ReplyStart, ThinkingHabit, UNKNOWN_START_HOLD_CHARS, withoutReasoning } from '../../src/ai/reasoning.js';

/** The filter's output for `pieces`, as a stream would pass it on. */
function filtered(pieces: string[], start?: ReplyStart): string {
  const filter = new ReasoningFilter(start);
  return pieces.map((p) => filter.push(p)).join('') + filter.end();
}

describe('reasoning blocks', () => {
  it('keeps every character of an answer after thinking that holds an İ (two characters lower-cased)', () => {
    const reply = '<think>İstanbul mu, İzmir mi? İkisi de değil.</think>Ankara [1].';
    expect(withoutReasoning(reply)).toBe('Ankara [1].');
    expect(filtered([reply])).toBe('Ankara [1].');
    expect(filtered(['<think>İİ', 'İ</THINK>Ank', 'ara [1].'])).toBe('Ankara [1].');
    expect(filtered(['İzmir <think>x</think>ve Ankara.'])).toBe('İzmir ve Ankara.');
  });

  it('drops what comes before a first tag that closes a block: the chat template opened it', () => {
    expect(withoutReasoning('Okay, snippet 4 has the date.\n</think>\n\n2,1,3')).toBe('\n\n2,1,3');
    expect(withoutReasoning('Weighing 4 and 6.</THINK>2 <think>or 5</think>and 1', ' ')).toBe(' 2  and 1');
    expect(withoutReasoning('An answer without any tag.')).toBe('An answer without any tag.');
  });

  it('drops a block the reply never closes, as a stream does: a reply cut while thinking holds no answer', () => {
    expect(withoutReasoning('<think>Snippet 3 and 5 look relevant, but')).toBe('');
    expect(withoutReasoning('2,1 <think>or 5', ' ')).toBe('2,1  ');
    expect(withoutReasoning('<think>a</think>The answer.<think>cut')).toBe('The answer.');
    expect(filtered(['The answer.<think>cut'])).toBe('The answer.');
  });

  it('reads a piece dense with tags in linear time (quadratic: a minute of the event loop for 320 KB)', () => {
    const piece = `${'<think>a</think>'.repeat(20_000)}ok`;
    expect(filtered([piece])).toBe('ok');
    expect(withoutReasoning(piece)).toBe('ok');
    // Text before the first tag, and blocks nested deep: still one pass.
    const nested = `x${'<thinking>'.repeat(20_000)}a${'</thinking>'.repeat(20_000)}ok`;
    expect(filtered([nested])).toBe('xok');
    expect(withoutReasoning(nested)).toBe('xok');
    expect(withoutReasoning(`x${piece}`)).toBe('xok');
  });

  it('drops a stream’s thinking up to its first </think> when the chat template opened the block, wherever the pieces cut the tag', () => {
    const reply = 'Okay, source [2] names the pier.\n</think>\n\nThe party is at Pier 9 [1].';
    for (const size of [1, 3, 8, reply.length]) {
      const pieces = reply.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g'))!;
      expect(filtered(pieces, 'inside')).toBe('\n\nThe party is at Pier 9 [1].');
      expect(filtered(pieces, 'unknown')).toBe('\n\nThe party is at Pier 9 [1].');
    }
    // Where the reply was believed to start outside, what came before is gone out, but never the tag.
    expect(filtered(['Okay.</th', 'ink>Pier 9.'])).toBe('Okay.Pier 9.');
  });

  it('holds back a reply of unknown start until a tag tells, and passes on one without tags whole', () => {
    const filter = new ReasoningFilter('unknown');
    expect(filter.push('The party is at ')).toBe('');
    expect(filter.push('Pier 9 [1].')).toBe('');
    expect(filter.end()).toBe('The party is at Pier 9 [1].');
    // A block opened after text may sit inside a block the template opened: held to the end.
    const opened = new ReasoningFilter('unknown');
    expect(opened.push('Pier 9. <think>or 8')).toBe('');
    expect(opened.push('</think> See you.')).toBe('');
    expect(opened.end()).toBe('Pier 9.  See you.');
    // A block opened before any text began outside: the answer after it streams.
    const leading = new ReasoningFilter('unknown');
    expect(leading.push(' <think>or 8')).toBe(' ');
    expect(leading.push('</think> Pier 9.')).toBe(' Pier 9.');
    expect(leading.push(' See you.')).toBe(' See you.');
    // Past the hold, an answer without tags streams as any other.
    const long = new ReasoningFilter('unknown');
    expect(long.push('a'.repeat(UNKNOWN_START_HOLD_CHARS))).toBe('');
    expect(long.push('bc')).toBe(`${'a'.repeat(UNKNOWN_START_HOLD_CHARS)}bc`);
    expect(long.push('d')).toBe('d');
  });

  it('drops thinking nested in thinking, whole or streamed, whatever the reply was expected to begin with', () => {
    const cases: [string, string][] = [
      ['<think>a <think>b</think> c</think>The answer.', 'The answer.'],
      ['<THINK>a <think>b <think>x</think></think> c</Think>The answer.', 'The answer.'],
      ['One. <think>a <think>b</think> c</think>Two.', 'One. Two.'],
      // Nested in a block the chat template opened: its end is the close that opened nothing.
      ['Let me see. <think>b</think> so Pier 9.</think>The answer.', 'The answer.'],
      // Cut while nested: no answer.
      ['<think>a <think>b</think> c', ''],
    ];
    for (const [reply, answer] of cases) {
      expect(withoutReasoning(reply)).toBe(answer);
      for (const size of [1, 2, 5, reply.length]) {
        const pieces = reply.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g'))!;
        expect(filtered(pieces, 'unknown')).toBe(answer);
        if (!reply.startsWith('Let me')) expect(filtered(pieces, 'outside')).toBe(answer);
      }
    }
    // Known to begin inside: the template's block ends at its own close, past the nested one.
    expect(filtered(['Let me see. <think>b</thi', 'nk> so Pier 9.</think>The answer.'], 'inside')).toBe('The answer.');
    // Believed to begin inside, a reply that opens its own block first is read from its first tag.
    expect(filtered(['<think>a</think>The answer.'], 'inside')).toBe('The answer.');
    // A stray close after the answer is no thinking.
    expect(withoutReasoning('<think>a</think>The answer.</think>')).toBe('The answer.');
    expect(filtered(['<think>a</think>The answer.</think>'], 'unknown')).toBe('The answer.');
  });

  it('drops <thinking> and <reasoning> blocks as <think> ones, closed, unclosed or cut mid-tag', () => {
    for (const name of ['thinking', 'reasoning', 'Thinking', 'REASONING']) {
      const reply = `<${name}>Source [2] names the pier.</${name}>The party is at Pier 9 [1].<${name}>or 8`;
      expect(withoutReasoning(reply)).toBe('The party is at Pier 9 [1].');
      for (const size of [1, 3, 7]) {
        const pieces = reply.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g'))!;
        for (const start of ['outside', 'unknown', 'inside'] as const) expect(filtered(pieces, start)).toBe('The party is at Pier 9 [1].');
      }
      expect(withoutReasoning(`Weighing 2.</${name}>2,1`)).toBe('2,1');
    }
    // A tag's prefix at the very end is no tag: it goes out when the reply ends.
    expect(filtered(['Pier 9 <thinkin'])).toBe('Pier 9 <thinkin');
    expect(filtered(['Pier 9 <reason', 'able>'])).toBe('Pier 9 <reasonable>');
  });

  it('learns where a model’s replies begin from whole replies and from streams', () => {
    expect(new ThinkingHabit('llama3.2').replyStart).toBe('outside');
    for (const name of ['qwq:32b', 'deepseek-r1:14b', 'DeepSeek-R1-Distill-Qwen-7B', 'phi4-reasoning', 'r1-1776'])
      expect(new ThinkingHabit(name).replyStart).toBe('unknown');
    const habit = new ThinkingHabit('qwq');
    expect(habit.replyStart).toBe('unknown');
    habit.observe('Snippets 4 and 6.</think>4,6');
    expect(habit.replyStart).toBe('inside');
    const stream = habit.streamFilter();
    expect(stream.push('Thinking on.</think>Pier 9.')).toBe('Pier 9.');
    expect(stream.end()).toBe('');
    expect(habit.replyStart).toBe('inside');
    // A reply without any tag: the server's template changed; the next reply is held, not dropped.
    const plain = habit.streamFilter();
    expect(plain.push('Pier 9.')).toBe('');
    expect(plain.end()).toBe('');
    expect(habit.replyStart).toBe('unknown');
    habit.observe('4,6');
    expect(habit.replyStart).toBe('outside');
    habit.observe('<think>4 or 6</think>4');
    expect(habit.replyStart).toBe('outside');
    // A close that opened nothing after nested thinking: the template opened the block.
    habit.observe('Hm, <think>4?</think> or 6.</think>6');
    expect(habit.replyStart).toBe('inside');
    habit.observe('<think>4 or 6</think>4');
    expect(habit.replyStart).toBe('outside');
    habit.observe('');
    expect(habit.replyStart).toBe('outside');
  });

  it('tells what a streamed reply showed when it ends', () => {
    const shapes: ReplyShape[] = [];
    const filter = new ReasoningFilter('outside', (s) => shapes.push(s));
    filter.push('  ');
    filter.push('x</THINK>y');
    filter.end();
    expect(shapes).toEqual([{ firstTag: 'close', hadText: true }]);
  });
});
