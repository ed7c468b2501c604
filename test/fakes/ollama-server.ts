/**
 * A loopback fake of the Ollama HTTP API for tests: `/api/embed`, `/api/chat` (NDJSON stream or a
 * single JSON answer), `/api/tags`, `/api/version`. Deterministic vectors from a hash of the
 * text; a configurable chat reply (by default it echoes the last user message). It can be slow,
 * fail with 404/500 in Ollama's error shape, or drop the connection mid-stream, and it records
 * every request.
 *
 *   const ollama = await startFakeOllama({ models: ['nomic-embed-text:latest', 'llama3.2:latest'] });
 *   // OLLAMA_HOST = ollama.url
 *   ollama.setBehaviour({ reply: '2, 4', chunkDelayMs: 50 });
 *   ollama.requests.filter((r) => r.path === '/api/embed');
 *   await ollama.close();
 */
import type { ServerResponse } from 'node:http';
import {
  defaultBehaviour,
  fakeVector,
  pieces,
  replyText,
  sendJson,
  startFake,
  streamLines,
  type ChatTurn,
  type FakeBehaviour,
  type FakeServer,
} from './common.js';

export type { FakeBehaviour, FakeServer, RecordedRequest } from './common.js';
export { echoReply, fakeVector } from './common.js';

export const FAKE_OLLAMA_VERSION = '0.9.0-fake';
/** Default models: the ones Salon's config names by default. */
export const FAKE_OLLAMA_MODELS = ['nomic-embed-text:latest', 'llama3.2:latest'];

function known(b: FakeBehaviour, model: unknown): boolean {
  if (typeof model !== 'string') return false;
  const tagged = model.includes(':') ? model : `${model}:latest`;
  return b.models.includes(model) || b.models.includes(tagged);
}

/** Ollama's error answers: `{"error": "..."}`. */
function failure(res: ServerResponse, b: FakeBehaviour, model: unknown): boolean {
  if (b.failWith === 500) {
    sendJson(res, 500, { error: 'llama runner process has terminated: exit status 2' });
    return true;
  }
  if (b.failWith === 404 || !known(b, model)) {
    sendJson(res, 404, { error: `model "${String(model)}" not found, try pulling it first` });
    return true;
  }
  return false;
}

function chatLine(model: string, content: string, done: boolean): string {
  const base = { model, created_at: new Date().toISOString(), message: { role: 'assistant', content }, done };
  return JSON.stringify(done ? { ...base, done_reason: 'stop', total_duration: 1, eval_count: 1 } : base) + '\n';
}

/** Starts the fake on 127.0.0.1 (port 0). */
export async function startFakeOllama(options: Partial<FakeBehaviour> = {}): Promise<FakeServer> {
  const initial = { ...defaultBehaviour(FAKE_OLLAMA_MODELS, 768), ...options };
  return startFake(initial, async (req, res, b) => {
    const body = (req.body ?? {}) as Record<string, any>;
    switch (`${req.method} ${req.path}`) {
      case 'GET /api/version':
        return sendJson(res, 200, { version: FAKE_OLLAMA_VERSION });
      case 'GET /api/tags':
        return sendJson(res, 200, {
          models: b.models.map((name) => ({ name, model: name, modified_at: '2025-01-01T00:00:00Z', size: 1, digest: 'fake', details: {} })),
        });
      case 'POST /api/embed': {
        if (failure(res, b, body.model)) return;
        const input: string[] = Array.isArray(body.input) ? body.input : [String(body.input ?? '')];
        return sendJson(res, 200, { model: body.model, embeddings: input.map((t) => fakeVector(t, b.dimensions)) });
      }
      case 'POST /api/chat': {
        if (failure(res, b, body.model)) return;
        const text = replyText(b, (body.messages ?? []) as ChatTurn[]);
        if (body.stream === false) return sendJson(res, 200, JSON.parse(chatLine(body.model, text, true)));
        const lines = pieces(text, b.chunkChars).map((p) => chatLine(body.model, p, false));
        return streamLines(res, b, 'application/x-ndjson', lines, [chatLine(body.model, '', true)]);
      }
      default:
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('404 page not found');
    }
  });
}
