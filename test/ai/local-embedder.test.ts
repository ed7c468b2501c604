import { describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { tempDir } from '../helpers.js';
import { DEFAULT_LOCAL_DIMENSIONS, LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { REMEMBERED_TOKEN_MAX_CHARS, STOPWORDS, rememberedStems, stem } from '../../src/ai/local/extractive-text.js';
import { tokenize } from '../../src/ai/local/text-features.js';

function cosine(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

describe('LocalEmbedder', () => {
  const e = new LocalEmbedder();

  it('is deterministic across instances', async () => {
    const text = 'The Panthers defense gave up just 308 points.';
    const [a] = await e.embed([text]);
    const [b] = await new LocalEmbedder().embed([text]);
    expect(Array.from(a)).toEqual(Array.from(b));
  });

  it('warms up without changing any vector, and the server warms its embedder once ready', async () => {
    const warmed = new LocalEmbedder();
    await warmed.warmUp();
    const texts = ['Ann (24 Nov 2026, 09:14): The council approved the new pier.', 'The Panthers defense gave up just 308 points.'];
    expect((await warmed.embed(texts)).map((v) => Array.from(v))).toEqual((await new LocalEmbedder().embed(texts)).map((v) => Array.from(v)));
    const embedder = new LocalEmbedder({ dimensions: 64 });
    const warmUp = vi.spyOn(embedder, 'warmUp');
    const { dir, cleanup } = tempDir();
    const app = await buildApp(testConfig({ DATA_DIR: dir }), { embedder });
    try {
      expect(warmUp).not.toHaveBeenCalled();
      await app.ready();
      expect(warmUp).toHaveBeenCalledTimes(1);
    } finally {
      await app.close();
      cleanup();
    }
  });

  it('remembers the features of words but not of tokens holding digits, which rarely come back', async () => {
    const memo = new LocalEmbedder();
    const fresh = new LocalEmbedder();
    const numbers = Array.from({ length: 200 }, (_, i) => `at 10:${i} paid $${i}.99 order x${i}7 ٣${i}`);
    const before = memo.memoisedTokens;
    const first = await memo.embed(numbers);
    expect(memo.memoisedTokens - before).toBe(3); // "at", "paid", "order"
    // The same vectors whether features came from the memo or not.
    expect(await memo.embed(numbers)).toEqual(first);
    expect(await fresh.embed(numbers.slice().reverse())).toEqual(first.slice().reverse());
    await memo.embed(['harbour ferries pier council']);
    expect(memo.memoisedTokens - before).toBe(7);
  });

  it('remembers nothing of a token longer than any word, whose memo entry would hold all of it', async () => {
    const memo = new LocalEmbedder();
    const letters = (i: number) => [...i.toString(26)].map((d) => String.fromCharCode(97 + parseInt(d, 26))).join('');
    // Messages of one 4,000-letter "word" each: kept, every one held 36 KB of the heap until the memo filled.
    const long = Array.from({ length: 50 }, (_, i) => `${'ab'.repeat(2_000)}${letters(i)}`);
    const tokens = memo.memoisedTokens;
    const stems = rememberedStems();
    const first = await memo.embed(long);
    expect(memo.memoisedTokens).toBe(tokens);
    expect(rememberedStems()).toBe(stems);
    // The same vectors without the memo, and a long real word (REMEMBERED_TOKEN_MAX_CHARS) is still remembered.
    expect(await new LocalEmbedder().embed(long)).toEqual(first);
    await memo.embed(['Donaudampfschifffahrtsgesellschaftskapitän']);
    expect(memo.memoisedTokens).toBe(tokens + 1);
    expect('donaudampfschifffahrtsgesellschaftskapitan'.length).toBeLessThanOrEqual(REMEMBERED_TOKEN_MAX_CHARS);
  });

  it('returns unit vectors of the configured dimension', async () => {
    const small = new LocalEmbedder({ dimensions: 64 });
    const vectors = await small.embed(['one text', 'Another, longer text about rivers and mountains.', '東京 タワー', 'café crème']);
    for (const v of vectors) {
      expect(v).toHaveLength(64);
      expect(Math.sqrt(cosine(v, v))).toBeCloseTo(1, 5);
    }
    expect(e.dimensions).toBe(DEFAULT_LOCAL_DIMENSIONS);
  });

  it('gives a zero vector (not NaN) for text without content words', async () => {
    const [v] = await e.embed(['the of and ?!']);
    expect(v.every((x) => x === 0)).toBe(true);
  });

  it('scores related text above unrelated text, and above its threshold', async () => {
    const [q, related, unrelated] = await e.embed([
      'How many sacks did Kawann Short record?',
      'Pro Bowl defensive tackle Kawann Short led the team in sacks with 11, while also forcing three fumbles.',
      'Oxygen is a chemical element with symbol O and atomic number 8; it is a highly reactive nonmetal.',
    ]);
    expect(cosine(q, related)).toBeGreaterThan(e.similarityThreshold);
    expect(cosine(q, unrelated)).toBeLessThan(e.similarityThreshold);
    expect(cosine(q, related)).toBeGreaterThan(cosine(q, unrelated) + 0.1);
  });

  it('matches inflected forms through stems and character n-grams', async () => {
    const [a, b, c] = await e.embed(['intercepted passes', 'interception of a pass', 'volcanic eruptions']);
    expect(cosine(a, b)).toBeGreaterThan(cosine(a, c) + 0.2);
  });

  it('validates its options, naming the option', () => {
    expect(() => new LocalEmbedder({ dimensions: 16 })).toThrow(/dimensions/);
    expect(() => new LocalEmbedder({ dimensions: 100.5 })).toThrow(/dimensions/);
    expect(() => new LocalEmbedder({ dimensions: 5000 })).toThrow(/dimensions/);
    expect(() => new LocalEmbedder({ weights: { pairs: -1 } })).toThrow(/weights\.pairs/);
    expect(() => new LocalEmbedder({ charGrams: [5, 3] })).toThrow(/charGrams/);
  });

  it('honours an aborted signal', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(e.embed(['x'], ac.signal)).rejects.toThrow();
  });
});

describe('text features', () => {
  it('tokenises Unicode, folds case and diacritics', () => {
    expect(tokenize('Café CRÈME, naïve—Zürich 2016!')).toEqual(['cafe', 'creme', 'naive', 'zurich', '2016']);
    expect(tokenize('Москва и 東京')).toEqual(['москва', 'и', '東京']);
  });

  it('remembers the stems of words but not of tokens holding digits', () => {
    const before = rememberedStems();
    const numbers = Array.from({ length: 300 }, (_, i) => [`${i}th`, `x${i}s`, `${i}`, `٣${i}`]).flat();
    expect(numbers.map(stem)).toEqual(numbers.map(stem));
    expect(stem('1990s')).toBe(stem('1990s'));
    expect(rememberedStems()).toBe(before);
    stem('harbourmasters');
    expect(rememberedStems()).toBe(before + 1);
  });

  it('stems inflections onto one form', () => {
    for (const [a, b] of [
      ['running', 'runs'],
      ['connected', 'connection'],
      ['studies', 'study'],
      ['hopping', 'hop'],
      ['elected', 'election'],
      ['relational', 'relate'],
    ]) {
      expect(stem(a), `${a} vs ${b}`).toBe(stem(b));
    }
    expect(stem('2016')).toBe('2016');
    expect(stem('sky')).toBe('sky');
  });

  it('stems and embeds the names of Object.prototype’s own properties as words like any other', async () => {
    // Anyone's text reaches the stemmer: "constructor" once found Object's own function and broke
    // every embedding of a message, question or page that said it.
    const names = Object.getOwnPropertyNames(Object.prototype);
    expect(names).toContain('constructor');
    for (const name of names) {
      const word = name.toLowerCase();
      expect(typeof stem(word), name).toBe('string');
      expect(stem(word).length, name).toBeGreaterThan(0);
    }
    expect(stem('constructors')).toBe(stem('constructor'));
    const [said, asked, other] = await new LocalEmbedder().embed([
      'The constructor of the bridge was paid too much, by __proto__ valueOf and hasOwnProperty',
      'who was the constructor of the bridge?',
      'The volcano erupted near Grindavik.',
    ]);
    for (const v of [said, asked]) expect(v.every(Number.isFinite)).toBe(true);
    expect(cosine(said, asked)).toBeGreaterThan(cosine(said, other));
  });

  it('treats question words as stopwords', () => {
    for (const w of ['what', 'who', 'when', 'how', 'many', 'the']) expect(STOPWORDS.has(w)).toBe(true);
  });
});
