/**
 * Display names, as the server accepts them and the browser client offers them: one length, one
 * cleaning, and the names no member may take because they would pass for the assistant or the
 * system.
 */
import { hasOverlongCluster } from './clusters.js';
import { caselessLatin } from './confusables.js';

/** Longest display name, in characters (UTF-16 code units, as `maxlength` counts them). */
export const MAX_NAME_CHARS = 32;

/**
 * Control characters, line and paragraph separators, and every default-ignorable code point
 * (invisible by definition: soft hyphens, bidi controls, zero-width spaces, Hangul fillers, tag
 * characters, the combining grapheme joiner …) but the joiner and variation selectors emoji need,
 * plus the braille blank: what lets one name pose as another or look empty.
 */
const FORBIDDEN_IN_NAME = /(?![\u200D\uFE0E\uFE0F\u{E0020}-\u{E007F}])[\p{Cc}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800]/u;
/**
 * A joiner or variation selector outside an emoji sequence, or a tag character outside a flag's
 * tag sequence (🏴 followed by tags): invisible there.
 */
const STRAY_JOINER =
  /(?<![\p{Emoji}\p{Emoji_Component}])[\u200D\uFE0E\uFE0F]|\u200D(?!\p{Extended_Pictographic})|(?<![\u{1F3F4}\u{E0020}-\u{E007E}])[\u{E0020}-\u{E007F}]/u;

/**
 * Whether `text` holds a control, invisible or bidi-override character, or an overlong grapheme
 * cluster (what names may not hold; thread titles neither).
 */
export function hasHiddenCharacters(text: string): boolean {
  return FORBIDDEN_IN_NAME.test(text) || STRAY_JOINER.test(text) || hasOverlongCluster(text);
}

/** A display name: trimmed, 1–MAX_NAME_CHARS characters, nothing invisible. Null when unusable. */
export function cleanName(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const name = raw.normalize('NFC').trim();
  if (name.length < 1 || name.length > MAX_NAME_CHARS || hasHiddenCharacters(name)) return null;
  return name;
}

/** The assistant's name, on its messages and in the chat lines its model reads. */
export const ASSISTANT_NAME = 'Salon AI';

/** Names that would pass for the assistant (`Salon AI`), the system or the people running it. */
const RESERVED_NAMES = ['AI', 'Assistant', 'Salon', ASSISTANT_NAME, 'Salon Assistant', 'System', 'Admin', 'Administrator', 'Moderator'];

/**
 * The form names are compared in: letters and digits only, lowercased, lookalikes folded (`0` is
 * `o`; `1`, `l` and `i` are one letter; caselessLatin), so `Ｓａｌｏｎ Ａ.Ｉ`, `ѕystem`, `A l` and
 * `a s s i s t a n t` all meet the names they imitate.
 */
export function nameKey(name: string): string {
  let out = '';
  for (const ch of caselessLatin(name.normalize('NFKC'))) if (/[\p{L}\p{N}]/u.test(ch)) out += ch;
  return out.replace(/0/g, 'o').replace(/[1l]/g, 'i');
}

/**
 * The form in which two members' names are the same name (the second gets a suffix): compatibility
 * forms and case folded, variation selectors and tags dropped and lookalike letters folded, so `Аnа` in
 * Cyrillic letters cannot stand beside `Ana` as if it were them. Punctuation and digits still
 * tell names apart, unlike nameKey.
 */
export function sameNameKey(name: string): string {
  return caselessLatin(name.normalize('NFKC').replace(SELECTORS_AND_TAGS, ''));
}

const SELECTORS_AND_TAGS = /[\uFE0E\uFE0F\u{E0020}-\u{E007F}]/gu;

const RESERVED_KEYS = new Set(RESERVED_NAMES.map(nameKey));

/** Whether `name` would pass for the assistant, the system or the people running Salon. */
export function isReservedName(name: string): boolean {
  return RESERVED_KEYS.has(nameKey(name));
}
