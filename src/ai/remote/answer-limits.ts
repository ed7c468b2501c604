/**
 * What a model server's answer may cost to read. Its bodies are parsed on the event loop, so each
 * is checked as it arrives: its size, the length of a streamed line, and how deep its JSON nests
 * (JSON.parse of a few MB of `[[[[` holds the loop for seconds). A server past a limit gets
 * ERR_AI_BAD_RESPONSE, whatever it was sending.
 */
import { errors } from '../../errors.js';

/** Largest answer read: an embedding batch of 64 texts at 3,072 dimensions is ~5 MB of JSON. */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** Longest line (NDJSON object, SSE line or event) of a streamed answer: a token's is a few hundred bytes. */
export const MAX_STREAM_LINE_BYTES = 1024 * 1024;
/** Deepest JSON nesting read (the APIs' answers nest a handful of levels). */
export const MAX_ANSWER_DEPTH = 64;
/** What is kept of an error answer's body: its message is cut to a few hundred characters anyway. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** Limits of one {@link AnswerGuard}. */
export interface AnswerGuardLimits {
  /** Bytes in all (default MAX_ANSWER_BYTES). */
  maxBytes?: number;
  /**
   * Set for line-framed answers (NDJSON, SSE): the longest line, and nesting is counted per line
   * (a line is one JSON value, so a line's end also ends any string or array a bad one left open).
   */
  maxLineBytes?: number;
  /** Deepest nesting of `[` and `{` outside strings (default MAX_ANSWER_DEPTH). */
  maxDepth?: number;
}

/** Checks an answer piece by piece; one guard per answer. */
export class AnswerGuard {
  private total = 0;
  private line = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private readonly maxBytes: number;
  private readonly maxLineBytes: number | undefined;
  private readonly maxDepth: number;

  /** `where` names the endpoint in messages (`POST /embeddings`). */
  constructor(
    private readonly where: string,
    limits: AnswerGuardLimits = {},
  ) {
    this.maxBytes = limits.maxBytes ?? MAX_ANSWER_BYTES;
    this.maxLineBytes = limits.maxLineBytes;
    this.maxDepth = limits.maxDepth ?? MAX_ANSWER_DEPTH;
  }

  /** Takes the next piece; throws ERR_AI_BAD_RESPONSE at the first limit it passes. */
  check(chunk: Uint8Array): void {
    this.total += chunk.length;
    if (this.total > this.maxBytes) throw new errors.ERR_AI_BAD_RESPONSE(`${this.where} answered more than ${this.maxBytes} bytes`);
    const perLine = this.maxLineBytes !== undefined;
    const maxLine = this.maxLineBytes ?? Infinity;
    let { line, depth, inString, escaped } = this;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      if (perLine && c === 0x0a) {
        line = depth = 0;
        inString = escaped = false;
        continue;
      }
      if (++line > maxLine) throw new errors.ERR_AI_BAD_RESPONSE(`${this.where} streamed a line longer than ${maxLine} bytes`);
      if (escaped) escaped = false;
      else if (inString) {
        if (c === 0x5c) escaped = true;
        else if (c === 0x22) inString = false;
      } else if (c === 0x22) inString = true;
      else if (c === 0x5b || c === 0x7b) {
        if (++depth > this.maxDepth) throw new errors.ERR_AI_BAD_RESPONSE(`${this.where} answered JSON nested deeper than ${this.maxDepth} levels`);
      } else if (c === 0x5d || c === 0x7d) depth--;
    }
    this.line = line;
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
  }
}

/** The body's pieces, each checked by `guard` before it is passed on. */
export async function* guarded(body: AsyncIterable<Uint8Array>, guard: AnswerGuard): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    guard.check(chunk);
    yield chunk;
  }
}

/**
 * Splits a streamed answer's decoded text into lines as its pieces arrive. A line still open is
 * kept in the pieces it came in and joined once, when it ends: appending each piece to one string
 * and searching it again from its start was quadratic in a line that never ends. An open line
 * longer than `maxChars` throws ERR_AI_BAD_RESPONSE.
 */
export class LineSplitter {
  private open: string[] = [];
  private openChars = 0;

  constructor(private readonly maxChars: number = MAX_STREAM_LINE_BYTES) {}

  /** The lines `text` ends (without their `\n`), in order. */
  push(text: string): string[] {
    const lines: string[] = [];
    let start = 0;
    let nl: number;
    while ((nl = text.indexOf('\n', start)) >= 0) {
      let line = text.slice(start, nl);
      start = nl + 1;
      if (this.open.length > 0) {
        line = this.open.join('') + line;
        this.open = [];
        this.openChars = 0;
      }
      lines.push(line);
    }
    if (start < text.length) {
      this.open.push(start === 0 ? text : text.slice(start));
      this.openChars += text.length - start;
      if (this.openChars > this.maxChars) throw new errors.ERR_AI_BAD_RESPONSE(`a streamed line was longer than ${this.maxChars} characters`);
    }
    return lines;
  }

  /** The unfinished last line, once the stream has ended ('' when there is none). */
  end(): string {
    const rest = this.open.join('');
    this.open = [];
    this.openChars = 0;
    return rest;
  }
}

/** The whole body, checked by `guard` as it arrives. */
export async function readGuarded(body: AsyncIterable<Uint8Array>, guard: AnswerGuard): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) {
    guard.check(chunk);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Parses a JSON body read by readGuarded; ERR_AI_BAD_RESPONSE naming `where` when it is not JSON. */
export function parseAnswer<T>(bytes: Buffer, where: string): T {
  try {
    return JSON.parse(bytes.toString('utf8')) as T;
  } catch {
    throw new errors.ERR_AI_BAD_RESPONSE(`${where} did not answer JSON`);
  }
}

/** The first MAX_ERROR_BODY_BYTES of an error answer as text; the rest is not read. */
export async function errorBodyText(body: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      total += chunk.length;
      if (total >= MAX_ERROR_BODY_BYTES) break;
    }
  } catch {
    // what arrived before the failure is all there is
  }
  return Buffer.concat(chunks).subarray(0, MAX_ERROR_BODY_BYTES).toString('utf8');
}
