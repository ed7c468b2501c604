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
 * Where a model's streamed reply begins: `outside` any thinking (it opens its blocks itself, or
 * never thinks), `inside` a block its chat template opened (QwQ, DeepSeek-R1: the reply's first tag
 * is a `</think>`), or `unknown`, until a reply of that model has shown which (ThinkingHabit).
 */
export type ReplyStart = 'outside' | 'inside' | 'unknown';

/** What a reply showed of its thinking: its first tag, and whether it held any text at all. */
export interface ReplyShape {
  firstTag: 'open' | 'close' | null;
  hadText: boolean;
}

/**
 * A reply of unknown start is held back until its first tag or this many characters: thinking
 * before a `</think>` is dropped with it, and an answer without tags goes out once this long.
 */
export const UNKNOWN_START_HOLD_CHARS = 8_000;

/**
 * withoutReasoning for a streamed reply, piece by piece: text inside a `<think>` block is dropped
 * as it arrives (never kept: a block may run to the reply's size limit), and the end of a piece
 * that may begin a tag is held back until the next piece tells. A block still open when the reply
 * ends is dropped too: a reply cut while thinking holds no answer. A stray `</think>` is never
 * passed on.
 *
 * A stream cannot take back what it has passed on, so a reply whose template opened the block must
 * be known to before it starts (`start`): `inside` drops everything up to the first `</think>`;
 * `unknown` holds the start back (UNKNOWN_START_HOLD_CHARS) until a tag tells which it was.
 */
export class ReasoningFilter {
  private state: ReplyStart;
  private held = '';
  /** What an `unknown` start holds back until a tag tells whether it was thinking. */
  private pending = '';
  private readonly shape: ReplyShape = { firstTag: null, hadText: false };

  /** `onEnd` is told what the reply showed (ThinkingHabit learns from it). */
  constructor(
    start: ReplyStart = 'outside',
    private readonly onEnd?: (shape: ReplyShape) => void,
  ) {
    this.state = start;
  }

  /** The answer text of `piece` that can be passed on now. */
  push(piece: string): string {
    if (!this.shape.hadText && piece.trim()) this.shape.hadText = true;
    const text = this.held + piece;
    this.held = '';
    let out = '';
    let from = 0;
    for (let next = this.nextTag(text, from); next; next = this.nextTag(text, from)) {
      const before = text.slice(from, next.at);
      if (this.state === 'outside') out += before;
      else if (this.state === 'unknown') {
        // Text before a first `<think>` was answer; before a first `</think>`, thinking.
        if (next.tag === OPEN) out += this.pending + before;
        this.pending = '';
      }
      this.shape.firstTag ??= next.tag === OPEN ? 'open' : 'close';
      this.state = next.tag === OPEN ? 'inside' : 'outside';
      from = next.at + next.tag.length;
    }
    const keep = Math.min(this.partialTag(text), text.length - from);
    this.held = text.slice(text.length - keep);
    const rest = text.slice(from, text.length - keep);
    if (this.state === 'outside') out += rest;
    else if (this.state === 'unknown') {
      this.pending += rest;
      if (this.pending.length > UNKNOWN_START_HOLD_CHARS) {
        out += this.pending;
        this.pending = '';
        this.state = 'outside';
      }
    }
    return out;
  }

  /** What is left once the reply has ended. */
  end(): string {
    // A reply of unknown start that never showed a tag was all answer.
    const rest = this.state === 'inside' ? '' : this.pending + this.held;
    this.pending = '';
    this.held = '';
    this.onEnd?.({ ...this.shape });
    return rest;
  }

  /** The next tag that changes the state: only `</think>` inside a block, either tag outside one. */
  private nextTag(text: string, from: number): { tag: string; at: number } | null {
    const close = tagAt(text, CLOSE, from);
    if (this.state === 'inside') return close === -1 ? null : { tag: CLOSE, at: close };
    const open = tagAt(text, OPEN, from);
    if (open === -1 && close === -1) return null;
    return open !== -1 && (close === -1 || open < close) ? { tag: OPEN, at: open } : { tag: CLOSE, at: close };
  }

  /** How much of `text`'s end may begin a tag the next piece would finish. */
  private partialTag(text: string): number {
    return this.state === 'inside' ? partialTagAt(text, CLOSE) : Math.max(partialTagAt(text, OPEN), partialTagAt(text, CLOSE));
  }
}

/** Model names of reasoners whose chat template may open the thinking block. */
const REASONER_NAME = /qwq|deepseek[-_.]?r1|(?:^|[^a-z0-9])r1(?:$|[^a-z0-9])|reason|think/i;

/**
 * Where one model's replies begin, learnt from each reply (streamed or whole), so that a stream is
 * filtered from its first piece: a model whose chat template opens the thinking block shows it in
 * every reply's first tag, `</think>`. A reply without tags from a model believed to start inside
 * puts it back to unknown (the server's template may have changed), so no answer is lost for good.
 */
export class ThinkingHabit {
  private start: ReplyStart;

  /**
   * A model named like a reasoner whose template may open the block (QwQ, DeepSeek-R1 and its
   * distillations, "reasoning"/"thinking" variants) has its first reply held until it shows where
   * its thinking begins; any other model's first reply streams as it comes, as most never think in
   * the reply or open their blocks themselves, and the hold would cost every such server's first
   * answer its streaming. Each reply after teaches where the next begins.
   */
  constructor(model: string) {
    this.start = REASONER_NAME.test(model) ? 'unknown' : 'outside';
  }

  /** Where the next reply is expected to begin. */
  get replyStart(): ReplyStart {
    return this.start;
  }

  /** Learns from a whole reply. */
  observe(reply: string): void {
    const open = tagAt(reply, OPEN, 0);
    const close = tagAt(reply, CLOSE, 0);
    const firstTag = open === -1 && close === -1 ? null : close !== -1 && (open === -1 || close < open) ? 'close' : 'open';
    this.learn({ firstTag, hadText: reply.trim() !== '' });
  }

  /** A filter for the next streamed reply, which learns from it when it ends. */
  streamFilter(): ReasoningFilter {
    return new ReasoningFilter(this.start, (shape) => this.learn(shape));
  }

  private learn({ firstTag, hadText }: ReplyShape): void {
    if (firstTag === 'close') this.start = 'inside';
    else if (firstTag === 'open') this.start = 'outside';
    else if (hadText) this.start = this.start === 'inside' ? 'unknown' : 'outside';
  }
}

/** Length of the longest end of `text` that begins `tag` (case-insensitive), shorter than the tag. */
function partialTagAt(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) if (text.slice(text.length - n).toLowerCase() === tag.slice(0, n)) return n;
  return 0;
}
