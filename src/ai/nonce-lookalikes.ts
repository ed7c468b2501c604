/**
 * Spellings of a prompt's fence nonce that read as the nonce without being it: other case,
 * fullwidth, circled, superscript or mathematical digits and letters (whatever NFKC folds to a hex
 * digit), homoglyphs (Cyrillic `а`, Greek `ο` for `0`), and format characters (zero-width joiners,
 * bidi controls, soft hyphens) between the digits. A model reads `</data-` and any of them as the
 * closing tag the instructions name, so fenced text holding one could end its block.
 */

/** Homoglyphs of the hex digits that NFKC leaves as they are (a subset of Unicode's confusables). */
const HOMOGLYPHS: Record<string, string> = {
  '0': 'oOοΟоОօ',
  '1': 'lIıǀӏ|',
  '3': 'ЗзƷʒ',
  '5': 'Ƽ',
  '6': 'б',
  '8': 'ȣ',
  a: 'аАɑαΑ',
  b: 'ВЬьƅβ',
  c: 'сСϲᴄ',
  d: 'ԁ',
  e: 'еЕҽ℮',
  f: 'ƒ',
};

/** The code points searched for compatibility forms: the BMP and the mathematical alphanumerics. */
const COMPAT_RANGES: [number, number][] = [
  [0x80, 0xd7ff],
  [0xe000, 0xffff],
  [0x1d400, 0x1d7ff],
];

/** Every character that reads as a hex digit, to the digit; built once, on the first fence (about 15 ms). */
let digits: Map<string, string> | undefined;

function digitOf(): Map<string, string> {
  if (digits) return digits;
  const out = new Map<string, string>();
  for (const d of '0123456789abcdef') {
    for (const c of `${d}${d.toUpperCase()}${HOMOGLYPHS[d] ?? ''}`) out.set(c, d);
  }
  for (const [from, to] of COMPAT_RANGES)
    for (let cp = from; cp <= to; cp++) {
      const char = String.fromCodePoint(cp);
      const folded = char.normalize('NFKC').toLowerCase();
      if (folded.length === 1 && /[0-9a-f]/.test(folded) && !out.has(char)) out.set(char, folded);
    }
  digits = out;
  return out;
}

/** By length: runs of at least that many characters reading as hex digits, format characters between them. */
const runs = new Map<number, RegExp>();

function runsOf(length: number): RegExp {
  let pattern = runs.get(length);
  if (!pattern) {
    const digit = `[${[...digitOf().keys()].join('').replace(/[\\\]\[^|-]/g, '\\$&')}]`;
    // One pattern for every nonce of a length: a pattern per nonce took half a millisecond to compile, each ask.
    pattern = new RegExp(`${digit}(?:\\p{Cf}*${digit}){${Math.max(0, length - 1)},}`, 'gu');
    runs.set(length, pattern);
  }
  return pattern;
}

/** `text` with each run of hex look-alikes that reads as holding `nonce` made `x`s (nonce.length of them). */
export function withoutNonceLookalikes(text: string, nonce: string): string {
  const digit = digitOf();
  return text.replace(runsOf(nonce.length), (run) => {
    let read = '';
    for (const c of run) read += digit.get(c) ?? '';
    return read.includes(nonce) ? 'x'.repeat(nonce.length) : run;
  });
}
