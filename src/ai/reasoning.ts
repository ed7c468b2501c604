/**
 * Reasoning models wrap their thinking in `<think>…</think>` before the answer; some write
 * `<thinking>` or `<reasoning>`, and a block may hold another (`<think>a <think>b</think> c</think>`:
 * a model quoting its own tag while it thinks). All are one kind of block here, counted by depth,
 * so a `</think>` closes whichever is open: none of the thinking is an answer.
 */
export const THINKING_TAG_NAMES = ['think', 'thinking', 'reasoning'] as const;

const TAGS = THINKING_TAG_NAMES.flatMap((name) => [`<${name}>`, `</${name}>`]);
const LONGEST_TAG = Math.max(...TAGS.map((t) => t.length));

/**
 * Any thinking tag, whatever its case, searched from an index: searching `text.toLowerCase()`
 * instead gave indices into another string (`İ` lower-cased is two characters, so a Turkish answer
 * lost a character for each `İ` before a tag), and lower-casing what was left after each tag made a
 * piece dense with tags quadratic (120 KB of them held the event loop half a second).
 */
const TAG = new RegExp(`<(/?)(?:${THINKING_TAG_NAMES.join('|')})>`, 'gi');

interface Tag {
  at: number;
  end: number;
  closes: boolean;
}

/** The next thinking tag in `text` at or after `from`, or null. */
function tagAt(text: string, from: number): Tag | null {
  TAG.lastIndex = from;
  const m = TAG.exec(text);
  return m ? { at: m.index, end: m.index + m[0].length, closes: m[1] === '/' } : null;
}

/**
 * Whether a reply began inside a block its chat template opened (QwQ's and DeepSeek-R1's do): read
 * as if it began outside, a tag closes a block none opened. Not a reply whose first tag opens a
 * block before any text (`<think>a</think>The answer.</think>`: a stray tag after the answer).
 * ReasoningFilter decides the same piece by piece.
 */
function beganInside(reply: string): boolean {
  const first = tagAt(reply, 0);
  if (!first || (!first.closes && reply.slice(0, first.at).trim() === '')) return false;
  let depth = 0;
  for (let tag: Tag | null = first; tag; tag = tagAt(reply, tag.end)) {
    if (tag.closes && depth === 0) return true;
    depth += tag.closes ? -1 : 1;
  }
  return false;
}

/**
 * `reply` without its thinking blocks, each outermost one replaced by `separator`. A block the
 * reply never closes runs to its end, as in a stream (ReasoningFilter): a reply cut while thinking
 * (at AI_MAX_ANSWER_TOKENS, or where its reading stops) holds no answer; left as it was, the
 * thinking was the summary, and the snippet numbers it weighed the rerank. A reply that began
 * inside a block the chat template opened (beganInside): what comes before that block's close is
 * thinking too (a rerank read the snippet numbers its thinking weighed, a summary was the
 * thinking). A stray close is dropped. A forward scan, linear in the reply's length
 * (`/<think>[\s\S]*?<\/think>/g` rescans to the end from every unclosed `<think>`).
 */
export function withoutReasoning(reply: string, separator = ''): string {
  if (!tagAt(reply, 0)) return reply;
  let depth = beganInside(reply) ? 1 : 0;
  let out = depth ? separator : '';
  let from = 0;
  for (let tag = tagAt(reply, 0); tag; tag = tagAt(reply, tag.end)) {
    if (depth === 0) out += reply.slice(from, tag.at);
    if (!tag.closes && depth === 0) out += separator;
    depth = tag.closes ? Math.max(0, depth - 1) : depth + 1;
    from = tag.end;
  }
  return depth > 0 ? out : out + reply.slice(from);
}

/**
 * Where a model's streamed reply begins: `outside` any thinking (it opens its blocks itself, or
 * never thinks), `inside` a block its chat template opened (QwQ, DeepSeek-R1: the reply closes a
 * block it never opened), or `unknown`, until a reply of that model has shown which (ThinkingHabit).
 */
export type ReplyStart = 'outside' | 'inside' | 'unknown';

/**
 * What a reply showed of its thinking: `firstTag` is `close` when it began inside a block the
 * template opened (beganInside), `open` when it showed tags otherwise; and whether it held any
 * text at all.
 */
export interface ReplyShape {
  firstTag: 'open' | 'close' | null;
  hadText: boolean;
}

/**
 * A reply of unknown start is held back until it shows where it began, or this many characters:
 * thinking before a close is dropped with it, and an answer without tags goes out once this long.
 */
export const UNKNOWN_START_HOLD_CHARS = 8_000;

/**
 * withoutReasoning for a streamed reply, piece by piece: text inside a thinking block, however deep,
 * is dropped as it arrives (never kept: a block may run to the reply's size limit), and the end of
 * a piece that may begin a tag is held back until the next piece tells. A block still open when
 * the reply ends is dropped too: a reply cut while thinking holds no answer. A stray close is never
 * passed on.
 *
 * A stream cannot take back what it has passed on, so a reply whose template opened the block must
 * be known to before it starts (`start`): `inside` drops everything up to that block's close;
 * `unknown` holds the reply back (UNKNOWN_START_HOLD_CHARS) until it shows where it began: a tag
 * that opens before any text (it began outside), or one that closes a block it never opened (it
 * began inside; `a <think>b</think> c</think>` too, so its ` c` is held, not passed on). A reply
 * that shows neither is read as begun outside once it ends or outgrows the hold.
 */
export class ReasoningFilter {
  /** Blocks open where the reply now is, once it is known where it began. */
  private depth: number;
  /** Blocks open as if the reply began outside: what beganInside counts, and what `pending` is read with. */
  private depthFromOutside = 0;
  /** Where the reply began, once a tag has shown it. */
  private began: 'inside' | 'outside' | null = null;
  /** Whether the reply is held back until it shows where it began (an `unknown` start). */
  private deciding: boolean;
  /** While deciding: the answer as a reply begun outside would give it, and how much was read. */
  private pending = '';
  private read = 0;
  private sawTag = false;
  private textBeforeTag = false;
  /** The end of the last piece, which may begin a tag. */
  private held = '';
  private readonly shape: ReplyShape = { firstTag: null, hadText: false };

  /** `onEnd` is told what the reply showed (ThinkingHabit learns from it). */
  constructor(
    start: ReplyStart = 'outside',
    private readonly onEnd?: (shape: ReplyShape) => void,
  ) {
    this.depth = start === 'inside' ? 1 : 0;
    this.deciding = start === 'unknown';
  }

  /** The answer text of `piece` that can be passed on now. */
  push(piece: string): string {
    if (!this.shape.hadText && piece.trim()) this.shape.hadText = true;
    const text = this.held + piece;
    this.held = '';
    let out = '';
    let from = 0;
    for (let tag = tagAt(text, from); tag; tag = tagAt(text, from)) {
      out += this.textRead(text.slice(from, tag.at));
      out += this.tagRead(tag);
      from = tag.end;
    }
    const keep = Math.min(partialTag(text), text.length - from);
    this.held = text.slice(text.length - keep);
    return out + this.textRead(text.slice(from, text.length - keep));
  }

  /** What is left once the reply has ended. */
  end(): string {
    // Held to the end without showing where it began: read as begun outside.
    const rest = this.deciding ? this.pending + (this.depthFromOutside === 0 ? this.held : '') : this.depth === 0 ? this.held : '';
    this.pending = '';
    this.held = '';
    this.shape.firstTag = this.began === 'inside' ? 'close' : this.sawTag ? 'open' : null;
    this.onEnd?.({ ...this.shape });
    return rest;
  }

  private textRead(text: string): string {
    if (!text) return '';
    if (!this.sawTag && text.trim()) this.textBeforeTag = true;
    if (!this.deciding) return this.depth === 0 ? text : '';
    if (this.depthFromOutside === 0) this.pending += text;
    this.read += text.length;
    // Past the hold, a reply that has not shown where it began is read as begun outside.
    return this.read > UNKNOWN_START_HOLD_CHARS ? this.decided(this.depthFromOutside) : '';
  }

  private tagRead(tag: Tag): string {
    const decides = this.began === null && ((tag.closes && this.depthFromOutside === 0) || (!tag.closes && !this.sawTag && !this.textBeforeTag));
    if (decides) this.began = tag.closes ? 'inside' : 'outside';
    this.sawTag = true;
    this.depthFromOutside = Math.max(0, this.depthFromOutside + (tag.closes ? -1 : 1));
    this.depth = Math.max(0, this.depth + (tag.closes ? -1 : 1));
    if (this.deciding) this.read += tag.end - tag.at;
    if (!decides) return this.deciding && this.read > UNKNOWN_START_HOLD_CHARS ? this.decided(this.depthFromOutside) : '';
    // Where the reply began is known now: before a close that opened nothing, all was thinking
    // (nothing held is passed on); an open before any text began outside, whatever was expected.
    if (this.began === 'inside') {
      this.pending = '';
      this.deciding = false;
      this.depth = 0;
      return '';
    }
    return this.decided(this.depthFromOutside);
  }

  /** Stops deciding: the reply is read as begun outside, `depth` blocks deep; what it held goes out. */
  private decided(depth: number): string {
    const out = this.deciding ? this.pending : '';
    this.pending = '';
    this.deciding = false;
    this.depth = depth;
    return out;
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
    const firstTag = !tagAt(reply, 0) ? null : beganInside(reply) ? 'close' : 'open';
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

/** Length of the longest end of `text` that begins a thinking tag (case-insensitive), shorter than the tag. */
function partialTag(text: string): number {
  for (let n = Math.min(LONGEST_TAG - 1, text.length); n > 0; n--) {
    const tail = text.slice(text.length - n).toLowerCase();
    if (TAGS.some((t) => t.length > n && t.startsWith(tail))) return n;
  }
  return 0;
}
