/**
 * Deterministic synthetic articles for benchmarks: pseudo-words drawn from a Zipf distribution,
 * each article leaning on its topic's own vocabulary so search has something to find.
 */
import { blankItem, type ContentItem } from '../src/content/types.js';

const SYLLABLES = 'ka lo mi ne ru sa ti vo ze ba de fi gu ha jo ku la me no pe ri so tu va wi xo yu zo an el in or un'.split(' ');
const VOCABULARY = 6000;
const TOPICS = 60;
const TOPIC_WORDS = 80;
const CATEGORIES = ['Tech', 'Science', 'Politics', 'Business', 'Crypto'];

/** A small seeded PRNG (mulberry32), for reproducible synthetic data. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function makeWord(i: number): string {
  let w = '';
  let x = i + 7;
  do {
    w += SYLLABLES[x % SYLLABLES.length];
    x = Math.floor(x / SYLLABLES.length);
  } while (x > 0);
  return w;
}

const words = Array.from({ length: VOCABULARY }, (_, i) => makeWord(i));

function zipf(rand: () => number): string {
  return words[Math.min(VOCABULARY - 1, Math.floor(Math.exp(rand() * Math.log(VOCABULARY)) - 1))];
}

function sentence(rand: () => number, topic: number): string {
  const length = 8 + Math.floor(rand() * 14);
  const out: string[] = [];
  for (let i = 0; i < length; i++) {
    out.push(rand() < 0.3 ? words[(topic * TOPIC_WORDS + Math.floor(rand() * TOPIC_WORDS)) % VOCABULARY] : zipf(rand));
  }
  if (rand() < 0.3) out.splice(Math.floor(rand() * out.length), 0, String(1900 + Math.floor(rand() * 125)));
  const s = out.join(' ');
  return `${s[0].toUpperCase()}${s.slice(1)}.`;
}

/** `n` items (`news_b<i>`) of 8–20 sentences each. */
export function syntheticItems(n: number): ContentItem[] {
  const rand = prng(42);
  return Array.from({ length: n }, (_, i) => {
    const topic = Math.floor(rand() * TOPICS);
    const body = Array.from({ length: 8 + Math.floor(rand() * 12) }, () => sentence(rand, topic)).join(' ');
    return blankItem(`news_b${i}`, {
      title: sentence(rand, topic).slice(0, 80).replace(/\.$/, ''),
      url: `https://example.com/b/${i}`,
      description: sentence(rand, topic),
      body,
      category: CATEGORIES[topic % CATEGORIES.length],
      publishedAt: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
    });
  });
}

/** A question made of a few words of one of the item's sentences. */
export function questionAbout(item: ContentItem, i: number): string {
  const sentences = item.body.split(/(?<=\.)\s+/);
  const s = sentences[i % sentences.length].replace(/\.$/, '').split(' ');
  const start = i % Math.max(1, s.length - 6);
  return `What about ${s
    .slice(start, start + 6)
    .join(' ')
    .toLowerCase()}?`;
}
