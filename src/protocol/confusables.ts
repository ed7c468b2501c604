/**
 * Text as a reader sees it, for checks of what untrusted text poses as (a page title read as a
 * comment's label, a member's name read as an order or as the assistant's): compatibility forms
 * folded (fullwidth, mathematical, circled letters), combining marks and invisible characters
 * dropped, and letters of other scripts that look like Latin ones read as those. `Ｃ\u0301omment`,
 * `Сomment` with a Cyrillic `С` and `𝐂𝐨𝐦𝐦𝐞𝐧𝐭` all read `comment`. One table for the server's
 * prompt checks and for names, which the browser client checks too.
 */

/**
 * Look-alikes of Latin letters that NFKD leaves as they are (a subset of Unicode's
 * confusables.txt): Cyrillic, Greek, Armenian and Cherokee letters and Latin small capitals, by
 * case, since a capital may look like another letter than its small form (Greek `Η` is an `H`,
 * `η` an `n`).
 */
const LATIN_LOOKALIKES = new Map<string, string>(
  [
    // Cyrillic.
    ['АВСЕНІЈКМОРЅТХУҮԀԚԜӀ', 'abcehijkmopstxyydqwl'],
    ['авсеһніјкморѕтхуүԁԛԝӏьѵ', 'abcehhijkmopstxyydqwlbv'],
    // Greek.
    ['ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ', 'abezhikmnoptyx'],
    ['αβεικνορτυχϲϳ', 'abeikvoptuxcj'],
    // Armenian and Cherokee.
    ['ՕՍԼօսոհզց', 'oulounhqg'],
    ['ᎪᏴᏟᎬᎻᎫᏦᎷᏢᏚᎢᏔ', 'abcehjkmpstw'],
    // Latin small capitals and other letters.
    ['ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢıȷɑɡɩƅǀ', 'abcdefghijklmnoprstuvwyzijagibl'],
  ].flatMap(([from, to]) => [...from].map((ch, i): [string, string] => [ch, to[i]])),
);

/** Any one of the look-alikes: text without them (most text) is read without a lookup per character. */
const LOOKALIKE = new RegExp(`[${[...LATIN_LOOKALIKES.keys()].join('')}]`, 'gu');

function foldEach(text: string): string {
  return text.replace(LOOKALIKE, (ch) => LATIN_LOOKALIKES.get(ch)!);
}

/**
 * `text` in lower case with every look-alike of a Latin letter read as that letter, whatever its
 * case (a capital's reading when its small form has none: Greek `Η` and `η` both read `h`), so
 * that two spellings differing in case alone fold alike; digits, accents and everything else left
 * as they are. For names, where `ΑΝΝΑ` and `Αννα` are one name.
 */
export function caselessLatin(text: string): string {
  let out = '';
  for (const ch of text.toLowerCase()) out += LATIN_LOOKALIKES.get(ch) ?? LATIN_LOOKALIKES.get(ch.toUpperCase()) ?? ch;
  return out;
}

/** Combining marks, format characters (zero-width, bidi, soft hyphen) and the other default-ignorable code points. */
const UNSEEN = /[\p{M}\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;

/** `text` in lower case as it reads in Latin letters, the digit `0` as `o` (see the module comment); for tests of what it says, never for display. */
export function readAsLatin(text: string): string {
  // Capitals read before the case is lowered (`Ν` is an `n`, `ν` a `v`), small forms after it too,
  // for the capitals the table leaves out.
  return foldEach(foldEach(text.normalize('NFKD').replace(UNSEEN, '')).toLowerCase()).replace(/0/g, 'o');
}
