/** namesIn: the names a question mentions, not the asker's `I`. */
import { describe, expect, it } from 'vitest';
import type { GroundedSource } from '../../src/ai/grounded-prompt.js';
import { LocalChatModel } from '../../src/ai/local/local-chat.js';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { namesIn } from '../../src/ai/questions.js';
import { ask } from './local-chat-fixtures.js';

describe('namesIn', () => {
  it('reads no name in "I" nor its contractions', () => {
    expect(namesIn('Should I buy one?')).toEqual([]);
    expect(namesIn("Where was the game played, now that I'm curious?")).toEqual([]);
    expect(namesIn('What have I’ve missed since I’d left?')).toEqual([]);
    expect(namesIn("Now that I'm here, where is Ann's party?")).toEqual(["Ann's"]);
    expect(namesIn('Did Ian and India go?')).toEqual(['Ian', 'India']);
  });
});

describe.each([
  ['without an embedder', undefined],
  ['with the local embedder', new LocalEmbedder()],
])('LocalChatModel %s on a question saying "I\'m"', (_name, embedder) => {
  it('does not lead with a chat line for holding "I\'m" as though it were the name asked about', async () => {
    const sources: GroundedSource[] = [
      {
        n: 1,
        label: 'Super Bowl 50',
        content: "Super Bowl 50 was an American football game. The game was played on February 7, 2016, at Levi's Stadium in Santa Clara, California.",
      },
      { n: 2, label: 'From this discussion', section: 'recent', content: "Ann (28 Nov 2026, 12:10): I'm watching the game at the stadium bar on Pier 9." },
    ];
    const answer = await new LocalChatModel(embedder).answer(ask("Where was the game played, now that I'm curious?", sources));
    expect(answer.startsWith("The game was played on February 7, 2016, at Levi's Stadium")).toBe(true);
  });
});

describe.each([
  ['without an embedder', undefined],
  ['with the local embedder', new LocalEmbedder()],
])('LocalChatModel %s on a "who" answer opening with a pronoun', (_name, embedder) => {
  it('reads it with the sentence naming someone, not one whose only capital is "I\'m" or "I\'ve"', async () => {
    for (const aside of ["I'm told the outage shook everyone.", "I've heard the outage shook everyone."]) {
      const content = `Tom Berg joined the reliability team in May. ${aside} He wrote the post-mortem in one night.`;
      const answer = await new LocalChatModel(embedder).answer(ask('Who wrote the post-mortem?', [{ n: 1, label: 'Outage', content }]));
      expect(answer).toBe('Tom Berg joined the reliability team in May. [1] He wrote the post-mortem in one night. [1]');
    }
  });
});
