/** The built-in model on questions asking several things, on what one person said, and on earlier asks. */
import { describe, expect, it } from 'vitest';
import { NOT_COVERED, type GroundedSource } from '../../src/ai/grounded-prompt.js';
import { LocalChatModel } from '../../src/ai/local/local-chat.js';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { linesOfSpeakerAsked, speakerAsked } from '../../src/ai/local/speaker-asked.js';
import { questionParts } from '../../src/ai/questions.js';
import { ask, SUPER_BOWL, TESLA } from './local-chat-fixtures.js';

/** The recent chat as the pipeline gives it, one line a speaker, a minute apart. */
function chat(n: number, lines: [speaker: string, text: string][]): GroundedSource {
  const content = lines.map(([speaker, text], i) => `${speaker} (28 Nov 2026, 12:${String(10 + i).padStart(2, '0')}): ${text}`).join('\n');
  return { n, label: 'From this discussion', section: 'recent', content };
}

describe('questionParts', () => {
  it('splits a question asking two or three things at their question words or question marks', () => {
    expect(questionParts('How much did waits drop, and what do the nurses worry about?')).toEqual([
      'How much did waits drop?',
      'what do the nurses worry about?',
    ]);
    expect(questionParts('Where was Super Bowl 50 played?  When did Tesla die?')).toEqual(['Where was Super Bowl 50 played?', 'When did Tesla die?']);
    expect(questionParts('Who won Super Bowl 50; where was the game played; when did Tesla die?')).toEqual([
      'Who won Super Bowl 50?',
      'where was the game played?',
      'when did Tesla die?',
    ]);
  });

  it('keeps whole a question whose second part leans on the first, or that asks one thing', () => {
    for (const q of [
      'What happened to the Broncos, and why?',
      'Really? Who won Super Bowl 50?',
      'What is the stadium and how does it work?',
      'Who played Denver and Carolina in Super Bowl 50?',
      'Where was Super Bowl 50 played?',
    ])
      expect(questionParts(q), q).toEqual([q]);
  });
});

describe('speakerAsked', () => {
  it('reads whose words are asked and what about, leaving out when', () => {
    expect(speakerAsked('What did Guest 7414 say earlier?')).toEqual({ name: 'Guest 7414', about: [], asks: false });
    expect(speakerAsked('What did Ann ask?')).toEqual({ name: 'Ann', about: [], asks: true });
    expect(speakerAsked('what has Ann said about the stadium so far?')?.name).toBe('Ann');
    expect(speakerAsked('what has Ann said about the stadium so far?')?.about.length).toBe(1);
    expect(speakerAsked('What did Ann mention?')?.name).toBe('Ann');
  });

  it('asks no one’s words for the room, a pronoun or a thing', () => {
    for (const q of [
      'What did we say?',
      'what did people say about it?',
      'What did she say?',
      'What did the article say?',
      'Who said it?',
      'What did Ann eat?',
    ])
      expect(speakerAsked(q), q).toBeNull();
  });

  it('finds the lines of the person named, a Cyrillic А in one as the Latin A, and none of another', () => {
    const room = chat(3, [
      ['Ann', 'The stadium looked packed.'],
      ['Bob', 'Denver deserved it.'],
      ['Аnn', 'Tesla would have loved the lights.'],
    ]);
    expect(linesOfSpeakerAsked('What did Ann say?', [room])?.map((l) => l.line)).toEqual([
      'Ann (28 Nov 2026, 12:10): The stadium looked packed.',
      'Аnn (28 Nov 2026, 12:12): Tesla would have loved the lights.',
    ]);
    expect(linesOfSpeakerAsked('What did Ann say about Tesla?', [room])?.map((l) => l.line)).toEqual([
      'Аnn (28 Nov 2026, 12:12): Tesla would have loved the lights.',
    ]);
    expect(linesOfSpeakerAsked('What did Ann say about the weather?', [room])).toBeNull();
    expect(linesOfSpeakerAsked('What did Carol say?', [room])).toBeNull();
  });

  it('tells what someone said from what they asked the assistant', () => {
    // "What did Cara say about the clinic?" quoted her `@ai When did the clinics close?` too.
    const room = chat(3, [
      ['Cara', 'I think the clinic in Eastbank closed in spring.'],
      ['Cara', '@ai When did the clinics close?'],
    ]);
    expect(linesOfSpeakerAsked('What did Cara say about the clinic?', [room])?.map((l) => l.line)).toEqual([
      'Cara (28 Nov 2026, 12:10): I think the clinic in Eastbank closed in spring.',
    ]);
    expect(linesOfSpeakerAsked('What did Cara ask?', [room])?.map((l) => l.line)).toEqual(['Cara (28 Nov 2026, 12:11): @ai When did the clinics close?']);
    // Asked all she said, both; someone who only asked: what they said of it is what they asked.
    expect(linesOfSpeakerAsked('What did Cara say?', [room])).toHaveLength(2);
    const asker = chat(3, [['Dan', '@ai who won the game?']]);
    expect(linesOfSpeakerAsked('What did Dan say about the game?', [asker])?.map((l) => l.line)).toEqual(['Dan (28 Nov 2026, 12:10): @ai who won the game?']);
  });
});

describe.each([
  ['without an embedder', undefined],
  ['with the local embedder', new LocalEmbedder()],
])('LocalChatModel %s', (_name, embedder) => {
  const model = new LocalChatModel(embedder);

  it('answers each part of a question asking two things', async () => {
    const answer = await model.answer(ask('Where was Super Bowl 50 played, and when did Tesla die?', [SUPER_BOWL, TESLA]));
    expect(answer).toContain('Santa Clara, California. [1]');
    expect(answer).toContain('Tesla died on 7 January 1943 in New York City. [2]');
    // A sentence answering both parts, or the whole and a part, is quoted once.
    expect(answer.split('Santa Clara').length).toBe(2);
  });

  it('says which part its sources do not answer when the whole finds nothing and one part is found', async () => {
    const answer = await model.answer(ask('Who won the 1998 Tour de France cycling race, and when did Tesla die?', [TESLA]));
    expect(answer).toBe('Tesla died on 7 January 1943 in New York City. [2] The sources I found do not answer "Who won the 1998 Tour de France cycling race?"');
  });

  it('answers what a person said with their lines, each with its source', async () => {
    const room = chat(3, [
      ['Guest 7414', 'Hello all, interesting piece about the game.'],
      ['Bob', 'Denver deserved it.'],
      ['Guest 7414', '@ai where was the game played?'],
      ['Salon AI', "The game was played at Levi's Stadium. [1]"],
    ]);
    const answer = await model.answer(ask('What did Guest 7414 say earlier?', [SUPER_BOWL, room]));
    expect(answer).toBe('Guest 7414: Hello all, interesting piece about the game. [3] Guest 7414: @ai where was the game played? [3]');
  });

  it('never answers with an earlier ask that only asks, though it shares the question’s words', async () => {
    const room = chat(3, [['Bob', '@ai how much did Tesla earn, and who won the 2030 world cup?']]);
    expect(await model.answer(ask('How much did Tesla earn?', [TESLA, room]))).toBe(NOT_COVERED);
  });
});
