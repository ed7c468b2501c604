// Which question terms each sentence holds: the string-search path must equal tokenising every word.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contentTerms, splitSentences, squashKeepingListEntries, stem, termOf, termSpellings, words } from '../../src/ai/local/extractive-text.js';
import { squash } from '../../src/text.js';
import { matchQuery, SPLIT_TEXTS_CHARS, splitsKept } from '../../src/rag/query-match.js';
import { headTermOf } from '../../src/ai/local/kin.js';
import { heldTogether } from '../../src/rag/candidates.js';
import { CORPORA } from '../helpers.js';

/** `flat` lower-cased when it is plain ASCII, else null: the copy matchQuery gives with its match. */
const asciiLower = (flat: string) => (/^[\x00-\x7f]*$/.test(flat) ? flat.toLowerCase() : null);

/** What matchQuery must equal: every sentence tokenised, its distinct terms kept if the query has them. */
function reference(text: string, query: Set<string>) {
  const flat = text.replace(/\s+/g, ' ').trim();
  const sentences = splitSentences(flat);
  return { flat, sentences, matches: sentences.map((s) => [...new Set(contentTerms(s.text))].filter((t) => query.has(t))), lower: asciiLower(flat) };
}

/** matchQuery with `kinds`: each word's term, or its head's (headTermOf) where that is queried and the word's own term is not. */
function referenceReadingKinds(text: string, query: Set<string>) {
  const flat = text.replace(/\s+/g, ' ').trim();
  const sentences = splitSentences(flat);
  const termsOf = (sentence: string) =>
    words(sentence).flatMap((w) => {
      const t = termOf(w);
      if (!t || query.has(t)) return t ? [t] : [];
      const head = headTermOf(w);
      return [head && query.has(head) ? head : t];
    });
  return { flat, sentences, matches: sentences.map((s) => [...new Set(termsOf(s.text))].filter((t) => query.has(t))), lower: asciiLower(flat) };
}

type XquadParagraph = { context: string; qas: { question: string }[] };
let cached: XquadParagraph[] | undefined;
/** XQuAD's paragraphs, read from the corpora on first use (never at import). */
function corpusParagraphs(): XquadParagraph[] {
  cached ??= (JSON.parse(readFileSync(join(CORPORA, 'qa/xquad-en.dev.json'), 'utf8')) as { data: { paragraphs: XquadParagraph[] }[] }).data.flatMap(
    (a) => a.paragraphs,
  );
  return cached;
}

describe('termSpellings', () => {
  it('names a prefix or a whole spelling of every word of the corpus, by its term', () => {
    const vocabulary = new Set(corpusParagraphs().flatMap((p) => words(`${p.context} ${p.qas.map((q) => q.question).join(' ')}`)));
    // The stemmer's special cases too: irregular forms, number words, -ies/-ied, doubled consonants.
    for (const w of 'ran ran children feet better best two twenty first second studies supplies replied tied dies ties running stopped happily makes made'.split(
      ' ',
    ))
      vocabulary.add(w);
    expect(vocabulary.size).toBeGreaterThan(4000);
    for (const word of vocabulary) {
      const term = termOf(word);
      if (!term) continue;
      const { prefix, whole } = termSpellings(term);
      if (!word.startsWith(prefix) && !whole.some((w) => word.startsWith(w)))
        throw new Error(`"${word}" (term "${term}") starts with neither "${prefix}" nor one of ${JSON.stringify(whole)}`);
    }
  });

  it('lists irregular forms and number words under their term', () => {
    expect(termSpellings('run').whole).toContain('ran');
    expect(termSpellings('foot').whole).toContain('feet');
    expect(termSpellings('good').whole).toEqual(expect.arrayContaining(['better', 'best']));
    expect(termSpellings('child').whole).toEqual([]); // "children" starts with "child"
    expect(termSpellings('2').whole).toContain('two');
    expect(termSpellings('study').prefix).toBe('stud');
  });
});

describe('matchQuery', () => {
  it('finds the question terms of each sentence, in order of first appearance', () => {
    const text = 'The treaty was signed in Paris.   Delegates from  forty nations attended the signing. Rain fell all day.';
    const m = matchQuery(text, new Set(['paris', 'treaty', 'rain', 'sign']));
    expect(m.flat).toBe(text.replace(/\s+/g, ' '));
    expect(m.sentences.map((s) => m.flat.slice(s.start, s.end))).toEqual(m.sentences.map((s) => s.text));
    expect(m.matches).toEqual([['treaty', 'sign', 'paris'], ['sign'], ['rain']]);
  });

  it('equals tokenising every sentence on real passages and their questions, ASCII or not', () => {
    expect(corpusParagraphs().length).toBeGreaterThan(100);
    expect(corpusParagraphs().some((p) => /[^\x00-\x7f]/.test(p.context))).toBe(true);
    let matched = 0;
    for (const p of corpusParagraphs()) {
      for (const q of p.qas) {
        const query = new Set(contentTerms(q.question));
        const got = matchQuery(p.context, query);
        expect(got).toEqual(reference(p.context, query));
        matched += got.matches.flat().length;
      }
      // Every term of the passage at once: the widest query.
      const all = new Set(contentTerms(p.context));
      expect(matchQuery(p.context, all)).toEqual(reference(p.context, all));
    }
    expect(matched).toBeGreaterThan(1000);
  });

  it('equals the reference on awkward text: whitespace of every kind, stopwords, digits, stems inside other words', () => {
    const cases = [
      '',
      ' ',
      'a',
      '  Leading and trailing.  ',
      'Tabs\tand\nnew\r\nlines.\n\nA new paragraph! Really? Yes.',
      'Non\u00a0breaking\u2003spaces and\u200bzero width.',
      'The of and to in is was.',
      'Dr. Smith met Mr. J. R. R. Tolkien in the U.S. in 1937. He paid $3.50 for 2 books.',
      'Ünïcode wörds héré. “Quoted” sentences follow. Mixed ASCII after.',
      'running runs ran runner RUNNING Running rerun run-off outrun',
      'x'.repeat(300),
      'Numbers one two three and first second third. Twenty-two twentieth.',
      'Studies studied study studying student. Supplies supply supplier.',
      'Children child childish. Feet foot footnote. Better best good goods.',
    ];
    const query = new Set([
      'run',
      'x',
      '2',
      '3',
      '1st',
      'study',
      'supp',
      'supply',
      'child',
      'foot',
      'good',
      'paragraph',
      'space',
      'smith',
      '1937',
      'tolkien',
      'word',
      'ascii',
    ]);
    for (const c of cases) expect(matchQuery(c, query)).toEqual(reference(c, query));
  });

  it('with kinds, reads a compound of a combining form as its head, and equals reading every word', () => {
    const text =
      'The gigafactory and two Gigafactories opened. A supermarket, a SUPERMARKET and a hypermarket-style store. ' +
      'A semifinal, a microphone and relationships; concatenate the cat. A megagigafactory, gigafactory3 and super factory.';
    const query = new Set(['factory', 'market', 'final', 'phone', 'ship', 'cat', 'store'].map(stem));
    expect(matchQuery(text, query, squash, true).matches).toEqual([['factory'], ['market', 'stor'], ['cat'], ['factory']]);
    for (const t of [text, `${text} Ünïcode gigafactory.`, 'Gigafactory, factory.', 'Ü gigafactory.'])
      for (const q of [query, new Set(['factory', 'gigafactory']), new Set(['gigafactory'])])
        expect(matchQuery(t, q, squash, true), t).toEqual(referenceReadingKinds(t, q));
    // Asked itself, the compound is its own term, not its head's.
    expect(matchQuery('The gigafactory opened.', new Set(['factory', 'gigafactory']), squash, true).matches).toEqual([['gigafactory']]);
    for (const p of corpusParagraphs()) {
      for (const q of p.qas) {
        const asked = new Set(contentTerms(q.question));
        expect(matchQuery(p.context, asked, squash, true)).toEqual(referenceReadingKinds(p.context, asked));
      }
    }
  });

  it('splits a text once for every query it is matched with, by flattening, and gives what a fresh split gives', () => {
    const text = 'A list follows.\n1. First entry\n2. Second entry with Mr. Smith. Another sentence here.';
    const first = matchQuery(text, new Set(['entry']));
    const second = matchQuery(text, new Set(['smith', 'sentence']));
    expect(second.sentences).toBe(first.sentences);
    expect(first).toEqual(reference(text, new Set(['entry'])));
    expect(second).toEqual(reference(text, new Set(['smith', 'sentence'])));
    // Shared by every match of the text, so nobody may change them.
    expect(Object.isFrozen(first.sentences) && first.sentences.every((s) => Object.isFrozen(s))).toBe(true);
    // Another flattening of the same text is split its own way, and kept beside the first.
    const entries = matchQuery(text, new Set(['entry']), squashKeepingListEntries);
    expect(entries.flat).toBe(squashKeepingListEntries(text));
    expect(entries.sentences).toEqual(splitSentences(squashKeepingListEntries(text)));
    expect(matchQuery(text, new Set(['smith']), squashKeepingListEntries).sentences).toBe(entries.sentences);
    expect(matchQuery(text, new Set(['smith'])).sentences).toBe(first.sentences);
    // A flattening of the caller's own is not kept.
    const own = (t: string) => t.toUpperCase();
    expect(matchQuery(text, new Set(), own).flat).toBe(text.toUpperCase());
    expect(matchQuery(text, new Set(), own).sentences).not.toBe(matchQuery(text, new Set(), own).sentences);
  });

  it('keeps the splits of at most SPLIT_TEXTS_CHARS characters, the least recently used going first', () => {
    const sentence = (i: number) => `Sentence number ${i} of a long text about harbours. `;
    const text = (i: number) => Array.from({ length: 40 }, (_, j) => sentence(i * 40 + j)).join('');
    const hot = matchQuery(text(0), new Set(['harbour']));
    for (let i = 1; i * text(1).length * 2 < 3 * SPLIT_TEXTS_CHARS; i++) {
      matchQuery(text(i), new Set(['harbour']));
      // Used again after every other text: never the least recently used.
      expect(matchQuery(text(0), new Set(['sentence'])).sentences).toBe(hot.sentences);
      expect(splitsKept().chars).toBeLessThanOrEqual(SPLIT_TEXTS_CHARS);
    }
    expect(splitsKept().texts).toBeGreaterThan(10);
    // The first of the others was dropped long ago: split again, to the same sentences.
    const again = matchQuery(text(1), new Set(['harbour']));
    expect(again).toEqual(reference(text(1), new Set(['harbour'])));
    // A text over the whole budget is matched, not kept.
    const huge = text(5).repeat(Math.ceil(SPLIT_TEXTS_CHARS / text(5).length));
    expect(matchQuery(huge, new Set(['harbour'])).sentences).not.toBe(matchQuery(huge, new Set(['harbour'])).sentences);
    expect(splitsKept().chars).toBeLessThanOrEqual(SPLIT_TEXTS_CHARS);
  });

  it('gives the flattened text lower-cased when it is plain ASCII, else null', () => {
    const query = new Set(['train']);
    expect(matchQuery('The  TRAINS\tStopped.\u00a0Again.', query).lower).toBe('the trains stopped. again.');
    expect(matchQuery('The TRAINS stopped.', new Set()).lower).toBe('the trains stopped.');
    expect(matchQuery('Die Züge hielten.', query).lower).toBeNull();
  });

  it('gives every sentence an empty list for an empty query', () => {
    expect(matchQuery('One sentence. Another one.', new Set()).matches).toEqual([[], []]);
  });

  it('squashes only when there is something to squash, and returns the same text otherwise', () => {
    const clean = 'Nothing to squash here.';
    expect(squash(clean)).toBe(clean);
    expect(squash(' a  b\tc\n')).toBe('a b c');
    expect(squash('a\u00a0b')).toBe('a b');
  });
});

describe('heldTogether', () => {
  /** A store whose room item has one body chunk of `text`. */
  const itemOf = (text: string) => ({ chunksOfItem: async () => [{ part: 'body', text }] }) as never;

  it('finds a compound however the question and the item write it: as one word, with a hyphen or a space', async () => {
    // "post mortem" asked was not the article's "postmortem", nor "postmortem" asked its "post-mortem".
    const joined = itemOf("Trains stopped on Monday. According to the postmortem, signed by the operator's head of safety, the timings were reset.");
    expect(await heldTogether(itemOf('x'), [], 'Who wrote the post mortem?', 'item')).toBe(false);
    expect(await heldTogether(joined, [], 'Who wrote the post mortem?', 'item')).toBe(true);
    expect(await heldTogether(joined, [], 'Who wrote the post-mortem?', 'item')).toBe(true);
    for (const written of ['post-mortem', 'post mortem']) {
      expect(
        await heldTogether(itemOf(`Trains stopped on Monday. Mirela Vasquez-Orr wrote the ${written} a week later.`), [], 'Who wrote the postmortem?', 'item'),
      ).toBe(true);
    }
  });

  it('finds a compound in a text of any whitespace, ASCII or not', async () => {
    for (const text of [
      "Trains stopped.\n\nAccording to\tthe\u00a0POSTMORTEM,  signed by the operator's head, the timings were reset.",
      'Trains stopped in Zürich. According to the postmortem, signed by the operator, the timings were reset.',
    ]) {
      expect(await heldTogether(itemOf(text), [], 'Who wrote the post mortem?', 'item')).toBe(true);
    }
  });

  it('finds a short word with a final e in its -ed and -ing forms (use, used, using)', async () => {
    // "What are cilia used for?" held one term of `animals that use cilia …` and abstained.
    const ctenophores = itemOf('Ctenophores live in every ocean. They are the largest animals that use cilia as their main method of locomotion.');
    expect(await heldTogether(ctenophores, [], 'What are cilia used for?', 'item')).toBe(true);
    expect(await heldTogether(itemOf('Using cilia, they swim.'), [], 'What are cilia used for?', 'item')).toBe(true);
  });

  it('asked whether something is so, reads what the item’s title names as said in each of its sentences', async () => {
    // "Is the K1 fast?" abstained beside `Early reviews suggest it is not yet fast.`.
    const titled = (text: string) => ({ chunksOfItem: async () => [{ part: 'body', text, itemTitle: 'Kestrel K1 starts shipping' }] }) as never;
    const k1 = titled('The company took 18,000 preorders. Early reviews suggest it is not yet fast.');
    expect(await heldTogether(k1, [], 'Is the K1 fast?', 'item')).toBe(true);
    expect(await heldTogether(k1, [], 'Is the K1 waterproof?', 'item')).toBe(false);
    // Without the title, or with a title naming nothing asked, one term of two is not enough.
    expect(await heldTogether(itemOf('The company took 18,000 preorders. Early reviews suggest it is not yet fast.'), [], 'Is the K1 fast?', 'item')).toBe(
      false,
    );
    expect(await heldTogether(titled('Early reviews suggest it is not yet fast.'), [], 'Is the laptop fast?', 'item')).toBe(false);
  });

  it('finds a word in a compound that is a kind of it (a gigafactory is a factory), not in any word ending so', async () => {
    // `The gigafactory will cost €2.1 billion` held one term of "how much will the factory cost?".
    const plant = itemOf('Lindqvist opened a gigafactory in Tarnby. The gigafactory will cost €2.1 billion.');
    expect(await heldTogether(plant, [], 'How much will the factory cost?', 'item')).toBe(true);
    expect(await heldTogether(itemOf('The semifinal will cost the club €2 million.'), [], 'How much will the final cost?', 'item')).toBe(false);
  });
});
