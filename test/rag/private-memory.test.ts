/**
 * Private asks, as a property: random sequences of public and private asks by several members
 * (seeded, so a failure replays). A private ask's text may reach only the prompts of its asker's
 * own private asks: never a prompt built for another member or for a public ask, never a public
 * answer or its sources.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LocalChatModel } from '../../src/ai/local/local-chat.js';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import type { ChatMessage } from '../../src/ai/types.js';
import { prng } from '../../bench/synthetic-text.js';
import { item } from '../store/contract.js';
import { testApp } from '../helpers.js';
import { joined } from '../rooms/helpers.js';

/** The local model, recording every prompt it is asked to answer. */
class RecordingChat extends LocalChatModel {
  readonly prompts: string[] = [];
  override async *stream(messages: ChatMessage[], signal?: AbortSignal): AsyncIterable<string> {
    this.prompts.push(messages.map((m) => m.content).join('\n'));
    yield* super.stream(messages, signal);
  }
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe('private asks', () => {
  for (const seed of [1, 2, 3]) {
    it(`never leak into another member's prompt or a public answer (seed ${seed})`, async () => {
      const chat = new RecordingChat(new LocalEmbedder());
      const t = await testApp({ ASK_LIMIT_USER: '1000', ASK_LIMIT_ROOM: '1000', ASK_LIMIT_IP: '1000' } as never, {
        chat,
        roomOptions: { shutdownGraceMs: 100, ratePerSecond: 1000, rateBurst: 1000 },
      });
      close = t.close;
      const app = t.app;
      await app.ready();
      await app.salon.ingest.pipeline.put(
        item('news_1', { title: 'Rust 2.0 released', body: 'The Rust team shipped Rust 2.0 on Tuesday. Compile times are twice as fast.' }),
      );
      const names = ['Ann', 'Bo', 'Cy'];
      const members = await Promise.all(names.map((name) => joined(app, name, 'news_1')));
      const next = prng(seed);
      /** Secrets told privately, by member. */
      const secrets = new Map<string, string[]>(names.map((n) => [n, []]));
      for (let i = 0; i < 24; i++) {
        const who = Math.floor(next() * names.length);
        const name = names[who];
        const { client } = members[who];
        const isPrivate = next() < 0.5;
        const tells = isPrivate && next() < 0.6;
        const secret = `zq${seed}x${i}word`;
        const text = tells ? `My secret word is ${secret}; is Rust 2.0 faster?` : next() < 0.5 ? 'What is my secret word?' : 'What is the secret word?';
        const before = chat.prompts.length;
        client.send(isPrivate ? { type: 'ask', text, clientId: `a${i}`, private: true } : { type: 'say', text: `@ai ${text}`, clientId: `a${i}` });
        // Public answers reach every member, so each waits for its own: the answer to its question, or its private one.
        const question = isPrivate ? null : (await client.next('message', (f) => f.message.clientId === `a${i}`)).message;
        const done = await client
          .next('assistant.done', (f) => (question ? f.message.replyTo === question.id : f.message.id.startsWith('private_')), 10_000)
          .catch((err) => {
            throw new Error(`${(err as Error).message}: ${JSON.stringify(client.all('error'))}`);
          });
        await app.salon.memory.idle();
        // Which secrets this ask may see: its asker's own, and only when asked privately.
        const allowed = new Set(isPrivate ? [...secrets.get(name)!, ...(tells ? [secret] : [])] : []);
        const forbidden = [...secrets.values()].flat().filter((s) => !allowed.has(s));
        const seen = [...chat.prompts.slice(before), done.message.text, JSON.stringify(done.message.sources ?? [])].join('\n');
        for (const s of forbidden) expect(seen, `ask ${i} by ${name} (${isPrivate ? 'private' : 'public'}) saw ${s}`).not.toContain(s);
        if (tells) secrets.get(name)!.push(secret);
      }
      // The property was put to the test: some secret was told, and recalled by its owner.
      expect([...secrets.values()].flat().length).toBeGreaterThan(0);
    });
  }

  it('recalls a private secret for its owner’s private ask', async () => {
    const t = await testApp({} as never, { roomOptions: { shutdownGraceMs: 100 } });
    close = t.close;
    await t.app.ready();
    await t.app.salon.ingest.pipeline.put(item('news_1', { title: 'Rust 2.0 released', body: 'The Rust team shipped Rust 2.0 on Tuesday.' }));
    const { client } = await joined(t.app, 'Ann', 'news_1');
    client.send({ type: 'ask', text: 'My secret word is zqword; is Rust 2.0 out?', clientId: 'p1', private: true });
    await client.next('assistant.done', () => true, 10_000);
    await t.app.salon.memory.idle();
    client.send({ type: 'ask', text: 'What is my secret word?', clientId: 'p2', private: true });
    expect((await client.next('assistant.done', () => true, 10_000)).message.text).toContain('zqword');
  });
});
