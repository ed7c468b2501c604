// The shared stemmer on real words: which forms meet and which stay apart.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { irregularBase, stem, words } from '../../src/ai/local/extractive-text.js';
import { CORPORA } from '../helpers.js';

let vocabulary: Map<string, number> | undefined;
/** Words of the corpora's prose (XQuAD, LoCoMo, the extraction benchmark's articles) and how often each is written. */
function corpusWords(): Map<string, number> {
  if (vocabulary) return vocabulary;
  const texts: string[] = [];
  const xquad = JSON.parse(readFileSync(join(CORPORA, 'qa/xquad-en.dev.json'), 'utf8')) as {
    data: { paragraphs: { context: string; qas: { question: string }[] }[] }[];
  };
  for (const p of xquad.data.flatMap((a) => a.paragraphs)) texts.push(p.context, ...p.qas.map((q) => q.question));
  const locomo = JSON.parse(readFileSync(join(CORPORA, 'memory/locomo/locomo-dev.json'), 'utf8')) as {
    conversation: Record<string, unknown>;
    qa: { question: string }[];
  }[];
  for (const sample of locomo) {
    for (const session of Object.values(sample.conversation)) if (Array.isArray(session)) texts.push(...session.map((turn: { text: string }) => turn.text));
    texts.push(...sample.qa.map((q) => q.question));
  }
  const articles = JSON.parse(readFileSync(join(CORPORA, 'extraction/ground-truth.json'), 'utf8')) as Record<string, { articleBody: string }>;
  texts.push(...Object.values(articles).map((a) => a.articleBody));
  vocabulary = new Map();
  for (const text of texts) for (const w of words(text)) if (/^[a-z]+$/.test(w)) vocabulary.set(w, (vocabulary.get(w) ?? 0) + 1);
  return vocabulary;
}

/** A base of four letters: a consonant, a vowel, a consonant but s, and a final e (`vote`, `rate`; `base` is left apart from `based`). */
const SHORT_E_BASE = /^[b-df-hj-np-tv-z][aeiouy][b-df-hj-nprtvz]e$/;

describe('the stemmer', () => {
  it('maps real words to these stems', () => {
    const table: Record<string, string> = {
      // A base of four letters and a final e, and its -s, -ed and -ing forms.
      vote: 'vote',
      votes: 'vote',
      voted: 'vote',
      voting: 'vote',
      note: 'note',
      noted: 'note',
      noting: 'note',
      rate: 'rate',
      rated: 'rate',
      rating: 'rate',
      ratings: 'rate',
      code: 'code',
      coded: 'code',
      coding: 'code',
      hope: 'hope',
      hoped: 'hope',
      hoping: 'hope',
      make: 'make',
      making: 'make',
      made: 'make',
      give: 'give',
      giving: 'give',
      live: 'live',
      lived: 'live',
      living: 'live',
      care: 'care',
      cared: 'care',
      caring: 'care',
      type: 'type',
      typed: 'type',
      typing: 'type',
      rise: 'rise',
      rising: 'rise',
      losing: 'lose',
      // No e after an s: `based` is mostly "based on", and `bused` the bus's.
      based: 'bas',
      base: 'base',
      bite: 'bite',
      biting: 'bite',
      // Short words of their own, whose consonant an -ed or -ing form doubles.
      not: 'not',
      rat: 'rat',
      rats: 'rat',
      cod: 'cod',
      hop: 'hop',
      hopped: 'hop',
      hopping: 'hop',
      car: 'car',
      cars: 'car',
      planned: 'plan',
      // A last w, x or y is never doubled, and no final e comes back.
      sewed: 'sew',
      fixed: 'fix',
      fixing: 'fix',
      played: 'play',
      paying: 'pay',
      // Two consonants or two vowels before the ending: no e either.
      ended: 'end',
      added: 'add',
      aimed: 'aim',
      acted: 'act',
      // Five letters or more: the final e goes from every form, as before, but where the word
      // without it is another word (`plane`, `plan`; `united`, `unit`).
      plane: 'plane',
      planes: 'plane',
      planing: 'plane',
      plan: 'plan',
      planning: 'plan',
      quite: 'quite',
      quit: 'quit',
      theme: 'theme',
      shining: 'shine',
      scared: 'scare',
      scarred: 'scar',
      staring: 'stare',
      starring: 'star',
      united: 'unite',
      unit: 'unit',
      units: 'unit',
      range: 'range',
      ranging: 'range',
      write: 'writ',
      writing: 'writ',
      update: 'updat',
      updated: 'updat',
      // An -eed word is a base of its own, which loses -ed in every form (it always did from the
      // base), unless it is the -ed form of an -ee verb.
      speed: 'spe',
      speeds: 'spe',
      speeding: 'spe',
      speeded: 'spe',
      succeed: 'succ',
      succeeded: 'succ',
      succeeding: 'succ',
      proceed: 'proc',
      proceeding: 'proc',
      exceed: 'exce',
      exceeded: 'exce',
      breeding: 'bre',
      bleeding: 'ble',
      need: 'need',
      needed: 'need',
      feeding: 'feed',
      agreed: 'agre',
      freed: 'free',
      guaranteed: 'guarante',
      decreed: 'decre',
      refereed: 'refere',
      // -es after sh is the plural's; after s it is mostly the base's, but not that of bus and gas.
      ashes: 'ash',
      buses: 'bus',
      gases: 'gas',
      churches: 'church',
      wishes: 'wish',
      losses: 'loss',
      houses: 'hous',
      causes: 'caus',
      cases: 'case',
      axes: 'axe',
      aches: 'ache',
      // `bit` is mostly the noun ("a bit of", "64-bit"), not `bite`'s.
      bit: 'bit',
      bits: 'bit',
      // `lay` is the verb lay ("lay off", "lay-it-anywhere"), not `lie`'s past, and `laid` is its.
      lay: 'lay',
      lays: 'lay',
      laying: 'lay',
      laid: 'lay',
      lie: 'lie',
      lying: 'lie',
      // Irregular forms, -ies and the derivations, as before.
      used: 'use',
      using: 'use',
      studies: 'study',
      connection: 'connect',
      relational: 'relat',
    };
    const got = Object.fromEntries(Object.keys(table).map((w) => [w, stem(w)]));
    expect(got).toEqual(table);
  });

  it('gives a base and its forms one stem, and keeps apart the words they were mistaken for', () => {
    const meet = [
      ['vote', 'votes', 'voted', 'voting'],
      ['code', 'codes', 'coded', 'coding'],
      ['note', 'notes', 'noted', 'noting'],
      ['rate', 'rates', 'rated', 'rating'],
      ['hope', 'hopes', 'hoped', 'hoping'],
      ['bite', 'bites', 'biting', 'bitten'],
      ['use', 'uses', 'used', 'using'],
      ['hop', 'hops', 'hopped', 'hopping'],
      ['rat', 'rats', 'ratted'],
      ['speed', 'speeds', 'speeded', 'speeding'],
      ['succeed', 'succeeds', 'succeeded', 'succeeding'],
      ['proceed', 'proceeds', 'proceeded', 'proceeding'],
      ['exceed', 'exceeds', 'exceeded', 'exceeding'],
      ['breed', 'breeds', 'breeding'],
      ['bleed', 'bleeds', 'bleeding'],
      ['agree', 'agrees', 'agreed', 'agreeing'],
      ['disagree', 'disagrees', 'disagreed', 'disagreeing'],
      ['free', 'frees', 'freed', 'freeing'],
      ['guarantee', 'guarantees', 'guaranteed', 'guaranteeing'],
      ['decree', 'decrees', 'decreed', 'decreeing'],
      ['referee', 'referees', 'refereed', 'refereeing'],
      ['bus', 'buses'],
      ['gas', 'gases'],
      ['church', 'churches'],
      ['wish', 'wishes', 'wished', 'wishing'],
      ['loss', 'losses'],
      ['house', 'houses', 'housed', 'housing'],
      ['cause', 'causes', 'caused', 'causing'],
      ['horse', 'horses'],
      ['case', 'cases'],
      ['ache', 'aches'],
      ['bit', 'bits'],
      ['lay', 'lays', 'laid', 'laying'],
      ['lie', 'lies', 'lying', 'lied'],
      ['plane', 'planes', 'planed', 'planing'],
      ['shine', 'shines', 'shining'],
      ['scare', 'scares', 'scared', 'scaring'],
      ['stare', 'stares', 'stared', 'staring'],
      ['probe', 'probes', 'probed', 'probing'],
      ['theme', 'themes', 'themed'],
      ['unite', 'unites', 'united', 'uniting'],
      ['range', 'ranges', 'ranged', 'ranging'],
      ['route', 'routes', 'routed', 'routing'],
    ];
    for (const forms of meet) for (const form of forms) expect(stem(form), `${form} with ${forms[0]}`).toBe(stem(forms[0]));
    const apart = [
      ['note', 'not'],
      ['noted', 'not'],
      ['rate', 'rat'],
      ['rated', 'rat'],
      ['rating', 'rats'],
      ['coded', 'cod'],
      ['coding', 'cod'],
      ['hope', 'hop'],
      ['hoped', 'hopped'],
      ['hoping', 'hopping'],
      ['cared', 'car'],
      ['use', 'us'],
      ['based', 'base'],
      ['seed', 'see'],
      ['feed', 'fee'],
      ['creed', 'cree'],
      ['succeed', 'success'],
      ['exceed', 'excess'],
      ['proceed', 'process'],
      ['cases', 'cas'],
      ['roses', 'ros'],
      ['aches', 'ach'],
      ['bit', 'bite'],
      ['bits', 'bites'],
      ['lay', 'lie'],
      ['laid', 'lied'],
      ['plane', 'plan'],
      ['planes', 'plans'],
      ['planing', 'planning'],
      ['quite', 'quit'],
      ['theme', 'them'],
      ['shame', 'sham'],
      ['shine', 'shin'],
      ['spite', 'spitting'],
      ['probe', 'prob'],
      ['scared', 'scar'],
      ['staring', 'starring'],
      ['united', 'unit'],
      ['range', 'rang'],
      ['route', 'rout'],
    ];
    for (const [a, b] of apart) expect(stem(a), `${a} apart from ${b}`).not.toBe(stem(b));
  });

  it('gives every short base with a final e in the corpora the stem of its forms there, and not that of the word without the e', () => {
    const vocab = corpusWords();
    expect(vocab.size).toBeGreaterThan(10_000);
    // Irregular forms are their base's (`rose` is `rise`, `roses` the flower).
    const shortBases = [...vocab.keys()].filter((base) => SHORT_E_BASE.test(base) && !irregularBase(base));
    const { pairs, missed } = unmet(vocab, shortBases, (base) => [`${base}s`, `${base}d`, `${base.slice(0, -1)}ing`]);
    expect([...missed, ...mistaken(vocab, shortBases)]).toEqual([]);
    expect(pairs).toBeGreaterThan(100);
  });

  it('keeps every five-letter base with a final e in the corpora apart from the word without the e there, but for these', () => {
    const vocab = corpusWords();
    const bases = [...vocab.keys()].filter((base) => base.length === 5 && base.endsWith('e') && !irregularBase(base));
    // Names and words of other languages (`seine`, `matte`, `cooke`), forms of the base (`slid`,
    // `agreeing`, `borne`), and `state` (kept whole, it met `statement`) and `suite` (`suited` is the suit's).
    const known = [
      'agreeing meets agree (agre)',
      'born meets borne (born)',
      'cook meets cooke (cook)',
      'dell meets delle (dell)',
      'fort meets forte (fort)',
      'jahr meets jahre (jahr)',
      'jami meets jamie (jami)',
      'lain meets laine (lain)',
      'mass meets masse (mass)',
      'matt meets matte (matt)',
      'mess meets messe (mess)',
      'nest meets neste (nest)',
      'part meets parte (part)',
      'roll meets rolle (roll)',
      'sein meets seine (sein)',
      'seit meets seite (seit)',
      'slid meets slide (slid)',
      'stat meets state (stat)',
      'suit meets suite (suit)',
      'wolf meets wolfe (wolf)',
    ];
    expect(mistaken(vocab, bases).sort()).toEqual(known);
  });

  it('gives every -eed word of the corpora the stem of its forms there, and every -ee verb that of its -ed form', () => {
    const vocab = corpusWords();
    const words = [...vocab.keys()];
    const eedWords = words.filter((word) => word.length > 4 && word.endsWith('eed') && !vocab.has(word.slice(0, -1)));
    const eeVerbs = words.filter((word) => word.length > 3 && word.endsWith('ee'));
    const eed = unmet(vocab, eedWords, (word) => [`${word}s`, `${word}ed`, `${word}ing`]);
    const ee = unmet(vocab, eeVerbs, (word) => [`${word}s`, `${word}d`, `${word}ing`]);
    expect([...eed.missed, ...ee.missed]).toEqual([]);
    expect(eed.pairs + ee.pairs).toBeGreaterThan(5);
  });

  it('gives American and British spellings one stem, each form of them, and keeps programme with program', () => {
    const pairs = [
      ['license', 'licence'],
      ['licenses', 'licences'],
      ['licensed', 'licence'],
      ['color', 'colour'],
      ['colored', 'coloured'],
      ['neighborhood', 'neighbourhood'],
      ['organize', 'organise'],
      ['organization', 'organisation'],
      ['unionized', 'unionised'],
      ['realizing', 'realising'],
      ['analyze', 'analyse'],
      ['center', 'centre'],
      ['theaters', 'theatres'],
      ['traveled', 'travelled'],
      ['canceling', 'cancelling'],
      ['gray', 'grey'],
      ['catalog', 'catalogue'],
      ['programme', 'program'],
      ['programmes', 'programming'],
      ['defense', 'defence'],
    ];
    expect(pairs.filter(([a, b]) => stem(a) !== stem(b)).map(([a, b]) => `${a} (${stem(a)}) ≠ ${b} (${stem(b)})`)).toEqual([]);
    // Words the lists' endings must not reach.
    expect(stem('meter')).not.toBe(stem('metre'));
    expect(stem('colon')).not.toBe(stem('colour'));
    expect(stem('size')).toBe('size');
  });

  it('gives a verb in -ise and its noun in -ism or -is one stem, and leaves short words in -is whole', () => {
    const pairs = [
      ['criticise', 'criticism'],
      ['criticised', 'critics'],
      ['criticize', 'criticism'],
      ['analysis', 'analyse'],
      ['emphasis', 'emphasised'],
      ['synthesis', 'synthesize'],
      ['privatisation', 'privatise'],
    ];
    expect(pairs.filter(([a, b]) => stem(a) !== stem(b)).map(([a, b]) => `${a} (${stem(a)}) ≠ ${b} (${stem(b)})`)).toEqual([]);
    for (const word of ['crisis', 'basis', 'tennis', 'thesis']) expect(stem(word)).toBe(word);
  });

  it('gives every -es plural of the corpora after sh, ch, s or z the stem of its base there (x apart, docs/benchmarks.md)', () => {
    const vocab = corpusWords();
    // A base that ends in e itself (`cases`, `aches`) is the -s plural's, which the table checks.
    const bases = [...vocab.keys()]
      .filter((plural) => /(sh|ch|s|z)es$/.test(plural) && !vocab.has(plural.slice(0, -1)))
      .map((plural) => plural.slice(0, -2))
      .filter((base) => vocab.has(base));
    const { pairs, missed } = unmet(vocab, bases, (base) => [`${base}es`]);
    expect(missed).toEqual([]);
    expect(pairs).toBeGreaterThan(30);
  });
});

/**
 * For each of `bases` (ending in e), the words it may be mistaken for that the corpora hold,
 * irregular forms aside: the word without the e and that word's -ed and -ing forms (`plan`,
 * `planned`, `planning` for `plane`), each that gets the base's stem.
 */
function mistaken(vocab: Map<string, number>, bases: string[]): string[] {
  const met: string[] = [];
  for (const base of bases) {
    const bare = base.slice(0, -1);
    const doubled = bare + bare.slice(-1);
    for (const other of [bare, `${doubled}ed`, `${doubled}ing`]) {
      if (vocab.has(other) && !irregularBase(other) && stem(other) === stem(base)) met.push(`${other} meets ${base} (${stem(base)})`);
    }
  }
  return met;
}

/**
 * For each of `bases`, the forms `formsOf` names that the corpora hold, irregular forms aside: how
 * many there were, and each that does not get its base's stem.
 */
function unmet(vocab: Map<string, number>, bases: string[], formsOf: (base: string) => string[]): { pairs: number; missed: string[] } {
  let pairs = 0;
  const missed: string[] = [];
  for (const base of bases) {
    for (const form of formsOf(base)) {
      if (!vocab.has(form) || irregularBase(form)) continue;
      pairs++;
      if (stem(form) !== stem(base)) missed.push(`${form} (${stem(form)}) ≠ ${base} (${stem(base)})`);
    }
  }
  return { pairs, missed };
}
