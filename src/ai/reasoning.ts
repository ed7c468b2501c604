/** Reasoning models wrap their thinking in `<think>…</think>` before the answer. */

const OPEN = '<think>';
const CLOSE = '</think>';

/**
 * The tags as case-insensitive patterns, searched from an index: searching `text.toLowerCase()`
 * instead gave indices into another string (`İ` lower-cased is two characters, so a Turkish answer
 * lost a character for each `İ` before a tag), and lower-casing what was left after each tag made a
 * piece dense with tags quadratic (120 KB of them held the event loop half a second).
 */
const TAG_PATTERNS: Record<string, RegExp> = { [OPEN]: /<think>/gi, [CLOSE]: /<\/think>/gi };

/** Where `tag` next begins in `text` at or after `from`, whatever its case; -1 when it does not. */
function tagAt(text: string, tag: string, from: number): number {
  const pattern = TAG_PATTERNS[tag];
  pattern.lastIndex = from;
  return pattern.exec(text)?.index ?? -1;
}

/**
 * `reply` without its `<think>` blocks, each replaced by `separator`. A block the reply never closes
 * runs to its end, as in a stream (ReasoningFilter): a reply cut while thinking (at
 * AI_MAX_ANSWER_TOKENS, or where its reading stops) holds no answer; left as it was, the thinking
 * was the summary, and the snippet numbers it weighed the rerank. A reply whose first tag is a
 * `</think>` began inside a block that the chat template opened (QwQ's and DeepSeek-R1's do): what
 * comes before that tag is thinking too (a rerank read the snippet numbers its thinking weighed, a
 * summary was the thinking). A forward scan, linear in the reply's length
 * (`/<think>[\s\S]*?<\/think>/g` rescans to the end from every unclosed `<think>`).
 */
export function withoutReasoning(reply: string, separator = ''): string {
  let open = tagAt(reply, OPEN, 0);
  const firstClose = tagAt(reply, CLOSE, 0);
  const openedBefore = firstClose !== -1 && (open === -1 || firstClose < open);
  if (open === -1 && !openedBefore) return reply;
  let out = openedBefore ? separator : '';
  let from = openedBefore ? firstClose + CLOSE.length : 0;
  while (open !== -1) {
    const close = tagAt(reply, CLOSE, open + OPEN.length);
    out += reply.slice(from, open) + separator;
    if (close === -1) return out;
    from = close + CLOSE.length;
    open = tagAt(reply, OPEN, from);
  }
  return out + reply.slice(from);
}

/**
 * withoutReasoning for a streamed reply, piece by piece: text inside a `<think>` block is dropped
 * as it arrives (never kept: a block may run to the reply's size limit), and the end of a piece
 * that may begin a tag is held back until the next piece tells. A block still open when the reply
 * ends is dropped too: a reply cut while thinking holds no answer.
 */
export class ReasoningFilter {
  private inside = false;
  private held = '';

  /** The answer text of `piece` that can be passed on now. */
  push(piece: string): string {
    const text = this.held + piece;
    this.held = '';
    let out = '';
    let from = 0;
    for (;;) {
      const tag = this.inside ? CLOSE : OPEN;
      const at = tagAt(text, tag, from);
      if (at < 0) break;
      if (!this.inside) out += text.slice(from, at);
      from = at + tag.length;
      this.inside = !this.inside;
    }
    const keep = Math.min(partialTagAt(text, this.inside ? CLOSE : OPEN), text.length - from);
    this.held = text.slice(text.length - keep);
    if (!this.inside) out += text.slice(from, text.length - keep);
    return out;
  }

  /** What is left once the reply has ended. */
  end(): string {
    const rest = this.inside ? '' : this.held;
    this.held = '';
    return rest;
  }
}

/** Length of the longest end of `text` that begins `tag` (case-insensitive), shorter than the tag. */
function partialTagAt(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) if (text.slice(text.length - n).toLowerCase() === tag.slice(0, n)) return n;
  return 0;
}
