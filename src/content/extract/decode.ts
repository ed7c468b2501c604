/**
 * Turning the bytes of an HTML or XML document into text: the charset comes from a byte-order
 * mark, then the transport (Content-Type), then a `<meta charset>` / `http-equiv` / XML
 * declaration in the first bytes; without any of these, UTF-8 if the bytes are valid UTF-8 and
 * windows-1252 (the web's legacy default) otherwise.
 */

/** How far into the document the `<meta>` / XML declaration prescan looks. */
const PRESCAN_BYTES = 4096;
/**
 * How far a second look for `<meta charset>` goes when the prescan found none and the bytes are
 * not UTF-8: 11 of the extraction corpus's 147 declared pages name it past 4 KB (after inline
 * scripts and styles), one at 69 KB, and browsers still honour it there.
 */
const LATE_PRESCAN_BYTES = 131_072;
const FALLBACK_ENCODING = 'windows-1252';

function bomEncoding(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return null;
}

/** The encoding name TextDecoder knows for `label`, or null if it knows none. */
export function normaliseEncoding(label: string | null | undefined): string | null {
  if (!label) return null;
  try {
    return new TextDecoder(label.trim().replace(/^["']|["']$/g, '')).encoding;
  } catch {
    return null;
  }
}

/** The `charset` parameter of a Content-Type header value, if any. */
export function charsetOfContentType(contentType: string | null | undefined): string | null {
  const m = /;\s*charset\s*=\s*("?)([^";\s]+)\1/i.exec(contentType ?? '');
  return m ? m[2] : null;
}

function prescanEncoding(bytes: Uint8Array, length: number): string | null {
  // latin1 maps bytes 1:1, so ASCII markup survives whatever the real encoding is.
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, length)).toString('latin1');
  const xml = /^\s*<\?xml[^>]*\bencoding\s*=\s*["']([^"']+)["']/i.exec(head);
  if (xml) return xml[1];
  for (const tag of metaTags(head)) {
    const charset = /\bcharset\s*=\s*["']?([^"'\s;/>]+)/i.exec(tag);
    if (charset) return charset[1];
  }
  return null;
}

/**
 * The `<meta …>` tags of `head` in order, as `/<meta\b[^>]*>/gi` matches them, in one pass: that
 * regex, retried from every `<meta` of a head that never closes one, read the rest of the head each
 * time (128 KB of them took ~1.5 s of the extraction worker).
 */
function* metaTags(head: string): Generator<string> {
  // latin1 text: lower-casing keeps every index where it was.
  const lower = head.toLowerCase();
  let at = 0;
  for (;;) {
    const start = lower.indexOf('<meta', at);
    if (start < 0) return;
    if (/\w/.test(lower.charAt(start + 5))) {
      at = start + 1;
      continue;
    }
    const end = head.indexOf('>', start + 5);
    // No `>` after this `<meta`, so none after any later one either.
    if (end < 0) return;
    yield head.slice(start, end + 1);
    at = end + 1;
  }
}

function isValidUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The encoding to decode `bytes` with, given the transport's Content-Type if known. */
export function sniffEncoding(bytes: Uint8Array, contentType?: string | null): string {
  const declared = bomEncoding(bytes) ?? normaliseEncoding(charsetOfContentType(contentType)) ?? normaliseEncoding(prescanEncoding(bytes, PRESCAN_BYTES));
  // A page that declares UTF-16 in ASCII-compatible markup cannot really be UTF-16 (HTML spec).
  if (declared && !(declared.startsWith('utf-16') && !bomEncoding(bytes))) return declared;
  if (isValidUtf8(bytes)) return 'utf-8';
  const late = bytes.byteLength > PRESCAN_BYTES ? normaliseEncoding(prescanEncoding(bytes, LATE_PRESCAN_BYTES)) : null;
  return late && !late.startsWith('utf-16') ? late : FALLBACK_ENCODING;
}

/** What windows-1252 puts at 0x80-0x9F (where ISO-8859-1 has C1 controls); 0 marks unassigned bytes. */
const CP1252_HIGH = [
  0x20ac, 0, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017d, 0, 0, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022,
  0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0, 0x017e, 0x0178,
];

/**
 * windows-1252 decoding. Node 20's TextDecoder decodes this label as ISO-8859-1 (its latin1 fast
 * path), which turns curly quotes, dashes and the euro sign into control characters.
 */
export function decodeWindows1252(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 8192) {
    const codes = Array.from(bytes.subarray(i, i + 8192), (b) => (b >= 0x80 && b <= 0x9f ? CP1252_HIGH[b - 0x80] || b : b));
    out += String.fromCharCode(...codes);
  }
  return out;
}

/**
 * `bytes` decoded as `encoding`, an encoding name as {@link normaliseEncoding} returns it: the
 * latin1 and ASCII labels are windows-1252 there, as the WHATWG encoding standard has browsers
 * decode them, and go through {@link decodeWindows1252}.
 */
export function decodeAs(bytes: Uint8Array, encoding: string): string {
  return encoding === FALLBACK_ENCODING ? decodeWindows1252(bytes) : new TextDecoder(encoding).decode(bytes);
}

/** Decodes an HTML/XML document's bytes to a string (see the module comment for the rules). */
export function decodeDocument(bytes: Uint8Array, contentType?: string | null): string {
  return decodeAs(bytes, sniffEncoding(bytes, contentType));
}
