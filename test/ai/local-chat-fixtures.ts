/** Sources and prompts the built-in model's tests ask about. */
import { newNonce, renderGroundedPrompt, type GroundedSource } from '../../src/ai/grounded-prompt.js';
import type { ChatMessage } from '../../src/ai/types.js';

export const SUPER_BOWL: GroundedSource = {
  n: 1,
  label: 'Super Bowl 50',
  content:
    'Super Bowl 50 was an American football game to determine the champion of the National Football League for the 2015 season. ' +
    'The Denver Broncos defeated the Carolina Panthers 24–10 to earn their third Super Bowl title. ' +
    "The game was played on February 7, 2016, at Levi's Stadium in the San Francisco Bay Area at Santa Clara, California.",
};

export const TESLA: GroundedSource = {
  n: 2,
  label: 'Nikola Tesla',
  content: 'Nikola Tesla was an inventor. Tesla died on 7 January 1943 in New York City. His work fell into obscurity after his death.',
};

export const SOURCES: GroundedSource[] = [SUPER_BOWL, TESLA];

/** The conversation the pipeline would send: instructions, then the grounded prompt of `question`. */
export function ask(question: string, sources = SOURCES): ChatMessage[] {
  return [
    { role: 'system', content: 'instructions' },
    { role: 'user', content: renderGroundedPrompt({ topic: 'Sports and science', sources, question }, newNonce()) },
  ];
}
