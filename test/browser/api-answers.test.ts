/**
 * What the page makes of an API answer that is not the JSON object every endpoint sends (a proxy's
 * or a captive portal's page, a cut body): an ApiError saying so, not null handed to the caller,
 * whose reading of it failed with a TypeError shown to the member as the reason.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, getJson, listRooms, searchContent } from '../../public/src/lib/api.js';
import { threadMessages } from '../../public/src/lib/threads-api.js';

function answering(body: string, status = 200): void {
  vi.stubGlobal('fetch', async () => new Response(body, { status, headers: { 'content-type': 'text/html' } }));
}

describe('getJson', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('refuses a 200 answer that is not a JSON object, with an ApiError the callers show', async () => {
    for (const body of ['<html><body>Sign in to the hotel Wi-Fi</body></html>', '', '{"rooms": [', 'null', '42', '"text"', '[1, 2]']) {
      answering(body);
      const err = await getJson('/api/v1/rooms').catch((e: unknown) => e);
      expect(err, body).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ code: 'ERR_BAD_RESPONSE', status: 200 });
      expect((err as Error).message).not.toMatch(/TypeError|null|undefined/);
    }
  });

  it('reaches the callers as that error, not as a TypeError', async () => {
    answering('<html>portal</html>');
    for (const call of [() => listRooms(), () => searchContent({ q: 'harbour' }), () => threadMessages('th_1', 0, 50)]) {
      await expect(call()).rejects.toMatchObject({ name: 'ApiError', code: 'ERR_BAD_RESPONSE' });
    }
  });

  it('rejects with an AbortError when the caller aborts while the body comes, not with an unreadable answer', async () => {
    const abort = new AbortController();
    vi.stubGlobal('fetch', async () => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"hits": ['));
          // The member types on: the search that asked is given up while its answer still comes.
          abort.signal.addEventListener('abort', () => controller.error(new DOMException('The operation was aborted.', 'AbortError')));
        },
      });
      return new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
    });
    const asked = getJson('/api/v1/search?q=harbour', abort.signal).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 0));
    abort.abort();
    expect(await asked).toMatchObject({ name: 'AbortError' });
  });

  it('still takes a JSON object, and an error body with its code', async () => {
    answering('{"rooms": [{"id": "news_1", "kind": "news", "title": "One", "members": 2}]}');
    expect(await listRooms()).toEqual([{ id: 'news_1', kind: 'news', title: 'One', members: 2 }]);
    answering('{"error": {"code": "ERR_RATE_LIMITED", "message": "Slow down"}}', 429);
    await expect(getJson('/api/v1/rooms')).rejects.toMatchObject({ code: 'ERR_RATE_LIMITED', message: 'Slow down', status: 429 });
  });
});
