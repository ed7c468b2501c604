/** Reasoning models wrap their thinking in `<think>…</think>` before the answer. */

const OPEN = '<think>';
const CLOSE = '</think>';

/**
 * `reply` without its closed `<think>` blocks, each replaced by `separator` (an unclosed one is left
 * as it is: nothing says where it would end). A forward scan, linear in the
 * reply's length (`/<think>[\s\S]*?<\/think>/g` rescans to the end from every unclosed `<think>`).
 */
export function withoutReasoning(reply: string, separator = ''): string {
  const lower = reply.toLowerCase();
  let open = lower.indexOf(OPEN);
  if (open === -1) return reply;
  let out = '';
  let from = 0;
  while (open !== -1) {
    const close = lower.indexOf(CLOSE, open + OPEN.length);
    if (close === -1) break;
    out += reply.slice(from, open) + separator;
    from = close + CLOSE.length;
    open = lower.indexOf(OPEN, from);
  }
  return out + reply.slice(from);
}
