/** What model-server failures say: the full message for the operator, a public one for clients. */
import { describe, expect, it } from 'vitest';
import { HttpStatusError, describeFailure, unreachable, type ProviderDescription } from '../../src/ai/remote/errors-map.js';
import { withoutUserinfo } from '../../src/url-userinfo.js';
import { OllamaChatModel, OllamaEmbedder } from '../../src/ai/remote/ollama.js';
import { clientMessage } from '../../src/errors.js';
import { collect, rejection } from './remote-cases.js';

const ollama: ProviderDescription = {
  name: 'Ollama',
  url: 'http://ann:s3cret@10.1.2.3:11434',
  startHint: 'start it with `ollama serve` (or set OLLAMA_HOST)',
  missingModelHint: (model) => `run \`ollama pull ${model}\``,
};

function connectionError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 10.1.2.3:11434`), { code });
}

describe('model server failures', () => {
  it('keep the address and the server’s own text for the operator, and tell clients only the failure and its fix', () => {
    const cases = [
      { err: new HttpStatusError(500, 'llama runner process has terminated'), shown: 'AI provider unavailable: Ollama answered HTTP 500' },
      { err: new HttpStatusError(401, 'bad key'), shown: 'AI provider unavailable: Ollama refused the credentials (HTTP 401); check the API key' },
      { err: new HttpStatusError(404, 'page not found'), shown: 'AI provider unavailable: Ollama answered 404; check its URL' },
      { err: connectionError('ECONNRESET'), shown: 'AI provider gave an unusable answer: the connection to Ollama broke off' },
      { err: new Error('unexpected end of stream'), shown: 'AI provider gave an unusable answer: Ollama failed' },
      { err: connectionError('ECONNREFUSED'), shown: 'AI provider unavailable: is Ollama running? start it with `ollama serve` (or set OLLAMA_HOST)' },
    ];
    for (const { err, shown } of cases) {
      const e = describeFailure(err, ollama, 'llama3.2');
      expect(clientMessage(e)).toBe(shown);
      expect(e.message).toContain('10.1.2.3:11434');
      expect(e.message).not.toContain('s3cret');
      expect(e.message).not.toContain('ann:');
    }
    expect(describeFailure(new HttpStatusError(500, 'llama runner process has terminated'), ollama, 'm').message).toContain('llama runner');
  });

  it('name a missing model and its fix to everyone', () => {
    const e = describeFailure(new HttpStatusError(404, 'model "llama3.2" not found, try pulling it first'), ollama, 'llama3.2');
    expect(e.code).toBe('ERR_AI_MODEL_MISSING');
    expect(clientMessage(e)).toBe(e.message);
    expect(e.message).toContain('ollama pull llama3.2');
  });

  // Regression: OLLAMA_HOST=http://127.0.0.1:1 (a port fetch refuses before connecting) was
  // "ERR_AI_BAD_RESPONSE: Ollama failed", naming no fix (DESIGN §5: unreachable names one).
  it('tell a server on a port fetch never connects to as unreachable, with the fix', async () => {
    const limits = { timeoutMs: 5_000, idleTimeoutMs: 5_000 };
    const failures = [
      await rejection(new OllamaEmbedder('nomic-embed-text', { host: 'http://127.0.0.1:1', ...limits }).embed(['a'])),
      await rejection(collect(new OllamaChatModel('llama3.2', { host: 'http://127.0.0.1:1', ...limits }).stream([{ role: 'user', content: 'hi' }]))),
    ];
    for (const err of failures) {
      expect(err.code).toBe('ERR_AI_UNAVAILABLE');
      expect(clientMessage(err as never)).toContain('serve it on another port');
    }
    expect(clientMessage(failures[0] as never)).toContain('OLLAMA_HOST');
    expect(failures[0].message).toContain('127.0.0.1:1');
  });

  it('keep the cause of an unreachable server', () => {
    const cause = connectionError('ECONNREFUSED');
    expect(unreachable(ollama, cause).cause).toBe(cause);
  });

  it('drop credentials from a URL and leave others as they are', () => {
    expect(withoutUserinfo('http://ann:s3cret@10.1.2.3:11434')).toBe('http://10.1.2.3:11434/');
    expect(withoutUserinfo('http://10.1.2.3:11434')).toBe('http://10.1.2.3:11434');
    expect(withoutUserinfo('not a url')).toBe('not a url');
    // Malformed (no parser takes them), but the password is still the one someone set.
    for (const password of ['s3/cret', 's3?cret', 's3#cret'])
      expect(withoutUserinfo(`http://ann:${password}@10.1.2.3:11434/x`)).toBe('http://10.1.2.3:11434/x');
    expect(withoutUserinfo('not a url @ all')).toBe('not a url @ all');
  });
});
