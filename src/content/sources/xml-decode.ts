/**
 * Bytes of an XML document (a feed) to a string: byte-order mark first, then the encoding the
 * XML declaration names (unless UTF-16, which a declaration readable in single bytes cannot be),
 * then UTF-8 when the bytes are valid UTF-8, then the charset the transport named (Content-Type),
 * else Windows-1252 (the usual encoding of undeclared legacy feeds). The declaration comes before
 * the transport, unlike RFC 7303, because servers name a default charset (ISO-8859-1 for text/xml)
 * whatever a feed is written in; the transport still decides for an undeclared feed that is not
 * UTF-8 (a windows-1251 or Shift_JIS feed read as windows-1252 was mojibake). windows-1252 and the
 * latin1 labels decode as browsers decode them (decodeWindows1252): Node's TextDecoder reads bytes
 * 0x80-0x9F as control characters.
 */
import { charsetOfContentType, decodeAs, decodeWindows1252, normaliseEncoding } from '../extract/decode.js';

const SNIFF_BYTES = 512;

/** Decodes an XML document's bytes, given the Content-Type it came with if any; never throws. */
export function decodeXml(bytes: Uint8Array, contentType?: string | null): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return new TextDecoder('utf-8').decode(bytes.subarray(3));
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  const head = Buffer.from(bytes.subarray(0, SNIFF_BYTES)).toString('latin1');
  const label = /^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/i.exec(head)?.[1];
  // Read in single bytes, a declaration of UTF-16 is wrong (UTF-16 puts a NUL in each of its ASCII
  // characters: XML 1.0, appendix F), so it counts as none; decoding by it failed the whole feed.
  const named = normaliseEncoding(label);
  const declared = named?.startsWith('utf-16') ? undefined : label;
  const encoding = declared ? named : null;
  if (encoding && encoding !== 'utf-8') return decodeAs(bytes, encoding);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    // Declared UTF-8 but invalid: keep what decodes rather than guessing another encoding.
    if (declared) return new TextDecoder('utf-8').decode(bytes);
    const transport = normaliseEncoding(charsetOfContentType(contentType));
    // A UTF-16 label in the header of bytes without a BOM is no more trusted than in a page (decode.ts).
    if (transport && !transport.startsWith('utf-16') && transport !== 'utf-8') return decodeAs(bytes, transport);
    return decodeWindows1252(bytes);
  }
}
