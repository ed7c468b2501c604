/** Server-sent events as OpenAI-compatible servers stream them: `data:` lines, events ended by a blank line. */
import { errors } from '../../errors.js';
import { LineSplitter, MAX_STREAM_LINE_BYTES } from './answer-limits.js';

/**
 * The `data` payloads of an SSE byte stream, in order, and a last event left without its blank
 * line. What a payload means (OpenAI's `[DONE]`) is the caller's. A line or an event longer than
 * `maxChars` is ERR_AI_BAD_RESPONSE: a server that never ends a line would otherwise be buffered
 * without bound, and each piece searched again from the line's start.
 */
export async function* sseData(body: AsyncIterable<Uint8Array | string>, maxChars = MAX_STREAM_LINE_BYTES): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const newlines = new SseNewlines();
  const lines = new LineSplitter(maxChars);
  let data: string[] = [];
  let dataChars = 0;
  const read = function* (text: string): Generator<string> {
    for (const line of lines.push(newlines.asLf(text))) {
      if (line === '') {
        // A blank line ends an event.
        if (data.length > 0) {
          const payload = data.join('\n');
          data = [];
          dataChars = 0;
          yield payload;
        }
      } else if (line.startsWith('data:')) {
        const value = line.slice(5).replace(/^ /, '');
        dataChars += value.length;
        if (dataChars > maxChars) throw new errors.ERR_AI_BAD_RESPONSE(`a streamed event was longer than ${maxChars} characters`);
        data.push(value);
      }
    }
  };
  for await (const chunk of body) yield* read(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
  // Bytes of a character the stream ended inside come out as U+FFFD.
  yield* read(decoder.decode());
  const rest = lines.end();
  const tail = [...data, ...(rest.startsWith('data:') ? [rest.slice(5).replace(/^ /, '')] : [])].join('\n');
  if (tail) yield tail;
}

/**
 * SSE ends a line at CRLF, LF or a bare CR; each becomes one LF here, a CR at the end of one piece
 * and an LF at the start of the next included.
 */
class SseNewlines {
  private afterCr = false;

  asLf(text: string): string {
    if (text === '') return text;
    if (this.afterCr && text.startsWith('\n')) text = text.slice(1);
    this.afterCr = text.endsWith('\r');
    return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
  }
}
