import { describe, expect, it } from 'vitest';
import { ReasoningFilter, withoutReasoning } from '../../src/ai/reasoning.js';

/** The filter's output for `pieces`, as a stream would pass it on. */
function filtered(pieces: string[]): string {
  const filter = new ReasoningFilter();
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
});
