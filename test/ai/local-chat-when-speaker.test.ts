/** The built-in model: a "when" answer's time is not taken from someone else's line repeating the answer's words. */
import { describe, expect, it } from 'vitest';
import { NOT_COVERED, type GroundedSource } from '../../src/ai/grounded-prompt.js';
import { LocalChatModel } from '../../src/ai/local/local-chat.js';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { ask } from './local-chat-fixtures.js';

/** A remembered stretch of chat, one line a message. */
function remembered(n: number, lines: string[]): GroundedSource {
  return { n, label: 'From this discussion', section: 'memory', content: lines.join('\n') };
}

describe.each([
  ['without an embedder', undefined],
  ['with the local embedder', new LocalEmbedder()],
])('LocalChatModel %s on "when" in a remembered chat', (_name, embedder) => {
  const model = new LocalChatModel(embedder);
  const q = "When is Jon's group performing at a festival?";
  const jon = "Jon (20 Jan 2023, 16:29): Yeah, they're the ones performing at the festival!";

  it('does not date the asked one’s event by another speaker’s line holding the same words', async () => {
    const sources = [remembered(2, [jon]), remembered(3, ["Gina (2 Feb 2023, 10:00): My sister's band is performing at a festival in Oslo in 2024."])];
    expect(await model.answer(ask(q, sources))).toBe(NOT_COVERED);
  });

  it('still dates it by the same speaker saying it again with a time', async () => {
    const sources = [
      remembered(2, [jon]),
      remembered(3, ['Jon (21 Jan 2023, 09:00): We are performing at the festival in Oslo next month, in February 2023.']),
    ];
    expect(await model.answer(ask(q, sources))).toContain('February 2023');
  });
});
