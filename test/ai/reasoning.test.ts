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
    const opened = new ReasoningFilter('unknown');
    expect(opened.push('Pier 9. <think>or 8')).toBe('Pier 9. ');
    expect(opened.push('</think> See you.')).toBe(' See you.');
    // Past the hold, an answer without tags streams as any other.
    const long = new ReasoningFilter('unknown');
    expect(long.push('a'.repeat(UNKNOWN_START_HOLD_CHARS))).toBe('');
    expect(long.push('bc')).toBe(`${'a'.repeat(UNKNOWN_START_HOLD_CHARS)}bc`);
    expect(long.push('d')).toBe('d');
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
