/** Reading a response body for the fetcher: media types, a streaming size cap, decompression. */
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate, type ZlibOptions } from 'node:zlib';
import type { Dispatcher } from 'undici';
import { errors, permanently } from '../../errors.js';

/** Media types of HTML and XML documents (feeds included). */
const PAGE_TYPES = new Set([
  'text/html',
  'application/xhtml+xml',
  'application/xml',
  'text/xml',
  'application/rss+xml',
  'application/atom+xml',
  'application/rdf+xml',
  'application/feed+xml',
]);

/** The lower-cased media type of a Content-Type value, parameters dropped. */
export function mediaType(contentType: string): string {
  return contentType.split(';')[0].trim().toLowerCase();
}

/** HTML or any XML type. */
export function isPageType(type: string): boolean {
  return PAGE_TYPES.has(type) || /^[a-z]+\/[a-z0-9.+-]+\+xml$/.test(type);
}

/** application/json or any `+json` type. */
export function isJsonType(type: string): boolean {
  return type === 'application/json' || /^[a-z]+\/[a-z0-9.+-]+\+json$/.test(type);
}

/** Drops a body without reading it (the stream's abort error is expected, not reported). */
export function discard(res: Dispatcher.ResponseData): void {
  res.body.on('error', () => {});
  res.body.destroy();
}

/** Reads the body, aborting as soon as more than `maxBytes` arrive (or are announced). */
export async function readCapped(res: Dispatcher.ResponseData, maxBytes: number, url: string): Promise<Buffer> {
  const announced = Number(res.headers['content-length']);
  if (Number.isFinite(announced) && announced > maxBytes) {
    discard(res);
    throw permanently(new errors.ERR_FETCH_TOO_LARGE(url, maxBytes));
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res.body) {
    total += (chunk as Buffer).length;
    if (total > maxBytes) {
      discard(res);
      throw permanently(new errors.ERR_FETCH_TOO_LARGE(url, maxBytes));
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, total);
}

const DECODERS: Record<string, (body: Buffer, options: ZlibOptions) => Promise<Buffer>> = {
  gzip: promisify(gunzip),
  'x-gzip': promisify(gunzip),
  deflate: promisify(inflate),
  br: promisify(brotliDecompress),
};

/**
 * Undoes a Content-Encoding, refusing output past `maxBytes` (a small gzip can inflate hugely).
 * On the libuv pool, not the event loop: a 5 MB page took ~30 ms of the loop to inflate, one of
 * FETCH_MAX_BYTES' 100 MB ~0.6 s.
 */
export async function decompress(body: Buffer, encoding: string | undefined, maxBytes: number, url: string): Promise<Buffer> {
  const coding = (encoding ?? '').trim().toLowerCase();
  if (!coding || coding === 'identity') return body;
  if (!Object.hasOwn(DECODERS, coding)) throw permanently(new errors.ERR_FETCH_FAILED(url, `unsupported content encoding ${coding}`));
  try {
    return await DECODERS[coding](body, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw permanently(new errors.ERR_FETCH_TOO_LARGE(url, maxBytes));
    throw permanently(new errors.ERR_FETCH_FAILED(url, `cannot decode ${coding} body`, err as Error));
  }
}
