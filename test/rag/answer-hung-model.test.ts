/**
 * An answer whose model server never answers the question's embedding (and ignores the abort):
 * the answer still ends at its time limit, and a shutdown still ends the answers it aborts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { item } from '../store/contract.js';
import { testApp } from '../helpers.js';

const LIMITS = { ASK_LIMIT_USER: '1000', ASK_LIMIT_ROOM: '1000', ASK_LIMIT_IP: '1000', API_RATE_LIMIT_PER_MINUTE: '10000' };

/** Embeds normally until `hang()`; then never answers, whatever the signal says, and tells `calledWhileHung`. */
class HangingEmbedder extends LocalEmbedder {
  private hung = false;
  private calls: (() => void)[] = [];
  hang(): void {
    this.hung = true;
  }
  calledWhileHung(): Promise<void> {
    return new Promise((resolve) => this.calls.push(resolve));
  }
  override embed(...args: Parameters<LocalEmbedder['embed']>): Promise<Float32Array[]> {
    if (!this.hung) return super.embed(...args);
    for (const tell of this.calls.splice(0)) tell();
    return new Promise(() => {});
  }
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function appWithHungEmbedder(env: Record<string, string>) {
  const embedder = new HangingEmbedder();
  const t = await testApp({ ...LIMITS, ...env } as never, { embedder, roomOptions: { shutdownGraceMs: 100 } });
  await t.app.ready();
  await t.app.salon.ingest.pipeline.put(item('news_1', { title: 'Gym news', body: 'The gym opens a new locker room on Monday.' }));
  embedder.hang();
  return { ...t, embedder };
}

describe('an answer whose embedding never comes back', () => {
  it('ends at its time limit with ERR_AI_TIMEOUT', async () => {
    const t = await appWithHungEmbedder({ AI_TIMEOUT_MS: '300' });
    closers.push(t.close);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/rooms/news_1/ask', payload: { text: 'When does the locker room open?' } });
    expect(res.json().error.code).toBe('ERR_AI_TIMEOUT');
  });

  it('ends when the server shuts down, so the shutdown ends too', async () => {
    const t = await appWithHungEmbedder({ AI_TIMEOUT_MS: '600000' });
    const embedding = t.embedder.calledWhileHung();
    const asked = t.app.inject({ method: 'POST', url: '/api/v1/rooms/news_1/ask', payload: { text: 'When does the locker room open?' } });
    await embedding;
    await t.close();
    expect((await asked).json().error.code).toBe('ERR_ASSISTANT_FAILED');
  });
});
