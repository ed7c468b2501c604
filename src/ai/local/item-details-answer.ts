/**
 * The built-in model's answers to questions about the room's own item (item-questions.ts): the
 * body rarely names its own byline (the durable-devices article's author is in its details only),
 * so they come from the prompt's item details (GroundedPrompt.item).
 */
import type { ItemDetails } from '../../content/item-details.js';
import { formatDay } from '../../text.js';
import { detailAsked } from '../item-questions.js';

/**
 * The answer to `question` from `details`, citing `[n]` (the room's own item's source, when the
 * prompt holds it); null when the question asks nothing of the item or its details lack what it
 * asks (then the sources may still say it: a byline in the body).
 */
export function answerFromDetails(question: string, details: ItemDetails, n?: number): string | null {
  const asked = detailAsked(question);
  if (!asked) return null;
  const cite = n === undefined ? '' : ` [${n}]`;
  const day = details.published ? formatDay(details.published) : undefined;
  const maker = details.author ?? (details.channel ? `the ${details.channel} channel` : undefined);
  const by = details.site ? ` by ${details.site}` : '';
  const on = day ? ` on ${day}` : '';
  const onSite = details.site ? ` on ${details.site}` : '';
  switch (asked) {
    case 'author':
      if (!maker) return null;
      if (details.kind === 'video') return `This video is from ${maker}${onSite}${day ? `, posted on ${day}` : ''}.${cite}`;
      return `This ${details.kind} is by ${maker}${details.site || day ? `, published${by}${on}` : ''}.${cite}`;
    case 'published':
      if (!day) return null;
      return `This ${details.kind} was ${details.kind === 'article' ? 'published' : 'posted'} on ${day}${details.kind === 'video' ? onSite : by}.${cite}`;
    case 'site':
      if (!details.site) return null;
      if (details.kind === 'video') return `This video is on ${details.site}${details.channel ? `, from the ${details.channel} channel` : ''}${on}.${cite}`;
      return `This ${details.kind} was published by ${details.site}${on}.${cite}`;
  }
}
