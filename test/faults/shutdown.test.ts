/**
 * SIGTERM with work in flight: a member is waiting for an answer the model is still streaming
 * (a slow loopback fake of Ollama) when the server is told to stop. It must tell that member the
 * answer failed, close every socket with 1001, keep what was acknowledged, and exit 0 by itself.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { CloseCode } from '../../src/protocol/close-codes.js';
import { startFakeOllama, type FakeServer } from '../fakes/ollama-server.js';
import { tempDir } from '../helpers.js';
import { RawClient } from './clients.js';
import { FAULTS_ADMIN_TOKEN, startServer } from './server-process.js';

const ADMIN = { authorization: `Bearer ${FAULTS_ADMIN_TOKEN}`, 'content-type': 'application/json' };
let fake: FakeServer | undefined;
const data = tempDir('salon-shutdown-');

afterAll(async () => {
  await fake?.close();
  data.cleanup();
});

describe('shutdown', () => {
  it('fails in-flight answers cleanly, closes sockets with 1001, keeps acknowledged messages and exits 0', async () => {
    // A reply of 400 characters, 2 at a time every 100 ms: it is still streaming when SIGTERM comes.
    fake = await startFakeOllama({ reply: 'word '.repeat(80), chunkChars: 2, chunkDelayMs: 100 });
    const env = { SEED_DEMO: 'false', AI_PROVIDER: 'ollama', OLLAMA_HOST: fake.url, OLLAMA_CHAT_MODEL: 'llama3.2', OLLAMA_EMBED_MODEL: 'nomic-embed-text' };
    const server = await startServer({ dataDir: data.dir, env });
    const item = { id: 'drain', kind: 'post', title: 'Harbour pier plan', body: 'The harbour council approved a timber pier. Work starts in spring.' };
    expect((await fetch(`${server.base}/api/v1/content`, { method: 'POST', headers: ADMIN, body: JSON.stringify(item) })).status).toBe(200);

    const asker = await RawClient.open(server.roomUrl('post_drain'));
    asker.send({ type: 'hello', name: 'Asker' });
    const other = await RawClient.open(server.roomUrl('post_drain'));
    other.send({ type: 'hello', name: 'Other' });
    for (const c of [asker, other]) expect(await c.waitFor(0, (f) => f.type === 'welcome', 10_000)).toMatchObject({ type: 'welcome' });
    asker.send({ type: 'say', text: 'kept across the restart', clientId: 'kept' });
    expect(await asker.waitFor(0, (f) => f.type === 'message' && f.message?.clientId === 'kept', 10_000)).toBeTruthy();
    // An overview question: the fake embedder's vectors are random, so a specific one would be abstained on at once.
    asker.send({ type: 'say', text: '@ai What is this post about?', clientId: 'q' });
    expect(await asker.waitFor(0, (f) => f.type === 'assistant.delta', 30_000)).toMatchObject({ type: 'assistant.delta' });

    const exit = await server.stop(30_000);
    expect(exit).toEqual({ code: 0, signal: null });
    // The asker heard that the answer will not come, before the socket closed with 1001.
    const failed = asker.frames.find((f) => f.type === 'error' && /^ERR_ASSISTANT_FAILED|^ERR_AI_/.test(f.code));
    expect(failed, JSON.stringify(asker.frames.map((f) => f.type))).toBeTruthy();
    expect(asker.frames.some((f) => f.type === 'assistant.done')).toBe(false);
    await new Promise((r) => setTimeout(r, 100));
    expect(asker.closeCode).toBe(CloseCode.GOING_AWAY);
    expect(other.closeCode).toBe(CloseCode.GOING_AWAY);

    // What was acknowledged is on disk: the next start replays it.
    const again = await startServer({ dataDir: data.dir, env });
    try {
      const page = (await (await fetch(`${again.base}/api/v1/rooms/post_drain/messages`)).json()) as {
        messages: { clientId?: string; author: { kind: string } }[];
      };
      expect(page.messages.map((m) => m.clientId)).toEqual(expect.arrayContaining(['kept', 'q']));
      expect(page.messages.some((m) => m.author.kind === 'assistant')).toBe(false);
    } finally {
      await again.stop();
    }
  }, 120_000);
});
