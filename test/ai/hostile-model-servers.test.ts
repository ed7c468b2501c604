/**
 * A model server is outside Salon, and may be broken or hostile: lines that never end, answers of
 * any size or nesting, lines that are not JSON, shapes that are not the API's. Each must end the
 * call with ERR_AI_BAD_RESPONSE as soon as it shows, not hold the event loop, memory or the call
 * until a timeout. The servers below keep the connection open after misbehaving, so a client that
 * does not notice waits for the (long) timeout and fails these tests with ERR_AI_TIMEOUT.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { REPLY_MAX_CHARS, SUMMARY_MAX_CHARS } from '../../src/ai/remote/remote-chat.js';
import { MAX_ANSWER_BYTES, MAX_ERROR_BODY_BYTES, MAX_STREAM_LINE_BYTES } from '../../src/ai/remote/answer-limits.js';
import { MAX_EMBEDDING_DIMENSIONS, toUnitVectors } from '../../src/ai/vectors.js';
import { clientMessage, type SalonError } from '../../src/errors.js';
import type { FakeServer } from '../fakes/common.js';
import { REMOTE_CASES, collect, rejection } from './remote-cases.js';

/** Long enough that only a client that noticed nothing reaches it. */
const PATIENT = { timeoutMs: 20_000, idleTimeoutMs: 20_000 };
const ask = [{ role: 'user' as const, content: 'hello' }];

/** Writes `bytes` bytes of `fill` (after `head`) and leaves the response open. */
async function writeOpen(res: ServerResponse, status: number, contentType: string, head: string, bytes: number, fill = 'a'): Promise<void> {
  res.writeHead(status, { 'content-type': contentType });
  res.write(head);
  const block = Buffer.alloc(64 * 1024, fill);
  for (let sent = 0; sent < bytes && !res.destroyed; sent += block.length) {
    if (!res.write(block)) await new Promise((r) => res.once('drain', r));
  }
}

/** The text a stream gave before it failed, and its failure (the test fails when it ends well). */
async function streamedUntilFailure(stream: AsyncIterable<string>): Promise<{ got: string; err: Error & { code?: string } }> {
  const got: string[] = [];
  const err = await rejection(
    (async () => {
      for await (const p of stream) got.push(p);
    })(),
  );
  return { got: got.join(''), err };
}

describe.each(REMOTE_CASES)('$name provider against a hostile server', (c) => {
  let fake: FakeServer | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await fake?.close();
    fake = undefined;
  });
  const start = async (raw: NonNullable<FakeServer['behaviour']['raw']>) => {
    fake = await c.start({ raw });
    return c.base(fake.url);
  };
  const streamType = c.name === 'ollama' ? 'application/x-ndjson' : 'text/event-stream';
  const line = (json: string) => (c.name === 'ollama' ? `${json}\n` : `data: ${json}\n\n`);
  const piece = (text: string) =>
    line(JSON.stringify(c.name === 'ollama' ? { message: { role: 'assistant', content: text }, done: false } : { choices: [{ delta: { content: text } }] }));

  it('ends a streamed line that never ends at its length limit', async () => {
    const base = await start((_req, res) =>
      writeOpen(res, 200, streamType, piece('Hi') + (c.name === 'ollama' ? '{"message":"' : 'data: "'), MAX_STREAM_LINE_BYTES + 1),
    );
    const { got, err } = await streamedUntilFailure(c.chat(base, PATIENT).stream(ask));
    expect(err.code).toBe('ERR_AI_BAD_RESPONSE');
    expect(got).toBe('Hi');
  });

  it('refuses a streamed line nested deeper than JSON answers nest, before parsing it', async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const base = await start((_req, res) => writeOpen(res, 200, streamType, piece('Hi') + line(deep), 0));
    const err = await rejection(collect(c.chat(base, PATIENT).stream(ask)));
    expect(err.code).toBe('ERR_AI_BAD_RESPONSE');
  });

  it('refuses a streamed line that is not a JSON object, and logs nothing of it', async () => {
    const warn = vi.spyOn(console, 'warn');
    const base = await start((_req, res) => {
      res.writeHead(200, { 'content-type': streamType });
      res.end(piece('Hi') + line('this is not json') + line('5') + piece(' there'));
    });
    const err = await rejection(collect(c.chat(base, PATIENT).stream(ask)));
    expect(err.code).toBe('ERR_AI_BAD_RESPONSE');
    expect(warn).not.toHaveBeenCalled();
  });

  it('refuses a stream that ends before the server said it had finished, keeping what came', async () => {
    // A proxy that drops the upstream mid-answer may still end its own response cleanly: without
    // Ollama's `done` or OpenAI's `[DONE]` (or a finish_reason) the answer is cut, not complete.
    const base = await start((_req, res) => {
      res.writeHead(200, { 'content-type': streamType });
      res.end(piece('Hi') + piece(' there'));
    });
    const { got, err } = await streamedUntilFailure(c.chat(base, PATIENT).stream(ask));
    expect(err.code).toBe('ERR_AI_BAD_RESPONSE');
    expect(got).toBe('Hi there');
  });

  it('tells members an error the server streams without its text, and keeps a few hundred characters of it for the log', async () => {
    const detail = `upstream 10.0.0.5:8443 failed: ${'x'.repeat(100_000)}`;
    const base = await start((_req, res) => {
      res.writeHead(200, { 'content-type': streamType });
      res.end(piece('Hi') + line(JSON.stringify(c.name === 'ollama' ? { error: detail } : { error: { message: detail } })));
    });
    const err = await rejection(collect(c.chat(base, PATIENT).stream(ask)));
    expect(err.code).toBe('ERR_AI_BAD_RESPONSE');
    expect(clientMessage(err as SalonError)).not.toContain('10.0.0.5');
    expect(err.message).toContain('upstream 10.0.0.5:8443 failed');
    expect(err.message.length).toBeLessThan(1_000);
  });

  it('ends an answer larger than any the API gives at its size limit', async () => {
    const base = await start((_req, res) => writeOpen(res, 200, 'application/json', '{"embeddings": [[0.1, ', MAX_ANSWER_BYTES + 1, ' '));
    const err = await rejection(c.embedder(base, PATIENT).embed(['x']));
    expect(err.code).toBe('ERR_AI_BAD_RESPONSE');
  });

  it('refuses a deeply nested answer before parsing it', async () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const base = await start((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"embeddings": ${deep}, "data": ${deep}}`);
    });
    const err = await rejection(c.embedder(base, PATIENT).embed(['x']));
    expect(err.code).toBe('ERR_AI_BAD_RESPONSE');
    expect(err.message).toContain('nested deeper');
  });

  it('reads only the start of an endless error answer', async () => {
    const base = await start((_req, res) => writeOpen(res, 500, 'text/plain', 'overloaded ', MAX_ERROR_BODY_BYTES * 4));
    const err = await rejection(c.embedder(base, PATIENT).embed(['x']));
    expect(err.code).toBe('ERR_AI_UNAVAILABLE');
    expect(err.message).toContain('HTTP 500');
  });

  it('keeps at most SUMMARY_MAX_CHARS of a summary, however long the reply', async () => {
    fake = await c.start({ reply: 'word '.repeat(100_000) });
    expect((await c.chat(c.base(fake.url), PATIENT).summarize('some text')).length).toBeLessThanOrEqual(SUMMARY_MAX_CHARS);
  });

  it('gives a summary without halves of surrogate pairs, which the stores would keep otherwise than each other', async () => {
    // JSON may escape a lone surrogate ("\\ud800"); SQLite reads it back as three U+FFFD, PostgreSQL as one.
    fake = await c.start({ reply: 'Ships \ud800 sail \udc00 at dawn.' });
    const summary = await c.chat(c.base(fake.url), PATIENT).summarize('some text');
    expect(summary).toBe('Ships \uFFFD sail \uFFFD at dawn.');
  });

  it('reads a rerank reply no further than REPLY_MAX_CHARS', async () => {
    const snippets = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    fake = await c.start({ reply: `${'no numbers here '.repeat(REPLY_MAX_CHARS / 8)} 7,6` });
    expect(await c.chat(c.base(fake.url), PATIENT).rerank('q', snippets)).toEqual([0, 1, 2, 3, 4]);
    fake.setBehaviour({ reply: 'no numbers here 7,6' });
    expect(await c.chat(c.base(fake.url), PATIENT).rerank('q', snippets)).toEqual([6, 5, 0]);
  });

  it('gives a typed error for answers of the wrong shape', async () => {
    for (const body of ['null', '[]', '"text"', '{"data": [null], "embeddings": [null]}', '{"data": 5, "embeddings": {}}']) {
      const base = await start((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      });
      const err = await rejection(c.embedder(base, PATIENT).embed(['x']));
      expect(err.code, body).toBe('ERR_AI_BAD_RESPONSE');
      const summary = await rejection(c.chat(base, PATIENT).summarize('some text'));
      expect(summary.code, body).toBe('ERR_AI_BAD_RESPONSE');
      await fake!.close();
    }
  });
});

describe('toUnitVectors', () => {
  it('refuses vectors wider than any embedding model gives, which would set the dimension of the index', () => {
    const wide = Array.from({ length: MAX_EMBEDDING_DIMENSIONS + 1 }, (_, i) => i % 7);
    const err = (() => {
      try {
        toUnitVectors([wide], 1, 'test');
      } catch (e) {
        return e as SalonError;
      }
    })();
    expect(err?.code).toBe('ERR_AI_BAD_RESPONSE');
    expect(toUnitVectors([wide.slice(1)], 1, 'test')[0]).toHaveLength(MAX_EMBEDDING_DIMENSIONS);
  });

  it('normalises finite values too large for float32 or for their squares without NaN', () => {
    const [big, huge] = toUnitVectors(
      [
        [1e39, 0, -1e39],
        [1e300, 1e300, 0],
      ],
      2,
      'test',
    );
    expect([...big].every(Number.isFinite)).toBe(true);
    expect(big[0]).toBeCloseTo(Math.SQRT1_2, 6);
    expect(big[2]).toBeCloseTo(-Math.SQRT1_2, 6);
    expect(huge[1]).toBeCloseTo(Math.SQRT1_2, 6);
    expect([...toUnitVectors([[0, 0]], 1, 'test')[0]]).toEqual([0, 0]);
  });
});
