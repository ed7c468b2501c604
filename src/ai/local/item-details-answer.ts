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
 * prompt holds it); null when the question asks nothing of the item. What the details lack is read
 * from the item's text (`text`, its source in the prompt) where a line says it (`By Ann Lee`), and
 * said plainly to be missing otherwise: quoted instead, the nearest sentence was an answer to
 * something else (`Each shortlisted author receives €2,500.` to "who is the author?").
 */
export function answerFromDetails(question: string, details: ItemDetails, n?: number, text = ''): string | null {
  const asked = detailAsked(question);
  if (!asked) return null;
  const cite = n === undefined ? '' : ` [${n}]`;
  // A page writes its byline, channel and site name: shown as typed, as a quote is, never as a
  // link, an image or a `[n]` citing another source under the assistant's name.
  const author = literal(details.author ?? bylineIn(text) ?? '');
  const channel = details.channel && literal(details.channel);
  const site = details.site && literal(details.site);
  const day = details.published ? formatDay(details.published) : undefined;
  const maker = author || (channel ? `the ${channel} channel` : undefined);
  const by = site ? ` by ${site}` : '';
  const on = day ? ` on ${day}` : '';
  const onSite = site ? ` on ${site}` : '';
  const missing = `This ${details.kind}'s page does not`;
  switch (asked) {
    case 'author':
      if (!maker) return `${missing} name its ${details.kind === 'video' ? 'maker' : 'author'}${site || day ? `; it was published${by}${on}.${cite}` : '.'}`;
      if (details.kind === 'video') return `This video is from ${maker}${onSite}${day ? `, posted on ${day}` : ''}.${cite}`;
      return `This ${details.kind} is by ${maker}${site || day ? `, published${by}${on}` : ''}.${cite}`;
    case 'published':
      if (!day) return DATELINE.test(text) ? null : `${missing} say when it was published${site ? `; it is from ${site}.${cite}` : '.'}`;
      return `This ${details.kind} was ${details.kind === 'article' ? 'published' : 'posted'} on ${day}${details.kind === 'video' ? onSite : by}.${cite}`;
    case 'site':
      if (!site) return `${missing} name the site it came from.`;
      if (details.kind === 'video') return `This video is on ${site}${channel ? `, from the ${channel} channel` : ''}${on}.${cite}`;
      return `This ${details.kind} was published by ${site}${on}.${cite}`;
  }
}

/**
 * A byline on a line of its own, as a page's text often opens (`By Ann Lee`, `Words by …`): the
 * name, up to four capitalised words.
 */
const BYLINE = /^(?:[Bb]y|(?:[Ww]ritten|[Ww]ords|[Ss]tory|[Rr]eporting|[Tt]ext) [Bb]y)\s+(\p{Lu}[\p{L}.'’-]*(?:[^\S\n]+\p{Lu}[\p{L}.'’-]*){0,3})[^\S\n]*$/mu;
/** A line giving the page's date (`Published 3 March 2026`), which the sources' quote then gives. */
const DATELINE = /^(?:published|posted|updated|first published)\b[^\n]{0,40}\d/im;

function bylineIn(text: string): string | undefined {
  return BYLINE.exec(text)?.[1];
}

/** A detail or a title as it reads in a message: its markup escaped (markdownLiteral). */
export function literal(text: string): string {
  return markdownLiteral(withoutLiteralEscapes(text));
}
