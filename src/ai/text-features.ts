/**
 * Text normalisation for the local hashing embedder: Unicode-aware tokenisation, lowercasing,
 * diacritic folding, an English stopword list (question words included, since a question's
 * "how many" says nothing about which passage holds the answer) and a light Porter-like stemmer.
 * Pure functions, no dependencies.
 */

/** Function words and question words that carry no topic. A fixed list stands in for IDF. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all also am an and any are aren as at be because been before being below ' +
    'between both but by can cannot could couldn did didn do does doesn doing don down during each either else ' +
    'ever every few for from further had hadn has hasn have haven having he her here hers herself him himself his ' +
    'how however i if in into is isn it its itself just let ll me more most much must my myself neither no nor not ' +
    'now of off on once one only or other ought our ours ourselves out over own per quite rather re really s same ' +
    'shall she should shouldn since so some such t than that the their theirs them themselves then there these ' +
    'they this those though through thus to too under until up upon us ve very was wasn we were weren what whatever ' +
    'when whenever where whereas wherever whether which while who whom whose why will with within without won would ' +
    'wouldn yet you your yours yourself yourselves d m o y ' +
    'many kind type name named called term'
  ).split(' '),
);

const COMBINING_MARKS = /\p{M}+/gu;
const TOKEN = /[\p{L}\p{N}]+/gu;

/** Lowercased tokens with diacritics folded (`Café` → `cafe`). Keeps numbers. */
export function tokenize(text: string): string[] {
  return text.normalize('NFKD').replace(COMBINING_MARKS, '').toLowerCase().match(TOKEN) ?? [];
}

const VOWEL = /[aeiouy]/;

function isConsonant(w: string, i: number): boolean {
  const c = w[i];
  if ('aeiou'.includes(c)) return false;
  if (c === 'y') return i === 0 || !isConsonant(w, i - 1);
  return true;
}

/** Porter's measure m: the number of vowel-consonant sequences in `stem`. */
function measure(stem: string): number {
  let m = 0;
  let i = 0;
  const n = stem.length;
  while (i < n && isConsonant(stem, i)) i++;
  while (i < n) {
    while (i < n && !isConsonant(stem, i)) i++;
    if (i >= n) break;
    while (i < n && isConsonant(stem, i)) i++;
    m++;
  }
  return m;
}

function hasVowel(stem: string): boolean {
  for (let i = 0; i < stem.length; i++) if (!isConsonant(stem, i)) return true;
  return false;
}

/** Ends consonant-vowel-consonant, the last not w, x or y (hop, not hoop). */
function endsCvc(w: string): boolean {
  const n = w.length;
  if (n < 3) return false;
  return isConsonant(w, n - 3) && !isConsonant(w, n - 2) && isConsonant(w, n - 1) && !'wxy'.includes(w[n - 1]);
}

function doubleConsonant(w: string): boolean {
  const n = w.length;
  return n >= 2 && w[n - 1] === w[n - 2] && isConsonant(w, n - 1);
}

function step1(w: string): string {
  if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('ies')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);

  if (w.endsWith('eed')) {
    if (measure(w.slice(0, -3)) > 0) w = w.slice(0, -1);
    return w;
  }
  for (const suffix of ['ed', 'ing']) {
    if (!w.endsWith(suffix)) continue;
    const stem = w.slice(0, -suffix.length);
    if (!hasVowel(stem)) return w;
    if (/(at|bl|iz)$/.test(stem)) return stem + 'e';
    if (doubleConsonant(stem) && !/[lsz]$/.test(stem)) return stem.slice(0, -1);
    if (measure(stem) === 1 && endsCvc(stem)) return stem + 'e';
    return stem;
  }
  if (w.endsWith('y') && w.length > 2 && hasVowel(w.slice(0, -1))) w = w.slice(0, -1) + 'i';
  return w;
}

/** Derivational suffixes folded onto a shorter form when the stem stays long enough (Porter steps 2–4, condensed). */
const SUFFIXES: [string, string, number][] = [
  ['ational', 'ate', 0],
  ['tional', 'tion', 0],
  ['ization', 'ize', 0],
  ['iveness', 'ive', 0],
  ['fulness', 'ful', 0],
  ['ousness', 'ous', 0],
  ['biliti', 'ble', 0],
  ['aliti', 'al', 0],
  ['iviti', 'ive', 0],
  ['ation', 'ate', 0],
  ['alism', 'al', 0],
  ['ement', '', 1],
  ['ment', '', 1],
  ['ness', '', 0],
  ['ance', '', 1],
  ['ence', '', 1],
  ['able', '', 1],
  ['ible', '', 1],
  ['ator', 'ate', 0],
  ['alli', 'al', 0],
  ['entli', 'ent', 0],
  ['ousli', 'ous', 0],
  ['eli', 'e', 0],
  ['li', '', 1],
  ['ful', '', 0],
  ['ism', '', 1],
  ['ist', '', 1],
  ['iti', '', 1],
  ['ive', '', 1],
  ['ize', '', 1],
  ['ous', '', 1],
  ['ate', '', 1],
  ['al', '', 1],
  ['er', '', 1],
  ['ic', '', 1],
];

function step2(w: string): string {
  for (const [suffix, replacement, minMeasure] of SUFFIXES) {
    if (!w.endsWith(suffix)) continue;
    const stem = w.slice(0, -suffix.length);
    return measure(stem) > minMeasure ? stem + replacement : w;
  }
  // -ion only after s or t: connection → connect, decision → decis (as decisive → decis).
  if (/[st]ion$/.test(w) && measure(w.slice(0, -3)) > 1) return w.slice(0, -3);
  return w;
}

/**
 * A light Porter-like stemmer: plural, -ed/-ing, -y and common derivational suffixes. Words of
 * three letters or fewer, and anything with a digit, are left alone.
 */
export function stem(word: string): string {
  if (word.length <= 3 || !VOWEL.test(word) || /\d/.test(word)) return word;
  let w = step1(word);
  w = step2(w);
  if (w.endsWith('e') && w.length > 4 && measure(w.slice(0, -1)) > 1) w = w.slice(0, -1);
  return w;
}
