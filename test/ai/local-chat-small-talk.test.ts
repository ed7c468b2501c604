/** The built-in model on a remembered chat: small talk neither leads nor follows an answer. */
import { describe, expect, it } from 'vitest';
import type { GroundedSource } from '../../src/ai/grounded-prompt.js';
import { LocalChatModel } from '../../src/ai/local/local-chat.js';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { smallTalkFor } from '../../src/ai/local/small-talk.js';
import { ask } from './local-chat-fixtures.js';

/** A remembered stretch of chat, one line a message. */
function remembered(n: number, lines: string[]): GroundedSource {
  return { n, label: 'From this discussion', section: 'memory', content: lines.join('\n') };
}

const GREETINGS = remembered(2, ['Melanie (8 May 2023, 12:01): Hey Caroline! Good to see you!', "Caroline (8 May 2023, 12:02): Hi Mel, how's it going?"]);

describe('smallTalkFor', () => {
  const speakers = new Set(['carolin', 'melani']);

  it('finds greetings, thanks and goodbyes that hold the question’s words only as a name or a set phrase', () => {
    const smallTalk = smallTalkFor('What did Caroline and Melanie see at the museum?', speakers);
    expect(smallTalk('Melanie (8 May 2023, 12:01): Hey Caroline!')).toBe(true);
    expect(smallTalk('Good to see you!')).toBe(true);
    expect(smallTalk("Hi Caroline, how's it going?")).toBe(true);
    expect(smallTalk('Thanks, Melanie!')).toBe(true);
    expect(smallTalk('Melanie: We saw the dinosaur hall at the museum.')).toBe(false);
    // A greeting that goes on to say what is asked is no small talk.
    expect(smallTalk('Hey Caroline, the museum was packed today!')).toBe(false);
    expect(smallTalkFor('Will Melanie visit the lake soon?', speakers)('Talk to you soon!')).toBe(true);
  });

  it('reads "a good night" as what a night was like, and "Good night!" as a goodbye', () => {
    const smallTalk = smallTalkFor('What did Melanie do on Friday night?', speakers);
    expect(smallTalk('Melanie (8 May 2023, 12:01): Had a good night at the concert!')).toBe(false);
    expect(smallTalk('Good night, Caroline!')).toBe(true);
    expect(smallTalkFor('How was the morning run?', speakers)('It was such a good morning for it.')).toBe(false);
  });

  it('keeps a line telling something in other words than the question’s, and any line when only a speaker is asked', () => {
    const smallTalk = smallTalkFor('What does Melanie do to destress?', speakers);
    expect(smallTalk("I've been running farther to de-stress, which has been great for my headspace.")).toBe(false);
    expect(smallTalkFor('Who is Caroline?', speakers)('Thanks, Caroline!')).toBe(false);
  });
});

describe.each([
  ['without an embedder', undefined],
  ['with the local embedder', new LocalEmbedder()],
])('LocalChatModel %s on small talk', (_name, embedder) => {
  const model = new LocalChatModel(embedder);

  it('does not begin an answer with a greeting addressing who is asked about', async () => {
    const told = remembered(3, ['Melanie (9 May 2023, 12:01): We saw the dinosaur hall at the museum.']);
    const answer = await model.answer(ask('What did Caroline and Melanie see?', [GREETINGS, told]));
    expect(answer).toBe('Melanie: We saw the dinosaur hall at the museum. [3]');
  });

  it('does not begin or go on with a goodbye holding a word of the question', async () => {
    const enjoy = [
      remembered(2, ['Caroline (8 May 2023, 12:02): Enjoy your day, Melanie!']),
      remembered(3, ['Melanie (9 May 2023, 12:01): I enjoy old records of Bach while I paint.']),
    ];
    expect(await model.answer(ask('Which composers does Melanie enjoy?', enjoy))).toBe('Melanie: I enjoy old records of Bach while I paint. [3]');
    const soon = remembered(2, [
      'Melanie (8 May 2023, 12:01): We visited the lake with the kids last summer.',
      'Melanie (8 May 2023, 12:02): Talk to you soon!',
    ]);
    expect(await model.answer(ask('Will Melanie visit the lake again soon?', [soon]))).not.toContain('Talk to you soon');
  });

  it('quotes what a person said of what is asked, not their thanks addressing someone it names', async () => {
    const lines = [
      remembered(2, [
        'Caroline (25 May 2023, 13:25): I looked into adoption agencies today.',
        "Melanie (25 May 2023, 13:26): That's great, Caroline!",
        'Melanie (25 May 2023, 13:27): Sounds great, Caroline!',
      ]),
      remembered(3, ["Melanie (26 May 2023, 10:00): Your decision to adopt is brave, you'll be an awesome mom."]),
    ];
    const answer = await model.answer(ask("What does Melanie think about Caroline's decision to adopt?", lines));
    expect(answer).toBe("Melanie: Your decision to adopt is brave, you'll be an awesome mom. [3]");
  });
});
