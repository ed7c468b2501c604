/**
 * Spellings of a prompt's fence nonce that read as the nonce without being it: other case,
 * fullwidth, circled, superscript or mathematical digits and letters (whatever NFKC folds to a hex
 * digit), homoglyphs (Cyrillic `а`, Greek `ο` for `0`), and format characters (zero-width joiners,
 * bidi controls, soft hyphens) between the digits. A model reads `</data-` and any of them as the
 * closing tag the instructions name, so fenced text holding one could end its block.
 */

/** Homoglyphs of the hex digits that NFKC leaves as they are (a subset of Unicode's confusables). */
const HOMOGLYPHS: Record<string, string> = {
  '0': 'oοоօ',
  '1': 'lIıǀӏ|',
  '3': 'ЗзƷʒ',
  '5': 'Ƽ',
  '6': 'б',
  '8': 'ȣ',
  a: 'аɑα',
  b: 'ЬьƅᏏ',
  c: 'сϲᴄ',
  d: 'ԁ',
  e: 'еҽ℮',
  f: 'ƒ',
};

/** The code points searched for compatibility forms: the BMP and the mathematical alphanumerics. */
const COMPAT_RANGES: [number, number][] = [
  [0x80, 0xd7ff],
  [0xe000, 0xffff],
  [0x1d400, 0x1d7ff],
];

let variants: Map<string, string> | undefined;

/** Per hex digit, every character that reads as it; built once, on the first fence (about 15 ms). */
function digitVariants(): Map<string, string> {
  if (variants) return variants;
  const out = new Map<string, string>([...'0123456789abcdef'].map((d) => [d, `${d}${d.toUpperCase()}${HOMOGLYPHS[d] ?? ''}`]));
  for (const [from, to] of COMPAT_RANGES)
    for (let cp = from; cp <= to; cp++) {
      const char = String.fromCodePoint(cp);
      const folded = char.normalize('NFKC').toLowerCase();
      if (folded.length === 1 && out.has(folded)) out.set(folded, out.get(folded)! + char);
    }
  variants = out;
  return out;
}

let last: { nonce: string; pattern: RegExp } | undefined;

/**
 * A global pattern matching `nonce` and its look-alikes in any text. The last one is kept: every
 * block of one prompt is fenced with the same nonce.
 */
export function nonceLookalikes(nonce: string): RegExp {
  if (last?.nonce === nonce) return last.pattern;
  const all = digitVariants();
  const digit = (d: string) => `[${escapeClass(all.get(d.toLowerCase()) ?? d)}]`;
  const pattern = new RegExp([...nonce].map(digit).join('\\p{Cf}*'), 'giu');
  last = { nonce, pattern };
  return pattern;
}

function escapeClass(chars: string): string {
  return chars.replace(/[\\\]\[^|-]/g, '\\$&');
}
