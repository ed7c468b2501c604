/**
 * What the page sends for what the member wrote: a question for the assistant is marked as the room
 * reads it (docs/protocol.md), and the room's length limit applies to the text as sent, mark
 * included. The composer counts that text, so what it says fits is what the server takes.
 */

/**
 * A text the room takes as a question for the assistant: it starts with `@ai ` or `/ask `. Read as
 * `@ai ` only, a `/ask` question showed no "Only me" and went to the whole room, though it was on.
 */
export const ASK_PREFIX = /^(@ai|\/ask)\s/i;
/** Put before a question asked with the "Ask AI" switch: the room posts a public question so. */
export const ASK_MARK = '@ai ';

/**
 * The text `body` (trimmed) goes out as: a private question (`isPrivate`, and asking) without its
 * prefix, in an `ask` frame; a question asked with the switch (`ask`) and not marked, marked;
 * anything else as written.
 */
export function outgoingText(body: string, ask: boolean, isPrivate: boolean): string {
  const marked = ASK_PREFIX.test(body);
  if (isPrivate && (ask || marked)) return body.replace(ASK_PREFIX, '');
  return ask && !marked ? `${ASK_MARK}${body}` : body;
}
