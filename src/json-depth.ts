/**
 * How deep a JSON text nests, read before JSON.parse: parsing a few MB of `[[[[` holds the event
 * loop for seconds, and answers from outside (fetched JSON, a model server's streamed chunks) are
 * parsed there.
 */

/** Whether the JSON text in `body` nests arrays and objects deeper than `max` (one pass, strings skipped). */
export function nestsDeeperThan(body: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
