/**
 * Small text helpers every part uses, in one place: cutting text to a length for display or a
 * prompt, and naming the site a URL is on. (Content cleaning lives in content/text.ts, word
 * features in ai/local/.)
 */

/** Cuts `text` to at most `max` characters, at a word boundary when one is near, marking the cut with `…`. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, Math.max(0, max - 1));
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** Whitespace runs squashed to one space and the ends trimmed; most stored text needs neither, and the check is cheaper than the replace. */
export function squash(text: string): string {
  return NEEDS_SQUASH.test(text) ? text.replace(/\s+/g, ' ').trim() : text;
}

/** Whitespace other than single spaces between non-spaces. */
const NEEDS_SQUASH = /[^\S ]| {2}|^ | $/;

/** The host a URL names without a leading `www.` (`news.example.com`), or null when it is not a URL. */
export function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname.replace(/^www\./, '');
  } catch {
    return null;
  }
}
