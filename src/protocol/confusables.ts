/**
 * Text as a reader sees it, for checks of what untrusted text poses as (a page title read as a
 * comment's label, a member's name read as an order): compatibility forms folded (fullwidth,
 * mathematical, circled letters), combining marks and invisible characters dropped, and letters
 * of other scripts that look like Latin ones read as those. `Ｃ\u0301omment`, `Сomment` with a
 * Cyrillic `С` and `𝐂𝐨𝐦𝐦𝐞𝐧𝐭` all read `comment`.
 */

/**
 * Look-alikes of Latin letters that NFKD leaves as they are (a subset of Unicode's
 * confusables.txt): Cyrillic, Greek, Armenian and Cherokee letters and Latin small capitals, by
 * case, since a capital may look like another letter than its small form (Greek `Η` is an `H`,
 * `η` an `n`). The digit `0` reads as `o`.
 */
const LATIN_LOOKALIKES = new Map<string, string>(
  [
    // Cyrillic.
    ['АВСЕНІЈКМОРЅТХУҮԀԚԜӀ', 'abcehijkmopstxyydqwl'],
    ['авсеһніјкморѕтхуүԁԛԝӏьѵ', 'abcehhijkmopstxyydqwlbv'],
    // Greek.
    ['ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ', 'abezhikmnoptyx'],
    ['αεικνορτυχϲϳ', 'aeikvoptuxcj'],
    // Armenian and Cherokee.
    ['ՕՍԼօսոհզց', 'oulounhqg'],
    ['ᎪᏴᏟᎬᎻᎫᏦᎷᏢᏚᎢᏔ', 'abcehjkmpstw'],
    // Latin small capitals and other letters; the digit.
    ['ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢıȷɑɡɩƅǀ0', 'abcdefghijklmnoprstuvwyzijagiblo'],
  ].flatMap(([from, to]) => [...from].map((ch, i): [string, string] => [ch, to[i]])),
);

/** Combining marks, format characters (zero-width, bidi, soft hyphen) and the other default-ignorable code points. */
const UNSEEN = /[\p{M}\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;

/** `text` in lower case as it reads in Latin letters (see the module comment); for tests of what it says, never for display. */
export function readAsLatin(text: string): string {
  let out = '';
  for (const ch of text.normalize('NFKD').replace(UNSEEN, '')) out += LATIN_LOOKALIKES.get(ch) ?? ch;
  return out.toLowerCase();
}
