/** Server-sent events as OpenAI-compatible servers stream them: `data:` lines, `[DONE]` at the end. */

/** The `data` payloads of an SSE byte stream, in order, up to (not including) `[DONE]`. */
export async function* sseData(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  for await (const chunk of body) {
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).replace(/\r$/, '');
      buffer = buffer.slice(nl + 1);
      if (line === '') {
        // A blank line ends an event.
        if (data.length > 0) {
          const payload = data.join('\n');
          data = [];
          if (payload.trim() === '[DONE]') return;
          yield payload;
        }
      } else if (line.startsWith('data:')) {
        data.push(line.slice(5).replace(/^ /, ''));
      }
    }
  }
  const tail = [...data, ...(buffer.startsWith('data:') ? [buffer.slice(5).replace(/^ /, '')] : [])].join('\n');
  if (tail && tail.trim() !== '[DONE]') yield tail;
}
