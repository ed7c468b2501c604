/**
 * A loopback fake of an OpenAI-compatible server for tests: `/v1/embeddings`,
 * `/v1/chat/completions` (SSE with `data:` lines and `[DONE]`, or one JSON answer) and
 * `/v1/models`. Same behaviours as the Ollama fake (slow, 404/500 in OpenAI's error shape, drop
 * mid-stream, request recording); with `apiKey` set it answers 401 to any other bearer token and,
 * like the real API, echoes the wrong key in the error (so tests can check it is scrubbed).
 *
 *   const api = await startFakeOpenAI({ apiKey: 'sk-test', models: ['text-embedding-3-small', 'gpt-4o-mini'] });
 *   // OPENAI_BASE_URL = `${api.url}/v1`
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

export const FAKE_OPENAI_MODELS = ['text-embedding-3-small', 'gpt-4o-mini'];

export interface FakeOpenAIOptions extends Partial<FakeBehaviour> {
  /** When set, requests must carry `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
}

function apiError(res: ServerResponse, status: number, message: string, type: string, code: string | null): void {
  sendJson(res, status, { error: { message, type, param: null, code } });
}

function failure(res: ServerResponse, b: FakeBehaviour, model: unknown): boolean {
  if (b.failWith === 500) {
    apiError(res, 500, 'The server had an error while processing your request.', 'server_error', null);
    return true;
  }
  if (b.failWith === 404 || typeof model !== 'string' || !b.models.includes(model)) {
    apiError(res, 404, `The model \`${String(model)}\` does not exist or you do not have access to it.`, 'invalid_request_error', 'model_not_found');
    return true;
  }
  return false;
}

function chunk(model: string, delta: Record<string, string>, finish: string | null): string {
  const body = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] };
  return `data: ${JSON.stringify(body)}\n\n`;
}

/** Starts the fake on 127.0.0.1 (port 0); its API lives under `${url}/v1`. */
export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeServer> {
  const { apiKey, ...behaviour } = options;
  const initial = { ...defaultBehaviour(FAKE_OPENAI_MODELS, 1536), ...behaviour };
  return startFake(initial, async (req, res, b) => {
    if (apiKey !== undefined && req.headers.authorization !== `Bearer ${apiKey}`) {
      const given = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      return apiError(
        res,
        401,
        `Incorrect API key provided: ${given}. You can find your API key at https://example.test/keys.`,
        'invalid_request_error',
        'invalid_api_key',
      );
    }
    const body = (req.body ?? {}) as Record<string, any>;
    switch (`${req.method} ${req.path}`) {
      case 'GET /v1/models':
        return sendJson(res, 200, { object: 'list', data: b.models.map((id) => ({ id, object: 'model', created: 1, owned_by: 'fake' })) });
      case 'POST /v1/embeddings': {
        if (failure(res, b, body.model)) return;
        const input: string[] = Array.isArray(body.input) ? body.input : [String(body.input ?? '')];
        const data = input.map((t, index) => ({ object: 'embedding', index, embedding: fakeVector(t, b.dimensions) }));
        // Real servers may answer out of order; `index` is what counts.
        return sendJson(res, 200, { object: 'list', data: data.reverse(), model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } });
      }
      case 'POST /v1/chat/completions': {
        if (failure(res, b, body.model)) return;
        const text = replyText(b, (body.messages ?? []) as ChatTurn[]);
        if (!body.stream) {
          return sendJson(res, 200, {
            id: 'chatcmpl-fake',
            object: 'chat.completion',
            created: 1,
            model: body.model,
            choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
          });
        }
        const lines = pieces(text, b.chunkChars).map((p) => chunk(body.model, { content: p }, null));
        // The role comes first, in the same write as the first piece, as real servers send them.
        lines[0] = chunk(body.model, { role: 'assistant', content: '' }, null) + (lines[0] ?? '');
        return streamLines(res, b, 'text/event-stream', lines, [chunk(body.model, {}, 'stop'), 'data: [DONE]\n\n']);
      }
      default:
        apiError(res, 404, `Unknown request URL: ${req.method} ${req.path}.`, 'invalid_request_error', 'unknown_url');
    }
  });
}
