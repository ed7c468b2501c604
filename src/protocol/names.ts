/**
 * Display names, as the server accepts them and the browser client offers them: one length, one
 * cleaning, and the names no member may take because they would pass for the assistant or the
 * system.
 */

/** Longest display name, in characters (UTF-16 code units, as `maxlength` counts them). */
export const MAX_NAME_CHARS = 32;

/** Control characters, plus invisible and bidi-override characters that let one name pose as another. */
const FORBIDDEN_IN_NAME = /[\p{Cc}\u00ad\u061c\u180e\u200b\u200c\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]/u;

/** Whether `text` holds a control, invisible or bidi-override character (what names may not hold; thread titles neither). */
export function hasHiddenCharacters(text: string): boolean {
  return FORBIDDEN_IN_NAME.test(text);
}

/** A display name: trimmed, 1–MAX_NAME_CHARS characters, nothing invisible. Null when unusable. */
export function cleanName(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const name = raw.normalize('NFC').trim();
  if (name.length < 1 || name.length > MAX_NAME_CHARS || FORBIDDEN_IN_NAME.test(name)) return null;
  return name;
}

/** Names that would pass for the assistant (`Salon AI`), the system or the people running it. */
const RESERVED_NAMES = ['AI', 'Assistant', 'Salon', 'Salon AI', 'Salon Assistant', 'System', 'Admin', 'Administrator', 'Moderator'];

/** Cyrillic and Greek letters that look like Latin ones (NFKC leaves them alone). */
const LOOKALIKES: Record<string, string> = {
  а: 'a',
  в: 'b',
  е: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ӏ: 'l',
  α: 'a',
  β: 'b',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  ѵ: 'v',
};

/**
 * The form names are compared in: letters and digits only, lowercased, lookalikes folded (`0` is
 * `o`; `1`, `l` and `i` are one letter), so `Ｓａｌｏｎ Ａ.Ｉ`, `ѕystem`, `A l` and
 * `a s s i s t a n t` all meet the names they imitate.
 */
export function nameKey(name: string): string {
  let out = '';
  for (const ch of name.normalize('NFKC').toLowerCase()) {
    const folded = LOOKALIKES[ch] ?? ch;
    if (/[\p{L}\p{N}]/u.test(folded)) out += folded;
  }
  return out.replace(/0/g, 'o').replace(/[1l]/g, 'i');
}

const RESERVED_KEYS = new Set(RESERVED_NAMES.map(nameKey));

/** Whether `name` would pass for the assistant, the system or the people running Salon. */
export function isReservedName(name: string): boolean {
  return RESERVED_KEYS.has(nameKey(name));
}
