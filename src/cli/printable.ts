/**
 * Text from outside (a feed's links, a page's errors, a source's last failure) made safe to write
 * to a terminal: C0 controls other than tab and newline, DEL, C1 controls and the bidi embedding,
 * override and isolate controls are shown as escapes (`\x1b`, `\u202e`) instead of being sent. A
 * feed entry whose link held `ESC ] 0 ; … BEL` retitled the operator's terminal when `salon ingest`
 * printed the failure, and other sequences move the cursor, clear the screen or recolour what follows.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`;
  });
}
