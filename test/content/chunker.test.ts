import { describe, expect, it } from 'vitest';
import { chunkItem, windows } from '../../src/content/ingest/chunker.js';

const OPTS = { size: 200, overlap: 40 };

function sentences(n: number, words = 12): string {
  return Array.from({ length: n }, (_, i) => `Sentence ${i} ${Array.from({ length: words }, (_, w) => `word${w}`).join(' ')}.`).join(' ');
}

function item(body: string, extra: Partial<{ title: string; description: string; comments: { by: string; text: string; time: number }[] }> = {}) {
  return { title: extra.title ?? 'A title', description: extra.description ?? 'A short description.', body, comments: extra.comments ?? [] };
}

describe('windows', () => {
  it('keeps every window within size and covers all words in order', () => {
    const text = sentences(40);
    const ws = windows(text, OPTS);
    expect(ws.length).toBeGreaterThan(5);
    for (const w of ws) expect(w.length).toBeLessThanOrEqual(OPTS.size);
    // Every word of the text appears in some window, and windows follow the text's order.
    let pos = 0;
    for (const w of ws) {
      const at = text.indexOf(w, Math.max(0, pos - OPTS.size));
      expect(at, `window not found in order: ${w.slice(0, 40)}`).toBeGreaterThanOrEqual(0);
      expect(at).toBeLessThanOrEqual(pos);
      pos = at + w.length;
    }
    expect(pos).toBe(text.length);
  });

  it('ends windows at sentence ends and starts the next one at a sentence start', () => {
    const ws = windows(sentences(30, 3), OPTS);
    expect(ws.length).toBeGreaterThan(4);
    for (const w of ws.slice(0, -1)) expect(w).toMatch(/\.$/);
    for (const w of ws.slice(1)) expect(w).toMatch(/^Sentence \d+/);
  });

  it('overlaps neighbouring windows by at most `overlap` characters', () => {
    const text = sentences(30, 3);
    const ws = windows(text, { size: 200, overlap: 60 });
    let shared = 0;
    for (let i = 1; i < ws.length; i++) {
      const prev = ws[i - 1];
      const next = ws[i];
      // the longest suffix of prev that is a prefix of next
      let k = Math.min(prev.length, next.length);
      while (k > 0 && !next.startsWith(prev.slice(prev.length - k))) k--;
      expect(k).toBeLessThanOrEqual(60);
      shared += k;
    }
    expect(shared).toBeGreaterThan(0);
  });

  it('has no overlap when overlap is 0', () => {
    const text = sentences(20);
    const ws = windows(text, { size: 200, overlap: 0 });
    expect(ws.join(' ')).toBe(text);
  });

  it('prefers a paragraph break over a later sentence end', () => {
    const para1 = 'First paragraph. ' + 'x'.repeat(100) + '.';
    const para2 = 'Second paragraph starts here. ' + 'y'.repeat(50) + '.';
    const ws = windows(`${para1}\n\n${para2}`, { size: 180, overlap: 0 });
    expect(ws[0]).toBe(para1);
    expect(ws[1]).toBe(para2);
  });

  it('cuts a word longer than the window, and still makes progress with overlap', () => {
    const word = 'a'.repeat(1000);
    const ws = windows(`start ${word} end`, { size: 100, overlap: 30 });
    for (const w of ws) expect(w.length).toBeLessThanOrEqual(100);
    expect(ws[0]).toBe('start');
    expect(ws.at(-1)).toMatch(/end$/);
    const letters = ws.filter((w) => /^a+$/.test(w));
    expect(letters.length).toBeGreaterThanOrEqual(10);
    expect(letters.length).toBeLessThan(20);
  });

  it('never splits a surrogate pair or a combining sequence', () => {
    const emoji = '😀'.repeat(300);
    for (const w of windows(emoji, { size: 101, overlap: 10 })) {
      expect(w.length).toBeLessThanOrEqual(101);
      expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(w)).toBe(false);
    }
    const combining = 'e\u0301'.repeat(300);
    for (const w of windows(combining, { size: 51, overlap: 0 })) expect(w.startsWith('\u0301')).toBe(false);
  });

  it('handles CJK sentence ends', () => {
    const text = '今日は晴れです。'.repeat(60);
    const ws = windows(text, { size: 100, overlap: 20 });
    for (const w of ws.slice(0, -1)) expect(w.endsWith('。')).toBe(true);
  });

  it('returns nothing for empty or blank text', () => {
    expect(windows('', OPTS)).toEqual([]);
    expect(windows(' \n\n\t ', OPTS)).toEqual([]);
  });

  it('rejects bad options by name', () => {
    expect(() => windows('x', { size: 0, overlap: 0 })).toThrow(/size/);
    expect(() => windows('x', { size: 10, overlap: 10 })).toThrow(/overlap/);
    expect(() => windows('x', { size: 10, overlap: -1 })).toThrow(/overlap/);
  });

  it('is linear enough for a 200,000-character body without boundaries', () => {
    const ws = windows('z'.repeat(200_000), { size: 800, overlap: 160 });
    expect(ws.length).toBeGreaterThan(300);
    expect(ws.length).toBeLessThan(400);
  });
});

describe('chunkItem', () => {
  it('makes a title chunk, then body windows, then comment chunks, numbered from 0', () => {
    const chunks = chunkItem(
      item(sentences(20), {
        comments: [
          { by: 'alice', text: 'Nice work.', time: 1 },
          { by: 'bob', text: sentences(8), time: 2 },
        ],
      }),
      OPTS,
    );
    expect(chunks.map((c) => c.ord)).toEqual(chunks.map((_, i) => i));
    expect(chunks[0]).toEqual({ ord: 0, part: 'title', text: 'A title\n\nA short description.' });
    const parts = chunks.map((c) => c.part);
    expect(parts.indexOf('comment')).toBeGreaterThan(parts.lastIndexOf('body'));
    const comments = chunks.filter((c) => c.part === 'comment');
    expect(comments[0]).toMatchObject({ text: 'Nice work.', commentBy: 'alice' });
    expect(comments.length).toBeGreaterThan(2);
    for (const c of comments.slice(1)) expect(c.commentBy).toBe('bob');
    // comment chunks hold only comment text, body chunks only body text
    const bobText = sentences(8);
    for (const c of comments.slice(1)) expect(bobText).toContain(c.text);
    for (const c of chunks.filter((c) => c.part === 'body')) expect(sentences(20)).toContain(c.text);
    for (const c of chunks.filter((c) => c.part === 'body')) expect(c.commentBy).toBeUndefined();
  });

  it('gives an item without body only its title chunk and comments', () => {
    const chunks = chunkItem(item('', { comments: [{ by: 'c', text: 'hello', time: 0 }] }), OPTS);
    expect(chunks.map((c) => c.part)).toEqual(['title', 'comment']);
  });

  it('windows a long description when there is no body (videos)', () => {
    const description = sentences(10);
    const chunks = chunkItem(item('', { description }), OPTS);
    expect(chunks[0].part).toBe('title');
    expect(chunks[0].text.length).toBeLessThanOrEqual(OPTS.size);
    expect(chunks.filter((c) => c.part === 'body').length).toBeGreaterThan(1);
    expect(chunks.at(-1)!.text.endsWith('word11.')).toBe(true);
  });

  it('is deterministic', () => {
    const a = chunkItem(item(sentences(15)), OPTS);
    const b = chunkItem(item(sentences(15)), OPTS);
    expect(a).toEqual(b);
  });
});
