import { describe, expect, it } from 'vitest';
import { sseData } from '../../src/ai/remote/sse.js';

async function* bytes(parts: string[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield new TextEncoder().encode(p);
}

async function all(parts: string[]): Promise<string[]> {
  const out: string[] = [];
  for await (const d of sseData(bytes(parts))) out.push(d);
  return out;
}

describe('sseData', () => {
  it('yields data payloads in order, [DONE] among them (what it means is for the caller)', async () => {
    expect(await all(['data: {"a":1}\n\ndata: {"a":2}\n\n', 'data: [DONE]\n\n'])).toEqual(['{"a":1}', '{"a":2}', '[DONE]']);
  });

  it('handles events split across chunks, CRLF, comments and multi-line data', async () => {
    expect(await all([': keep-alive\r\n\r\nda', 'ta: {"x":', '"é"}\r\n\r\ndata: line1\ndata: line2\n\n'])).toEqual(['{"x":"é"}', 'line1\nline2']);
  });

  it('keeps a last event that was not followed by a blank line', async () => {
    expect(await all(['data: {"end":1}'])).toEqual(['{"end":1}']);
  });

  it('decodes a multi-byte character split between chunks', async () => {
    const enc = new TextEncoder().encode('data: ü\n\n');
    async function* split() {
      yield enc.slice(0, 7);
      yield enc.slice(7);
    }
    const out: string[] = [];
    for await (const d of sseData(split())) out.push(d);
    expect(out).toEqual(['ü']);
  });

  it('joins a line sent one character at a time, and refuses a line or an event past the limit', async () => {
    const event = 'data: {"piece":"' + 'x'.repeat(500) + '"}\n\n';
    expect(await all([...event])).toEqual([`{"piece":"${'x'.repeat(500)}"}`]);
    const limited = async (parts: string[]) => {
      const out: string[] = [];
      for await (const d of sseData(bytes(parts), 100)) out.push(d);
      return out;
    };
    await expect(limited(['data: ', 'y'.repeat(120)])).rejects.toMatchObject({ code: 'ERR_AI_BAD_RESPONSE' });
    await expect(limited(['data: aaaaa\n'.repeat(30)])).rejects.toMatchObject({ code: 'ERR_AI_BAD_RESPONSE' });
    expect(await limited(['data: a\n\n'.repeat(30)])).toHaveLength(30);
  });

  it('ends lines at a bare CR as the SSE format allows, a CR and LF split between chunks ending one line', async () => {
    expect(await all(['data: one\r\rdata: two\r', '\n\r', '\ndata: three\r\r'])).toEqual(['one', 'two', 'three']);
    expect(await all(['data: a\r', '', '\n\ndata: b\n\n'])).toEqual(['a', 'b']);
  });

  it('shows bytes of a character the stream ended inside as U+FFFD, and drops the CR ending a last line', async () => {
    const enc = new TextEncoder().encode('data: fin ü');
    async function* cut() {
      yield enc.slice(0, enc.length - 1);
    }
    const out: string[] = [];
    for await (const d of sseData(cut())) out.push(d);
    expect(out).toEqual(['fin \uFFFD']);
    expect(await all(['data: last\r'])).toEqual(['last']);
  });
});
