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

/** A format character, allowed between the digits of a run. */
const FORMAT = /^\p{Cf}$/u;

/** What each ASCII character reads as (digitOf's answer, or '' for none): most fenced text is ASCII, read without a string per character. */
let asciiDigits: string[] | undefined;

function asciiDigitOf(): string[] {
  if (asciiDigits) return asciiDigits;
  const digit = digitOf();
  asciiDigits = Array.from({ length: 0x80 }, (_, code) => digit.get(String.fromCharCode(code)) ?? '');
  return asciiDigits;
}

/**
 * What the character at `i` reads as: its digit, '' for a format character, undefined for any
 * other; `width` is set to its length in UTF-16 units.
 */
function readAt(text: string, i: number, ascii: string[], digit: Map<string, string>, width: { n: number }): string | undefined {
  const code = text.charCodeAt(i);
  if (code < 0x80) {
    width.n = 1;
    return ascii[code] || undefined;
  }
  const c = String.fromCodePoint(text.codePointAt(i)!);
  width.n = c.length;
  return digit.get(c) ?? (FORMAT.test(c) ? '' : undefined);
}

/**
 * `text` with each run of hex look-alikes that reads as holding `nonce` made `x`s (nonce.length of
 * them). A run is look-alike digits with format characters between them, from its first digit to
 * its last. Walked by hand: the pattern it was, `digit(?:\p{Cf}*digit){n,}`, kept a backtrack entry
 * per digit and threw RangeError over megabytes of them (fetched text fenced into a prompt), and
 * bounding its count would cut a long run in pieces, a nonce across two of them kept. A run is
 * read into a string only once it holds as many digits as the nonce: in prose, runs are words
 * like `code` and `face`.
 */
export function withoutNonceLookalikes(text: string, nonce: string): string {
  const digit = digitOf();
  const ascii = asciiDigitOf();
  const width = { n: 0 };
  const parts: string[] = [];
  let copied = 0;
  let i = 0;
  while (i < text.length) {
    if (!readAt(text, i, ascii, digit, width)) {
      i += width.n;
      continue;
    }
    let digits = 0;
    let end = i;
    let j = i;
    while (j < text.length) {
      const d = readAt(text, j, ascii, digit, width);
      if (d === undefined) break;
      j += width.n;
      if (d) {
        digits++;
        end = j;
      }
    }
    if (digits >= nonce.length && readRun(text, i, end, ascii, digit).includes(nonce)) {
      parts.push(text.slice(copied, i), 'x'.repeat(nonce.length));
      copied = end;
    }
    i = end;
  }
  if (copied === 0) return text;
  parts.push(text.slice(copied));
  return parts.join('');
}

/** The digits the run `text[from, to)` reads as. */
function readRun(text: string, from: number, to: number, ascii: string[], digit: Map<string, string>): string {
  const width = { n: 0 };
  const read: string[] = [];
  for (let j = from; j < to; j += width.n) {
    const d = readAt(text, j, ascii, digit, width);
    if (d) read.push(d);
  }
  return read.join('');
}
