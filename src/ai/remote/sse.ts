/** Server-sent events as OpenAI-compatible servers stream them: `data:` lines, `[DONE]` at the end. */
import { errors } from '../../errors.js';
import { MAX_STREAM_LINE_BYTES } from './answer-limits.js';

/**
 * The `data` payloads of an SSE byte stream, in order, up to (not including) `[DONE]`. A line or
 * an event longer than `maxChars` is ERR_AI_BAD_RESPONSE: a server that never ends a line would
 * otherwise be buffered without bound, and each piece searched again from the line's start.
 */
export async function* sseData(body: AsyncIterable<Uint8Array | string>, maxChars = MAX_STREAM_LINE_BYTES): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  // The start of a line still open, in the pieces it came in: joined once, when the line ends.
  let open: string[] = [];
  let openChars = 0;
  let data: string[] = [];
  let dataChars = 0;
  for await (const chunk of body) {
    const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let start = 0;
    let nl: number;
    while ((nl = text.indexOf('\n', start)) >= 0) {
      let line = text.slice(start, nl);
      start = nl + 1;
      if (open.length > 0) {
        line = open.join('') + line;
        open = [];
        openChars = 0;
      }
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        // A blank line ends an event.
        if (data.length > 0) {
          const payload = data.join('\n');
          data = [];
          dataChars = 0;
          if (payload.trim() === '[DONE]') return;
          yield payload;
        }
      } else if (line.startsWith('data:')) {
        const value = line.slice(5).replace(/^ /, '');
        dataChars += value.length;
        if (dataChars > maxChars) throw new errors.ERR_AI_BAD_RESPONSE(`a streamed event was longer than ${maxChars} characters`);
        data.push(value);
      }
    }
    if (start < text.length) {
      open.push(start === 0 ? text : text.slice(start));
      openChars += text.length - start;
      if (openChars > maxChars) throw new errors.ERR_AI_BAD_RESPONSE(`a streamed line was longer than ${maxChars} characters`);
    }
  }
  const rest = open.join('');
  const tail = [...data, ...(rest.startsWith('data:') ? [rest.slice(5).replace(/^ /, '')] : [])].join('\n');
  if (tail && tail.trim() !== '[DONE]') yield tail;
}
