/**
 * Quotes inside message texts. Clients render a message's text as markdown, system and assistant
 * messages included, so what the server quotes in one (a thread's title, a member's message in a
 * listing) is escaped to show as typed, not as a link or emphasis under that author's name; a
 * client that shows such a text as plain text (a command's reply in a status line) takes the
 * escapes out again.
 */

/** Characters that could start inline markup in a message: emphasis, code, a link, an entity, an escape. */
const MARKUP = /[\\`*_[\]&<>]/;
const MARKUPS = new RegExp(MARKUP.source, 'g');
const ESCAPED = new RegExp(`\\\\(${MARKUP.source})`, 'g');

/** `text` backslash-escaped for a message: one line inside a sentence (block markup needs a line's start). */
export function markdownLiteral(text: string): string {
  return MARKUP.test(text) ? text.replace(MARKUPS, '\\$&') : text;
}

/** A message text whose quotes markdownLiteral escaped, as plain text. */
export function withoutLiteralEscapes(text: string): string {
  return text.includes('\\') ? text.replace(ESCAPED, '$1') : text;
}
