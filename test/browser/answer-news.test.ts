import { describe, expect, it } from 'vitest';
import { AnswerNews } from '../../public/src/lib/answer-news.js';

const list = (...ids: string[]) => ids.map((id) => ({ id }));

describe('AnswerNews', () => {
  it('counts an answer as news the first time it is shown, not when it is shown again', () => {
    const news = new AnswerNews();
    expect(news.note(list('a1'), true)).toBe(false);
    expect(news.note(list('a1', 'a2'))).toBe(true);
    // a2 set aside by a failure, then speaking again.
    expect(news.note(list('a1'))).toBe(false);
    expect(news.note(list('a1', 'a2'))).toBe(false);
    expect(news.note(list())).toBe(false);
    expect(news.note(list('a3'))).toBe(true);
  });

  it('forgets the oldest answers past its bound, never one still shown', () => {
    const news = new AnswerNews();
    news.note(list('kept'));
    for (let i = 0; i < 300; i++) news.note(list('kept', `a${i}`));
    expect(news.note(list('kept'))).toBe(false);
    expect(news.note(list('a299'))).toBe(false);
    expect(news.note(list('a0'))).toBe(true);
  });
});
