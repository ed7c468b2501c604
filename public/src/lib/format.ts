/** Small text helpers shared by the pages. */

const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
const TIME_FORMAT = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
/** Longest "first sentence" shown in a room header. */
const MAX_SENTENCE_CHARS = 280;

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : DATE_FORMAT.format(d);
}

export function formatTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : TIME_FORMAT.format(d);
}

/** The first sentence of a room's context, without the title it starts with. */
export function firstSentence(context: string, title = ''): string {
  let text = context.trim();
  if (title && text.startsWith(title)) text = text.slice(title.length).replace(/^[\s.:—–-]+/, '');
  const m = /^(.+?[.!?])(?=\s|$)/s.exec(text);
  const sentence = (m ? m[1] : text).replace(/\s+/g, ' ').trim();
  return sentence.length > MAX_SENTENCE_CHARS ? `${sentence.slice(0, MAX_SENTENCE_CHARS - 1)}…` : sentence;
}

/** An http(s) URL as a string, or null for anything else (javascript:, relative junk…). */
export function safeHttpUrl(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url, location.origin);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

/** The host of a URL for "Read on example.com" labels. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host.replace(/^www\./, '');
  } catch {
    return '';
  }
}

export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
