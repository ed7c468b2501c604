/**
 * What reaches the model's prompt from conversation memory, traced end to end through the app
 * (sockets, the memory service, the pipeline, the built-in model): a member's private exchange only
 * in their own private asks' prompts, and with the thread's memory switched off (over the API, as
 * an admin does), no remembered passage in any prompt until it is switched on again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SECTION_HEADERS } from '../../src/ai/grounded-prompt.js';
import { LocalChatModel } from '../../src/ai/local/local-chat.js';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import type { ChatMessage } from '../../src/ai/types.js';
import { item } from '../store/contract.js';
import { ADMIN, testApp } from '../helpers.js';
import { joined } from '../rooms/helpers.js';

/** The built-in model, keeping the user message of every answer it is asked for. */
class RecordingChat extends LocalChatModel {
  readonly prompts: string[] = [];
  override async *stream(messages: ChatMessage[], signal?: AbortSignal): AsyncIterable<string> {
    this.prompts.push(messages.at(-1)?.content ?? '');
    yield* super.stream(messages, signal);
  }
}

const SECRET = 'zq4417lockercode';
/** A question about the article too, so that no ask abstains and each has a prompt to look into. */
const ASKED = 'Are Rust 2.0 compile times faster, and what is my locker code?';
const LIMITS = { ASK_LIMIT_USER: '1000', ASK_LIMIT_ROOM: '1000', ASK_LIMIT_IP: '1000' };

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe('memory in the prompt', () => {
  it('holds a private exchange only for its asker’s private asks, and nothing while the thread’s memory is off', async () => {
    const chat = new RecordingChat(new LocalEmbedder());
    const t = await testApp(LIMITS as never, { chat, roomOptions: { shutdownGraceMs: 100 } });
    close = t.close;
    const { app } = t;
    await app.ready();
    await app.salon.ingest.pipeline.put(
      item('news_1', { title: 'Rust 2.0 released', body: 'The Rust team shipped Rust 2.0 on Tuesday. Compile times are twice as fast.' }),
    );
    const { client: ann, welcome } = await joined(app, 'Ann', 'news_1');
    const { client: bo } = await joined(app, 'Bo', 'news_1');

    /** Asks and waits for the answer; the prompt the model was given. */
    let asks = 0;
    const prompt = async (client: typeof ann, text: string, privately: boolean): Promise<string> => {
      const clientId = `q${++asks}`;
      const before = chat.prompts.length;
      if (privately) {
        client.send({ type: 'ask', text, clientId, private: true });
        await client.next('assistant.done', (f) => f.message.id.startsWith('private_'), 10_000);
      } else {
        client.send({ type: 'say', text: `@ai ${text}`, clientId });
        const question = (await client.next('message', (f) => f.message.clientId === clientId, 10_000)).message;
        await client.next('assistant.done', (f) => f.message.replyTo === question.id, 10_000);
      }
      await app.salon.memory.idle();
      expect(chat.prompts.length).toBe(before + 1);
      return chat.prompts.at(-1)!;
    };
    const switchMemory = async (on: boolean) => {
      const res = await app.inject({
        method: 'PUT',
        url: `/api/v1/threads/${welcome.threadId}/config`,
        headers: ADMIN,
        payload: { enable_chat_history_rag: on },
      });
      expect(res.statusCode, res.body).toBe(200);
    };

    await prompt(ann, `My locker code is ${SECRET}; does Rust 2.0 make compile times faster?`, true);
    expect(await prompt(ann, 'What is my locker code?', true)).toContain(SECRET);
    // Nobody else's prompt, private or public, and not Ann's own public one (its answer is the room's).
    expect(await prompt(bo, ASKED, true)).not.toContain(SECRET);
    expect(await prompt(bo, ASKED, false)).not.toContain(SECRET);
    expect(await prompt(ann, ASKED, false)).not.toContain(SECRET);

    await switchMemory(false);
    for (const [client, privately] of [
      [ann, true],
      [ann, false],
      [bo, true],
    ] as const) {
      const off = await prompt(client, ASKED, privately);
      expect(off).not.toContain(SECRET);
      expect(off).not.toContain(SECTION_HEADERS.memory);
    }

    await switchMemory(true);
    const on = await prompt(ann, 'What is my locker code?', true);
    expect(on).toContain(SECTION_HEADERS.memory);
    expect(on).toContain(SECRET);
  });
});
