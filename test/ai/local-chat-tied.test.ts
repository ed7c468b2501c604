/** The built-in model: a "when" answer's time is its own, and a compound answer says a sentence once. */
import { describe, expect, it } from 'vitest';
import { NOT_COVERED, type GroundedSource } from '../../src/ai/grounded-prompt.js';
import { LocalChatModel } from '../../src/ai/local/local-chat.js';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { ask, TESLA } from './local-chat-fixtures.js';

describe.each([
  ['without an embedder', undefined],
  ['with the local embedder', new LocalEmbedder()],
])('LocalChatModel %s', (_name, embedder) => {
  const model = new LocalChatModel(embedder);

  it('does not answer "when" with a follow-up sentence’s date about another thing', async () => {
    const sources: GroundedSource[] = [
      { n: 1, label: 'Harbour tram', content: 'The harbour tram opened to big crowds along the quay.' },
      { n: 2, label: 'Council', content: 'The harbour tram budget was approved on 3 March 2024 by the council.' },
    ];
    const answer = await model.answer(ask('When did the harbour tram open?', sources));
    expect(answer).not.toContain('3 March 2024');
  });

  it('still answers "when" with the date of the answering sentence or the one after it', async () => {
    const sources: GroundedSource[] = [
      { n: 1, label: 'Harbour tram', content: 'The harbour tram opened to big crowds along the quay. The harbour tram opening day was 9 May 2025.' },
      { n: 2, label: 'Inventors', content: TESLA.content },
    ];
    expect(await model.answer(ask('When did the harbour tram open?', sources))).toContain('9 May 2025');
    expect(await model.answer(ask('When did Tesla die?', [TESLA]))).toContain('7 January 1943');
  });

  it('says a sentence two sources hold once in an answer to a question asking two things', async () => {
    const game = "Super Bowl 50 was played at Levi's Stadium in Santa Clara, California.";
    const sources: GroundedSource[] = [
      { n: 1, label: 'Super Bowl 50', content: game },
      { n: 3, label: 'From this discussion', section: 'recent', content: `Salon AI (28 Nov 2026, 12:10): ${game} [1]` },
      TESLA,
    ];
    const answer = await model.answer(ask('Where was Super Bowl 50 played, and when did Tesla die?', sources));
    expect(answer).toContain('Tesla died on 7 January 1943');
    expect(answer.split('Santa Clara').length).toBe(2);
  });
});

describe.each([
  ['without an embedder', undefined],
  ['with the local embedder', new LocalEmbedder()],
])('LocalChatModel %s on near-repeats', (_name, embedder) => {
  it('says a sentence once when another source says it a word or two shorter', async () => {
    const sources: GroundedSource[] = [
      { n: 1, label: 'Super Bowl 50', content: "Super Bowl 50 was played at Levi's Stadium in Santa Clara, California." },
      { n: 2, label: 'Game day', content: "Super Bowl 50 was played at Levi's Stadium in Santa Clara." },
      { ...TESLA, n: 3 },
    ];
    const answer = await new LocalChatModel(embedder).answer(ask('Where was Super Bowl 50 played, and when did Tesla die?', sources));
    expect(answer).toContain('Tesla died on 7 January 1943 in New York City. [3]');
    expect(answer.split("Levi's Stadium").length).toBe(2);
  });
});

describe.each([
  ['without an embedder', undefined],
  ['with the local embedder', new LocalEmbedder()],
])('LocalChatModel %s on an answer opening with a pronoun', (_name, embedder) => {
  const model = new LocalChatModel(embedder);
  const q = 'How old was the oldest quarterback to play in a Super Bowl?';
  const oldest = 'He is also the oldest quarterback ever to play in a Super Bowl at age 39.';

  it('reads it with the sentence naming whom it stands for past one that names nobody', async () => {
    const content = `Peyton Manning became the first quarterback ever to lead two different teams to multiple Super Bowls. The evening was cold. ${oldest}`;
    const answer = await model.answer(ask(q, [{ n: 1, label: 'Super Bowl 50 quarterbacks', content }]));
    expect(answer).toContain('Peyton Manning became the first quarterback');
    expect(answer).toContain('at age 39. [1]');
  });

  it('reads it so in a remembered conversation too', async () => {
    const memory: GroundedSource = {
      n: 2,
      label: 'Remembered from this room',
      section: 'memory',
      content: `Ann (3 Nov 2026, 12:10): Peyton Manning led two different teams to multiple Super Bowls.\nBob (3 Nov 2026, 12:11): ${oldest}`,
    };
    const answer = await model.answer(ask(q, [memory]));
    expect(answer).toContain('Peyton Manning led two different teams');
    expect(answer).toContain('at age 39. [2]');
  });
});

describe('LocalChatModel on a "when" answered by a line saying it again with the date', () => {
  it('answers with that line’s date', async () => {
    const memory: GroundedSource = {
      n: 5,
      label: 'Remembered from this room',
      section: 'memory',
      content:
        "Jon (3 Jan 2023, 12:10): Yeah, they're the ones performing at the festival!\nGina (3 Jan 2023, 12:11): Wow, that sounds fun.\n" +
        'Jon (3 Jan 2023, 12:12): Finishing up choreography to perform at a nearby festival next month (February 2023).',
    };
    const answer = await new LocalChatModel().answer(ask("When is Jon's group performing at a festival?", [memory]));
    expect(answer).toContain('February 2023');
  });
});

describe.each([
  ['without an embedder', undefined],
  ['with the local embedder', new LocalEmbedder()],
])('LocalChatModel %s on a remembered line asking', (_name, embedder) => {
  it('leads with the line telling, not the one asking the question’s words', async () => {
    const memory: GroundedSource = {
      n: 3,
      label: 'Remembered from this room',
      section: 'memory',
      content:
        'Melanie (8 May 2023, 12:10): Love the necklace you wore at the party, any special meaning to it?\n' +
        'Caroline (8 May 2023, 12:11): This necklace is super special to me - a gift from my grandma in Sweden.',
    };
    const answer = await new LocalChatModel(embedder).answer(ask("What special meaning does Caroline's necklace have?", [memory]));
    expect(answer.startsWith('Caroline: This necklace is super special to me')).toBe(true);
  });

  it('adds no line asking, a shared photo’s caption after it or not', async () => {
    const memory: GroundedSource = {
      n: 5,
      label: 'Remembered from this room',
      section: 'memory',
      content:
        'Caroline (8 May 2023, 12:10): I used to go horseback riding with my dad when I was a kid.\n' +
        'Melanie (8 May 2023, 12:11): Have you found any activities with your dad that feel the same? [shares a photo: a photo of a frisbee]',
    };
    const answer = await new LocalChatModel(embedder).answer(ask('What activity did Caroline use to do with her dad?', [memory]));
    expect(answer).toContain('horseback riding');
    expect(answer).not.toContain('Have you found');
  });

  it('still leads with a tag question, which tells', async () => {
    const memory: GroundedSource = {
      n: 4,
      label: 'Remembered from this room',
      section: 'memory',
      content: 'Caroline (8 May 2023, 12:10): Sunflowers mean warmth and happiness, right?\nMelanie (8 May 2023, 12:11): I love sunflowers in a vase.',
    };
    const answer = await new LocalChatModel(embedder).answer(ask('What do sunflowers mean to Caroline?', [memory]));
    expect(answer).toContain('warmth and happiness');
  });
});
