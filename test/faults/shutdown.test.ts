/**
 * SIGTERM with work in flight: a member is waiting for an answer the model is still streaming
 * (a slow loopback fake of Ollama) when the server is told to stop. It must tell that member the
 * answer failed, close every socket with 1001, keep what was acknowledged, and exit 0 by itself.
 * A client that sent half an HTTP request, or an idle keep-alive connection, must not hold it up.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { CloseCode } from '../../src/protocol/close-codes.js';
import { startFakeOllama, type FakeServer } from '../fakes/ollama-server.js';
import { tempDir } from '../helpers.js';
import { RawClient } from './clients.js';
import { FAULTS_ADMIN_TOKEN, startServer } from './server-process.js';

const ADMIN = { authorization: `Bearer ${FAULTS_ADMIN_TOKEN}`, 'content-type': 'application/json' };

/** A TCP connection to `base` that has written `request`: when it first hears back, and when it closes. */
async function rawHttp(base: string, request: string): Promise<{ answered: Promise<void>; closed: Promise<void> }> {
  const { hostname, port } = new URL(base);
  const socket = await new Promise<Socket>((resolve, reject) => {
    const s = connect(Number(port), hostname, () => resolve(s));
    // Kept: the server resetting the connection later is expected.
    s.on('error', reject);
  });
  const answered = new Promise<void>((resolve) => socket.once('data', () => resolve()));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  // Read whatever comes, so the server's end of the connection is seen.
  socket.resume();
  socket.write(request);
  return { answered, closed };
}

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

  it('a half-sent request or an idle keep-alive does not stop it closing sockets with 1001, storing memory and exiting 0', async () => {
    const dir = tempDir('salon-shutdown-slow-');
    try {
      const server = await startServer({ dataDir: dir.dir, env: { SEED_DEMO: 'false' } });
      const item = { id: 'slow', kind: 'post', title: 'Tide tables', body: 'The harbour publishes its tide tables every Monday.' };
      expect((await fetch(`${server.base}/api/v1/content`, { method: 'POST', headers: ADMIN, body: JSON.stringify(item) })).status).toBe(200);
      const member = await RawClient.open(server.roomUrl('post_slow'));
      member.send({ type: 'hello', name: 'Mara' });
      const welcome = await member.waitFor(0, (f) => f.type === 'welcome', 10_000);
      const threadId = (welcome as { threadId: string }).threadId;
      // Three lines: a memory window stays open until the server stores it at shutdown.
      for (const n of [1, 2, 3]) member.send({ type: 'say', text: `line ${n} about the tide tables`, clientId: `t${n}` });
      expect(await member.waitFor(0, (f) => f.type === 'message' && f.message?.clientId === 't3', 10_000)).toBeTruthy();

      // Headers and one byte of a 100-byte body, then nothing (a slowloris, or a slow upload).
      const slow = await rawHttp(
        server.base,
        'POST /api/v1/rooms/post_slow/ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
      );
      const idle = await rawHttp(server.base, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      await idle.answered;

      expect(await server.stop(30_000)).toEqual({ code: 0, signal: null });
      await new Promise((r) => setTimeout(r, 100));
      expect(member.closeCode).toBe(CloseCode.GOING_AWAY);
      await Promise.all([slow.closed, idle.closed]);

      // The open window was stored before the store closed.
      const again = await startServer({ dataDir: dir.dir, env: { SEED_DEMO: 'false' } });
      try {
        const view = (await (await fetch(`${again.base}/api/v1/threads/${threadId}`)).json()) as { messages: number; memory: { chunks: number } };
        expect(view.messages).toBe(3);
        expect(view.memory.chunks).toBe(1);
      } finally {
        await again.stop();
      }
    } finally {
      dir.cleanup();
    }
  }, 120_000);
});
