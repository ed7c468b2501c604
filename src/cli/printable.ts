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

/**
 * `value` as one line of JSON safe for a terminal: JSON escapes the C0 controls only, so DEL, the
 * C1 controls (U+009B is CSI) and the bidi embeddings, overrides and isolates are escaped as `\u…`
 * too. It parses to the same value.
 */
export function printableJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
