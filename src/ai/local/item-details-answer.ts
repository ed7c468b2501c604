/**
 * The built-in model's answers to questions about the room's own item (item-questions.ts): the
 * body rarely names its own byline (the durable-devices article's author is in its details only),
 * so they come from the prompt's item details (GroundedPrompt.item).
 */
import type { ItemDetails } from '../../content/item-details.js';
import { markdownLiteral, withoutLiteralEscapes } from '../../protocol/markdown-literal.js';
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
  // A page writes its byline, channel and site name: shown as typed, as a quote is, never as a
  // link, an image or a `[n]` citing another source under the assistant's name.
  const author = details.author && literal(details.author);
  const channel = details.channel && literal(details.channel);
  const site = details.site && literal(details.site);
  const day = details.published ? formatDay(details.published) : undefined;
  const maker = author || (channel ? `the ${channel} channel` : undefined);
  const by = site ? ` by ${site}` : '';
  const on = day ? ` on ${day}` : '';
  const onSite = site ? ` on ${site}` : '';
  switch (asked) {
    case 'author':
      if (!maker) return null;
      if (details.kind === 'video') return `This video is from ${maker}${onSite}${day ? `, posted on ${day}` : ''}.${cite}`;
      return `This ${details.kind} is by ${maker}${site || day ? `, published${by}${on}` : ''}.${cite}`;
    case 'published':
      if (!day) return null;
      return `This ${details.kind} was ${details.kind === 'article' ? 'published' : 'posted'} on ${day}${details.kind === 'video' ? onSite : by}.${cite}`;
    case 'site':
      if (!site) return null;
      if (details.kind === 'video') return `This video is on ${site}${channel ? `, from the ${channel} channel` : ''}${on}.${cite}`;
      return `This ${details.kind} was published by ${site}${on}.${cite}`;
  }
}

/** A detail as it reads in a message: its markup escaped (markdownLiteral). */
function literal(text: string): string {
  return markdownLiteral(withoutLiteralEscapes(text));
}
