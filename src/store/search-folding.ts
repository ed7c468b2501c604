/**
 * How the PostgreSQL store cuts and folds text for full-text search, in JS rather than in the
 * database (migration 16): PostgreSQL's parser lower-cases under the database's LC_CTYPE, which
 * under `C` leaves every non-ASCII capital as it is (a line saying "Москве" was never found by
 * "москве"), it keeps accents, which SQLite's unicode61 tokenizer drops ("ecole" found "École" on
 * SQLite only), and it keeps addresses, URLs and numbers whole. Its own module so that the schema's
 * migrations and the search queries share it without importing each other.
 */

/**
 * A Latin letter with the combining accents of its decomposition (é is e and U+0301): unicode61
 * drops the accents of Latin letters only (й stays й).
 */
const ACCENTED_LATIN = /(\p{Script=Latin})[\u0300-\u036f]+/gu;
const NON_ASCII = /[^\0-\x7f]/;
/** What separates words for unicode61 (and queryTerms): all but letters, digits and private-use characters. */
const NOT_WORD = /[^\p{L}\p{N}\p{Co}]+/gu;

/**
 * `text` as the full-text columns index it and queries search it: its words as SQLite's unicode61
 * tokenizer cuts and folds them, in lower case (JS's, whatever the database's locale), without
 * accents, one space between. PostgreSQL's parser would keep an address, a URL, a host, a path, a
 * decimal or a version as one token ("ann@example.org", "3.14"), which a search for one of its
 * words ("example", "14") never matched.
 */
export function searchFolded(text: string): string {
  let folded = text.toLowerCase();
  if (NON_ASCII.test(folded)) folded = folded.normalize('NFD').replace(ACCENTED_LATIN, '$1').normalize('NFC');
  return folded.replace(NOT_WORD, ' ');
}
